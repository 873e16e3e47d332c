/*
 * topo.c: process topologies (MPI 3.1 chapter 7).  A topology is a
 * description hung on a communicator (struct mpii_topo); the calls that
 * make one (Cart_create, Graph_create, Dist_graph_create(_adjacent),
 * Cart_sub) build the communicator with Comm_split or Comm_dup, so the
 * context id is agreed as everywhere else, and then attach it.  Every
 * member computes the same description from the same arguments, so
 * replicas of a rank (p2prun -r) agree without messages of their own.
 * Reordering is never done (reorder is accepted and ignored: rank i of
 * the new communicator is rank i of the old one).
 *
 * Dist_graph_create is the one that talks: every edge some rank names
 * goes to both of its ends (an all-to-all of counts, then of the edges);
 * a process's neighbours come in the order of the naming rank, then of
 * its arguments, the same on every replica.
 *
 * The neighbour lists (mpii_topo_neighbors) feed the neighbour
 * collectives in coll_neighbor.c.
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

struct mpii_topo {
    int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    /* cart */
    int ndims;
    int *dims, *periods;
    /* graph */
    int nnodes, nedges;
    int *index, *edges;
    /* dist graph */
    int indeg, outdeg, weighted;
    int *in, *inw, *out, *outw;
};

/* malloc of n ints (at least one, so that 0 is not a failure). */
static int *
ints(int n)
{
    /* zeroed: gcc -O3 cannot see that a loop over ndims fills them */
    return calloc((size_t)(n > 0 ? n : 1), sizeof(int));
}

static int *
ints_copy(const int *src, int n)
{
    int *p = ints(n);

    if (p != NULL && n > 0 && src != NULL)
        memcpy(p, src, (size_t)n * sizeof *p);
    return p;
}

void
mpii_topo_free(struct mpii_topo *t)
{
    if (t == NULL)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->in);
    free(t->inw);
    free(t->out);
    free(t->outw);
    free(t);
}

/* A deep copy (Comm_dup keeps the topology); NULL on no memory. */
struct mpii_topo *
mpii_topo_dup(const struct mpii_topo *t)
{
    struct mpii_topo *n;

    if ((n = calloc(1, sizeof *n)) == NULL)
        return NULL;
    *n = *t;
    n->dims = ints_copy(t->dims, t->ndims);
    n->periods = ints_copy(t->periods, t->ndims);
    n->index = ints_copy(t->index, t->nnodes);
    n->edges = ints_copy(t->edges, t->nedges);
    n->in = ints_copy(t->in, t->indeg);
    n->inw = ints_copy(t->inw, t->indeg);
    n->out = ints_copy(t->out, t->outdeg);
    n->outw = ints_copy(t->outw, t->outdeg);
    if (n->dims == NULL || n->periods == NULL || n->index == NULL ||
        n->edges == NULL || n->in == NULL || n->inw == NULL ||
        n->out == NULL || n->outw == NULL) {
        mpii_topo_free(n);
        return NULL;
    }
    return n;
}

/* An empty topology of a kind, every array allocated (possibly 1 int). */
static struct mpii_topo *
topo_new(int kind)
{
    struct mpii_topo *t = calloc(1, sizeof *t);

    if (t == NULL)
        return NULL;
    t->kind = kind;
    return t;
}

/* Fill the arrays a kind does not use, so that dup and free need no
 * case analysis. */
static int
topo_complete(struct mpii_topo *t)
{
    if (t->dims == NULL)
        t->dims = ints(0);
    if (t->periods == NULL)
        t->periods = ints(0);
    if (t->index == NULL)
        t->index = ints(0);
    if (t->edges == NULL)
        t->edges = ints(0);
    if (t->in == NULL)
        t->in = ints(0);
    if (t->inw == NULL)
        t->inw = ints(0);
    if (t->out == NULL)
        t->out = ints(0);
    if (t->outw == NULL)
        t->outw = ints(0);
    return t->dims && t->periods && t->index && t->edges && t->in &&
                   t->inw && t->out && t->outw
               ? MPI_SUCCESS
               : MPI_ERR_NO_MEM;
}

