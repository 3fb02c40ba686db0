/* icn-tirecord: a PMPI interposition library (LD_PRELOAD) that writes a SimGrid
 * time-independent (TI) trace of the MPI program it is loaded into.
 *
 * Output, in $ICN_TI_DIR (default "ti-trace", created if missing):
 *   ti_trace<rank>.txt   one action per line, "<rank> <action> <args...>" (SimGrid 3.32 syntax)
 *   index.txt            the rank files in rank order, written by rank 0
 * Each file is written under a ".tmp" name and renamed at MPI_Finalize, so a run that dies
 * leaves no trace that looks complete.
 *
 * Sizes are bytes (count x MPI_Type_size): "init" is written without argument, which makes
 * MPI_BYTE the replay's default datatype, and no datatype argument follows. Ranks are ranks of
 * MPI_COMM_WORLD; a call on any other communicator stops the program (MPI_Abort) naming it,
 * rather than leaving a trace that silently lacks it.
 *
 * Compute: the wall time between the end of one MPI call and the start of the next is written
 * as "compute <flops>" at $ICN_TI_FLOPS flop/s (default 1e9: the 1 Gflop/s hosts of SimGrid's
 * cluster_crossbar.xml), rounded to whole flops; gaps under one flop are not written, and gaps
 * around calls that write nothing (an MPI_Test that returns false) join the next one. Time
 * inside MPI calls is communication and is not written. Reductions ("reduce", "allreduce")
 * carry one flop per element as their comp_size.
 *
 * Requests: isend/irecv remember (source, destination, tag) per request handle; a completed
 * MPI_Wait, each request of MPI_Waitall, the one of MPI_Waitany and an MPI_Test that
 * returns true are written as "wait <src> <dst> <tag>", which SimGrid's replay matches to the
 * isend/irecv. A receive from MPI_ANY_SOURCE or with MPI_ANY_TAG is written with the source
 * and tag that matched (known from the status for blocking receives; for irecv the status at
 * completion rewrites nothing, so irecv needs a named source and tag: it aborts otherwise).
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static FILE *out;
static int me = -1, world = 0;
static char dir[4096] = "ti-trace";
static char final_name[4200], tmp_name[4300];
static double flop_rate = 1e9;
static struct timespec last_end;
/* Compute time not yet written: gaps before calls that write nothing (an MPI_Test that
 * returns false) join the next one, so a polling loop is one compute action. */
static double pending_flops;
static int recording;

struct req {
    MPI_Request handle;
    int src, dst, tag;
};
static struct req *reqs;
static size_t nreqs, capreqs;

static double seconds_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) + 1e-9 * (double)(now.tv_nsec - t->tv_nsec);
}

static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "icn-tirecord (rank %d): ", me);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* Adds the compute gap since the last MPI call ended. Called at the start of each call. */
static void enter(void)
{
    if (recording)
        pending_flops += seconds_since(&last_end) * flop_rate;
}

/* Writes the compute gaps gathered so far, before an action. */
static void flush_compute(void)
{
    if (pending_flops >= 1.0)
        fprintf(out, "%d compute %.0f\n", me, pending_flops);
    pending_flops = 0;
}

/* Marks the end of an MPI call. */
static void leave(void)
{
    if (recording)
        clock_gettime(CLOCK_MONOTONIC, &last_end);
}

static void line(const char *fmt, ...)
{
    if (!recording)
        return;
    va_list ap;
    flush_compute();
    fprintf(out, "%d ", me);
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

static long long bytes(int count, MPI_Datatype t)
{
    int size = 0;
    PMPI_Type_size(t, &size);
    return (long long)count * size;
}

static void world_only(MPI_Comm comm, const char *call)
{
    int same = MPI_UNEQUAL;
    PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same);
    if (same != MPI_IDENT && same != MPI_CONGRUENT)
        fail("%s on a communicator other than MPI_COMM_WORLD is not recorded", call);
}

static void remember(MPI_Request h, int src, int dst, int tag)
{
    if (nreqs == capreqs) {
        capreqs = capreqs ? 2 * capreqs : 64;
        reqs = realloc(reqs, capreqs * sizeof *reqs);
        if (!reqs)
            fail("out of memory for %zu requests", capreqs);
    }
    reqs[nreqs++] = (struct req){h, src, dst, tag};
}

