/*
 * type_free_pending: a datatype may be freed while a request that uses
 * it is pending (MPI 3.1, 4.1.9); the request completes as if it had not
 * been.  Rank 0 posts receives with a vector type (eager and rendezvous
 * sizes), frees the type, builds other types in its place, then lets
 * the sender go; rank 1 does the same on an Isend.  The data must land
 * where the freed type said.
 */
#include "mpitest.h"

#define N 20000 /* 20000 x 2 ints: above the 64 KiB eager limit */

static void
one(int count, int tag)
{
    MPI_Datatype v, other[8];
    MPI_Request req;
    int *buf = t_malloc(sizeof(int) * 3 * (size_t)count), go = 1;

    MPI_OK(MPI_Type_vector(count, 2, 3, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    if (t_rank == 0) {
        for (int i = 0; i < 3 * count; i++)
            buf[i] = -1;
        MPI_OK(MPI_Irecv(buf, 1, v, 1, tag, MPI_COMM_WORLD, &req));
    } else {
        for (int i = 0; i < 3 * count; i++)
            buf[i] = i;
        MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, tag + 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        MPI_OK(MPI_Isend(buf, 1, v, 0, tag, MPI_COMM_WORLD, &req));
    }
    MPI_OK(MPI_Type_free(&v));
    CHECK(v == MPI_DATATYPE_NULL, "freed handle not null");
    /* Reuse the freed memory and slot with other layouts. */
    for (int i = 0; i < 8; i++) {
        MPI_OK(MPI_Type_contiguous(1000 + i, MPI_CHAR, &other[i]));
        MPI_OK(MPI_Type_commit(&other[i]));
    }
    if (t_rank == 0)
        MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, tag + 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (t_rank == 0)
        for (int i = 0; i < 3 * count; i++) {
            int want = i % 3 == 2 ? -1 : i;

            if (buf[i] != want) {
                CHECK(0, "count %d: int %d is %d, want %d", count, i, buf[i],
                      want);
                break;
            }
        }
    for (int i = 0; i < 8; i++)
        MPI_OK(MPI_Type_free(&other[i]));
    free(buf);
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (t_rank < 2 && t_size >= 2) {
        one(10, 10);
        one(N, 20);
    }
    return t_finish("type_free_pending");
}
