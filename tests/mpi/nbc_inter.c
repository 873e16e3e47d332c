/*
 * nbc_inter: the nonblocking neighbour collectives (Ineighbor_* on a
 * non-periodic Cartesian line, all five in flight at once), the
 * nonblocking collectives over an intercommunicator whose groups have
 * unequal sizes (every I* form, several in flight, MPI_ROOT and
 * MPI_PROC_NULL roots from either side), Comm_idup (on the world, on
 * the intercommunicator, several in flight; the communicator appears
 * only at completion), and Comm_dup, Comm_split, Comm_create and
 * Comm_split_type (MPI_COMM_TYPE_SHARED) over the intercommunicator
 * (local and remote groups checked).  Every value is
 * computed from world ranks, so each rank knows what it must receive.
 */
#include "mpitest.h"

#define NB 5

static void
neighbours(void)
{
    MPI_Comm line;
    MPI_Request r[NB];
    int dims[1] = {t_size}, periods[1] = {0}, left, right, me;
    int sb[2], ag[2], agv[3], a2a[2], a2av[3], a2aw[2];
    int c1[2] = {1, 1}, d1[2] = {0, 1}, cv[2] = {1, 2}, dv[2] = {0, 1};
    MPI_Aint bd[2] = {0, sizeof(int)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};

    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line));
    MPI_OK(MPI_Comm_rank(line, &me));
    MPI_OK(MPI_Cart_shift(line, 0, 1, &left, &right));
    for (int i = 0; i < 2; i++) {
        sb[i] = me * 10 + i;
        ag[i] = a2a[i] = a2aw[i] = -1;
    }
    for (int i = 0; i < 3; i++)
        agv[i] = a2av[i] = -1;
    /* Block 0 goes to the left neighbour, block 1 to the right one. */
    MPI_OK(MPI_Ineighbor_allgather(&sb[0], 1, MPI_INT, ag, 1, MPI_INT, line,
                                   &r[0]));
    MPI_OK(MPI_Ineighbor_allgatherv(&sb[0], 1, MPI_INT, agv, c1, dv, MPI_INT,
                                    line, &r[1]));
    MPI_OK(
        MPI_Ineighbor_alltoall(sb, 1, MPI_INT, a2a, 1, MPI_INT, line, &r[2]));
    /* v: one element each way, received at displacements 0 and 1 of a
     * buffer of 3 with counts (1, 2): the right neighbour sends 1. */
    MPI_OK(MPI_Ineighbor_alltoallv(sb, c1, d1, MPI_INT, a2av, cv, dv, MPI_INT,
                                   line, &r[3]));
    MPI_OK(
        MPI_Ineighbor_alltoallw(sb, c1, bd, ty, a2aw, c1, bd, ty, line, &r[4]));
    MPI_OK(MPI_Waitall(NB, r, MPI_STATUSES_IGNORE));
    if (left != MPI_PROC_NULL) {
        CHECK(ag[0] == left * 10, "allgather from left %d", ag[0]);
        CHECK(agv[0] == left * 10, "allgatherv from left %d", agv[0]);
        CHECK(a2a[0] == left * 10 + 1, "alltoall from left %d", a2a[0]);
        CHECK(a2av[0] == left * 10 + 1, "alltoallv from left %d", a2av[0]);
        CHECK(a2aw[0] == left * 10 + 1, "alltoallw from left %d", a2aw[0]);
    } else
        CHECK(ag[0] == -1 && a2a[0] == -1 && a2aw[0] == -1,
              "a block from MPI_PROC_NULL was written");
    if (right != MPI_PROC_NULL) {
        CHECK(ag[1] == right * 10, "allgather from right %d", ag[1]);
        CHECK(agv[1] == right * 10, "allgatherv from right %d", agv[1]);
        CHECK(a2a[1] == right * 10, "alltoall from right %d", a2a[1]);
        CHECK(a2av[1] == right * 10, "alltoallv from right %d", a2av[1]);
        CHECK(a2av[2] == -1, "alltoallv wrote past the block");
        CHECK(a2aw[1] == right * 10, "alltoallw from right %d", a2aw[1]);
    } else
        CHECK(ag[1] == -1 && a2a[1] == -1 && a2aw[1] == -1,
              "a block from MPI_PROC_NULL was written");
    MPI_OK(MPI_Comm_free(&line));
}

