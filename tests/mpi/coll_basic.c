/*
 * coll_basic: every collective on MPI_INT and MPI_DOUBLE (and a few on
 * other builtin types), for several counts (empty, one, a few, and
 * large enough for the long-message algorithms) and every root, with
 * the predefined operations, checking every element.  Gathers and
 * scatters with displacements check that the gaps are left alone.
 */
#include "mpitest.h"

#include <time.h>

static const int counts[] = {0, 1, 5, 1000, 40000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))
#define GAP (-99)

/* Typed access to element i of a buffer of MPI_INT, MPI_DOUBLE,
 * MPI_LONG_LONG, MPI_FLOAT or MPI_UNSIGNED_SHORT. */
static void
put(void *b, MPI_Datatype dt, size_t i, long long v)
{
    if (dt == MPI_INT)
        ((int *)b)[i] = (int)v;
    else if (dt == MPI_DOUBLE)
        ((double *)b)[i] = (double)v;
    else if (dt == MPI_LONG_LONG)
        ((long long *)b)[i] = v;
    else if (dt == MPI_FLOAT)
        ((float *)b)[i] = (float)v;
    else
        ((unsigned short *)b)[i] = (unsigned short)v;
}

static long long
get(const void *b, MPI_Datatype dt, size_t i)
{
    if (dt == MPI_INT)
        return ((const int *)b)[i];
    if (dt == MPI_DOUBLE)
        return (long long)((const double *)b)[i];
    if (dt == MPI_LONG_LONG)
        return ((const long long *)b)[i];
    if (dt == MPI_FLOAT)
        return (long long)((const float *)b)[i];
    return ((const unsigned short *)b)[i];
}

static size_t
tsize(MPI_Datatype dt)
{
    int s;

    MPI_Type_size(dt, &s);
    return (size_t)s;
}

static const char *
tname(MPI_Datatype dt)
{
    return dt == MPI_INT         ? "INT"
           : dt == MPI_DOUBLE    ? "DOUBLE"
           : dt == MPI_FLOAT     ? "FLOAT"
           : dt == MPI_LONG_LONG ? "LONG_LONG"
                                 : "USHORT";
}

static void *
tbuf(MPI_Datatype dt, size_t n, long long fill)
{
    void *b = t_malloc(tsize(dt) * (n > 0 ? n : 1));

    for (size_t i = 0; i < n; i++)
        put(b, dt, i, fill);
    return b;
}

/* The value rank r contributes at element i (small, exact in float). */
static long long
val(int r, size_t i)
{
    return (long long)((r + 1) * 100 + (long long)(i % 1000));
}

/* Checks n elements of b against f(i); reports the first mismatch. */
#define EXPECT(b, dt, n, f, ...)                                               \
    do {                                                                       \
        for (size_t i_ = 0; i_ < (size_t)(n); i_++) {                          \
            size_t i = i_;                                                     \
            long long want_ = (f), got_ = get((b), (dt), i_);                  \
            if (got_ != want_) {                                               \
                CHECK(0, "%s: [%zu] = %lld, expected %lld", tname(dt), i_,     \
                      got_, want_);                                            \
                fprintf(stderr, "  in: ");                                     \
                fprintf(stderr, __VA_ARGS__);                                  \
                fputc('\n', stderr);                                           \
                break;                                                         \
            }                                                                  \
            (void)i;                                                           \
        }                                                                      \
    } while (0)

