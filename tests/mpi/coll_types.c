/*
 * coll_types: collectives over derived types and pair types, and user
 * operations.
 *  - A vector type (3 blocks of 2 ints, stride 4: holes inside) in
 *    Bcast, Reduce, Allreduce, Scan, Gather, Scatter, Allgather,
 *    Alltoall and Reduce_scatter_block, short and above 64 KiB; the
 *    holes must be left alone, and one side may use the vector while the
 *    other uses plain ints (same type signature).
 *  - MAXLOC and MINLOC on MPI_DOUBLE_INT (ties go to the lower index)
 *    and on MPI_2INT, in Reduce, Allreduce and Scan.
 *  - A non-commutative user op (2x2 matrix product mod 10007 on a
 *    contiguous type): the result must be M0 M1 ... M(p-1) in rank order
 *    in Reduce (every root), Allreduce (short and long), Scan, Exscan,
 *    Reduce_scatter and Reduce_scatter_block.
 *  - A commutative user op on ints, long enough for the ring path, and
 *    a user op on the vector type itself.
 */
#include "mpitest.h"

#define HOLE (-7777)      /* holes of receive buffers */
#define HOLE_SEND (-5555) /* holes of send buffers: must not travel */
#define VEXT 10           /* ints in one vector element's extent */
#define VLEN 6            /* ints of data in it */
#define MOD 10007

static MPI_Datatype vec, mat;
static int op_bad_type;
/* The sum on vectors: MPI_SUM where predefined ops take derived types
 * made of one basic type (ours, MPICH), else a user op (Open MPI). */
static MPI_Op vsum;
#if defined(P2PMPI) || defined(MPICH_VERSION)
#define PREDEF_ON_DERIVED 1
#else
#define PREDEF_ON_DERIVED 0
#endif

/* Where the j-th data int of a buffer of vector elements lives. */
static size_t
vpos(size_t j)
{
    size_t e = j / VLEN, k = j % VLEN;

    return e * VEXT + (k / 2) * 4 + k % 2;
}

static int
is_data(size_t pos)
{
    size_t k = pos % VEXT;

    return k != 2 && k != 3 && k != 6 && k != 7;
}

/* A buffer of n vector elements: data ints r * 1000 + j % 977 (or -1),
 * holes HOLE_SEND (or HOLE). */
static int *
vbuf(size_t n, int r, int fill)
{
    int *b = t_malloc(sizeof(int) * n * VEXT);

    for (size_t i = 0; i < n * VEXT; i++)
        b[i] = fill ? HOLE_SEND : HOLE;
    for (size_t j = 0; j < n * VLEN; j++)
        b[vpos(j)] = fill ? (int)(r * 1000 + (int)(j % 977)) : -1;
    return b;
}

/* Checks data ints against want(j) and that holes hold hole. */
#define VCHECK(b, n, want, what) VCHECK2(b, n, want, HOLE, what)
#define VCHECK2(b, n, want, hole, what)                                        \
    do {                                                                       \
        int bad_ = 0;                                                          \
        for (size_t j = 0; j < (size_t)(n)*VLEN && bad_ < 1; j++)              \
            if ((b)[vpos(j)] != (want)) {                                      \
                CHECK(0, "%s: data %zu = %d, expected %d", what, j,            \
                      (b)[vpos(j)], (int)(want));                              \
                bad_++;                                                        \
            }                                                                  \
        for (size_t p_ = 0; p_ < (size_t)(n)*VEXT && bad_ < 1; p_++)           \
            if (!is_data(p_) && (b)[p_] != (hole)) {                           \
                CHECK(0, "%s: hole %zu overwritten with %d", what, p_,         \
                      (b)[p_]);                                                \
                bad_++;                                                        \
            }                                                                  \
    } while (0)

static int
sum_upto(size_t j, int upto)
{
    int s = 0;

    for (int r = 0; r < upto; r++)
        s += r * 1000 + (int)(j % 977);
    return s;
}

