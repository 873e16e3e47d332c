/*
 * p2p_window: windows of 16 nonblocking messages between partners, of
 * sizes on both sides of every threshold a transport may have (16 KiB,
 * 32 KiB, 100 KiB, 200 KiB, 1 MiB), with the receives posted before the
 * sends arrive and after; every byte of every message is checked, and
 * nothing may be written past a receive.  Shared-memory pairs read such
 * windows in place, several messages in one system call (docs/mpi.md
 * "Single copy").  No receive here is short: Open MPI 4.1's shared-memory
 * path crashes on a window with a truncated single copy (its CMA read
 * fails with EFAULT, then SIGSEGV in vader), and these programs must pass
 * under Open MPI too; p2p_trunc checks truncation.
 */
#include "mpitest.h"

#define WINDOW 16

static void
window(size_t n, int partner, int recv_first, int id)
{
    unsigned char *sb[WINDOW], *rb[WINDOW];
    MPI_Request req[2 * WINDOW];
    MPI_Status st[2 * WINDOW];
    int w, count;

    for (w = 0; w < WINDOW; w++) {
        sb[w] = t_malloc(n);
        rb[w] = t_malloc(n + 64);
        t_fill(sb[w], n, id * 31 + w + t_rank);
        memset(rb[w], 0xee, n + 64);
    }
    for (int pass = 0; pass < 2; pass++)
        for (w = 0; w < WINDOW; w++) {
            if ((pass == 0) == (recv_first != 0))
                MPI_OK(MPI_Irecv(rb[w], (int)n, MPI_BYTE, partner,
                                 id * 100 + w, MPI_COMM_WORLD, &req[w]));
            else
                MPI_OK(MPI_Isend(sb[w], (int)n, MPI_BYTE, partner,
                                 id * 100 + w, MPI_COMM_WORLD,
                                 &req[WINDOW + w]));
        }
    MPI_OK(MPI_Waitall(2 * WINDOW, req, st));
    for (w = 0; w < WINDOW; w++) {
        long bad = t_verify(rb[w], n, id * 31 + w + partner);

        CHECK(bad < 0, "%zu bytes, message %d: byte %ld differs", n, w, bad);
        count = -1;
        MPI_Get_count(&st[w], MPI_BYTE, &count);
        CHECK(count == (int)n, "%zu bytes, message %d: count %d", n, w,
              count);
        for (size_t i = n; i < n + 64; i++)
            if (rb[w][i] != 0xee) {
                CHECK(0, "%zu bytes, message %d: byte %zu written beyond "
                         "the receive",
                      n, w, i);
                break;
            }
        free(sb[w]);
        free(rb[w]);
    }
}

int
main(int argc, char **argv)
{
    static const size_t sizes[] = {16384, 32768, 100000, 200000, 1 << 20};
    int partner, id = 1;

    t_init(&argc, &argv);
    partner = t_partner();
    if (partner != t_rank)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            window(sizes[k], partner, 1, id++);
            window(sizes[k], partner, 0, id++);
            window(sizes[k], partner, t_rank < partner, id++);
        }
    return t_finish("p2p_window");
}