static void
test_barrier(void)
{
    for (int i = 0; i < 50; i++)
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* The last rank enters late; nobody may leave before it entered. */
    double t0 = MPI_Wtime();
    if (t_rank == t_size - 1) {
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double dt = MPI_Wtime() - t0;
    CHECK(dt > 0.15, "left the barrier after %.3f s, before the late rank", dt);
}

static void
test_bcast(MPI_Datatype dt)
{
    for (int c = 0; c < NCOUNTS; c++) {
        size_t n = (size_t)counts[c];
        for (int root = 0; root < t_size; root++) {
            if (n > 1000 && root > 1 && root != t_size - 1)
                continue;
            void *b = tbuf(dt, n, -1);
            if (t_rank == root)
                for (size_t i = 0; i < n; i++)
                    put(b, dt, i, val(root, i));
            MPI_OK(MPI_Bcast(b, (int)n, dt, root, MPI_COMM_WORLD));
            EXPECT(b, dt, n, val(root, i), "Bcast n=%zu root=%d", n, root);
            free(b);
        }
    }
}

/* The expected reduction over all ranks of val(r, i) by op. */
static long long
reduced(MPI_Op op, size_t i, int upto)
{
    long long acc = val(0, i);

    for (int r = 1; r < upto; r++) {
        long long v = val(r, i);
        if (op == MPI_SUM)
            acc += v;
        else if (op == MPI_MAX)
            acc = v > acc ? v : acc;
        else if (op == MPI_MIN)
            acc = v < acc ? v : acc;
    }
    return acc;
}

static void
test_reduce(MPI_Datatype dt)
{
    MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN};

    for (int c = 0; c < NCOUNTS; c++) {
        size_t n = (size_t)counts[c];
        for (int o = 0; o < 3; o++) {
            for (int root = 0; root < t_size; root++) {
                if (n > 1000 && root != 0 && root != t_size - 1)
                    continue;
                void *s = tbuf(dt, n, 0), *r = tbuf(dt, n, -1);
                for (size_t i = 0; i < n; i++)
                    put(s, dt, i, val(t_rank, i));
                MPI_OK(
                    MPI_Reduce(s, r, (int)n, dt, ops[o], root, MPI_COMM_WORLD));
                if (t_rank == root)
                    EXPECT(r, dt, n, reduced(ops[o], i, t_size),
                           "Reduce n=%zu op %d root %d", n, o, root);
                free(s);
                free(r);
            }
            void *s = tbuf(dt, n, 0), *r = tbuf(dt, n, -1);
            for (size_t i = 0; i < n; i++)
                put(s, dt, i, val(t_rank, i));
            MPI_OK(MPI_Allreduce(s, r, (int)n, dt, ops[o], MPI_COMM_WORLD));
            EXPECT(r, dt, n, reduced(ops[o], i, t_size),
                   "Allreduce n=%zu op %d", n, o);
            EXPECT(s, dt, n, val(t_rank, i), "Allreduce changed sendbuf");
            MPI_OK(MPI_Scan(s, r, (int)n, dt, ops[o], MPI_COMM_WORLD));
            EXPECT(r, dt, n, reduced(ops[o], i, t_rank + 1), "Scan n=%zu op %d",
                   n, o);
            for (size_t i = 0; i < n; i++)
                put(r, dt, i, -1);
            MPI_OK(MPI_Exscan(s, r, (int)n, dt, ops[o], MPI_COMM_WORLD));
            if (t_rank > 0)
                EXPECT(r, dt, n, reduced(ops[o], i, t_rank),
                       "Exscan n=%zu op %d", n, o);
            free(s);
            free(r);
        }
    }
}

