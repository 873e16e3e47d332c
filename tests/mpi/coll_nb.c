/*
 * coll_nb: the nonblocking collectives (Ibarrier ... Iexscan, Ialltoallw)
 * checked element by element against values every rank can compute,
 * for several counts and every root; several in flight at once and
 * completed out of order (Waitall, Waitany, a Test loop while the
 * program "computes"), alongside point-to-point traffic with wildcards
 * on the same communicator, which must never match a collective's
 * messages; a non-commutative operation (composition of affine maps),
 * whose operand order the reductions must keep; Alltoallw,
 * Reduce_local, Op_commutative and Comm_idup; datatypes and operations
 * the program frees while collectives that use them are in flight
 * (MPI 3.1 4.1.9 and 5.9.5 allow it; MPICH's coll/nonblocking2 and 3).
 */
#include "mpitest.h"

static const int counts[] = {0, 1, 7, 3000};
static volatile double t_sink; /* the "computation" between tests */
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

/* What rank r holds at element i. */
static int
val(int r, int i)
{
    return (r + 1) * 1000 + i % 997;
}

static int
sum_upto(int n, int i) /* sum of val(r, i) for r < n */
{
    int s = 0;

    for (int r = 0; r < n; r++)
        s += val(r, i);
    return s;
}

static int *
ints(int n, int fill)
{
    int *b = t_malloc((size_t)(n > 0 ? n : 1) * sizeof *b);

    for (int i = 0; i < n; i++)
        b[i] = fill;
    return b;
}

static void
check_bcast_reduce(int n)
{
    for (int root = 0; root < t_size; root++) {
        int *b = ints(n, -1), *s = ints(n, 0), *r = ints(n, -1);
        MPI_Request q[2];

        for (int i = 0; i < n; i++) {
            s[i] = val(t_rank, i);
            if (t_rank == root)
                b[i] = i * 3 + root;
        }
        MPI_OK(MPI_Ibcast(b, n, MPI_INT, root, MPI_COMM_WORLD, &q[0]));
        MPI_OK(MPI_Ireduce(s, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD,
                           &q[1]));
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++) {
            CHECK(b[i] == i * 3 + root, "Ibcast n=%d root=%d [%d]=%d", n,
                  root, i, b[i]);
            if (t_rank == root)
                CHECK(r[i] == sum_upto(t_size, i),
                      "Ireduce n=%d root=%d [%d]=%d", n, root, i, r[i]);
        }
        /* In place at the root. */
        for (int i = 0; i < n; i++)
            r[i] = val(t_rank, i);
        MPI_OK(MPI_Ireduce(t_rank == root ? MPI_IN_PLACE : r,
                           t_rank == root ? r : NULL, n, MPI_INT, MPI_MAX,
                           root, MPI_COMM_WORLD, &q[0]));
        MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        if (t_rank == root)
            for (int i = 0; i < n; i++)
                CHECK(r[i] == val(t_size - 1, i),
                      "Ireduce in place n=%d root=%d [%d]=%d", n, root, i,
                      r[i]);
        free(b);
        free(s);
        free(r);
    }
}

