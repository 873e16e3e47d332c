/*
 * coll_long: the long-message reductions at sizes that reach every
 * corner of their algorithms.  Reduce above 64 KiB is the binomial tree
 * on up to 4 ranks (its root receives its first child's operand straight
 * into the receive buffer and folds its own in; its inner nodes combine
 * in buffers kept from one call to the next, which must not leak one
 * call's data into the next) and the ring reduce-scatter and gather on
 * more; Allreduce the ring.  So: several sizes, the largest over 4 MiB
 * and all odd, three roots (0, 1, the last), MPI_IN_PLACE at
 * the root, a commutative user operation, and a non-commutative one whose
 * result shows the rank order.  Every element is checked, and the
 * leaves' send buffers must be left alone.
 */
#include "mpitest.h"

/* Element i of rank r's operand: small, so that sums stay exact. */
static int
val(int r, size_t i)
{
    return (int)((size_t)(r + 1) * 3 + i % 1009);
}

/* The sum over all ranks of val(r, i). */
static int
sum(size_t i)
{
    int s = 0;

    for (int r = 0; r < t_size; r++)
        s += val(r, i);
    return s;
}

/* A commutative user operation: the larger magnitude, sign kept. */
static void
absmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;

    (void)dt;
    for (int i = 0; i < *len; i++)
        if ((a[i] < 0 ? -a[i] : a[i]) > (b[i] < 0 ? -b[i] : b[i]))
            b[i] = a[i];
}

/* A non-commutative one on pairs (m, c), the affine maps x -> m x + c
 * (mod 2^32), composed: (in . inout)(x) = in(inout(x))... applied in
 * rank order, the result is x0 o x1 o ... o x(p-1). */
static void
compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const unsigned *a = in;
    unsigned *b = inout;

    (void)dt;
    for (int i = 0; i < *len; i++) {
        unsigned m = a[2 * i] * b[2 * i];
        unsigned c = a[2 * i] * b[2 * i + 1] + a[2 * i + 1];

        b[2 * i] = m;
        b[2 * i + 1] = c;
    }
}

/* Rank r's affine map at element i. */
static void
map_of(int r, size_t i, unsigned *m, unsigned *c)
{
    *m = (unsigned)(2 * r + 3) + (unsigned)(i % 7) * 2;
    *c = (unsigned)(r * 5 + 1) + (unsigned)(i % 11);
}

static void
test_sum(size_t n)
{
    int *s = t_malloc(sizeof(int) * n), *r = t_malloc(sizeof(int) * n);
    int roots[] = {0, 1, t_size - 1};

    for (int k = 0; k < 3; k++) {
        int root = roots[k] % t_size;

        if (k > 0 && root == roots[k - 1] % t_size)
            continue;
        for (size_t i = 0; i < n; i++) {
            s[i] = val(t_rank, i);
            r[i] = -1;
        }
        MPI_OK(MPI_Reduce(s, r, (int)n, MPI_INT, MPI_SUM, root,
                          MPI_COMM_WORLD));
        for (size_t i = 0; i < n; i++) {
            if (t_rank == root && r[i] != sum(i)) {
                CHECK(0, "Reduce n=%zu root %d: [%zu] = %d, expected %d", n,
                      root, i, r[i], sum(i));
                break;
            }
            if (s[i] != val(t_rank, i)) {
                CHECK(0, "Reduce n=%zu root %d changed the send buffer", n,
                      root);
                break;
            }
        }
        /* The root's operand in its receive buffer. */
        for (size_t i = 0; i < n; i++)
            r[i] = val(t_rank, i);
        if (t_rank == root)
            MPI_OK(MPI_Reduce(MPI_IN_PLACE, r, (int)n, MPI_INT, MPI_SUM, root,
                              MPI_COMM_WORLD));
        else
            MPI_OK(MPI_Reduce(r, NULL, (int)n, MPI_INT, MPI_SUM, root,
                              MPI_COMM_WORLD));
        for (size_t i = 0; t_rank == root && i < n; i++)
            if (r[i] != sum(i)) {
                CHECK(0, "in-place Reduce n=%zu root %d: [%zu] = %d, "
                         "expected %d",
                      n, root, i, r[i], sum(i));
                break;
            }
    }
    /* Allreduce and a commutative user op on the same sizes. */
    for (size_t i = 0; i < n; i++)
        s[i] = (t_rank % 2 ? -1 : 1) * val(t_rank, i);
    MPI_Op op;
    MPI_OK(MPI_Op_create(absmax, 1, &op));
    MPI_OK(MPI_Reduce(s, r, (int)n, MPI_INT, op, t_size - 1, MPI_COMM_WORLD));
    if (t_rank == t_size - 1)
        for (size_t i = 0; i < n; i++) {
            int want = (t_size - 1) % 2 ? -val(t_size - 1, i)
                                        : val(t_size - 1, i);
            if (r[i] != want) {
                CHECK(0, "absmax Reduce n=%zu: [%zu] = %d, expected %d", n, i,
                      r[i], want);
                break;
            }
        }
    MPI_OK(MPI_Op_free(&op));
    for (size_t i = 0; i < n; i++)
        s[i] = val(t_rank, i);
    MPI_OK(MPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (size_t i = 0; i < n; i++)
        if (r[i] != sum(i)) {
            CHECK(0, "Allreduce n=%zu: [%zu] = %d, expected %d", n, i, r[i],
                  sum(i));
            break;
        }
    free(s);
    free(r);
}

static void
test_order(size_t n)
{
    MPI_Datatype pair;
    MPI_Op op;
    unsigned *s = t_malloc(2 * sizeof(unsigned) * n),
             *r = t_malloc(2 * sizeof(unsigned) * n);

    MPI_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &pair));
    MPI_OK(MPI_Type_commit(&pair));
    MPI_OK(MPI_Op_create(compose, 0, &op));
    for (size_t i = 0; i < n; i++)
        map_of(t_rank, i, &s[2 * i], &s[2 * i + 1]);
    for (int root = 0; root < t_size && root < 2; root++) {
        MPI_OK(MPI_Reduce(s, r, (int)n, pair, op, root, MPI_COMM_WORLD));
        for (size_t i = 0; t_rank == root && i < n; i++) {
            /* x0 o x1 o ... : fold from the highest rank down. */
            unsigned m = 1, c = 0, mr, cr;

            for (int k = t_size - 1; k >= 0; k--) {
                map_of(k, i, &mr, &cr);
                /* (x_k o acc)(x) = x_k(acc(x)) */
                c = mr * c + cr;
                m = mr * m;
            }
            if (r[2 * i] != m || r[2 * i + 1] != c) {
                CHECK(0, "ordered Reduce n=%zu root %d: [%zu] = (%u, %u), "
                         "expected (%u, %u)",
                      n, root, i, r[2 * i], r[2 * i + 1], m, c);
                break;
            }
        }
    }
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&pair));
    free(s);
    free(r);
}

int
main(int argc, char **argv)
{
    /* 64 KiB segments of MPI_INT: 16384 elements. */
    size_t sizes[] = {16384 + 1, 5 * 16384 + 333, 66 * 16384 + 7};

    t_init(&argc, &argv);
    for (int k = 0; k < 3; k++)
        test_sum(sizes[k]);
    test_order(3 * 16384 + 5);
    return t_finish("coll_long");
}
