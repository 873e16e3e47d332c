/*
 * mpi_onesided: one-sided costs between ranks 0 and 1 (osu_put_latency
 * style).  Rank 0 is the origin, rank 1 the target; each figure is the
 * mean over ITERATIONS after a warm-up, in microseconds:
 *     put_flush_us      8-byte Put + Win_flush in a lock_all epoch
 *     get_flush_us      8-byte Get + Win_flush
 *     fetch_op_us       Fetch_and_op (SUM, one long) + Win_flush
 *     lock_put_unlock_us  Win_lock(exclusive), 8-byte Put, Win_unlock
 *     fence_put_us      8-byte Put and Win_fence on both ranks
 *     put_mib_gbs       1 MiB Put + Win_flush: GB/s
 * The target waits in MPI_Barrier during the passive-target figures (its
 * library serves the requests from there).  Standard MPI only: builds
 * with p2pcc, Open MPI's and MPICH's mpicc.
 * Usage: mpi_onesided [ITERATIONS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BIG (1 << 20)

static int rank, iters = 2000;
static MPI_Win win;
static char *buf;

enum fig { PUT, GET, FOP, LOCK, BIGPUT };

/* One passive-target figure: the origin runs it, the target waits. */
static double
passive(enum fig f)
{
    double t0 = 0, out = 0;
    long one = 1, old;
    int i, n = f == BIGPUT ? iters / 10 + 1 : iters, warm = n / 10 + 1;

    if (rank == 0) {
        if (f != LOCK)
            MPI_Win_lock_all(0, win);
        for (i = -warm; i < n; i++) {
            if (i == 0)
                t0 = MPI_Wtime();
            switch (f) {
            case PUT:
                MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
                break;
            case GET:
                MPI_Get(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
                break;
            case FOP:
                MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 0, MPI_SUM, win);
                break;
            case LOCK:
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
                MPI_Win_unlock(1, win);
                continue;
            case BIGPUT:
                MPI_Put(buf, BIG, MPI_BYTE, 1, 0, BIG, MPI_BYTE, win);
                break;
            }
            MPI_Win_flush(1, win);
        }
        out = (MPI_Wtime() - t0) / n;
        if (f != LOCK)
            MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return f == BIGPUT ? BIG / out / 1e9 : out * 1e6;
}

int
main(int argc, char **argv)
{
    int size, i;
    double t0 = 0, fence;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        iters = atoi(argv[1]);
    if (size != 2 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_onesided: needs 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
    {
        double put = passive(PUT), get = passive(GET), fop = passive(FOP);
        double lock = passive(LOCK), big = passive(BIGPUT);

        MPI_Win_fence(0, win);
        for (i = -iters / 10 - 1; i < iters; i++) {
            if (i == 0)
                t0 = MPI_Wtime();
            if (rank == 0)
                MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
            MPI_Win_fence(0, win);
        }
        fence = (MPI_Wtime() - t0) / iters * 1e6;
        if (rank == 0)
            printf("put_flush_us %.2f\nget_flush_us %.2f\nfetch_op_us "
                   "%.2f\nlock_put_unlock_us %.2f\nfence_put_us %.2f\n"
                   "put_mib_gbs %.2f\n",
                   put, get, fop, lock, fence, big);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