/* The intercommunicator: group 0 is world ranks [0, n0), group 1 the
 * rest. */
static int n0, color, lrank, lsize, rsize;

static int
remote_world(int r) /* world rank of remote rank r */
{
    return color == 0 ? n0 + r : r;
}

static int
sum_remote(int add) /* sum over the remote group of (world rank + add) */
{
    int s = 0;

    for (int r = 0; r < rsize; r++)
        s += remote_world(r) + add;
    return s;
}

static void
inter_collectives(MPI_Comm ic)
{
    MPI_Request r[3];
    int *a, *b, *c, *cnt, *dsp, i, n, root, x;

    a = t_malloc(64 * sizeof *a);
    b = t_malloc(64 * sizeof *b);
    c = t_malloc(64 * sizeof *c);
    cnt = t_malloc(64 * sizeof *cnt);
    dsp = t_malloc(64 * sizeof *dsp);

    /* Three in flight: barrier, allreduce, alltoall. */
    for (i = 0; i < 4; i++)
        a[i] = t_rank + i;
    for (i = 0; i < rsize; i++)
        c[i] = t_rank * 100 + i;
    MPI_OK(MPI_Ibarrier(ic, &r[0]));
    MPI_OK(MPI_Iallreduce(a, b, 4, MPI_INT, MPI_SUM, ic, &r[1]));
    MPI_OK(MPI_Ialltoall(c, 1, MPI_INT, a + 8, 1, MPI_INT, ic, &r[2]));
    MPI_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    for (i = 0; i < 4; i++)
        CHECK(b[i] == sum_remote(i), "iallreduce[%d] %d want %d", i, b[i],
              sum_remote(i));
    for (i = 0; i < rsize; i++)
        CHECK(a[8 + i] == remote_world(i) * 100 + lrank, "ialltoall[%d] %d", i,
              a[8 + i]);

    /* Ibcast both ways: group 0's rank 0, then group 1's last rank. */
    for (int from = 0; from < 2; from++) {
        int rootl = from == 0 ? 0 : (color == 1 ? lsize : rsize) - 1;

        for (i = 0; i < 5; i++)
            a[i] = color == from && lrank == rootl ? 100 * from + i : -1;
        if (color == from)
            root = lrank == rootl ? MPI_ROOT : MPI_PROC_NULL;
        else
            root = rootl;
        MPI_OK(MPI_Ibcast(a, 5, MPI_INT, root, ic, &r[0]));
        MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        if (color != from)
            for (i = 0; i < 5; i++)
                CHECK(a[i] == 100 * from + i, "ibcast from %d: [%d] %d", from,
                      i, a[i]);
    }

    /* Ireduce to group 0's rank 0. */
    for (i = 0; i < 3; i++) {
        a[i] = t_rank * 2 + i;
        b[i] = -1;
    }
    root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_OK(MPI_Ireduce(a, b, 3, MPI_INT, MPI_SUM, root, ic, &r[0]));
    MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    if (root == MPI_ROOT)
        for (i = 0; i < 3; i++) {
            int want = 0;

            for (int k = 0; k < rsize; k++)
                want += remote_world(k) * 2 + i;
            CHECK(b[i] == want, "ireduce[%d] %d want %d", i, b[i], want);
        }

    /* Igather and Igatherv to group 1's rank 0: remote i sends i + 1. */
    root = color == 1 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    x = t_rank * 10;
    for (i = 0, n = 0; i < rsize; i++) {
        cnt[i] = i + 1;
        dsp[i] = n;
        n += i + 1;
    }
    for (i = 0; i < 4; i++)
        a[i] = x + i;
    MPI_OK(MPI_Igather(&x, 1, MPI_INT, b, 1, MPI_INT, root, ic, &r[0]));
    MPI_OK(MPI_Igatherv(a, lrank + 1, MPI_INT, c, cnt, dsp, MPI_INT, root, ic,
                        &r[1]));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    if (root == MPI_ROOT)
        for (i = 0; i < rsize; i++) {
            CHECK(b[i] == remote_world(i) * 10, "igather[%d] %d", i, b[i]);
            for (int k = 0; k <= i; k++)
                CHECK(c[dsp[i] + k] == remote_world(i) * 10 + k,
                      "igatherv[%d][%d] %d", i, k, c[dsp[i] + k]);
        }

    /* Iscatter and Iscatterv from group 0's rank 0. */
    root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (i = 0; i < 64; i++)
        a[i] = 1000 + i;
    for (i = 0, n = 0; i < rsize; i++) {
        cnt[i] = 2;
        dsp[i] = 3 * i;
    }
    b[0] = c[0] = c[1] = -1;
    MPI_OK(MPI_Iscatter(a, 1, MPI_INT, b, 1, MPI_INT, root, ic, &r[0]));
    MPI_OK(MPI_Iscatterv(a, cnt, dsp, MPI_INT, c, 2, MPI_INT, root, ic, &r[1]));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    if (color == 1) {
        CHECK(b[0] == 1000 + lrank, "iscatter %d", b[0]);
        CHECK(c[0] == 1000 + 3 * lrank && c[1] == 1001 + 3 * lrank,
              "iscatterv %d %d", c[0], c[1]);
    }

    /* Iallgather(v): every remote world rank; v: remote i gives 1. */
    x = t_rank;
    for (i = 0; i < rsize; i++) {
        cnt[i] = 1;
        dsp[i] = rsize - 1 - i; /* reversed */
    }
    MPI_OK(MPI_Iallgather(&x, 1, MPI_INT, a, 1, MPI_INT, ic, &r[0]));
    MPI_OK(MPI_Iallgatherv(&x, 1, MPI_INT, b, cnt, dsp, MPI_INT, ic, &r[1]));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    for (i = 0; i < rsize; i++) {
        CHECK(a[i] == remote_world(i), "iallgather[%d] %d", i, a[i]);
        CHECK(b[rsize - 1 - i] == remote_world(i), "iallgatherv[%d] %d", i,
              b[rsize - 1 - i]);
    }

    /* Ialltoallv and Ialltoallw: block i (one int) at 2i. */
    {
        int sc[64], sd[64], wd[64];
        MPI_Datatype wt[64];

        for (i = 0; i < rsize; i++) {
            sc[i] = 1;
            sd[i] = 2 * i;
            wd[i] = 2 * i * (int)sizeof(int);
            wt[i] = MPI_INT;
            a[2 * i] = t_rank * 1000 + i;
            b[2 * i] = c[2 * i] = -1;
        }
        MPI_OK(
            MPI_Ialltoallv(a, sc, sd, MPI_INT, b, sc, sd, MPI_INT, ic, &r[0]));
        MPI_OK(MPI_Ialltoallw(a, sc, wd, wt, c, sc, wd, wt, ic, &r[1]));
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (i = 0; i < rsize; i++) {
            CHECK(b[2 * i] == remote_world(i) * 1000 + lrank,
                  "ialltoallv[%d] %d", i, b[2 * i]);
            CHECK(c[2 * i] == remote_world(i) * 1000 + lrank,
                  "ialltoallw[%d] %d", i, c[2 * i]);
        }
    }

    /* Ireduce_scatter_block and Ireduce_scatter: n = lsize * rsize
     * elements in both groups; each local rank gets n / lsize. */
    n = lsize * rsize;
    for (i = 0; i < n; i++)
        a[i] = t_rank + i;
    for (i = 0; i < lsize; i++)
        cnt[i] = rsize;
    MPI_OK(MPI_Ireduce_scatter_block(a, b, rsize, MPI_INT, MPI_SUM, ic, &r[0]));
    MPI_OK(MPI_Ireduce_scatter(a, c, cnt, MPI_INT, MPI_SUM, ic, &r[1]));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    for (i = 0; i < rsize; i++) {
        int want = sum_remote(lrank * rsize + i);

        CHECK(b[i] == want, "ireduce_scatter_block[%d] %d want %d", i, b[i],
              want);
        CHECK(c[i] == want, "ireduce_scatter[%d] %d want %d", i, c[i], want);
    }
    free(a);
    free(b);
    free(c);
    free(cnt);
    free(dsp);
}