static void
test_vector(size_t n)
{
    char what[64];
    int *s, *r;

    /* Bcast from every root (the last one receives as plain ints). */
    for (int root = 0; root < t_size; root++) {
        s = vbuf(n, root, t_rank == root);
        if (root == t_size - 1 && t_rank != root) {
            int *plain = t_malloc(sizeof(int) * n * VLEN);
            MPI_OK(MPI_Bcast(plain, (int)(n * VLEN), MPI_INT, root,
                             MPI_COMM_WORLD));
            for (size_t j = 0; j < n * VLEN; j++)
                if (plain[j] != root * 1000 + (int)(j % 977)) {
                    CHECK(0, "Bcast to plain ints [%zu] = %d", j, plain[j]);
                    break;
                }
            free(plain);
        } else {
            MPI_OK(MPI_Bcast(s, (int)n, vec, root, MPI_COMM_WORLD));
            snprintf(what, sizeof what, "vector Bcast n=%zu root %d", n, root);
            VCHECK2(s, n, root * 1000 + (int)(j % 977),
                    t_rank == root ? HOLE_SEND : HOLE, what);
        }
        free(s);
    }

    /* Reductions. */
    s = vbuf(n, t_rank, 1);
    r = vbuf(n, 0, 0);
    MPI_OK(MPI_Allreduce(s, r, (int)n, vec, vsum, MPI_COMM_WORLD));
    snprintf(what, sizeof what, "vector Allreduce n=%zu", n);
    VCHECK(r, n, sum_upto(j, t_size), what);
    free(r);
    r = vbuf(n, 0, 0);
    MPI_OK(MPI_Reduce(s, r, (int)n, vec, vsum, t_size - 1, MPI_COMM_WORLD));
    if (t_rank == t_size - 1) {
        snprintf(what, sizeof what, "vector Reduce n=%zu", n);
        VCHECK(r, n, sum_upto(j, t_size), what);
    }
    free(r);
    r = vbuf(n, 0, 0);
    MPI_OK(MPI_Scan(s, r, (int)n, vec, vsum, MPI_COMM_WORLD));
    snprintf(what, sizeof what, "vector Scan n=%zu", n);
    VCHECK(r, n, sum_upto(j, t_rank + 1), what);
    free(r);
    free(s);

    /* Gather vectors into plain ints at the root, and the reverse. */
    s = vbuf(n, t_rank, 1);
    int *plain = t_malloc(sizeof(int) * n * VLEN * (size_t)t_size);
    MPI_OK(MPI_Gather(s, (int)n, vec, plain, (int)(n * VLEN), MPI_INT, 0,
                      MPI_COMM_WORLD));
    if (t_rank == 0)
        for (size_t j = 0; j < n * VLEN * (size_t)t_size; j++) {
            int k = (int)(j / (n * VLEN));
            size_t jj = j % (n * VLEN);
            if (plain[j] != k * 1000 + (int)(jj % 977)) {
                CHECK(0, "Gather vec->int n=%zu [%zu] = %d", n, j, plain[j]);
                break;
            }
        }
    r = vbuf(n * (size_t)t_size, 0, 0);
    int *mine = t_malloc(sizeof(int) * n * VLEN);
    for (size_t j = 0; j < n * VLEN; j++)
        mine[j] = t_rank * 1000 + (int)(j % 977);
    MPI_OK(MPI_Gather(mine, (int)(n * VLEN), MPI_INT, r, (int)n, vec,
                      t_size - 1, MPI_COMM_WORLD));
    if (t_rank == t_size - 1) {
        snprintf(what, sizeof what, "Gather int->vec n=%zu", n);
        VCHECK(r, n * (size_t)t_size,
               (int)(j / (n * VLEN)) * 1000 + (int)((j % (n * VLEN)) % 977),
               what);
    }
    /* Scatter them back as vectors. */
    free(s);
    s = vbuf(n, 0, 0);
    MPI_OK(MPI_Scatter(r, (int)n, vec, s, (int)n, vec, t_size - 1,
                       MPI_COMM_WORLD));
    snprintf(what, sizeof what, "vector Scatter n=%zu", n);
    VCHECK(s, n, t_rank * 1000 + (int)(j % 977), what);
    free(r);
    free(mine);
    free(plain);

    /* Allgather and Alltoall of vectors. */
    r = vbuf(n * (size_t)t_size, 0, 0);
    MPI_OK(MPI_Allgather(s, (int)n, vec, r, (int)n, vec, MPI_COMM_WORLD));
    snprintf(what, sizeof what, "vector Allgather n=%zu", n);
    VCHECK(r, n * (size_t)t_size,
           (int)(j / (n * VLEN)) * 1000 + (int)((j % (n * VLEN)) % 977), what);
    free(s);
    s = vbuf(n * (size_t)t_size, 0, 0);
    for (size_t j = 0; j < n * VLEN * (size_t)t_size; j++)
        s[vpos(j)] = t_rank * 100000 + (int)j;
    free(r);
    r = vbuf(n * (size_t)t_size, 0, 0);
    MPI_OK(MPI_Alltoall(s, (int)n, vec, r, (int)n, vec, MPI_COMM_WORLD));
    snprintf(what, sizeof what, "vector Alltoall n=%zu", n);
    /* Block k of mine came from rank k's block t_rank. */
    VCHECK(r, n * (size_t)t_size,
           (int)(j / (n * VLEN)) * 100000 +
               (int)((size_t)t_rank * n * VLEN + j % (n * VLEN)),
           what);
    free(s);
    free(r);

    /* Reduce_scatter_block on vectors. */
    s = vbuf(n * (size_t)t_size, t_rank, 1);
    r = vbuf(n, 0, 0);
    MPI_OK(MPI_Reduce_scatter_block(s, r, (int)n, vec, vsum, MPI_COMM_WORLD));
    snprintf(what, sizeof what, "vector Reduce_scatter_block n=%zu", n);
    VCHECK(r, n, sum_upto((size_t)t_rank * n * VLEN + j, t_size), what);
    free(s);
    free(r);
}