static void
check_allreduce_scan(int n)
{
    int *s = ints(n, 0), *a = ints(n, -1), *sc = ints(n, -1),
        *ex = ints(n, -1), *ip = ints(n, 0);
    MPI_Request q[4];
    int idx, done = 0;

    for (int i = 0; i < n; i++)
        s[i] = ip[i] = val(t_rank, i);
    MPI_OK(MPI_Iallreduce(s, a, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Iscan(s, sc, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Iexscan(s, ex, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[2]));
    MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, ip, n, MPI_INT, MPI_MIN,
                          MPI_COMM_WORLD, &q[3]));
    /* Completed in whatever order they finish. */
    while (done < 4) {
        MPI_OK(MPI_Waitany(4, q, &idx, MPI_STATUS_IGNORE));
        CHECK(idx >= 0 && idx < 4, "Waitany index %d", idx);
        done++;
    }
    for (int i = 0; i < 4; i++)
        CHECK(q[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    for (int i = 0; i < n; i++) {
        CHECK(a[i] == sum_upto(t_size, i), "Iallreduce n=%d [%d]=%d", n, i,
              a[i]);
        CHECK(sc[i] == sum_upto(t_rank + 1, i), "Iscan n=%d [%d]=%d", n, i,
              sc[i]);
        if (t_rank > 0)
            CHECK(ex[i] == sum_upto(t_rank, i), "Iexscan n=%d [%d]=%d", n, i,
                  ex[i]);
        CHECK(ip[i] == val(0, i), "Iallreduce in place n=%d [%d]=%d", n, i,
              ip[i]);
    }
    free(s);
    free(a);
    free(sc);
    free(ex);
    free(ip);
}

/* Gathers and scatters, every root: rank r's block is r + 1 elements
 * long in the v variants, with a gap of one element between blocks. */
static void
check_gather_scatter(int n)
{
    int p = t_size, *cnt = ints(p, 0), *dsp = ints(p, 0), tot = 0;

    for (int r = 0; r < p; r++) {
        cnt[r] = n + r;
        dsp[r] = tot;
        tot += n + r + 1;
    }
    for (int root = 0; root < p; root++) {
        int *s = ints(n + t_rank, 0), *g = ints(n * p, -1),
            *gv = ints(tot, -1), *sv = ints(tot, -1), *rs = ints(n, -1),
            *rsv = ints(n + t_rank, -1), *all = ints(n * p, -1);
        MPI_Request q[5];
        int flag = 0;

        for (int i = 0; i < n + t_rank; i++)
            s[i] = val(t_rank, i);
        if (t_rank == root) {
            for (int i = 0; i < n * p; i++)
                all[i] = val(i / (n > 0 ? n : 1), i);
            for (int r = 0; r < p; r++)
                for (int i = 0; i < n + r; i++)
                    sv[dsp[r] + i] = val(r, i) + 1;
        }
        MPI_OK(MPI_Igather(s, n, MPI_INT, g, n, MPI_INT, root,
                           MPI_COMM_WORLD, &q[0]));
        MPI_OK(MPI_Igatherv(s, n + t_rank, MPI_INT, gv, cnt, dsp, MPI_INT,
                            root, MPI_COMM_WORLD, &q[1]));
        MPI_OK(MPI_Iscatter(all, n, MPI_INT, rs, n, MPI_INT, root,
                            MPI_COMM_WORLD, &q[2]));
        MPI_OK(MPI_Iscatterv(sv, cnt, dsp, MPI_INT, rsv, n + t_rank, MPI_INT,
                             root, MPI_COMM_WORLD, &q[3]));
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &q[4]));
        /* The program computes and tests now and then. */
        while (!flag) {
            for (int k = 0; k < 1000; k++)
                t_sink += k * 0.5;
            MPI_OK(MPI_Testall(5, q, &flag, MPI_STATUSES_IGNORE));
        }
        if (t_rank == root)
            for (int r = 0; r < p; r++) {
                for (int i = 0; i < n; i++)
                    CHECK(g[r * n + i] == val(r, i),
                          "Igather n=%d root=%d [%d][%d]=%d", n, root, r, i,
                          g[r * n + i]);
                for (int i = 0; i < n + r; i++)
                    CHECK(gv[dsp[r] + i] == val(r, i),
                          "Igatherv n=%d root=%d [%d][%d]=%d", n, root, r, i,
                          gv[dsp[r] + i]);
                CHECK(gv[dsp[r] + n + r] == -1, "Igatherv gap %d touched",
                      r);
            }
        for (int i = 0; i < n; i++)
            CHECK(rs[i] == val(t_rank, t_rank * n + i),
                  "Iscatter n=%d root=%d [%d]=%d", n, root, i, rs[i]);
        for (int i = 0; i < n + t_rank; i++)
            CHECK(rsv[i] == val(t_rank, i) + 1,
                  "Iscatterv n=%d root=%d [%d]=%d", n, root, i, rsv[i]);
        free(s);
        free(g);
        free(gv);
        free(sv);
        free(rs);
        free(rsv);
        free(all);
    }
    free(cnt);
    free(dsp);
}

