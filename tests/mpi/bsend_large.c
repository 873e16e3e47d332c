/*
 * bsend_large: MPI_Bsend completes locally whatever the size.  Every
 * pair of ranks Bsends to each other before either receives, with
 * messages of 1 byte, the eager limit, 65,537 bytes and 1 MiB: with
 * sends that wait for their receive, this deadlocks.  Then
 * MPI_Buffer_detach waits for the messages to leave, and (p2pmpi) a
 * Bsend with no room in the buffer is an error (MPI_ERR_BUFFER), not a
 * wait.
 */
#include "mpitest.h"

static void
exchange(int n, int m)
{
    int p = t_partner(), size, bsize;
    char *out = t_malloc((size_t)n), *in = t_malloc((size_t)n), *buf;
    MPI_Status st;

    MPI_OK(MPI_Pack_size(n, MPI_BYTE, MPI_COMM_WORLD, &size));
    bsize = size + MPI_BSEND_OVERHEAD;
    buf = t_malloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(buf, bsize));
    t_fill(out, (size_t)n, m + t_rank);
    MPI_OK(MPI_Bsend(out, n, MPI_BYTE, p, m, MPI_COMM_WORLD));
    /* The data was copied: the user's buffer may change at once. */
    memset(out, 0, (size_t)n);
    MPI_OK(MPI_Recv(in, n, MPI_BYTE, p, m, MPI_COMM_WORLD, &st));
    CHECK(t_verify(in, (size_t)n, m + p) < 0, "%d bytes: differ at %ld", n,
          t_verify(in, (size_t)n, m + p));
    {
        void *back;
        int bs;

        MPI_OK(MPI_Buffer_detach(&back, &bs));
        CHECK(back == buf && bs == bsize, "detach gave %p %d", back, bs);
    }
    free(buf);
    free(out);
    free(in);
}

int
main(int argc, char **argv)
{
    static const int sizes[] = {1, 65536, 65537, 1 << 20};
    char small[16], *b;
    void *back;
    int rc, bs;

    t_init(&argc, &argv);
    for (int i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); i++)
        exchange(sizes[i], i + 1);
#ifdef P2PMPI
    /* No room: an error at once.  (Open MPI sends at once when it can and
     * uses the buffer only when it cannot, so this is ours only.) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Buffer_attach(small, sizeof small));
    b = t_malloc(100);
    rc = MPI_Bsend(b, 100, MPI_BYTE, t_partner(), 99, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "Bsend beyond the buffer succeeded");
    MPI_OK(MPI_Buffer_detach(&back, &bs));
    CHECK(back == small, "detach gave %p", back);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(b);
#else
    (void)small, (void)back, (void)b, (void)rc, (void)bs;
#endif
    return t_finish("bsend_large");
}