/* PROD and the logical and bitwise ops on integers. */
static void
test_int_ops(void)
{
    int n = 64, s[64], r[64];

    for (int i = 0; i < n; i++)
        s[i] = (t_rank + i) % 3 + 1;
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) {
        int want = 1;
        for (int k = 0; k < t_size; k++)
            want *= (k + i) % 3 + 1;
        CHECK(r[i] == want, "PROD [%d] = %d, expected %d", i, r[i], want);
    }
    for (int i = 0; i < n; i++)
        s[i] = (1 << (t_rank % 16)) | (i << 16);
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_BOR, MPI_COMM_WORLD));
    int all = 0;
    for (int k = 0; k < t_size; k++)
        all |= 1 << (k % 16);
    for (int i = 0; i < n; i++)
        CHECK(r[i] == (all | (i << 16)), "BOR [%d] = %x", i, r[i]);
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_BAND, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CHECK(r[i] == ((t_size == 1 ? 1 : 0) | (i << 16)), "BAND [%d] = %x", i,
              r[i]);
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_BXOR, MPI_COMM_WORLD));
    int x = 0;
    for (int k = 0; k < t_size; k++)
        x ^= (1 << (k % 16)) | (0);
    for (int i = 0; i < n; i++)
        CHECK(r[i] == (x | (t_size % 2 ? i << 16 : 0)), "BXOR [%d] = %x", i,
              r[i]);
    for (int i = 0; i < n; i++)
        s[i] = (i % 2 == 0) || (t_rank == i % t_size);
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CHECK(r[i] == ((i % 2 == 0) || t_size == 1), "LAND [%d] = %d", i, r[i]);
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CHECK(r[i] == 1, "LOR [%d] = %d", i, r[i]);
    MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, MPI_LXOR, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int k = 0; k < t_size; k++)
            want ^= (i % 2 == 0) || (k == i % t_size);
        CHECK(r[i] == want, "LXOR [%d] = %d, expected %d", i, r[i], want);
    }
}

static void
test_gather_scatter(MPI_Datatype dt)
{
    for (int c = 0; c < NCOUNTS; c++) {
        size_t n = (size_t)counts[c], all = n * (size_t)t_size;
        for (int root = 0; root < t_size; root++) {
            if (n > 1000 && root != 0 && root != t_size - 1)
                continue;
            void *s = tbuf(dt, n, 0), *r = tbuf(dt, all, -1);
            for (size_t i = 0; i < n; i++)
                put(s, dt, i, val(t_rank, i));
            MPI_OK(
                MPI_Gather(s, (int)n, dt, r, (int)n, dt, root, MPI_COMM_WORLD));
            if (t_rank == root)
                EXPECT(r, dt, all, val((int)(i / n), i % n),
                       "Gather n=%zu root %d", n, root);
            /* Scatter back what was gathered, from a fresh buffer. */
            if (t_rank == root)
                for (size_t i = 0; i < all; i++)
                    put(r, dt, i, val((int)(i / n), i % n) + 7);
            for (size_t i = 0; i < n; i++)
                put(s, dt, i, -1);
            MPI_OK(MPI_Scatter(r, (int)n, dt, s, (int)n, dt, root,
                               MPI_COMM_WORLD));
            EXPECT(s, dt, n, val(t_rank, i) + 7, "Scatter n=%zu root %d", n,
                   root);
            free(s);
            free(r);
        }
    }
}

/* Rank k has (k % 3 + 1) * n elements, at displacement k * stride with
 * gaps in between (stride = 4n + 1). */