static void
check_allgather_alltoall(int n)
{
    int p = t_size, *s = ints(n * p, 0), *ag = ints(n * p, -1),
        *agv = ints(n * p + p, -1), *a2a = ints(n * p, -1),
        *a2av = ints(n * p + p, -1), *ip = ints(n * p, -1);
    int *cnt = ints(p, n), *dsp = ints(p, 0), *sdsp = ints(p, 0);
    MPI_Request q[5];

    for (int r = 0; r < p; r++) {
        dsp[r] = r * (n + 1);
        sdsp[r] = r * n;
    }
    /* s: the block for rank d is d's (t_rank, d) pattern. */
    for (int d = 0; d < p; d++)
        for (int i = 0; i < n; i++)
            s[d * n + i] = val(t_rank, i) * 10 + d;
    for (int i = 0; i < n; i++)
        ip[t_rank * n + i] = val(t_rank, i);
    MPI_OK(MPI_Iallgather(s, n, MPI_INT, ag, n, MPI_INT, MPI_COMM_WORLD,
                          &q[0]));
    MPI_OK(MPI_Iallgatherv(s, n, MPI_INT, agv, cnt, dsp, MPI_INT,
                           MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Ialltoall(s, n, MPI_INT, a2a, n, MPI_INT, MPI_COMM_WORLD,
                         &q[2]));
    MPI_OK(MPI_Ialltoallv(s, cnt, sdsp, MPI_INT, a2av, cnt, dsp, MPI_INT,
                          MPI_COMM_WORLD, &q[3]));
    MPI_OK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ip, n, MPI_INT,
                          MPI_COMM_WORLD, &q[4]));
    /* Backwards: completion order is not start order. */
    for (int k = 4; k >= 0; k--)
        MPI_OK(MPI_Wait(&q[k], MPI_STATUS_IGNORE));
    for (int r = 0; r < p; r++)
        for (int i = 0; i < n; i++) {
            CHECK(ag[r * n + i] == val(r, i) * 10,
                  "Iallgather n=%d [%d][%d]=%d", n, r, i, ag[r * n + i]);
            CHECK(agv[dsp[r] + i] == val(r, i) * 10,
                  "Iallgatherv n=%d [%d][%d]=%d", n, r, i, agv[dsp[r] + i]);
            CHECK(a2a[r * n + i] == val(r, i) * 10 + t_rank,
                  "Ialltoall n=%d [%d][%d]=%d", n, r, i, a2a[r * n + i]);
            CHECK(a2av[dsp[r] + i] == val(r, i) * 10 + t_rank,
                  "Ialltoallv n=%d [%d][%d]=%d", n, r, i, a2av[dsp[r] + i]);
            CHECK(ip[r * n + i] == val(r, i),
                  "Iallgather in place n=%d [%d][%d]=%d", n, r, i,
                  ip[r * n + i]);
        }
    for (int r = 0; r < p; r++) {
        CHECK(agv[dsp[r] + n] == -1, "Iallgatherv gap %d touched", r);
        CHECK(a2av[dsp[r] + n] == -1, "Ialltoallv gap %d touched", r);
    }
    free(s);
    free(ag);
    free(agv);
    free(a2a);
    free(a2av);
    free(ip);
    free(cnt);
    free(dsp);
    free(sdsp);
}

static void
check_reduce_scatter(int n)
{
    int p = t_size, *cnt = ints(p, 0), tot = 0, *s, *r = ints(n + p, -1),
        *rb = ints(n, -1), off = 0;
    MPI_Request q[2];

    for (int k = 0; k < p; k++) {
        cnt[k] = n + k;
        tot += cnt[k];
    }
    for (int k = 0; k < t_rank; k++)
        off += cnt[k];
    s = ints(tot > n * p ? tot : n * p, 0);
    for (int i = 0; i < tot || i < n * p; i++)
        s[i] = val(t_rank, i);
    MPI_OK(MPI_Ireduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                               &q[0]));
    MPI_OK(MPI_Ireduce_scatter_block(s, rb, n, MPI_INT, MPI_SUM,
                                     MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < cnt[t_rank]; i++)
        CHECK(r[i] == sum_upto(p, off + i), "Ireduce_scatter n=%d [%d]=%d",
              n, i, r[i]);
    for (int i = 0; i < n; i++)
        CHECK(rb[i] == sum_upto(p, t_rank * n + i),
              "Ireduce_scatter_block n=%d [%d]=%d", n, i, rb[i]);
    free(cnt);
    free(s);
    free(r);
    free(rb);
}

/* An affine map x -> a x + b (mod 2^32); in (x) inout = inout o in, the
 * order MPI gives: inout = in op inout, applied to the left operand. */
