/*
 * coll_inplace: the MPI_IN_PLACE forms of every collective that has one,
 * short and long: Reduce (at the root), Allreduce, Gather and Gatherv
 * (root's send), Scatter and Scatterv (root's receive), Allgather,
 * Allgatherv, Alltoall, Alltoallv, Reduce_scatter,
 * Reduce_scatter_block, Scan and Exscan; with a user op and a vector
 * type too.
 */
#include "mpitest.h"

static int
val(int r, size_t i)
{
    return (r + 1) * 1000 + (int)(i % 997);
}

static int
sum(size_t i, int upto)
{
    int s = 0;

    for (int r = 0; r < upto; r++)
        s += val(r, i);
    return s;
}

#define EXPECT_INT(b, n, want, ...)                                            \
    do {                                                                       \
        for (size_t i = 0; i < (size_t)(n); i++)                               \
            if ((b)[i] != (want)) {                                            \
                CHECK(0, "[%zu] = %d, expected %d", i, (b)[i], (int)(want));   \
                fprintf(stderr, "  in: ");                                     \
                fprintf(stderr, __VA_ARGS__);                                  \
                fputc('\n', stderr);                                           \
                break;                                                         \
            }                                                                  \
    } while (0)

static int *
ibuf(size_t n)
{
    return t_malloc(sizeof(int) * (n > 0 ? n : 1));
}