static void
test_gatherv_scatterv(MPI_Datatype dt)
{
    for (int c = 1; c < NCOUNTS; c++) {
        size_t n = (size_t)counts[c];
        if (n > 1000)
            n = 3000;
        int *rc = t_malloc(sizeof(int) * (size_t)t_size);
        int *dp = t_malloc(sizeof(int) * (size_t)t_size);
        size_t stride = 4 * n + 1, all = stride * (size_t)t_size;
        for (int k = 0; k < t_size; k++) {
            rc[k] = (int)((size_t)(k % 3 + 1) * n);
            dp[k] = (int)((size_t)(t_size - 1 - k) * stride); /* reversed */
        }
        for (int root = 0; root < t_size; root++) {
            size_t mine = (size_t)rc[t_rank];
            void *s = tbuf(dt, mine, 0), *r = tbuf(dt, all, GAP);
            for (size_t i = 0; i < mine; i++)
                put(s, dt, i, val(t_rank, i));
            MPI_OK(MPI_Gatherv(s, (int)mine, dt, r, rc, dp, dt, root,
                               MPI_COMM_WORLD));
            if (t_rank == root) {
                for (int k = 0; k < t_size; k++) {
                    void *at = (char *)r + (size_t)dp[k] * tsize(dt);
                    EXPECT(at, dt, stride, i < (size_t)rc[k] ? val(k, i) : GAP,
                           "Gatherv n=%zu root %d block %d", n, root, k);
                }
            }
            for (size_t i = 0; i < mine; i++)
                put(s, dt, i, -1);
            if (t_rank == root)
                for (int k = 0; k < t_size; k++)
                    for (size_t i = 0; i < (size_t)rc[k]; i++)
                        put(r, dt, (size_t)dp[k] + i, val(k, i) * 2);
            MPI_OK(MPI_Scatterv(r, rc, dp, dt, s, (int)mine, dt, root,
                                MPI_COMM_WORLD));
            EXPECT(s, dt, mine, val(t_rank, i) * 2, "Scatterv n=%zu root %d", n,
                   root);
            free(s);
            free(r);
        }
        /* Allgatherv with the same layout. */
        size_t mine = (size_t)rc[t_rank];
        void *s = tbuf(dt, mine, 0), *r = tbuf(dt, all, GAP);
        for (size_t i = 0; i < mine; i++)
            put(s, dt, i, val(t_rank, i));
        MPI_OK(MPI_Allgatherv(s, (int)mine, dt, r, rc, dp, dt, MPI_COMM_WORLD));
        for (int k = 0; k < t_size; k++) {
            void *at = (char *)r + (size_t)dp[k] * tsize(dt);
            EXPECT(at, dt, stride, i < (size_t)rc[k] ? val(k, i) : GAP,
                   "Allgatherv n=%zu block %d", n, k);
        }
        free(s);
        free(r);
        free(rc);
        free(dp);
    }
}

static void
test_allgather(MPI_Datatype dt)
{
    for (int c = 0; c < NCOUNTS; c++) {
        size_t n = (size_t)counts[c], all = n * (size_t)t_size;
        void *s = tbuf(dt, n, 0), *r = tbuf(dt, all, -1);
        for (size_t i = 0; i < n; i++)
            put(s, dt, i, val(t_rank, i));
        MPI_OK(MPI_Allgather(s, (int)n, dt, r, (int)n, dt, MPI_COMM_WORLD));
        EXPECT(r, dt, all, val((int)(i / n), i % n), "Allgather n=%zu", n);
        free(s);
        free(r);
    }
}

/* The value rank from sends rank to at element i. */
static long long
a2a(int from, int to, size_t i)
{
    return (long long)(from * 37 + to * 11) * 100 + (long long)(i % 97);
}

static void
test_alltoall(MPI_Datatype dt)
{
    for (int c = 0; c < NCOUNTS; c++) {
        size_t n = (size_t)counts[c], all = n * (size_t)t_size;
        if (n > 10000)
            n = 10000, all = n * (size_t)t_size;
        void *s = tbuf(dt, all, 0), *r = tbuf(dt, all, -1);
        for (size_t i = 0; i < all; i++)
            put(s, dt, i, a2a(t_rank, (int)(i / n), i % n));
        MPI_OK(MPI_Alltoall(s, (int)n, dt, r, (int)n, dt, MPI_COMM_WORLD));
        EXPECT(r, dt, all, a2a((int)(i / n), t_rank, i % n), "Alltoall n=%zu",
               n);
        free(s);
        free(r);

        /* Alltoallv: rank a sends b ((a + b) % 3) * n elements, packed
         * in order on the send side, reversed with gaps on the other. */
        int *sc = t_malloc(sizeof(int) * (size_t)t_size),
            *sd = t_malloc(sizeof(int) * (size_t)t_size),
            *rc = t_malloc(sizeof(int) * (size_t)t_size),
            *rd = t_malloc(sizeof(int) * (size_t)t_size);
        size_t soff = 0, stride = 2 * n + 3;
        for (int k = 0; k < t_size; k++) {
            sc[k] = (int)((size_t)((t_rank + k) % 3) * n);
            sd[k] = (int)soff;
            soff += (size_t)sc[k];
            rc[k] = (int)((size_t)((t_rank + k) % 3) * n);
            rd[k] = (int)((size_t)(t_size - 1 - k) * stride);
        }
        s = tbuf(dt, soff, 0);
        r = tbuf(dt, stride * (size_t)t_size, GAP);
        for (int k = 0; k < t_size; k++)
            for (size_t i = 0; i < (size_t)sc[k]; i++)
                put(s, dt, (size_t)sd[k] + i, a2a(t_rank, k, i));
        MPI_OK(MPI_Alltoallv(s, sc, sd, dt, r, rc, rd, dt, MPI_COMM_WORLD));
        for (int k = 0; k < t_size; k++) {
            void *at = (char *)r + (size_t)rd[k] * tsize(dt);
            EXPECT(at, dt, stride, i < (size_t)rc[k] ? a2a(k, t_rank, i) : GAP,
                   "Alltoallv n=%zu from %d", n, k);
        }
        free(s);
        free(r);
        free(sc);
        free(sd);
        free(rc);
        free(rd);
    }
}