/* Writes "wait" for a request handle (as it was before completion) and forgets it. */
static void completed(MPI_Request h)
{
    for (size_t i = 0; i < nreqs; i++) {
        if (reqs[i].handle == h) {
            line("wait %d %d %d", reqs[i].src, reqs[i].dst, reqs[i].tag);
            reqs[i] = reqs[--nreqs];
            return;
        }
    }
    /* A request not made by isend/irecv (persistent, collective, ...): nothing to write. */
}

static void start(void)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    PMPI_Comm_size(MPI_COMM_WORLD, &world);
    const char *d = getenv("ICN_TI_DIR");
    if (d && *d) {
        if (strlen(d) >= sizeof dir)
            fail("ICN_TI_DIR is longer than %zu bytes", sizeof dir - 1);
        strcpy(dir, d);
    }
    const char *f = getenv("ICN_TI_FLOPS");
    if (f && *f) {
        char *end = NULL;
        flop_rate = strtod(f, &end);
        if (*end || !(flop_rate > 0 && flop_rate <= 1e18))
            fail("ICN_TI_FLOPS=%s: a rate in (0, 1e18] flop/s", f);
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        fail("cannot create %s: %s", dir, strerror(errno));
    snprintf(final_name, sizeof final_name, "%s/ti_trace%d.txt", dir, me);
    snprintf(tmp_name, sizeof tmp_name, "%s.tmp", final_name);
    out = fopen(tmp_name, "w");
    if (!out)
        fail("cannot write %s: %s", tmp_name, strerror(errno));
    recording = 1;
    line("init");
    leave();
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    start();
    return rc;
}

int MPI_Finalize(void)
{
    enter();
    line("finalize");
    recording = 0;
    if (fclose(out) != 0 || rename(tmp_name, final_name) != 0)
        fail("cannot write %s: %s", final_name, strerror(errno));
    /* Every rank's file is in place before the index names them. */
    PMPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        char idx[4200], idx_tmp[4300];
        snprintf(idx, sizeof idx, "%s/index.txt", dir);
        snprintf(idx_tmp, sizeof idx_tmp, "%s.tmp", idx);
        FILE *f = fopen(idx_tmp, "w");
        if (!f)
            fail("cannot write %s: %s", idx_tmp, strerror(errno));
        for (int r = 0; r < world; r++)
            fprintf(f, "ti_trace%d.txt\n", r);
        if (fclose(f) != 0 || rename(idx_tmp, idx) != 0)
            fail("cannot write %s: %s", idx, strerror(errno));
    }
    free(reqs);
    return PMPI_Finalize();
}

int MPI_Send(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Send");
    line("send %d %d %lld", dst, tag, bytes(count, t));
    int rc = PMPI_Send(buf, count, t, dst, tag, comm);
    leave();
    return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dst, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    enter();
    world_only(comm, "MPI_Isend");
    line("isend %d %d %lld", dst, tag, bytes(count, t));
    int rc = PMPI_Isend(buf, count, t, dst, tag, comm, req);
    remember(*req, me, dst, tag);
    leave();
    return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    enter();
    world_only(comm, "MPI_Recv");
    MPI_Status st;
    int rc = PMPI_Recv(buf, count, t, src, tag, comm, &st);
    int got = 0;
    PMPI_Get_count(&st, t, &got);
    /* Written after the call: the matched source, tag and size are known then. */
    line("recv %d %d %lld", st.MPI_SOURCE, st.MPI_TAG, bytes(got, t));
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    leave();
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    enter();
    world_only(comm, "MPI_Irecv");
    if (src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)
        fail("MPI_Irecv from MPI_ANY_SOURCE or with MPI_ANY_TAG is not recorded");
    line("irecv %d %d %lld", src, tag, bytes(count, t));
    int rc = PMPI_Irecv(buf, count, t, src, tag, comm, req);
    remember(*req, src, me, tag);
    leave();
    return rc;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    enter();
    MPI_Request h = *req;
    int rc = PMPI_Wait(req, status);
    completed(h);
    leave();
    return rc;
}