static void
run(size_t n)
{
    size_t all = n * (size_t)t_size;
    int *b = ibuf(all), *cnt = ibuf((size_t)t_size),
        *dsp = ibuf((size_t)t_size);

    /* Reduce: the root's operand is in its receive buffer. */
    for (int root = 0; root < t_size; root++) {
        for (size_t i = 0; i < n; i++)
            b[i] = val(t_rank, i);
        if (t_rank == root)
            MPI_OK(MPI_Reduce(MPI_IN_PLACE, b, (int)n, MPI_INT, MPI_SUM, root,
                              MPI_COMM_WORLD));
        else
            MPI_OK(MPI_Reduce(b, NULL, (int)n, MPI_INT, MPI_SUM, root,
                              MPI_COMM_WORLD));
        if (t_rank == root)
            EXPECT_INT(b, n, sum(i, t_size), "Reduce n=%zu root %d", n, root);
        else
            EXPECT_INT(b, n, val(t_rank, i), "Reduce changed a sendbuf");
    }

    /* Allreduce, Scan, Exscan. */
    for (size_t i = 0; i < n; i++)
        b[i] = val(t_rank, i);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, b, (int)n, MPI_INT, MPI_SUM,
                         MPI_COMM_WORLD));
    EXPECT_INT(b, n, sum(i, t_size), "Allreduce n=%zu", n);
    for (size_t i = 0; i < n; i++)
        b[i] = val(t_rank, i);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, b, (int)n, MPI_INT, MPI_MAX,
                         MPI_COMM_WORLD));
    EXPECT_INT(b, n, val(t_size - 1, i), "Allreduce MAX n=%zu", n);
    for (size_t i = 0; i < n; i++)
        b[i] = val(t_rank, i);
    MPI_OK(MPI_Scan(MPI_IN_PLACE, b, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_INT(b, n, sum(i, t_rank + 1), "Scan n=%zu", n);
    for (size_t i = 0; i < n; i++)
        b[i] = val(t_rank, i);
    MPI_OK(
        MPI_Exscan(MPI_IN_PLACE, b, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (t_rank > 0)
        EXPECT_INT(b, n, sum(i, t_rank), "Exscan n=%zu", n);

    /* Gather: the root's block is already in place. */
    for (int root = 0; root < t_size; root += (t_size > 3 ? 3 : 1)) {
        for (size_t i = 0; i < all; i++)
            b[i] = -1;
        for (size_t i = 0; i < n; i++)
            b[(t_rank == root ? (size_t)root * n : 0) + i] = val(t_rank, i);
        if (t_rank == root)
            MPI_OK(MPI_Gather(MPI_IN_PLACE, (int)n, MPI_INT, b, (int)n, MPI_INT,
                              root, MPI_COMM_WORLD));
        else
            MPI_OK(MPI_Gather(b, (int)n, MPI_INT, NULL, 0, MPI_INT, root,
                              MPI_COMM_WORLD));
        if (t_rank == root)
            EXPECT_INT(b, all, val((int)(i / n), i % n), "Gather n=%zu root %d",
                       n, root);
        /* Scatter it back: the root keeps its block where it is. */
        if (t_rank == root) {
            MPI_OK(MPI_Scatter(b, (int)n, MPI_INT, MPI_IN_PLACE, (int)n,
                               MPI_INT, root, MPI_COMM_WORLD));
            EXPECT_INT(b, all, val((int)(i / n), i % n),
                       "Scatter changed the root's buffer n=%zu", n);
        } else {
            for (size_t i = 0; i < n; i++)
                b[i] = -1;
            MPI_OK(MPI_Scatter(NULL, 0, MPI_INT, b, (int)n, MPI_INT, root,
                               MPI_COMM_WORLD));
            EXPECT_INT(b, n, val(t_rank, i), "Scatter n=%zu root %d", n, root);
        }
    }

    /* Gatherv / Scatterv with rank k owning (k % 2 + 1) * n at k * 2n. */
    size_t stride = 2 * n;
    int *v = ibuf(stride * (size_t)t_size);
    for (int k = 0; k < t_size; k++) {
        cnt[k] = (int)((size_t)(k % 2 + 1) * n);
        dsp[k] = (int)((size_t)k * stride);
    }
    int root = t_size - 1;
    for (size_t i = 0; i < stride * (size_t)t_size; i++)
        v[i] = -1;
    for (int i = 0; i < cnt[t_rank]; i++)
        v[(t_rank == root ? (size_t)dsp[root] : 0) + (size_t)i] =
            val(t_rank, (size_t)i);
    if (t_rank == root)
        MPI_OK(MPI_Gatherv(MPI_IN_PLACE, cnt[root], MPI_INT, v, cnt, dsp,
                           MPI_INT, root, MPI_COMM_WORLD));
    else
        MPI_OK(MPI_Gatherv(v, cnt[t_rank], MPI_INT, NULL, NULL, NULL, MPI_INT,
                           root, MPI_COMM_WORLD));
    if (t_rank == root)
        for (int k = 0; k < t_size; k++)
            EXPECT_INT(v + dsp[k], stride, i < (size_t)cnt[k] ? val(k, i) : -1,
                       "Gatherv n=%zu block %d", n, k);
    if (t_rank == root) {
        MPI_OK(MPI_Scatterv(v, cnt, dsp, MPI_INT, MPI_IN_PLACE, cnt[root],
                            MPI_INT, root, MPI_COMM_WORLD));
    } else {
        for (size_t i = 0; i < stride; i++)
            v[i] = -1;
        MPI_OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, v, cnt[t_rank], MPI_INT,
                            root, MPI_COMM_WORLD));
        EXPECT_INT(v, cnt[t_rank], val(t_rank, i), "Scatterv n=%zu", n);
    }

    /* Allgather and Allgatherv: my block is in place. */
    for (size_t i = 0; i < all; i++)
        b[i] = i / n == (size_t)t_rank ? val(t_rank, i % n) : -1;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, (int)n, MPI_INT,
                         MPI_COMM_WORLD));
    EXPECT_INT(b, all, val((int)(i / n), i % n), "Allgather n=%zu", n);
    for (size_t i = 0; i < stride * (size_t)t_size; i++)
        v[i] = -1;
    for (int i = 0; i < cnt[t_rank]; i++)
        v[(size_t)dsp[t_rank] + (size_t)i] = val(t_rank, (size_t)i);
    MPI_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, cnt, dsp,
                          MPI_INT, MPI_COMM_WORLD));
    for (int k = 0; k < t_size; k++)
        EXPECT_INT(v + dsp[k], stride, i < (size_t)cnt[k] ? val(k, i) : -1,
                   "Allgatherv n=%zu block %d", n, k);

    /* Alltoall: block k goes to rank k and is replaced by k's block. */
    for (size_t i = 0; i < all; i++)
        b[i] = t_rank * 100000 + (int)(i / n) * 1000 + (int)(i % n % 1000);
    MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, (int)n, MPI_INT,
                        MPI_COMM_WORLD));
    EXPECT_INT(b, all,
               (int)(i / n) * 100000 + t_rank * 1000 + (int)(i % n % 1000),
               "Alltoall n=%zu", n);
    /* Alltoallv: rank a and b swap ((a + b) % 2 + 1) * n ints. */
    for (int k = 0; k < t_size; k++) {
        cnt[k] = (int)((size_t)((t_rank + k) % 2 + 1) * n);
        dsp[k] = (int)((size_t)k * stride);
    }
    for (size_t i = 0; i < stride * (size_t)t_size; i++)
        v[i] = (i % stride) < (size_t)cnt[i / stride]
                   ? t_rank * 100000 + (int)(i / stride) * 1000 +
                         (int)(i % stride % 1000)
                   : -3;
    MPI_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, v, cnt,
                         dsp, MPI_INT, MPI_COMM_WORLD));
    for (int k = 0; k < t_size; k++)
        EXPECT_INT(v + dsp[k], stride,
                   i < (size_t)cnt[k]
                       ? k * 100000 + t_rank * 1000 + (int)(i % 1000)
                       : -3,
                   "Alltoallv n=%zu from %d", n, k);

    /* Reduce_scatter(_block): the whole input is in the receive buffer. */
    size_t total = 0, off = 0;
    for (int k = 0; k < t_size; k++) {
        cnt[k] = (int)((size_t)(k % 3) * n);
        if (k < t_rank)
            off += (size_t)cnt[k];
        total += (size_t)cnt[k];
    }
    int *rs = ibuf(total > all ? total : all);
    for (size_t i = 0; i < total; i++)
        rs[i] = val(t_rank, i);
    MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, rs, cnt, MPI_INT, MPI_SUM,
                              MPI_COMM_WORLD));
    EXPECT_INT(rs, cnt[t_rank], sum(off + i, t_size), "Reduce_scatter n=%zu",
               n);
    for (size_t i = 0; i < all; i++)
        rs[i] = val(t_rank, i);
    MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, rs, (int)n, MPI_INT, MPI_SUM,
                                    MPI_COMM_WORLD));
    EXPECT_INT(rs, n, sum((size_t)t_rank * n + i, t_size),
               "Reduce_scatter_block n=%zu", n);
    free(rs);
    free(v);
    free(b);
    free(cnt);
    free(dsp);
}