static void
test_reduce_scatter(MPI_Datatype dt)
{
    for (int c = 0; c < NCOUNTS; c++) {
        size_t n = (size_t)counts[c];
        int *rc = t_malloc(sizeof(int) * (size_t)t_size);
        size_t total = 0, off = 0;
        for (int k = 0; k < t_size; k++) {
            rc[k] = (int)((size_t)(k % 2 + 1) * n);
            if (k < t_rank)
                off += (size_t)rc[k];
            total += (size_t)rc[k];
        }
        void *s = tbuf(dt, total, 0), *r = tbuf(dt, (size_t)rc[t_rank], -1);
        for (size_t i = 0; i < total; i++)
            put(s, dt, i, val(t_rank, i));
        MPI_OK(MPI_Reduce_scatter(s, r, rc, dt, MPI_SUM, MPI_COMM_WORLD));
        EXPECT(r, dt, rc[t_rank], reduced(MPI_SUM, off + i, t_size),
               "Reduce_scatter n=%zu", n);
        free(s);
        free(r);
        free(rc);

        s = tbuf(dt, n * (size_t)t_size, 0);
        r = tbuf(dt, n, -1);
        for (size_t i = 0; i < n * (size_t)t_size; i++)
            put(s, dt, i, val(t_rank, i));
        MPI_OK(MPI_Reduce_scatter_block(s, r, (int)n, dt, MPI_MAX,
                                        MPI_COMM_WORLD));
        EXPECT(r, dt, n, reduced(MPI_MAX, n * (size_t)t_rank + i, t_size),
               "Reduce_scatter_block n=%zu", n);
        free(s);
        free(r);
    }
}

int
main(int argc, char **argv)
{
    MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};

    t_init(&argc, &argv);
    test_barrier();
    for (int t = 0; t < 2; t++) {
        test_bcast(types[t]);
        test_reduce(types[t]);
        test_gather_scatter(types[t]);
        test_gatherv_scatterv(types[t]);
        test_allgather(types[t]);
        test_alltoall(types[t]);
        test_reduce_scatter(types[t]);
    }
    test_int_ops();
    /* A few more builtin types through the reductions. */
    MPI_Datatype more[] = {MPI_LONG_LONG, MPI_FLOAT, MPI_UNSIGNED_SHORT};
    for (int t = 0; t < 3; t++) {
        long long want = 0;
        void *s = tbuf(more[t], 3, 0), *r = tbuf(more[t], 3, -1);
        for (int i = 0; i < 3; i++)
            put(s, more[t], (size_t)i, val(t_rank, (size_t)i));
        MPI_OK(MPI_Allreduce(s, r, 3, more[t], MPI_SUM, MPI_COMM_WORLD));
        for (int k = 0; k < t_size; k++)
            want += val(k, 2);
        CHECK(get(r, more[t], 2) == want, "%s SUM = %lld, expected %lld",
              tname(more[t]), get(r, more[t], 2), want);
        free(s);
        free(r);
    }
    return t_finish("coll_basic");
}