struct dint {
    double v;
    int i;
};

static void
test_loc(void)
{
    enum { N = 40 };
    struct dint s[N], r[N];
    int s2[N][2], r2[N][2];

    for (int j = 0; j < N; j++) {
        s[j].v = (double)((t_rank * 7 + j * 3) % 5) + 0.5;
        s[j].i = t_rank;
        s2[j][0] = (t_rank * 5 + j) % 4;
        s2[j][1] = t_rank + 10;
    }
    for (int pass = 0; pass < 4; pass++) {
        MPI_Op op = pass % 2 == 0 ? MPI_MAXLOC : MPI_MINLOC;
        int ismax = pass % 2 == 0, upto = t_size;
        for (int j = 0; j < N; j++)
            r[j].v = -1, r[j].i = -1, r2[j][0] = r2[j][1] = -1;
        if (pass < 2) {
            MPI_OK(MPI_Allreduce(s, r, N, MPI_DOUBLE_INT, op, MPI_COMM_WORLD));
            MPI_OK(MPI_Reduce(s2, r2, N, MPI_2INT, op, t_size - 1,
                              MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Scan(s, r, N, MPI_DOUBLE_INT, op, MPI_COMM_WORLD));
            MPI_OK(MPI_Scan(s2, r2, N, MPI_2INT, op, MPI_COMM_WORLD));
            upto = t_rank + 1;
        }
        for (int j = 0; j < N; j++) {
            double bv = -1;
            int bi = -1, b2 = -1, b2i = -1;
            for (int k = 0; k < upto; k++) {
                double v = (double)((k * 7 + j * 3) % 5) + 0.5;
                int v2 = (k * 5 + j) % 4;
                if (bi < 0 || (ismax ? v > bv : v < bv))
                    bv = v, bi = k;
                if (b2i < 0 || (ismax ? v2 > b2 : v2 < b2))
                    b2 = v2, b2i = k + 10;
            }
            CHECK(r[j].v == bv && r[j].i == bi,
                  "%s DOUBLE_INT pass %d [%d] = (%g, %d), expected (%g, %d)",
                  ismax ? "MAXLOC" : "MINLOC", pass, j, r[j].v, r[j].i, bv, bi);
            if (pass >= 2 || t_rank == t_size - 1)
                CHECK(r2[j][0] == b2 && r2[j][1] == b2i,
                      "%s 2INT pass %d [%d] = (%d, %d), expected (%d, %d)",
                      ismax ? "MAXLOC" : "MINLOC", pass, j, r2[j][0], r2[j][1],
                      b2, b2i);
        }
    }
}

/* 2x2 matrices mod MOD: inout = in x inout. */
static void
matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;

    if (*dt != mat)
        op_bad_type = 1;
    for (int e = 0; e < *len; e++, a += 4, b += 4) {
        int c0 = (a[0] * b[0] + a[1] * b[2]) % MOD;
        int c1 = (a[0] * b[1] + a[1] * b[3]) % MOD;
        int c2 = (a[2] * b[0] + a[3] * b[2]) % MOD;
        int c3 = (a[2] * b[1] + a[3] * b[3]) % MOD;
        b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
    }
}