/* x op y = x - y... is not associative; use "keep the left operand's
 * first nonzero" instead: associative, not commutative. */
static void
first(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;

    for (int i = 0; i < *len; i++)
        if (a[i] != 0)
            b[i] = a[i];
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    run(1);
    run(10);
    run(20000); /* 80 KB: the long-message paths */

    /* A non-commutative user op, in place. */
    MPI_Op op;
    int x[3];
    MPI_OK(MPI_Op_create(first, 0, &op));
    for (int i = 0; i < 3; i++)
        x[i] = t_rank >= i ? t_rank + 1 : 0; /* first nonzero: rank i */
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < 3 && i < t_size; i++)
        CHECK(x[i] == i + 1, "user op in place [%d] = %d", i, x[i]);
    for (int i = 0; i < 3; i++)
        x[i] = t_rank >= i ? t_rank + 1 : 0;
    MPI_OK(MPI_Scan(MPI_IN_PLACE, x, 3, MPI_INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++)
        CHECK(x[i] == (t_rank >= i ? i + 1 : 0), "user op Scan [%d] = %d", i,
              x[i]);
    MPI_OK(MPI_Op_free(&op));

#if defined(P2PMPI) || defined(MPICH_VERSION)
    /* A vector type, in place: the holes stay as they are.  (A predefined
     * op on a derived type: ours and MPICH take it, Open MPI does not.) */
    MPI_Datatype vec;
    int w[12];
    MPI_OK(MPI_Type_vector(3, 1, 4, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    for (int i = 0; i < 12; i++)
        w[i] = i % 4 == 0 ? t_rank + i : -9;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, w, 1, vec, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 12; i++) {
        int want = i % 4 == 0 ? t_size * (t_size - 1) / 2 + t_size * i : -9;
        CHECK(w[i] == want, "vector in place [%d] = %d, expected %d", i, w[i],
              want);
    }
    MPI_OK(MPI_Type_free(&vec));
#endif
    return t_finish("coll_inplace");
}
