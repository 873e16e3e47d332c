/*
 * comm: communicators.
 *  - Comm_split by parity with keys reversing the order: sizes, ranks,
 *    and traffic (a ring, Allreduce, Bcast) inside each half; a color of
 *    MPI_UNDEFINED gives MPI_COMM_NULL.
 *  - Comm_dup used at the same time as its parent, with the same tags
 *    and sources: messages never cross communicators, and collectives on
 *    both interleave.
 *  - Comm_compare: IDENT, CONGRUENT (dup, same-order split), SIMILAR
 *    (reversed split), UNEQUAL (parity split).
 *  - MPI_COMM_SELF, Comm_free, and the MPI_TAG_UB attribute.
 */
#include "mpitest.h"

int
main(int argc, char **argv)
{
    MPI_Comm half, dup, rev, same, none, dup2;
    int hr, hs, res, v, w;
    MPI_Status st;

    t_init(&argc, &argv);

    /* Split by parity, keys reversing the order. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, -t_rank, &half));
    MPI_OK(MPI_Comm_rank(half, &hr));
    MPI_OK(MPI_Comm_size(half, &hs));
    int nsame = (t_size - t_rank % 2 + 1) / 2; /* ranks of my parity */
    int above = 0;
    for (int k = t_rank + 2; k < t_size; k += 2)
        above++;
    CHECK(hs == nsame, "half size %d, expected %d", hs, nsame);
    CHECK(hr == above, "half rank %d, expected %d", hr, above);
    /* World rank of half rank k: the parity's ranks, highest first. */
    int top = t_size - 1 - ((t_size - 1 - t_rank % 2) % 2);
    /* Ring in the half: receive the left neighbour's world rank. */
    int right = (hr + 1) % hs, left = (hr - 1 + hs) % hs;
    MPI_OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, right, 1, &v, 1, MPI_INT, left, 1,
                        half, &st));
    CHECK(v == top - 2 * left, "half ring: got %d from half rank %d", v, left);
    CHECK(st.MPI_SOURCE == left, "half ring status source %d", st.MPI_SOURCE);
    MPI_OK(MPI_Allreduce(&t_rank, &v, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int k = t_rank % 2; k < t_size; k += 2)
        want += k;
    CHECK(v == want, "half Allreduce %d, expected %d", v, want);
    v = hr == 0 ? 1234 + t_rank % 2 : -1;
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, 0, half));
    CHECK(v == 1234 + t_rank % 2, "half Bcast %d", v);
    int *ranks = t_malloc(sizeof(int) * (size_t)hs);
    MPI_OK(MPI_Allgather(&t_rank, 1, MPI_INT, ranks, 1, MPI_INT, half));
    for (int k = 0; k < hs; k++)
        CHECK(ranks[k] == top - 2 * k, "half rank %d is world %d", k, ranks[k]);
    free(ranks);

    /* Comm_dup used at the same time as its parent. */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int wr = (t_rank + 1) % t_size, wl = (t_rank - 1 + t_size) % t_size;
    MPI_Request rq[4];
    int a = 100 + t_rank, b = 200 + t_rank, ra = -1, rb = -1;
    /* Post the world receive first, send on dup first: each must still
     * get its own communicator's message. */
    MPI_OK(MPI_Irecv(&ra, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, &rq[0]));
    MPI_OK(
        MPI_Irecv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &rq[1]));
    MPI_OK(MPI_Isend(&b, 1, MPI_INT, wr, 5, dup, &rq[2]));
    MPI_OK(MPI_Isend(&a, 1, MPI_INT, wr, 5, MPI_COMM_WORLD, &rq[3]));
    MPI_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    CHECK(ra == 100 + wl && rb == 200 + wl,
          "dup and world crossed: world got %d, dup got %d", ra, rb);
    /* Collectives on both, interleaved, with user messages in flight. */
    MPI_OK(MPI_Isend(&a, 1, MPI_INT, wr, 6, MPI_COMM_WORLD, &rq[0]));
    for (int i = 0; i < 20; i++) {
        int x = t_rank + i, y = -1, z = -1;
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup));
        MPI_OK(MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECK(y == t_size * (t_size - 1) / 2 + t_size * i, "dup sum %d", y);
        CHECK(z == t_size - 1 + i, "world max %d", z);
        x = i % t_size == t_rank ? 77 + i : -1;
        MPI_OK(MPI_Bcast(&x, 1, MPI_INT, i % t_size, dup));
        CHECK(x == 77 + i, "dup bcast %d", x);
    }
    MPI_OK(MPI_Recv(&w, 1, MPI_INT, wl, 6, MPI_COMM_WORLD, &st));
    CHECK(w == 100 + wl, "world message after collectives %d", w);
    MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    /* Nothing is left pending on either. */
    int flag;
    MPI_OK(MPI_Barrier(dup));
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, &st));
    CHECK(!flag, "stray message on dup");

    /* Comm_compare. */
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT, "world vs world: %d", res);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "world vs dup: %d", res);
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, t_rank, &same));
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, same, &res));
    CHECK(res == MPI_CONGRUENT, "world vs same-order split: %d", res);
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, t_size - t_rank, &rev));
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    CHECK(res == (t_size > 1 ? MPI_SIMILAR : MPI_CONGRUENT),
          "world vs reversed split: %d", res);
    MPI_OK(MPI_Comm_rank(rev, &v));
    CHECK(v == t_size - 1 - t_rank, "reversed rank %d", v);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, half, &res));
    CHECK(res == (t_size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT),
          "world vs parity split: %d", res);
    MPI_OK(MPI_Comm_dup(half, &dup2));
    MPI_OK(MPI_Comm_compare(half, dup2, &res));
    CHECK(res == MPI_CONGRUENT, "half vs its dup: %d", res);

    /* MPI_UNDEFINED: not a member. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank == 0 ? MPI_UNDEFINED : 1, 0,
                          &none));
    if (t_rank == 0)
        CHECK(none == MPI_COMM_NULL, "UNDEFINED color gave a communicator");
    else {
        MPI_OK(MPI_Comm_size(none, &v));
        CHECK(v == t_size - 1, "split without rank 0: size %d", v);
        MPI_OK(MPI_Comm_free(&none));
    }

    /* MPI_COMM_SELF. */
    MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &v));
    CHECK(v == 1, "self size %d", v);
    MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &v));
    CHECK(v == 0, "self rank %d", v);
    v = t_rank;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(v == t_rank, "self allreduce %d", v);
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_SELF));
    MPI_OK(MPI_Barrier(MPI_COMM_SELF));

    /* MPI_TAG_UB. */
    int *ub, found = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found));
    CHECK(found && *ub >= 32767, "TAG_UB found %d value %d", found,
          found ? *ub : 0);

    MPI_OK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "Comm_free left the handle");
    MPI_OK(MPI_Comm_free(&dup2));
    MPI_OK(MPI_Comm_free(&same));
    MPI_OK(MPI_Comm_free(&rev));
    MPI_OK(MPI_Comm_free(&half));
    return t_finish("comm");
}
