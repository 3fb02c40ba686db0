/* icnlab's OTF2 writer: reads a timeline on standard input and writes it as an OTF2 archive
 * with Debian's OTF2 library (libotf2-trace-dev), so that Vampir and otf2-print read it.
 * Built and run by `icnlab run --timeline DIR.otf2` (crates/icnlab/src/timeline.rs).
 *
 * Usage: timeline2otf2 ARCHIVE_DIR < timeline
 * Input, one record a line, times in picoseconds (the archive's clock: 10^12 ticks/s):
 *   T <ranks> <channels> <regions> <end>          first line
 *   N <name>                                       region names, ids in order
 *   C <router> <port>                              channels, ids in order
 *   E <rank> <time> <region> / L <rank> <time> <region>   enter / leave, per rank in order
 *   M <channel> <time> <utilisation>               a channel's utilisation from <time>
 * Ranks are locations 0 .. ranks-1 (one process each); channel c is location ranks + c in a
 * "fabric" location group, its utilisation a metric. Exit 2 on malformed input, 1 when the
 * library fails.
 */
#include <otf2/otf2.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc,
                                void *callerData, bool final)
{
    (void)user; (void)type; (void)loc; (void)callerData; (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
    (void)user; (void)type; (void)loc;
    return 0;
}

static OTF2_FlushCallbacks flush = {.otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush};

static void fail(int code, const char *what, long line)
{
    fprintf(stderr, "timeline2otf2: line %ld: %s\n", line, what);
    exit(code);
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        OTF2_ErrorCode e_ = (call);                                                            \
        if (e_ != OTF2_SUCCESS) {                                                              \
            fprintf(stderr, "timeline2otf2: %s: %s\n", #call, OTF2_Error_GetName(e_));         \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: timeline2otf2 ARCHIVE_DIR < timeline\n");
        return 2;
    }
    char buf[4096];
    long line = 0;
    uint64_t ranks, channels, regions, end;
    if (!fgets(buf, sizeof buf, stdin) ||
        sscanf(buf, "T %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &ranks, &channels,
               &regions, &end) != 4 || ranks == 0 || ranks > (1u << 20) || channels > (1u << 20) ||
        regions > (1u << 16))
        fail(2, "expected `T <ranks> <channels> <regions> <end>`", 1);
    line = 1;
    uint64_t locations = ranks + channels;
    uint64_t *events = calloc(locations, sizeof *events);
    char **names = calloc(regions + 1, sizeof *names);
    uint64_t *router = calloc(channels + 1, sizeof *router), *port = calloc(channels + 1, sizeof *port);
    if (!events || !names || !router || !port)
        fail(1, "out of memory", line);

    OTF2_Archive *archive = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                              4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
                                              OTF2_COMPRESSION_NONE);
    if (!archive)
        fail(1, "cannot create the archive", line);
    CHECK(OTF2_Archive_SetFlushCallbacks(archive, &flush, NULL));
    CHECK(OTF2_Archive_SetSerialCollectiveCallbacks(archive));
    CHECK(OTF2_Archive_SetCreator(archive, "icnlab"));
    CHECK(OTF2_Archive_OpenEvtFiles(archive));
    OTF2_EvtWriter **writers = calloc(locations, sizeof *writers);
    if (!writers)
        fail(1, "out of memory", line);

    uint64_t named = 0, listed = 0;
    while (fgets(buf, sizeof buf, stdin)) {
        line++;
        size_t len = strlen(buf);
        if (len && buf[len - 1] == '\n')
            buf[--len] = 0;
        uint64_t a, t, r;
        double v;
        if (buf[0] == 'N' && buf[1] == ' ') {
            if (named >= regions)
                fail(2, "more region names than announced", line);
            names[named] = strdup(buf + 2);
            if (!names[named++])
                fail(1, "out of memory", line);
        } else if (buf[0] == 'C') {
            if (listed >= channels ||
                sscanf(buf, "C %" SCNu64 " %" SCNu64, &router[listed], &port[listed]) != 2)
                fail(2, "bad channel line", line);
            listed++;
        } else if (buf[0] == 'E' || buf[0] == 'L') {
            if (sscanf(buf + 1, " %" SCNu64 " %" SCNu64 " %" SCNu64, &a, &t, &r) != 3 ||
                a >= ranks || r >= regions)
                fail(2, "bad enter/leave line", line);
            if (!writers[a])
                writers[a] = OTF2_Archive_GetEvtWriter(archive, a);
            if (buf[0] == 'E')
                CHECK(OTF2_EvtWriter_Enter(writers[a], NULL, t, (OTF2_RegionRef)r));
            else
                CHECK(OTF2_EvtWriter_Leave(writers[a], NULL, t, (OTF2_RegionRef)r));
            events[a]++;
        } else if (buf[0] == 'M') {
            if (sscanf(buf, "M %" SCNu64 " %" SCNu64 " %lf", &a, &t, &v) != 3 || a >= channels)
                fail(2, "bad metric line", line);
            uint64_t loc = ranks + a;
            if (!writers[loc])
                writers[loc] = OTF2_Archive_GetEvtWriter(archive, loc);
            OTF2_Type type = OTF2_TYPE_DOUBLE;
            OTF2_MetricValue value = {.floating_point = v};
            CHECK(OTF2_EvtWriter_Metric(writers[loc], NULL, t, 0, 1, &type, &value));
            events[loc]++;
        } else {
            fail(2, "unknown record", line);
        }
    }
    if (named != regions || listed != channels)
        fail(2, "fewer region names or channels than announced", line);
    for (uint64_t l = 0; l < locations; l++)
        if (writers[l])
            CHECK(OTF2_Archive_CloseEvtWriter(archive, writers[l]));
    CHECK(OTF2_Archive_CloseEvtFiles(archive));

    CHECK(OTF2_Archive_OpenDefFiles(archive));
    for (uint64_t l = 0; l < locations; l++) {
        OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(archive, l);
        CHECK(OTF2_Archive_CloseDefWriter(archive, d));
    }
    CHECK(OTF2_Archive_CloseDefFiles(archive));

    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
    CHECK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000000ull, 0, end, 0));
    /* Strings: 0 "", 1 "cluster", 2 "node", 3 "fabric", 4 "utilisation", 5 "1",
     * then the regions' names, then per location its name. */
    uint32_t s = 0;
    const char *fixed[] = {"", "cluster", "node", "fabric", "utilisation", "1"};
    for (int i = 0; i < 6; i++)
        CHECK(OTF2_GlobalDefWriter_WriteString(g, s++, fixed[i]));
    uint32_t first_region = s;
    for (uint64_t i = 0; i < regions; i++)
        CHECK(OTF2_GlobalDefWriter_WriteString(g, s++, names[i]));
    CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    for (uint64_t i = 0; i < regions; i++)
        CHECK(OTF2_GlobalDefWriter_WriteRegion(g, (OTF2_RegionRef)i, first_region + i,
                                               first_region + i, 0, OTF2_REGION_ROLE_FUNCTION,
                                               OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, 0, 0, 0));
    for (uint64_t r = 0; r < ranks; r++) {
        snprintf(buf, sizeof buf, "rank %" PRIu64, r);
        CHECK(OTF2_GlobalDefWriter_WriteString(g, s, buf));
        CHECK(OTF2_GlobalDefWriter_WriteLocationGroup(g, (OTF2_LocationGroupRef)r, s,
                                                      OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                      OTF2_UNDEFINED_LOCATION_GROUP));
        CHECK(OTF2_GlobalDefWriter_WriteLocation(g, r, s, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                 events[r], (OTF2_LocationGroupRef)r));
        s++;
    }
    if (channels) {
        CHECK(OTF2_GlobalDefWriter_WriteLocationGroup(g, (OTF2_LocationGroupRef)ranks, 3,
                                                      OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                      OTF2_UNDEFINED_LOCATION_GROUP));
        CHECK(OTF2_GlobalDefWriter_WriteMetricMember(g, 0, 4, 0, OTF2_METRIC_TYPE_USER,
                                                     OTF2_METRIC_ABSOLUTE_NEXT, OTF2_TYPE_DOUBLE,
                                                     OTF2_BASE_DECIMAL, 0, 5));
        OTF2_MetricMemberRef member = 0;
        CHECK(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, &member,
                                                    OTF2_METRIC_ASYNCHRONOUS,
                                                    OTF2_RECORDER_KIND_ABSTRACT));
    }
    for (uint64_t c = 0; c < channels; c++) {
        snprintf(buf, sizeof buf, "router %" PRIu64 " port %" PRIu64, router[c], port[c]);
        CHECK(OTF2_GlobalDefWriter_WriteString(g, s, buf));
        CHECK(OTF2_GlobalDefWriter_WriteLocation(g, ranks + c, s, OTF2_LOCATION_TYPE_METRIC,
                                                 events[ranks + c],
                                                 (OTF2_LocationGroupRef)ranks));
        s++;
    }
    CHECK(OTF2_Archive_CloseGlobalDefWriter(archive, g));
    CHECK(OTF2_Archive_Close(archive));
    return 0;
}
