/* The project's own small MPI program for the recorder's test: a ring exchange, nonblocking
 * neighbour exchanges (waitall, wait and test), bcast, allreduce, alltoallv and sendrecv,
 * with a known busy compute phase between them.
 *
 * Usage: mpi_exchange OUT_DIR. Each rank writes OUT_DIR/expected<rank>.txt, one line per
 * destination it sent to:
 *   p2p <src> <dst> <messages> <bytes>       point-to-point (send, isend, sendrecv)
 *   alltoallv <src> <dst> <bytes>            its alltoallv block for dst
 * and one line "computed <seconds>" with the busy time it spent (at least).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long *msgs, *nbytes;

static void note(int dst, long long b)
{
    msgs[dst] += 1;
    nbytes[dst] += b;
}

/* Spins for `s` seconds of wall time; returns the time spun. */
static double busy(double s)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    volatile double x = 0;
    for (;;) {
        for (int i = 0; i < 10000; i++)
            x += i * 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &b);
        double t = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        if (t >= s)
            return t;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 2) {
        if (me == 0)
            fprintf(stderr, "usage: mpi_exchange OUT_DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    msgs = calloc((size_t)n, sizeof *msgs);
    nbytes = calloc((size_t)n, sizeof *nbytes);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    double computed = 0;
    char *buf = calloc(1 << 20, 1), *rbuf = calloc(1 << 20, 1);

    /* 1. Ring: 3 rounds of blocking send/recv, sizes 100 * (round + 1) ints; even ranks send
     * first, odd ranks receive first (no deadlock at any size). */
    for (int round = 0; round < 3; round++) {
        int count = 100 * (round + 1);
        if (me % 2 == 0) {
            MPI_Send(buf, count, MPI_INT, right, round, MPI_COMM_WORLD);
            MPI_Recv(rbuf, count, MPI_INT, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, count, MPI_INT, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, count, MPI_INT, right, round, MPI_COMM_WORLD);
        }
        note(right, (long long)count * (long long)sizeof(int));
    }
    computed += busy(0.02);

    /* 2. Nonblocking: both neighbours, doubles, waitall. */
    MPI_Request r[4];
    MPI_Irecv(rbuf, 500, MPI_DOUBLE, left, 10, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(rbuf + 4096, 700, MPI_DOUBLE, right, 11, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(buf, 500, MPI_DOUBLE, right, 10, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(buf + 4096, 700, MPI_DOUBLE, left, 11, MPI_COMM_WORLD, &r[3]);
    note(right, 500 * 8);
    note(left, 700 * 8);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);

    /* 3. Nonblocking with wait and a test loop: 1 KiB to the rank two to the right. */
    int far = (me + 2) % n, from = (me + n - 2) % n;
    MPI_Request s, q;
    MPI_Irecv(rbuf, 1024, MPI_BYTE, from, 20, MPI_COMM_WORLD, &q);
    MPI_Isend(buf, 1024, MPI_BYTE, far, 20, MPI_COMM_WORLD, &s);
    note(far, 1024);
    int done = 0;
    while (!done)
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    computed += busy(0.01);

    /* 4. Collectives. */
    MPI_Bcast(buf, 4000, MPI_BYTE, 0, MPI_COMM_WORLD);
    double v[64] = {0}, w[64];
    MPI_Allreduce(v, w, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    /* alltoallv: rank i sends 10 * (i + 1) + j bytes to rank j. */
    int *sc = calloc((size_t)n, sizeof(int)), *sd = calloc((size_t)n, sizeof(int));
    int *rc = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
    for (int j = 0, so = 0, ro = 0; j < n; j++) {
        sc[j] = 10 * (me + 1) + j;
        rc[j] = 10 * (j + 1) + me;
        sd[j] = so;
        rd[j] = ro;
        so += sc[j];
        ro += rc[j];
    }
    MPI_Alltoallv(buf, sc, sd, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, MPI_COMM_WORLD);

    /* 5. sendrecv around the ring the other way. */
    MPI_Sendrecv(buf, 33, MPI_BYTE, left, 30, rbuf, 33, MPI_BYTE, right, 30, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    note(left, 33);
    MPI_Barrier(MPI_COMM_WORLD);

    char path[4096];
    snprintf(path, sizeof path, "%s/expected%d.txt", argv[1], me);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int j = 0; j < n; j++)
        if (msgs[j])
            fprintf(f, "p2p %d %d %lld %lld\n", me, j, msgs[j], nbytes[j]);
    for (int j = 0; j < n; j++)
        fprintf(f, "alltoallv %d %d %d\n", me, j, sc[j]);
    fprintf(f, "computed %.6f\n", computed);
    fclose(f);
    MPI_Finalize();
    return 0;
}