static void
mat_of(int r, size_t j, int m[4])
{
    m[0] = (r + 2) % MOD;
    m[1] = (int)((j * 31 + (size_t)r) % MOD);
    m[2] = (r * 3 + 1) % MOD;
    m[3] = (int)((j + 5) % MOD);
}

/* The ordered product of the matrices of ranks [lo, hi) at element j. */
static void
mat_prod(int lo, int hi, size_t j, int out[4])
{
    int acc[4], m[4], len = 1;
    MPI_Datatype dt = mat;

    mat_of(lo, j, acc);
    for (int r = lo + 1; r < hi; r++) {
        mat_of(r, j, m);
        matmul(acc, m, &len, &dt); /* m = acc x m */
        memcpy(acc, m, sizeof acc);
    }
    memcpy(out, acc, sizeof acc);
}

static int *
mats(size_t n, int r)
{
    int *b = t_malloc(sizeof(int) * 4 * (n > 0 ? n : 1));

    for (size_t j = 0; j < n; j++)
        mat_of(r, j, b + 4 * j);
    return b;
}

static void
mat_check(const int *got, size_t n, int lo, int hi, size_t j0, const char *what)
{
    int want[4];

    for (size_t j = 0; j < n; j++) {
        mat_prod(lo, hi, j0 + j, want);
        if (memcmp(got + 4 * j, want, sizeof want) != 0) {
            CHECK(0, "%s: element %zu = [%d %d %d %d], expected [%d %d %d %d]",
                  what, j, got[4 * j], got[4 * j + 1], got[4 * j + 2],
                  got[4 * j + 3], want[0], want[1], want[2], want[3]);
            return;
        }
    }
}