/* A communicator made from ic: inter, nl local and nr remote members,
 * whose remote world ranks sum to want. */
static void
check_inter(MPI_Comm nc, int nl, int nr, int want, const char *what)
{
    int flag, sz, sum = 0;

    MPI_OK(MPI_Comm_test_inter(nc, &flag));
    CHECK(flag, "%s: not an intercommunicator", what);
    MPI_OK(MPI_Comm_size(nc, &sz));
    CHECK(sz == nl, "%s: local size %d want %d", what, sz, nl);
    MPI_OK(MPI_Comm_remote_size(nc, &sz));
    CHECK(sz == nr, "%s: remote size %d want %d", what, sz, nr);
    MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, nc));
    CHECK(sum == want, "%s: remote sum %d want %d", what, sum, want);
}

static void
inter_comms(MPI_Comm ic)
{
    MPI_Comm d, id, sp, cr;
    MPI_Group g, eg;
    MPI_Request r;
    int i, nl, nr, want, rank, even[64], ne = 0;

    MPI_OK(MPI_Comm_dup(ic, &d));
    check_inter(d, lsize, rsize, sum_remote(0), "dup");
    inter_collectives(d);
    {
        /* The duplicate merges like the original. */
        MPI_Comm m;
        int sz, sum;

        MPI_OK(MPI_Intercomm_merge(d, color, &m));
        MPI_OK(MPI_Comm_size(m, &sz));
        CHECK(sz == t_size, "merge of the dup: size %d", sz);
        MPI_OK(MPI_Comm_rank(m, &rank));
        CHECK(rank == t_rank, "merge of the dup: rank %d", rank);
        MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, m));
        CHECK(sum == t_size * (t_size - 1) / 2, "merge: sum %d", sum);
        MPI_OK(MPI_Comm_free(&m));
    }
    MPI_OK(MPI_Comm_free(&d));

    MPI_OK(MPI_Comm_idup(ic, &id, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_inter(id, lsize, rsize, sum_remote(0), "idup");
    MPI_OK(MPI_Comm_free(&id));

    /* Split by lrank parity, keys reversed. */
    for (int k = 0; k < 2; k++) {
        MPI_OK(MPI_Comm_split(ic, k == lrank % 2 ? k : MPI_UNDEFINED, -lrank,
                              &sp));
        if (k != lrank % 2) {
            CHECK(sp == MPI_COMM_NULL, "split: not my color but a comm");
            continue;
        }
        nl = (lsize - k + 1) / 2;
        nr = (rsize - k + 1) / 2;
        if (nl == 0 || nr == 0) {
            CHECK(sp == MPI_COMM_NULL, "split: an empty side but a comm");
            continue;
        }
        for (i = k, want = 0; i < rsize; i += 2)
            want += remote_world(i);
        CHECK(sp != MPI_COMM_NULL, "split: no communicator");
        if (sp == MPI_COMM_NULL)
            continue;
        check_inter(sp, nl, nr, want, "split");
        MPI_OK(MPI_Comm_rank(sp, &rank));
        CHECK(rank == (lsize - 1 - lrank) / 2, "split: rank %d (lrank %d)",
              rank, lrank);
        MPI_OK(MPI_Comm_free(&sp));
    }

    /* Create from the even local ranks of each group. */
    MPI_OK(MPI_Comm_group(ic, &g));
    for (i = 0; i < lsize; i += 2)
        even[ne++] = i;
    MPI_OK(MPI_Group_incl(g, ne, even, &eg));
    MPI_OK(MPI_Comm_create(ic, eg, &cr));
    if (lrank % 2 == 1)
        CHECK(cr == MPI_COMM_NULL, "create: not a member but a comm");
    else {
        for (i = 0, want = 0; i < rsize; i += 2)
            want += remote_world(i);
        check_inter(cr, ne, (rsize + 1) / 2, want, "create");
        MPI_OK(MPI_Comm_free(&cr));
    }
    MPI_OK(MPI_Group_free(&eg));
    MPI_OK(MPI_Group_free(&g));
}

/* Several Comm_idup in flight on the world and on two duplicates. */
static void
idups(void)
{
    MPI_Comm base[2], out[3], other, gone;
    MPI_Request gr;
    int gsum = -1;
    MPI_Request r[3];
    int sum, flag, i, done = 0;

    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base[0]));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -t_rank, &base[1]));
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &out[0], &r[0]));
    MPI_OK(MPI_Comm_idup(base[0], &out[1], &r[1]));
    MPI_OK(MPI_Comm_idup(base[1], &out[2], &r[2]));
    /* The program goes on meanwhile: a blocking dup on the world, and
     * an Iallreduce on a communicator freed while it is pending (which
     * must still end normally). */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &other));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &gone));
    MPI_OK(MPI_Iallreduce(&t_rank, &gsum, 1, MPI_INT, MPI_SUM, gone, &gr));