int MPI_Waitall(int n, MPI_Request reqs_in[], MPI_Status statuses[])
{
    enter();
    MPI_Request *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
    if (!h)
        fail("out of memory in MPI_Waitall");
    memcpy(h, reqs_in, (size_t)n * sizeof *h);
    int rc = PMPI_Waitall(n, reqs_in, statuses);
    for (int i = 0; i < n; i++)
        if (h[i] != MPI_REQUEST_NULL)
            completed(h[i]);
    free(h);
    leave();
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs_in[], int *index, MPI_Status *status)
{
    enter();
    MPI_Request *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
    if (!h)
        fail("out of memory in MPI_Waitany");
    memcpy(h, reqs_in, (size_t)n * sizeof *h);
    int rc = PMPI_Waitany(n, reqs_in, index, status);
    if (*index != MPI_UNDEFINED)
        completed(h[*index]);
    free(h);
    leave();
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    enter();
    MPI_Request h = *req;
    int rc = PMPI_Test(req, flag, status);
    if (*flag)
        completed(h);
    leave();
    return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype st, int dst, int stag, void *rbuf,
                 int rcount, MPI_Datatype rt, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    enter();
    world_only(comm, "MPI_Sendrecv");
    /* SimGrid 3.32 registers `sendRecv` only (a lower-case `sendrecv` aborts its replay) and
     * requires both datatypes: 6 is its id of MPI_BYTE, sizes being bytes. */
    line("sendRecv %lld %d %lld %d 6 6", bytes(scount, st), dst, bytes(rcount, rt), src);
    int rc = PMPI_Sendrecv(sbuf, scount, st, dst, stag, rbuf, rcount, rt, src, rtag, comm, status);
    leave();
    return rc;
}

int MPI_Barrier(MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Barrier");
    line("barrier");
    int rc = PMPI_Barrier(comm);
    leave();
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Bcast");
    line("bcast %lld %d", bytes(count, t), root);
    int rc = PMPI_Bcast(buf, count, t, root, comm);
    leave();
    return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Reduce");
    line("reduce %lld %d %d", bytes(count, t), count, root);
    int rc = PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
    leave();
    return rc;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                  MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Allreduce");
    line("allreduce %lld %d", bytes(count, t), count);
    int rc = PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
    leave();
    return rc;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                 MPI_Datatype rt, MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Alltoall");
    line("alltoall %lld %lld", bytes(scount, st), bytes(rcount, rt));
    int rc = PMPI_Alltoall(sbuf, scount, st, rbuf, rcount, rt, comm);
    leave();
    return rc;
}

/* "alltoallv <send buffer bytes> <send bytes per rank...> <recv buffer bytes> <recv bytes per
 * rank...>", the buffer sizes being the sums. */
int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rt,
                  MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Alltoallv");
    if (recording) {
        flush_compute();
        long long ssum = 0, rsum = 0;
        for (int i = 0; i < world; i++) {
            ssum += bytes(scounts[i], st);
            rsum += bytes(rcounts[i], rt);
        }
        fprintf(out, "%d alltoallv %lld", me, ssum);
        for (int i = 0; i < world; i++)
            fprintf(out, " %lld", bytes(scounts[i], st));
        fprintf(out, " %lld", rsum);
        for (int i = 0; i < world; i++)
            fprintf(out, " %lld", bytes(rcounts[i], rt));
        fputc('\n', out);
    }
    int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
    leave();
    return rc;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
               MPI_Datatype rt, int root, MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Gather");
    /* recvcount and recvtype are significant at the root only. */
    long long r = me == root ? bytes(rcount, rt) : bytes(scount, st);
    line("gather %lld %lld %d", bytes(scount, st), r, root);
    int rc = PMPI_Gather(sbuf, scount, st, rbuf, rcount, rt, root, comm);
    leave();
    return rc;
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                  MPI_Datatype rt, MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Allgather");
    line("allgather %lld %lld", bytes(scount, st), bytes(rcount, rt));
    int rc = PMPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm);
    leave();
    return rc;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                MPI_Datatype rt, int root, MPI_Comm comm)
{
    enter();
    world_only(comm, "MPI_Scatter");
    /* sendcount and sendtype are significant at the root only. */
    long long s = me == root ? bytes(scount, st) : bytes(rcount, rt);
    line("scatter %lld %lld %d", s, bytes(rcount, rt), root);
    int rc = PMPI_Scatter(sbuf, scount, st, rbuf, rcount, rt, root, comm);
    leave();
    return rc;
}