struct aff {
    unsigned a, b;
};

static void
compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    struct aff *x = in, *y = inout;

    (void)dt;
    for (int i = 0; i < *len; i++) {
        /* (x op y)(v) = y(x(v)): apply the lower rank first. */
        struct aff z = {y[i].a * x[i].a, y[i].a * x[i].b + y[i].b};

        y[i] = z;
    }
}

static struct aff
aff_of(int r)
{
    struct aff f = {(unsigned)(2 * r + 3), (unsigned)(r * 7 + 1)};

    return f;
}

static struct aff
aff_fold(int lo, int hi) /* aff_of(lo) op ... op aff_of(hi - 1) */
{
    struct aff acc = aff_of(lo);

    for (int r = lo + 1; r < hi; r++) {
        struct aff x = aff_of(r), z = {x.a * acc.a, x.a * acc.b + x.b};

        acc = z;
    }
    return acc;
}

static void
check_noncommutative(void)
{
    MPI_Datatype t;
    MPI_Op op;
    struct aff mine = aff_of(t_rank), red = {0, 0}, all = {0, 0},
               scan = {0, 0}, want;
    MPI_Request q[3];
    int commute = -1;

    MPI_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Op_create(compose, 0, &op));
    MPI_OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0, "Op_commutative of a non-commutative op: %d",
          commute);
    MPI_OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1, "Op_commutative(MPI_SUM): %d", commute);
    MPI_OK(MPI_Ireduce(&mine, &red, 1, t, op, t_size - 1, MPI_COMM_WORLD,
                       &q[0]));
    MPI_OK(MPI_Iallreduce(&mine, &all, 1, t, op, MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Iscan(&mine, &scan, 1, t, op, MPI_COMM_WORLD, &q[2]));
    MPI_OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
    want = aff_fold(0, t_size);
    if (t_rank == t_size - 1)
        CHECK(red.a == want.a && red.b == want.b,
              "Ireduce non-commutative: %u %u, want %u %u", red.a, red.b,
              want.a, want.b);
    CHECK(all.a == want.a && all.b == want.b,
          "Iallreduce non-commutative: %u %u, want %u %u", all.a, all.b,
          want.a, want.b);
    want = aff_fold(0, t_rank + 1);
    CHECK(scan.a == want.a && scan.b == want.b,
          "Iscan non-commutative: %u %u, want %u %u", scan.a, scan.b, want.a,
          want.b);
    /* Reduce_local: inout = in op inout. */
    {
        struct aff x = aff_of(1), y = aff_of(2), z = aff_fold(1, 3);

        MPI_OK(MPI_Reduce_local(&x, &y, 1, t, op));
        CHECK(y.a == z.a && y.b == z.b, "Reduce_local: %u %u", y.a, y.b);
    }
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&t));
}

/* The non-commutative reductions again, and a strided Igather, with the
 * type and the operation freed as soon as the calls return: the
 * collectives' later rounds still use them.  Once, the next round's
 * operation failed with MPI_ERR_OP, and a round's send or receive with
 * MPI_ERR_TYPE. */
static void
check_freed_early(void)
{
    MPI_Datatype t, every2;
    MPI_Op op;
    struct aff mine = aff_of(t_rank), red = {0, 0}, all = {0, 0},
               scan = {0, 0}, want;
    int row[16], got[256], n = 3;
    MPI_Request q[4];

    MPI_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &every2));
    MPI_OK(MPI_Type_commit(&every2));
    MPI_OK(MPI_Op_create(compose, 0, &op));
    MPI_OK(MPI_Ireduce(&mine, &red, 1, t, op, 0, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Iallreduce(&mine, &all, 1, t, op, MPI_COMM_WORLD, &q[1]));
    MPI_OK(MPI_Iscan(&mine, &scan, 1, t, op, MPI_COMM_WORLD, &q[2]));
    for (int i = 0; i < 16; i++)
        row[i] = t_rank * 100 + i;
    if (t_size <= 16)
        MPI_OK(MPI_Igather(row, 1, every2, got, 8, MPI_INT, t_size - 1,
                           MPI_COMM_WORLD, &q[n++]));
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_free(&every2));
    MPI_OK(MPI_Waitall(n, q, MPI_STATUSES_IGNORE));
    want = aff_fold(0, t_size);
    if (t_rank == 0)
        CHECK(red.a == want.a && red.b == want.b,
              "Ireduce, op freed: %u %u, want %u %u", red.a, red.b, want.a,
              want.b);
    CHECK(all.a == want.a && all.b == want.b,
          "Iallreduce, op freed: %u %u, want %u %u", all.a, all.b, want.a,
          want.b);
    want = aff_fold(0, t_rank + 1);
    CHECK(scan.a == want.a && scan.b == want.b,
          "Iscan, op freed: %u %u, want %u %u", scan.a, scan.b, want.a,
          want.b);
    if (n == 4 && t_rank == t_size - 1)
        for (int r = 0; r < t_size; r++)
            for (int j = 0; j < 8; j++)
                CHECK(got[r * 8 + j] == r * 100 + 2 * j,
                      "Igather, type freed [%d][%d] = %d", r, j,
                      got[r * 8 + j]);
}