static void
test_noncommutative(void)
{
    MPI_Op op;
    size_t sizes[] = {1, 5, 5000};
    char what[64];

    MPI_OK(MPI_Op_create(matmul, 0, &op));
    for (int k = 0; k < 3; k++) {
        size_t n = sizes[k];
        int *s = mats(n, t_rank), *r = mats(n, 0);
        for (int root = 0; root < t_size; root++) {
            if (n > 5 && root > 1)
                break;
            MPI_OK(MPI_Reduce(s, r, (int)n, mat, op, root, MPI_COMM_WORLD));
            snprintf(what, sizeof what, "user op Reduce n=%zu root %d", n,
                     root);
            if (t_rank == root)
                mat_check(r, n, 0, t_size, 0, what);
        }
        MPI_OK(MPI_Allreduce(s, r, (int)n, mat, op, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "user op Allreduce n=%zu", n);
        mat_check(r, n, 0, t_size, 0, what);
        MPI_OK(MPI_Scan(s, r, (int)n, mat, op, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "user op Scan n=%zu", n);
        mat_check(r, n, 0, t_rank + 1, 0, what);
        MPI_OK(MPI_Exscan(s, r, (int)n, mat, op, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "user op Exscan n=%zu", n);
        if (t_rank > 0)
            mat_check(r, n, 0, t_rank, 0, what);
        free(s);
        free(r);

        /* Reduce_scatter: rank k gets (k % 2 + 1) * n elements. */
        int *rc = t_malloc(sizeof(int) * (size_t)t_size);
        size_t total = 0, off = 0;
        for (int q = 0; q < t_size; q++) {
            rc[q] = (int)((size_t)(q % 2 + 1) * n);
            if (q < t_rank)
                off += (size_t)rc[q];
            total += (size_t)rc[q];
        }
        s = mats(total, t_rank);
        r = mats((size_t)rc[t_rank], 0);
        MPI_OK(MPI_Reduce_scatter(s, r, rc, mat, op, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "user op Reduce_scatter n=%zu", n);
        mat_check(r, (size_t)rc[t_rank], 0, t_size, off, what);
        free(s);
        free(r);
        s = mats(n * (size_t)t_size, t_rank);
        r = mats(n, 0);
        MPI_OK(MPI_Reduce_scatter_block(s, r, (int)n, mat, op, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "user op Reduce_scatter_block n=%zu", n);
        mat_check(r, n, 0, t_size, n * (size_t)t_rank, what);
        free(s);
        free(r);
        free(rc);
    }
    CHECK(!op_bad_type, "user op called with another datatype");
    MPI_OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "Op_free left the handle");
}

static void vecsum(void *in, void *inout, int *len, MPI_Datatype *dt);

/* Commutative: the larger absolute value. */
static void
absmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;

    for (int i = 0; i < *len; i++)
        if (abs(a[i]) > abs(b[i]))
            b[i] = a[i];
}

/* Sum on the vector type's own layout (declared non-commutative). */
static void
vecsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;

    if (*dt != vec)
        op_bad_type = 1;
    for (size_t j = 0; j < (size_t)*len * VLEN; j++)
        b[vpos(j)] += a[vpos(j)];
}

static void
test_user_misc(void)
{
    MPI_Op op;
    int n = 30000;
    int *s = t_malloc(sizeof(int) * (size_t)n),
        *r = t_malloc(sizeof(int) * (size_t)n);

    MPI_OK(MPI_Op_create(absmax, 1, &op));
    for (int i = 0; i < n; i++)
        s[i] = (t_rank == i % t_size ? -1 : 1) * (t_rank * 10 + i % 7);
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int k = 0; k < t_size; k++) {
            int v = (k == i % t_size ? -1 : 1) * (k * 10 + i % 7);
            if (abs(v) > abs(best))
                best = v;
        }
        if (r[i] != best) {
            CHECK(0, "absmax Allreduce [%d] = %d, expected %d", i, r[i], best);
            break;
        }
    }
    MPI_OK(MPI_Op_free(&op));
    free(s);
    free(r);

    MPI_OK(MPI_Op_create(vecsum, 0, &op));
    for (size_t m = 1; m <= 2000; m *= 40) {
        int *vs = vbuf(m, t_rank, 1), *vr = vbuf(m, 0, 0);
        char what[64];
        MPI_OK(MPI_Allreduce(vs, vr, (int)m, vec, op, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "user op on vector Allreduce n=%zu", m);
        VCHECK(vr, m, sum_upto(j, t_size), what);
        free(vr);
        vr = vbuf(m, 0, 0);
        MPI_OK(MPI_Reduce(vs, vr, (int)m, vec, op, 0, MPI_COMM_WORLD));
        snprintf(what, sizeof what, "user op on vector Reduce n=%zu", m);
        if (t_rank == 0)
            VCHECK(vr, m, sum_upto(j, t_size), what);
        free(vs);
        free(vr);
    }
    CHECK(!op_bad_type, "user op called with another datatype");
    MPI_OK(MPI_Op_free(&op));
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    MPI_OK(MPI_Type_commit(&mat));
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(vec, &lb, &ext));
    CHECK_FATAL(lb == 0 && ext == (MPI_Aint)(VEXT * sizeof(int)),
                "vector extent %ld", (long)ext);

    if (PREDEF_ON_DERIVED)
        vsum = MPI_SUM;
    else
        MPI_OK(MPI_Op_create(vecsum, 1, &vsum));
    test_vector(1);
    test_vector(7);
    test_vector(3000); /* 72 KB of data: the long-message paths */
    test_loc();
    test_noncommutative();
    test_user_misc();

    if (!PREDEF_ON_DERIVED)
        MPI_OK(MPI_Op_free(&vsum));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&mat));
    return t_finish("coll_types");
}