/* The topology of comm if it is of kind (0: any), else NULL. */
static struct mpii_topo *
topo_of(MPI_Comm comm, int kind, int *err)
{
    struct mpii_comm *c = mpii_comm_get(comm);

    if (c == NULL || c->inter) {
        *err = MPI_ERR_COMM;
        return NULL;
    }
    if (c->topo == NULL || (kind != 0 && c->topo->kind != kind)) {
        *err = MPI_ERR_TOPOLOGY;
        return NULL;
    }
    *err = MPI_SUCCESS;
    return c->topo;
}

/* Hang t on the new communicator *out (or free it when we are not a
 * member). */
static int
topo_attach(MPI_Comm out, struct mpii_topo *t)
{
    struct mpii_comm *n;
    int rc;

    if (out == MPI_COMM_NULL || (n = mpii_comm_get(out)) == NULL) {
        mpii_topo_free(t);
        return MPI_SUCCESS;
    }
    if ((rc = topo_complete(t)) != MPI_SUCCESS) {
        mpii_topo_free(t);
        return rc;
    }
    mpii_topo_free(n->topo);
    n->topo = t;
    return MPI_SUCCESS;
}

/* --- the neighbour lists -------------------------------------------- */

int
mpii_topo_neighbors(struct mpii_comm *c, int **in, int *nin, int **out,
                    int *nout)
{
    const struct mpii_topo *t = c->topo;
    int i, lo, hi, n, src, dst;

    *in = *out = NULL;
    if (t == NULL)
        return MPI_ERR_TOPOLOGY;
    switch (t->kind) {
    case MPI_CART:
        n = 2 * t->ndims;
        if ((*in = ints(n)) == NULL)
            return MPI_ERR_NO_MEM;
        for (i = 0; i < t->ndims; i++) {
            PMPI_Cart_shift(c->handle, i, 1, &src, &dst);
            (*in)[2 * i] = src;
            (*in)[2 * i + 1] = dst;
        }
        *nin = *nout = n;
        break;
    case MPI_GRAPH:
        lo = c->rank == 0 ? 0 : t->index[c->rank - 1];
        hi = t->index[c->rank];
        n = hi - lo;
        if ((*in = ints_copy(t->edges + lo, n)) == NULL)
            return MPI_ERR_NO_MEM;
        *nin = *nout = n;
        break;
    default: /* MPI_DIST_GRAPH */
        if ((*in = ints_copy(t->in, t->indeg)) == NULL ||
            (*out = ints_copy(t->out, t->outdeg)) == NULL) {
            free(*in);
            *in = NULL;
            return MPI_ERR_NO_MEM;
        }
        *nin = t->indeg;
        *nout = t->outdeg;
        return MPI_SUCCESS;
    }
    if ((*out = ints_copy(*in, *nin)) == NULL) {
        free(*in);
        *in = NULL;
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

/* --- Dims_create ---------------------------------------------------- */

/* The search of Dims_create: k factors of n, in non-increasing order,
 * taken from n's divisors (descending).  The best has the smallest
 * spread (largest - smallest); of equal spreads, the one whose smallest
 * factors are larger, compared from the smallest up: "as close to each
 * other as possible" (MPI 3.1 7.5.2), and MPICH's choice in every case
 * of its test suite's table (72 ranks in 2 dimensions: 9 x 8, where
 * handing out prime factors gives 12 x 6). */
struct dims_search {
    const int *div;
    int ndiv, k, found;
    int *cur, *best;
};

static int
dims_better(const int *a, const int *b, int k)
{
    int sa = a[0] - a[k - 1], sb = b[0] - b[k - 1];

    if (sa != sb)
        return sa < sb;
    for (int i = k - 1; i >= 0; i--)
        if (a[i] != b[i])
            return a[i] > b[i];
    return 0;
}

/* Non-zero if d to the power left is below m. */
static int
dims_short(int d, int left, int m)
{
    long long p = 1;

    for (int i = 0; i < left && p < m; i++)
        p *= d;
    return p < m;
}

/* Factor i of what is left, m, from div[from] down. */
static void
dims_search(struct dims_search *s, int i, int m, int from)
{
    int left = s->k - i;

    if (left == 1) {
        if (i > 0 && m > s->cur[i - 1])
            return;
        s->cur[i] = m;
        if (!s->found || dims_better(s->cur, s->best, s->k)) {
            memcpy(s->best, s->cur, (size_t)s->k * sizeof *s->cur);
            s->found = 1;
        }
        return;
    }
    for (int j = from; j < s->ndiv; j++) {
        int d = s->div[j];

        if (m % d != 0)
            continue;
        /* d is the largest factor left: smaller ones cannot make m. */
        if (dims_short(d, left, m))
            break;
        /* Factors only shrink from here: the spread only grows. */
        if (s->found && i > 0 &&
            s->cur[0] - d > s->best[0] - s->best[s->k - 1])
            break;
        s->cur[i] = d;
        dims_search(s, i + 1, m / d, j);
    }
}

/* The free dimensions (dims[i] == 0) get the best factorisation of what
 * the fixed ones leave, in non-increasing order. */
#pragma weak MPI_Dims_create = PMPI_Dims_create
int
PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    MPII_ENTER;
    static const char fn[] = "MPI_Dims_create";
    struct dims_search s = {0};
    int i, p, fixed = 1, nfree = 0, n, *div;

    MPII_CHECK_INIT(fn);
    if (nnodes < 0 || ndims < 0 || (ndims > 0 && dims == NULL))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    for (i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return mpii_err(MPI_COMM_WORLD, MPI_ERR_DIMS, fn);
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            nfree++;
    }
    if (ndims == 0)
        return nnodes == 1 ? MPI_SUCCESS
                           : mpii_err(MPI_COMM_WORLD, MPI_ERR_DIMS, fn);
    if (fixed == 0 || nnodes % fixed != 0)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_DIMS, fn);
    if (nfree == 0)
        return fixed == nnodes ? MPI_SUCCESS
                               : mpii_err(MPI_COMM_WORLD, MPI_ERR_DIMS, fn);
    n = nnodes / fixed;
    /* n's divisors, descending: the cofactors n / p of the divisors p
     * up to its root, then those p from the largest down.  Fewer than
     * 2 * 46341 of them. */
    for (p = 1; (long long)p * p <= n; p++)
        ;
    div = ints(2 * p);
    s.cur = ints(nfree);
    s.best = ints(nfree);
    if (div == NULL || s.cur == NULL || s.best == NULL) {
        free(div);
        free(s.cur);
        free(s.best);
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
    }
    for (p = 1; (long long)p * p <= n; p++)
        if (n % p == 0)
            div[s.ndiv++] = n / p;
    for (i = s.ndiv - 1; i >= 0; i--)
        if (n / div[i] != div[i])
            div[s.ndiv++] = n / div[i];
    s.div = div;
    s.k = nfree;
    dims_search(&s, 0, n, 0);
    for (i = 0, p = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = s.best[p++];
    free(div);
    free(s.cur);
    free(s.best);
    return MPI_SUCCESS;
}

/* --- Cartesian ------------------------------------------------------ */

/* Rank of coords in a grid (row-major), wrapping periodic dimensions;
 * -1 when a coordinate is off a non-periodic dimension. */
static int
cart_rank_of(const struct mpii_topo *t, const int *coords)
{
    int i, r = 0, x;

    for (i = 0; i < t->ndims; i++) {
        x = coords[i];
        if (x < 0 || x >= t->dims[i]) {
            if (!t->periods[i])
                return -1;
            x %= t->dims[i];
            if (x < 0)
                x += t->dims[i];
        }
        r = r * t->dims[i] + x;
    }
    return r;
}

static void
cart_coords_of(const struct mpii_topo *t, int rank, int *coords)
{
    int i;

    for (i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* A Cartesian description; *nnodes gets the grid's size. */
static int
cart_new(int ndims, const int dims[], const int periods[],
         struct mpii_topo **out, int *nnodes)
{
    struct mpii_topo *t;
    long long n = 1;
    int i;

    *out = NULL;
    if (ndims < 0 || (ndims > 0 && (dims == NULL || periods == NULL)))
        return MPI_ERR_ARG;
    for (i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return MPI_ERR_DIMS;
        n *= dims[i];
        if (n > 0x7fffffff)
            return MPI_ERR_DIMS;
    }
    if ((t = topo_new(MPI_CART)) == NULL)
        return MPI_ERR_NO_MEM;
    t->ndims = ndims;
    t->dims = ints_copy(dims, ndims);
    t->periods = ints(ndims);
    if (t->dims == NULL || t->periods == NULL) {
        mpii_topo_free(t);
        return MPI_ERR_NO_MEM;
    }
    for (i = 0; i < ndims; i++)
        t->periods[i] = periods[i] != 0;
    *out = t;
    *nnodes = (int)n;
    return MPI_SUCCESS;
}

/* The first nnodes ranks of comm (in order) as a new communicator with
 * topology t (taken, whatever happens); the others get MPI_COMM_NULL. */
static int
topo_make(struct mpii_comm *c, int nnodes, struct mpii_topo *t,
          MPI_Comm *out)
{
    int rc;

    rc = PMPI_Comm_split(c->handle, c->rank < nnodes ? 0 : MPI_UNDEFINED,
                         c->rank, out);
    if (rc != MPI_SUCCESS) {
        mpii_topo_free(t);
        return rc;
    }
    return topo_attach(*out, t);
}

#pragma weak MPI_Cart_create = PMPI_Cart_create
int
PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[],
                 const int periods[], int reorder, MPI_Comm *comm_cart)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Cart_create";
    struct mpii_comm *c;
    struct mpii_topo *t;
    int rc, n;

    (void)reorder;
    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (comm_cart == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((rc = cart_new(ndims, dims, periods, &t, &n)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if (n > c->size) {
        mpii_topo_free(t);
        return mpii_err(comm, MPI_ERR_DIMS, fn);
    }
    if ((rc = topo_make(c, n, t, comm_cart)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
int
PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Cartdim_get";
    struct mpii_topo *t;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_CART, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (ndims == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_get = PMPI_Cart_get
int
PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
              int coords[])
{
    MPII_ENTER;
    static const char fn[] = "MPI_Cart_get";
    struct mpii_topo *t;
    int rc, i, *me;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_CART, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (maxdims < 0 ||
        (maxdims > 0 && (dims == NULL || periods == NULL || coords == NULL)))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((me = ints(t->ndims)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    cart_coords_of(t, mpii_comm_get(comm)->rank, me);
    for (i = 0; i < t->ndims && i < maxdims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = me[i];
    }
    free(me);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_rank = PMPI_Cart_rank
int
PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Cart_rank";
    struct mpii_topo *t;
    int rc, r;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_CART, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (rank == NULL || (t->ndims > 0 && coords == NULL))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((r = cart_rank_of(t, coords)) < 0)
        return mpii_err(comm, MPI_ERR_RANK, fn);
    *rank = r;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_coords = PMPI_Cart_coords
int
PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    MPII_ENTER;
    static const char fn[] = "MPI_Cart_coords";
    struct mpii_topo *t;
    int rc, i, *all;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_CART, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (rank < 0 || rank >= mpii_comm_get(comm)->size)
        return mpii_err(comm, MPI_ERR_RANK, fn);
    if (maxdims < 0 || (maxdims > 0 && coords == NULL))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((all = ints(t->ndims)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    cart_coords_of(t, rank, all);
    for (i = 0; i < t->ndims && i < maxdims; i++)
        coords[i] = all[i];
    free(all);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_shift = PMPI_Cart_shift
int
PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
                int *rank_dest)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Cart_shift";
    struct mpii_topo *t;
    int rc, *co, me, r;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_CART, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (direction < 0 || direction >= t->ndims || rank_source == NULL ||
        rank_dest == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((co = ints(t->ndims)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    cart_coords_of(t, mpii_comm_get(comm)->rank, co);
    me = co[direction];
    co[direction] = me + disp;
    r = cart_rank_of(t, co);
    *rank_dest = r < 0 ? MPI_PROC_NULL : r;
    co[direction] = me - disp;
    r = cart_rank_of(t, co);
    *rank_source = r < 0 ? MPI_PROC_NULL : r;
    free(co);
    return MPI_SUCCESS;
}

/* The subgrids keep the dimensions remain_dims marks: the members of a
 * subgrid share the coordinates of the dropped dimensions (the color),
 * and keep their order. */
#pragma weak MPI_Cart_sub = PMPI_Cart_sub
int
PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Cart_sub";
    struct mpii_topo *t, *n;
    int rc, i, k = 0, color = 0, *co, *dims, *periods, dummy;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_CART, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (newcomm == NULL || (t->ndims > 0 && remain_dims == NULL))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    co = ints(t->ndims);
    dims = ints(t->ndims);
    periods = ints(t->ndims);
    if (co == NULL || dims == NULL || periods == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    cart_coords_of(t, mpii_comm_get(comm)->rank, co);
    for (i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            dims[k] = t->dims[i];
            periods[k++] = t->periods[i];
        } else {
            color = color * t->dims[i] + co[i];
        }
    }
    if ((rc = cart_new(k, dims, periods, &n, &dummy)) != MPI_SUCCESS)
        goto out;
    rc = PMPI_Comm_split(comm, color, mpii_comm_get(comm)->rank, newcomm);
    if (rc == MPI_SUCCESS)
        rc = topo_attach(*newcomm, n);
    else
        mpii_topo_free(n);
out:
    free(co);
    free(dims);
    free(periods);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

/* Without reordering, rank r of comm is grid position r. */
#pragma weak MPI_Cart_map = PMPI_Cart_map
int
PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
              int *newrank)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Cart_map";
    struct mpii_comm *c;
    struct mpii_topo *t;
    int rc, n;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (newrank == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((rc = cart_new(ndims, dims, periods, &t, &n)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    mpii_topo_free(t);
    if (n > c->size)
        return mpii_err(comm, MPI_ERR_DIMS, fn);
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* --- graphs --------------------------------------------------------- */

/* A graph description, checked: index non-decreasing, edges in range. */
static int
graph_new(int nnodes, const int index[], const int edges[],
          struct mpii_topo **out)
{
    struct mpii_topo *t;
    int i, nedges;

    *out = NULL;
    if (nnodes < 0 || (nnodes > 0 && index == NULL))
        return MPI_ERR_ARG;
    for (i = 0; i < nnodes; i++)
        if (index[i] < (i == 0 ? 0 : index[i - 1]))
            return MPI_ERR_ARG;
    nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    if (nedges > 0 && edges == NULL)
        return MPI_ERR_ARG;
    for (i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return MPI_ERR_TOPOLOGY;
    if ((t = topo_new(MPI_GRAPH)) == NULL)
        return MPI_ERR_NO_MEM;
    t->nnodes = nnodes;
    t->nedges = nedges;
    t->index = ints_copy(index, nnodes);
    t->edges = ints_copy(edges, nedges);
    if (t->index == NULL || t->edges == NULL) {
        mpii_topo_free(t);
        return MPI_ERR_NO_MEM;
    }
    *out = t;
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_create = PMPI_Graph_create
int
PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                  const int edges[], int reorder, MPI_Comm *comm_graph)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Graph_create";
    struct mpii_comm *c;
    struct mpii_topo *t;
    int rc;

    (void)reorder;
    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (comm_graph == NULL || nnodes > c->size)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((rc = graph_new(nnodes, index, edges, &t)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    if ((rc = topo_make(c, nnodes, t, comm_graph)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
int
PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Graphdims_get";
    struct mpii_topo *t;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_GRAPH, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (nnodes == NULL || nedges == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_get = PMPI_Graph_get
int
PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
               int edges[])
{
    MPII_ENTER;
    static const char fn[] = "MPI_Graph_get";
    struct mpii_topo *t;
    int rc, i;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_GRAPH, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == NULL) ||
        (maxedges > 0 && edges == NULL))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    for (i = 0; i < maxindex && i < t->nnodes; i++)
        index[i] = t->index[i];
    for (i = 0; i < maxedges && i < t->nedges; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
int
PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Graph_neighbors_count";
    struct mpii_topo *t;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_GRAPH, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (rank < 0 || rank >= t->nnodes)
        return mpii_err(comm, MPI_ERR_RANK, fn);
    if (nneighbors == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    *nneighbors = t->index[rank] - (rank == 0 ? 0 : t->index[rank - 1]);
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
int
PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
                     int neighbors[])
{
    MPII_ENTER;
    static const char fn[] = "MPI_Graph_neighbors";
    struct mpii_topo *t;
    int rc, i, lo;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_GRAPH, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (rank < 0 || rank >= t->nnodes)
        return mpii_err(comm, MPI_ERR_RANK, fn);
    if (maxneighbors < 0 || (maxneighbors > 0 && neighbors == NULL))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    lo = rank == 0 ? 0 : t->index[rank - 1];
    for (i = 0; i < maxneighbors && lo + i < t->index[rank]; i++)
        neighbors[i] = t->edges[lo + i];
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_map = PMPI_Graph_map
int
PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[],
               const int edges[], int *newrank)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Graph_map";
    struct mpii_comm *c;
    struct mpii_topo *t;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (newrank == NULL || nnodes > c->size)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((rc = graph_new(nnodes, index, edges, &t)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    mpii_topo_free(t);
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

#pragma weak MPI_Topo_test = PMPI_Topo_test
int
PMPI_Topo_test(MPI_Comm comm, int *status)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Topo_test";
    struct mpii_comm *c;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (status == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    *status = c->topo != NULL ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* --- distributed graphs --------------------------------------------- */

/* A weight list: MPI_UNWEIGHTED gives ones; MPI_WEIGHTS_EMPTY (or any
 * list for no edges) nothing. */
static int *
weights_copy(const int *w, int n)
{
    int *p = ints(n), i;

    if (p == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        p[i] = w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY || w == NULL
                   ? 1
                   : w[i];
    return p;
}

/* A duplicate of comm carrying the distributed graph t (taken). */
static int
dist_make(MPI_Comm comm, struct mpii_topo *t, MPI_Comm *out)
{
    int rc;

    if ((rc = PMPI_Comm_dup(comm, out)) != MPI_SUCCESS) {
        mpii_topo_free(t);
        return rc;
    }
    return topo_attach(*out, t);
}

/* Ranks in range for a communicator of size n. */
static int
ranks_ok(const int *r, int k, int n)
{
    int i;

    for (i = 0; i < k; i++)
        if (r[i] < 0 || r[i] >= n)
            return 0;
    return 1;
}

#pragma weak MPI_Dist_graph_create_adjacent =                                 \
    PMPI_Dist_graph_create_adjacent
int
PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree,
                                const int sources[], const int sourceweights[],
                                int outdegree, const int destinations[],
                                const int destweights[], MPI_Info info,
                                int reorder, MPI_Comm *comm_dist_graph)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    struct mpii_comm *c;
    struct mpii_topo *t;
    int rc;

    (void)info, (void)reorder;
    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (comm_dist_graph == NULL || indegree < 0 || outdegree < 0 ||
        (indegree > 0 && sources == NULL) ||
        (outdegree > 0 && destinations == NULL))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if (!ranks_ok(sources, indegree, c->size) ||
        !ranks_ok(destinations, outdegree, c->size))
        return mpii_err(comm, MPI_ERR_RANK, fn);
    if ((t = topo_new(MPI_DIST_GRAPH)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    t->indeg = indegree;
    t->outdeg = outdegree;
    t->weighted = sourceweights != MPI_UNWEIGHTED;
    t->in = ints_copy(sources, indegree);
    t->out = ints_copy(destinations, outdegree);
    t->inw = weights_copy(sourceweights, indegree);
    t->outw = weights_copy(destweights, outdegree);
    if (t->in == NULL || t->out == NULL || t->inw == NULL ||
        t->outw == NULL) {
        mpii_topo_free(t);
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    }
    if ((rc = dist_make(comm, t, comm_dist_graph)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    return MPI_SUCCESS;
}

/* Edges travel as (kind, other end, weight). */
#define EDGE_INTS 3
#define EDGE_IN 0
#define EDGE_OUT 1

#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
int
PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                       const int degrees[], const int destinations[],
                       const int weights[], MPI_Info info, int reorder,
                       MPI_Comm *comm_dist_graph)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Dist_graph_create";
    struct mpii_comm *c;
    struct mpii_topo *t = NULL;
    int *scount = NULL, *rcount = NULL, *sdispl = NULL, *rdispl = NULL;
    int *sbuf = NULL, *rbuf = NULL, *fill = NULL;
    int rc, i, j, k, p, nedges = 0, rtotal = 0, s, d, w, *e;

    (void)info, (void)reorder;
    MPII_CHECK_INIT(fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (comm_dist_graph == NULL || n < 0 ||
        (n > 0 && (sources == NULL || degrees == NULL)))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    for (i = 0; i < n; i++) {
        if (degrees[i] < 0 || nedges > 0x3fffffff - degrees[i])
            return mpii_err(comm, MPI_ERR_ARG, fn);
        nedges += degrees[i];
    }
    if (nedges > 0 && destinations == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if (!ranks_ok(sources, n, c->size) ||
        !ranks_ok(destinations, nedges, c->size))
        return mpii_err(comm, MPI_ERR_RANK, fn);
    p = c->size;
    scount = ints(p);
    rcount = ints(p);
    sdispl = ints(p);
    rdispl = ints(p);
    fill = ints(p);
    sbuf = ints(2 * EDGE_INTS * nedges);
    if (!scount || !rcount || !sdispl || !rdispl || !fill || !sbuf) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    /* Every edge to both of its ends, in the order given. */
    memset(scount, 0, (size_t)p * sizeof *scount);
    for (i = 0, k = 0; i < n; i++)
        for (j = 0; j < degrees[i]; j++, k++) {
            scount[sources[i]] += EDGE_INTS;
            scount[destinations[k]] += EDGE_INTS;
        }
    for (i = 0, k = 0; i < p; i++) {
        sdispl[i] = fill[i] = k;
        k += scount[i];
    }
    for (i = 0, k = 0; i < n; i++)
        for (j = 0; j < degrees[i]; j++, k++) {
            s = sources[i];
            d = destinations[k];
            w = weights == MPI_UNWEIGHTED || weights == NULL ? 1 : weights[k];
            e = sbuf + fill[s];
            e[0] = EDGE_OUT, e[1] = d, e[2] = w;
            fill[s] += EDGE_INTS;
            e = sbuf + fill[d];
            e[0] = EDGE_IN, e[1] = s, e[2] = w;
            fill[d] += EDGE_INTS;
        }
    if ((rc = PMPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm)) !=
        MPI_SUCCESS)
        goto out;
    for (i = 0; i < p; i++) {
        if (rcount[i] < 0 || rtotal > 0x3fffffff - rcount[i]) {
            rc = MPI_ERR_INTERN;
            goto out;
        }
        rdispl[i] = rtotal;
        rtotal += rcount[i];
    }
    if ((rbuf = ints(rtotal)) == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if ((rc = PMPI_Alltoallv(sbuf, scount, sdispl, MPI_INT, rbuf, rcount,
                             rdispl, MPI_INT, comm)) != MPI_SUCCESS)
        goto out;
    if ((t = topo_new(MPI_DIST_GRAPH)) == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    t->weighted = weights != MPI_UNWEIGHTED;
    for (i = 0; i < rtotal; i += EDGE_INTS)
        if (rbuf[i] == EDGE_IN)
            t->indeg++;
        else
            t->outdeg++;
    t->in = ints(t->indeg);
    t->inw = ints(t->indeg);
    t->out = ints(t->outdeg);
    t->outw = ints(t->outdeg);
    if (!t->in || !t->inw || !t->out || !t->outw) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    for (i = 0, j = 0, k = 0; i < rtotal; i += EDGE_INTS) {
        if (rbuf[i] == EDGE_IN) {
            t->in[j] = rbuf[i + 1];
            t->inw[j++] = rbuf[i + 2];
        } else {
            t->out[k] = rbuf[i + 1];
            t->outw[k++] = rbuf[i + 2];
        }
    }
    rc = dist_make(comm, t, comm_dist_graph);
    t = NULL;
out:
    mpii_topo_free(t);
    free(scount);
    free(rcount);
    free(sdispl);
    free(rdispl);
    free(fill);
    free(sbuf);
    free(rbuf);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
int
PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                int *weighted)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    struct mpii_topo *t;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_DIST_GRAPH, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (indegree == NULL || outdegree == NULL || weighted == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors
int
PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                          int sourceweights[], int maxoutdegree,
                          int destinations[], int destweights[])
{
    MPII_ENTER;
    static const char fn[] = "MPI_Dist_graph_neighbors";
    struct mpii_topo *t;
    int rc, i;

    MPII_CHECK_INIT(fn);
    if ((t = topo_of(comm, MPI_DIST_GRAPH, &rc)) == NULL)
        return mpii_err(rc == MPI_ERR_COMM ? MPI_COMM_WORLD : comm, rc, fn);
    if (maxindegree < 0 || maxoutdegree < 0 ||
        (maxindegree > 0 && sources == NULL) ||
        (maxoutdegree > 0 && destinations == NULL))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    for (i = 0; i < maxindegree && i < t->indeg; i++) {
        sources[i] = t->in[i];
        if (sourceweights != MPI_UNWEIGHTED && sourceweights != NULL)
            sourceweights[i] = t->inw[i];
    }
    for (i = 0; i < maxoutdegree && i < t->outdeg; i++) {
        destinations[i] = t->out[i];
        if (destweights != MPI_UNWEIGHTED && destweights != NULL)
            destweights[i] = t->outw[i];
    }
    return MPI_SUCCESS;
}