/* Point-to-point wildcards on the same communicator while collectives
 * are in flight: they see only the program's messages. */
static void
check_isolation(void)
{
    int p = t_size, v, *b = ints(64, -1);
    MPI_Request q;
    MPI_Status st;

    if (t_rank == 0)
        for (int i = 0; i < 64; i++)
            b[i] = i;
    MPI_OK(MPI_Ibcast(b, 64, MPI_INT, 0, MPI_COMM_WORLD, &q));
    if (t_rank == 0) {
        /* Every other rank sends one tagged message. */
        for (int k = 1; k < p; k++) {
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                            MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == 5 && v == st.MPI_SOURCE * 11,
                  "wildcard receive got tag %d value %d from %d", st.MPI_TAG,
                  v, st.MPI_SOURCE);
        }
    } else {
        v = t_rank * 11;
        MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < 64; i++)
        CHECK(b[i] == i, "Ibcast beside wildcards [%d]=%d", i, b[i]);
    free(b);
}

static void
check_alltoallw(void)
{
    int p = t_size, *sc = ints(p, 1), *sd = ints(p, 0), *rc = ints(p, 1),
        *rd = ints(p, 0);
    MPI_Datatype *stypes = t_malloc((size_t)p * sizeof *stypes),
                 *rtypes = t_malloc((size_t)p * sizeof *rtypes);
    /* To rank d: one int or one double alternately. */
    char *sbuf = t_malloc((size_t)p * 8), *rbuf = t_malloc((size_t)p * 8);
    MPI_Request q;

    for (int d = 0; d < p; d++) {
        sd[d] = rd[d] = d * 8;
        stypes[d] = (t_rank + d) % 2 ? MPI_DOUBLE : MPI_INT;
        rtypes[d] = stypes[d];
        if (stypes[d] == MPI_INT)
            *(int *)(sbuf + d * 8) = t_rank * 100 + d;
        else
            *(double *)(sbuf + d * 8) = t_rank * 100 + d + 0.5;
    }
    MPI_OK(MPI_Ialltoallw(sbuf, sc, sd, stypes, rbuf, rc, rd, rtypes,
                          MPI_COMM_WORLD, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int s = 0; s < p; s++) {
        if (rtypes[s] == MPI_INT)
            CHECK(*(int *)(rbuf + s * 8) == s * 100 + t_rank,
                  "Ialltoallw from %d: %d", s, *(int *)(rbuf + s * 8));
        else
            CHECK(*(double *)(rbuf + s * 8) == s * 100 + t_rank + 0.5,
                  "Ialltoallw from %d: %g", s, *(double *)(rbuf + s * 8));
    }
    memset(rbuf, 0, (size_t)p * 8);
    MPI_OK(MPI_Alltoallw(sbuf, sc, sd, stypes, rbuf, rc, rd, rtypes,
                         MPI_COMM_WORLD));
    for (int s = 0; s < p; s++)
        if (rtypes[s] == MPI_INT)
            CHECK(*(int *)(rbuf + s * 8) == s * 100 + t_rank,
                  "Alltoallw from %d: %d", s, *(int *)(rbuf + s * 8));
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(stypes);
    free(rtypes);
    free(sbuf);
    free(rbuf);
}

/* Collectives on a split communicator overlap those on the world. */
static void
check_two_comms(void)
{
    MPI_Comm half;
    MPI_Request q[2];
    int a = t_rank, b = 1, ra = -1, rb = -1, hsize;

    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &half));
    MPI_OK(MPI_Comm_size(half, &hsize));
    MPI_OK(MPI_Iallreduce(&a, &ra, 1, MPI_INT, MPI_SUM, half, &q[0]));
    MPI_OK(MPI_Iallreduce(&b, &rb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                          &q[1]));
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    {
        int want = 0;

        for (int r = t_rank % 2; r < t_size; r += 2)
            want += r;
        CHECK(ra == want, "half Iallreduce %d, want %d", ra, want);
    }
    CHECK(rb == t_size, "world Iallreduce %d", rb);
    MPI_OK(MPI_Comm_free(&half));
}

