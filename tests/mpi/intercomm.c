/*
 * intercomm: intercommunicators between the even and the odd ranks.
 *  - Intercomm_create over MPI_COMM_WORLD (leaders: world ranks 0 and 1);
 *    Comm_test_inter, Comm_size (local), Comm_remote_size,
 *    Comm_remote_group, Comm_group against the world's ranks;
 *  - point-to-point across: local rank r and remote rank r exchange
 *    their world ranks (Sendrecv), and every rank sends to remote rank 0,
 *    which receives them all with MPI_ANY_SOURCE;
 *  - Barrier, Bcast (MPI_ROOT, MPI_PROC_NULL), Allreduce and Reduce
 *    across the two groups;
 *  - Intercomm_merge both ways round (even low, then even high): the
 *    merged communicator orders the low group first and works (an
 *    Allreduce); Comm_free of everything.
 * With one rank there is no other group: the program checks that
 * MPI_COMM_WORLD is not an intercommunicator and stops.
 */
#include "mpitest.h"

static void
merged(MPI_Comm ic, int even_high, int lsize)
{
    MPI_Comm m;
    int size, rank, want, sum = 0, wr = t_rank, flag;
    int even = t_rank % 2 == 0, nev = (t_size + 1) / 2;

    MPI_OK(MPI_Intercomm_merge(ic, even ? even_high : !even_high, &m));
    MPI_OK(MPI_Comm_test_inter(m, &flag));
    CHECK(!flag, "merged communicator is an intercommunicator");
    MPI_OK(MPI_Comm_size(m, &size));
    MPI_OK(MPI_Comm_rank(m, &rank));
    CHECK(size == t_size, "merged size %d", size);
    /* Low group first, each in its local order (world rank / 2). */
    if (even)
        want = even_high ? (t_size - nev) + t_rank / 2 : t_rank / 2;
    else
        want = even_high ? t_rank / 2 : nev + t_rank / 2;
    CHECK(rank == want, "merged rank %d, want %d (even high %d)", rank, want,
          even_high);
    MPI_OK(MPI_Allreduce(&wr, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECK(sum == t_size * (t_size - 1) / 2, "merged sum %d", sum);
    (void)lsize;
    MPI_OK(MPI_Comm_free(&m));
}

int
main(int argc, char **argv)
{
    MPI_Comm local, ic;
    MPI_Group rg, lg, wg;
    int flag, lsize, rsize, lrank, even, nev, nodd, other = -1, n, cmp;

    t_init(&argc, &argv);
    MPI_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(!flag, "MPI_COMM_WORLD is an intercommunicator");
    if (t_size < 2)
        return t_finish("intercomm");
    even = t_rank % 2 == 0;
    nev = (t_size + 1) / 2;
    nodd = t_size / 2;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, even, t_rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 17,
                                &ic));
    MPI_OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "not an intercommunicator");
    MPI_OK(MPI_Comm_size(ic, &lsize));
    MPI_OK(MPI_Comm_rank(ic, &lrank));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    CHECK(lsize == (even ? nev : nodd) && rsize == (even ? nodd : nev),
          "sizes %d %d", lsize, rsize);
    CHECK(lrank == t_rank / 2, "rank %d", lrank);

    /* The remote group is the other parity, in world order. */
    MPI_OK(MPI_Comm_remote_group(ic, &rg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    {
        int r0 = 0, w0 = -1;

        MPI_OK(MPI_Group_translate_ranks(rg, 1, &r0, wg, &w0));
        CHECK(w0 == (even ? 1 : 0), "remote rank 0 is world %d", w0);
    }
    MPI_OK(MPI_Comm_group(ic, &lg));
    MPI_OK(MPI_Group_size(lg, &n));
    CHECK(n == lsize, "local group size %d", n);
    MPI_OK(MPI_Group_compare(lg, rg, &cmp));
    CHECK(cmp == MPI_UNEQUAL, "local and remote groups compare %d", cmp);

    /* Pairs across. */
    if (lrank < rsize) {
        MPI_OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, lrank, 5, &other, 1, MPI_INT,
                            lrank, 5, ic, MPI_STATUS_IGNORE));
        CHECK(other == (even ? t_rank + 1 : t_rank - 1), "pair got %d",
              other);
    }
    /* Everyone to remote rank 0, which takes them in any order. */
    {
        MPI_Request req;
        int got = 0, seen = 0;
        MPI_Status st;

        MPI_OK(MPI_Isend(&t_rank, 1, MPI_INT, 0, 6, ic, &req));
        if (lrank == 0)
            for (int i = 0; i < rsize; i++) {
                MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 6, ic, &st));
                CHECK(got == 2 * st.MPI_SOURCE + (even ? 1 : 0),
                      "from remote %d: world %d", st.MPI_SOURCE, got);
                seen |= 1 << st.MPI_SOURCE;
            }
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (lrank == 0)
            CHECK(seen == (1 << rsize) - 1, "senders seen %x", seen);
    }
    /* Collectives across: Barrier; Bcast from even rank 0 (MPI_ROOT, the
     * other evens MPI_PROC_NULL); Allreduce (each group gets the other's
     * sum); Reduce of the evens' world ranks to odd rank 0. */
    {
        int v = even ? 4242 : -1, sum = -1, evsum = 0, odsum = 0;

        for (int i = 0; i < t_size; i++)
            *(i % 2 ? &odsum : &evsum) += i;
        MPI_OK(MPI_Barrier(ic));
        MPI_OK(MPI_Bcast(&v, 1, MPI_INT,
                         even ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0,
                         ic));
        CHECK(v == 4242, "bcast across: %d", v);
        MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, ic));
        CHECK(sum == (even ? odsum : evsum), "allreduce across: %d", sum);
        sum = -1;
        MPI_OK(MPI_Reduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM,
                          even ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL),
                          ic));
        if (!even && lrank == 0)
            CHECK(sum == evsum, "reduce across: %d", sum);
    }
    merged(ic, 0, lsize);
    merged(ic, 1, lsize);

    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
    return t_finish("intercomm");
}
