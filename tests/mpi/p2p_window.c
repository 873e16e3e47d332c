/*
 * p2p_window: windows of 16 nonblocking messages between partners, of
 * sizes on both sides of every threshold a transport may have (16 KiB,
 * 32 KiB, 100 KiB, 200 KiB, 1 MiB), with the receives posted before the
 * sends arrive and after, and one receive of each window shorter than
 * its message (MPI_ERR_TRUNCATE for that one, the bytes that fit
 * delivered, nothing written beyond); every byte of every message is
 * checked.  Shared-memory pairs read such windows in place, several
 * messages in one system call (docs/mpi.md "Single copy").
 */
#include "mpitest.h"

#define WINDOW 16

static void
window(size_t n, int partner, int recv_first, int id)
{
    unsigned char *sb[WINDOW], *rb[WINDOW];
    MPI_Request req[2 * WINDOW];
    MPI_Status st[2 * WINDOW];
    int w, count, cls;
    size_t want;

    for (w = 0; w < WINDOW; w++) {
        sb[w] = t_malloc(n);
        rb[w] = t_malloc(n + 64);
        t_fill(sb[w], n, id * 31 + w + t_rank);
        memset(rb[w], 0xee, n + 64);
    }
    /* The last of the window is received short by 1 KiB. */
    for (int pass = 0; pass < 2; pass++)
        for (w = 0; w < WINDOW; w++) {
            if ((pass == 0) == (recv_first != 0)) {
                int cap = (int)(w == WINDOW - 1 ? n - 1024 : n);

                MPI_OK(MPI_Irecv(rb[w], cap, MPI_BYTE, partner, id * 100 + w,
                                 MPI_COMM_WORLD, &req[w]));
            } else
                MPI_OK(MPI_Isend(sb[w], (int)n, MPI_BYTE, partner,
                                 id * 100 + w, MPI_COMM_WORLD,
                                 &req[WINDOW + w]));
        }
    (void)MPI_Waitall(2 * WINDOW, req, st);
    for (w = 0; w < WINDOW; w++) {
        want = w == WINDOW - 1 ? n - 1024 : n;
        cls = -1;
        MPI_Error_class(st[w].MPI_ERROR, &cls);
        CHECK(cls == (w == WINDOW - 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS),
              "%zu bytes, message %d: error class %d", n, w, cls);
        count = -1;
        MPI_Get_count(&st[w], MPI_BYTE, &count);
        CHECK(count == (int)want, "%zu bytes, message %d: count %d", n, w,
              count);
        long bad = t_verify(rb[w], want, id * 31 + w + partner);
        CHECK(bad < 0, "%zu bytes, message %d: byte %ld differs", n, w, bad);
        for (size_t i = want; i < n + 64; i++)
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
    /* Errors come back in the statuses (MPI_ERR_IN_STATUS). */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    partner = t_partner();
    if (partner != t_rank)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            window(sizes[k], partner, 1, id++);
            window(sizes[k], partner, 0, id++);
            window(sizes[k], partner, t_rank < partner, id++);
        }
    return t_finish("p2p_window");
}