#ifndef OPEN_MPI /* Open MPI 4.1 crashes on this (legal) free */
    MPI_OK(MPI_Comm_free(&gone));
#endif
    while (!done)
        MPI_OK(MPI_Testall(3, r, &done, MPI_STATUSES_IGNORE));
    for (i = 0; i < 3; i++) {
        int rank, want = i == 2 ? t_size - 1 - t_rank : t_rank;

        CHECK(out[i] != MPI_COMM_NULL, "idup %d: no communicator", i);
        MPI_OK(MPI_Comm_test_inter(out[i], &flag));
        CHECK(!flag, "idup %d: an intercommunicator", i);
        MPI_OK(MPI_Comm_rank(out[i], &rank));
        CHECK(rank == want, "idup %d: rank %d want %d", i, rank, want);
        MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, out[i]));
        CHECK(sum == t_size * (t_size - 1) / 2, "idup %d: sum %d", i, sum);
    }
    for (i = 0; i < 3; i++)
        MPI_OK(MPI_Comm_free(&out[i]));
    MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, other));
    CHECK(sum == t_size * (t_size - 1) / 2, "dup beside idups: sum %d", sum);
    MPI_OK(MPI_Wait(&gr, MPI_STATUS_IGNORE));
    CHECK(gsum == t_size * (t_size - 1) / 2, "on a freed comm: sum %d", gsum);