/* Many collectives in flight at once, of several kinds, then Waitall. */
static void
check_many_in_flight(void)
{
    enum { K = 40 };
    MPI_Request q[2 * K];
    int in[K], out[K], b[K];

    for (int k = 0; k < K; k++) {
        in[k] = t_rank * K + k;
        out[k] = -1;
        b[k] = t_rank == k % t_size ? k * 7 : -1;
        MPI_OK(MPI_Iallreduce(&in[k], &out[k], 1, MPI_INT, MPI_MAX,
                              MPI_COMM_WORLD, &q[2 * k]));
        MPI_OK(MPI_Ibcast(&b[k], 1, MPI_INT, k % t_size, MPI_COMM_WORLD,
                          &q[2 * k + 1]));
    }
    MPI_OK(MPI_Waitall(2 * K, q, MPI_STATUSES_IGNORE));
    for (int k = 0; k < K; k++) {
        CHECK(out[k] == (t_size - 1) * K + k, "in flight %d: max %d", k,
              out[k]);
        CHECK(b[k] == k * 7, "in flight %d: bcast %d", k, b[k]);
    }
}

/* A strided derived type: every other int of a row. */
static void
check_derived(void)
{
    MPI_Datatype every2;
    int row[16], all[256], root = t_size - 1;
    MPI_Request q[2];

    MPI_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &every2));
    MPI_OK(MPI_Type_commit(&every2));
    for (int i = 0; i < 16; i++)
        row[i] = t_rank == root ? (i % 2 ? -5 : i * 3) : -1;
    for (int i = 0; i < 16 * t_size && i < 256; i++)
        all[i] = -1;
    MPI_OK(MPI_Ibcast(row, 1, every2, root, MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++)
        CHECK(row[i] == (i % 2 ? (t_rank == root ? -5 : -1) : i * 3),
              "strided Ibcast [%d] = %d", i, row[i]);
    /* Gather the strided ints of every rank as 8 contiguous ones. */
    for (int i = 0; i < 16; i += 2)
        row[i] = t_rank * 100 + i;
    if (t_size <= 16) {
        MPI_OK(MPI_Igather(row, 1, every2, all, 8, MPI_INT, 0,
                           MPI_COMM_WORLD, &q[1]));
        MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
        if (t_rank == 0)
            for (int r = 0; r < t_size; r++)
                for (int j = 0; j < 8; j++)
                    CHECK(all[r * 8 + j] == r * 100 + 2 * j,
                          "strided Igather [%d][%d] = %d", r, j,
                          all[r * 8 + j]);
    }
    MPI_OK(MPI_Type_free(&every2));
}

/* Comm_idup: a communicator of its own once the request completes. */
static void
check_idup(void)
{
    MPI_Comm dup;
    MPI_Request q;
    int res, one = 1, sum = 0;

    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT, "Comm_idup: compare says %d", res);
    MPI_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(sum == t_size, "Iallreduce on the idup'd communicator: %d", sum);
    MPI_OK(MPI_Comm_free(&dup));
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    for (int k = 0; k < NCOUNTS; k++) {
        check_bcast_reduce(counts[k]);
        check_allreduce_scan(counts[k]);
        check_gather_scatter(counts[k]);
        check_allgather_alltoall(counts[k]);
        check_reduce_scatter(counts[k]);
    }
    check_noncommutative();
    check_isolation();
    check_alltoallw();
    check_two_comms();
    check_idup();
    check_many_in_flight();
    check_derived();
    check_freed_early();
    return t_finish("coll_nb");
}
