/* OSU-style MPI baselines for icn-via's pingpong and window benchmarks.
 * Built only where MPI is installed (see run_mpi.sh). Same sizes, iteration counts and
 * output columns as `icnlab via`:
 *   mpirun -np 2 ./mpi_pingpong latency [sizes...]
 *   mpirun -np 2 ./mpi_pingpong bw      [sizes...]
 *   mpirun -np 2 ./mpi_pingpong stats N [size]   (every round trip timed: min / median / p90
 *                                                 one-way µs, as examples/ppstats.rs prints)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSZ (4 << 20)
#define WINDOW 64

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One pingpong round trip: rank 0 sends then receives, rank 1 echoes from its own buffer. */
static void round_trip(int rank, long size, char *buf, char *rbuf) {
    if (rank == 0) {
        MPI_Send(buf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rbuf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    }
}

/* Times every round trip: the median is robust to the preemptions of a loaded machine. */
static void stats(int rank, long n, long size, char *buf, char *rbuf) {
    double *t = malloc(sizeof(double) * n), sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < n; i++) {
        double t0 = MPI_Wtime();
        round_trip(rank, size, buf, rbuf);
        t[i] = (MPI_Wtime() - t0) * 1e6 / 2.0;
        sum += t[i];
    }
    if (rank == 0) {
        qsort(t, n, sizeof(double), cmp_double);
        printf("mpi size %ld one-way us: min %.3f median %.3f p90 %.3f mean %.3f\n", size, t[0],
               t[(n - 1) / 2], t[(long)((n - 1) * 0.9)], sum / n);
    }
    free(t);
}

static int reps(int nominal, long size) {
    long cap = (512L << 20) / (size > 0 ? size : 1);
    long n = nominal < cap ? nominal : cap;
    return n < 10 ? 10 : (int)n;
}

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int bw = argc > 1 && strcmp(argv[1], "bw") == 0;
    if (argc > 1 && strcmp(argv[1], "stats") == 0) {
        long n = argc > 2 ? atol(argv[2]) : 100000, size = argc > 3 ? atol(argv[3]) : 8;
        char *b = calloc(1, size + 1), *rb = calloc(1, size + 1);
        stats(rank, n, size, b, rb);
        free(b);
        free(rb);
        MPI_Finalize();
        return 0;
    }
    long sizes[64];
    int ns = 0;
    if (argc > 2) {
        for (int i = 2; i < argc && ns < 64; i++) sizes[ns++] = atol(argv[i]);
    } else {
        sizes[ns++] = 0;
        for (long s = 1; s <= MAXSZ; s <<= 1) sizes[ns++] = s;
    }
    char *buf = malloc(MAXSZ), *rbuf = malloc(MAXSZ);
    memset(buf, 0xa5, MAXSZ);
    memset(rbuf, 0, MAXSZ);
    MPI_Request req[WINDOW];
    if (rank == 0) printf(bw ? "# mpi window\n# Size      Bandwidth (MB/s)\n" : "# mpi pingpong\n# Size          Latency (us)\n");
    for (int k = 0; k < ns; k++) {
        long size = sizes[k];
        if (!bw) {
            int n = reps(1000, size), warm = n < 100 ? n : 100;
            double t0 = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < n + warm; i++) {
                if (i == warm) t0 = MPI_Wtime();
                round_trip(rank, size, buf, rbuf);
            }
            if (rank == 0) printf("%-10ld%18.2f\n", size, (MPI_Wtime() - t0) * 1e6 / (2.0 * n));
        } else {
            int rounds = (reps(2000, size) + WINDOW - 1) / WINDOW;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int r = 0; r < rounds; r++) {
                for (int j = 0; j < WINDOW; j++) {
                    if (rank == 0) MPI_Isend(buf, size, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[j]);
                    else MPI_Irecv(rbuf, size, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[j]);
                }
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            }
            char ack;
            if (rank == 0) MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
            if (rank == 0)
                printf("%-10ld%18.2f\n", size, (double)rounds * WINDOW * size / (MPI_Wtime() - t0) / 1e6);
        }
        fflush(stdout);
    }
    free(buf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