#ifdef OPEN_MPI
    MPI_OK(MPI_Comm_free(&gone));
#endif
    MPI_OK(MPI_Comm_free(&other));
    MPI_OK(MPI_Comm_free(&base[0]));
    MPI_OK(MPI_Comm_free(&base[1]));
}

/* Comm_split_type(MPI_COMM_TYPE_SHARED) over ic: the processes of both
 * groups on our host, as the same split of the world sees them; none
 * (MPI_COMM_NULL) when the other group has none here.  key = -rank:
 * the local group in falling world rank order. */
static void
inter_split_type(MPI_Comm ic)
{
    MPI_Comm sh, x;
    int n, *all, same = 0, other = 0, above = 0, size, rsize_x, rank;

    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &sh));
    MPI_OK(MPI_Comm_size(sh, &n));
    all = t_malloc(sizeof(int) * (size_t)n);
    MPI_OK(MPI_Allgather(&t_rank, 1, MPI_INT, all, 1, MPI_INT, sh));
    for (int i = 0; i < n; i++) {
        int c = all[i] < n0 ? 0 : 1;

        if (c != color)
            other++;
        else {
            same++;
            above += all[i] > t_rank;
        }
    }
    MPI_OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, -t_rank,
                               MPI_INFO_NULL, &x));
    if (other == 0)
        CHECK(x == MPI_COMM_NULL, "split_type over ic: not null");
    else if (x == MPI_COMM_NULL)
        CHECK(0, "split_type over ic: null, %d remote here", other);
    else {
        MPI_OK(MPI_Comm_size(x, &size));
        MPI_OK(MPI_Comm_remote_size(x, &rsize_x));
        MPI_OK(MPI_Comm_rank(x, &rank));
        CHECK(size == same && rsize_x == other && rank == above,
              "split_type over ic: size %d/%d remote %d/%d rank %d/%d", size,
              same, rsize_x, other, rank, above);
        MPI_OK(MPI_Comm_free(&x));
    }
    free(all);
    MPI_OK(MPI_Comm_free(&sh));
}

int
main(int argc, char **argv)
{
    MPI_Comm local, ic;

    t_init(&argc, &argv);
    neighbours();
    idups();
    if (t_size >= 2) {
        n0 = t_size / 3 + 1;
        color = t_rank < n0 ? 0 : 1;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &local));
        MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD,
                                    color == 0 ? n0 : 0, 7, &ic));
        MPI_OK(MPI_Comm_rank(ic, &lrank));
        MPI_OK(MPI_Comm_size(ic, &lsize));
        MPI_OK(MPI_Comm_remote_size(ic, &rsize));
        inter_collectives(ic);
        inter_comms(ic);
#ifndef OPEN_MPI /* Open MPI 4.1 fails on it (its issue 11672) */
        inter_split_type(ic);
#endif
        MPI_OK(MPI_Comm_free(&ic));
        MPI_OK(MPI_Comm_free(&local));
    }
    return t_finish("nbc_inter");
}
