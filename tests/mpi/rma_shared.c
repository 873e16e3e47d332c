/*
 * rma_shared: Win_allocate_shared over the ranks of one host
 * (Comm_split_type(MPI_COMM_TYPE_SHARED)): each rank writes its own
 * segment (rank r of the host has r + 1 ints) with plain stores, and
 * reads every other segment through Win_shared_query's pointer after
 * Win_sync and a barrier; a Put through the window to the next rank's
 * segment shows in the memory its owner sees.  Then a window where the
 * odd ranks of the host have no memory: querying them gives size 0 and
 * a NULL base (MPICH's rma/win_shared_noncontig_put asserts it; Open MPI
 * 4.1 gives an address, so that part is ours only), and MPI_PROC_NULL
 * the first segment.  With replicas every rank is alone on
 * its "host" communicator, which must work the same.
 */
#include "mpitest.h"

int
main(int argc, char **argv)
{
    MPI_Comm node;
    MPI_Win win;
    int nrank, nsize, *base = NULL, *world, i, r, unit, *seg;
    MPI_Aint size;

    t_init(&argc, &argv);
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_rank(node, &nrank));
    MPI_OK(MPI_Comm_size(node, &nsize));
    world = t_malloc((size_t)nsize * sizeof *world);
    MPI_OK(MPI_Allgather(&t_rank, 1, MPI_INT, world, 1, MPI_INT, node));
    MPI_OK(MPI_Win_allocate_shared((MPI_Aint)(nrank + 1) * (MPI_Aint)sizeof(int),
                                   sizeof(int), MPI_INFO_NULL, node, &base,
                                   &win));
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (i = 0; i <= nrank; i++)
        base[i] = t_rank * 100 + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    for (r = 0; r < nsize; r++) {
        MPI_OK(MPI_Win_shared_query(win, r, &size, &unit, &seg));
        CHECK(size == (MPI_Aint)(r + 1) * (MPI_Aint)sizeof(int) &&
                  unit == (int)sizeof(int),
              "segment %d: size %ld unit %d", r, (long)size, unit);
        for (i = 0; i <= r; i++)
            CHECK(seg[i] == world[r] * 100 + i,
                  "segment %d [%d] = %d, want %d", r, i, seg[i],
                  world[r] * 100 + i);
    }
    MPI_OK(MPI_Barrier(node));
    /* A Put into the next rank's first int, seen in its own memory. */
    {
        int next = (nrank + 1) % nsize, v = -1 - t_rank, prev;

        MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 0, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(next, win));
        MPI_OK(MPI_Win_sync(win));
        MPI_OK(MPI_Barrier(node));
        MPI_OK(MPI_Win_sync(win));
        prev = world[(nrank + nsize - 1) % nsize];
        CHECK(base[0] == -1 - prev, "put through the window: %d", base[0]);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));

    /* Segments of nothing on the odd ranks. */
    MPI_OK(MPI_Win_allocate_shared(nrank % 2 ? 0 : 8, 1, MPI_INFO_NULL, node,
                                   &base, &win));
    for (r = 0; r < nsize; r++) {
        MPI_OK(MPI_Win_shared_query(win, r, &size, &unit, &seg));
        if (r % 2) {
            CHECK(size == 0, "empty segment %d: size %ld", r, (long)size);
#ifndef OPEN_MPI
            CHECK(seg == NULL, "empty segment %d: an address", r);
#endif
        } else
            CHECK(size == 8 && seg != NULL, "segment %d: size %ld", r,
                  (long)size);
    }
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &seg));
    CHECK(size == 8 && seg != NULL, "MPI_PROC_NULL: size %ld", (long)size);
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&node));
    free(world);
    return t_finish("rma_shared");
}
