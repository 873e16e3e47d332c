/*
 * Communicators: MPI_COMM_WORLD, MPI_COMM_SELF and those made by dup and
 * split.  Each has a context id that its messages carry (ids are even;
 * the odd id above is the communicator's collective context).  New ids
 * are agreed among the members: each proposes the lowest id it has not
 * used, the highest proposal wins, so the id is free for every member.
 * The agreement runs on the internal context with the parent's id as tag,
 * so agreements on different communicators never mix.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define COMM_BASE 0x44000000
#define COMM_MAX 4096
#define CTX_WORLD 2
#define CTX_SELF 4
#define CTX_FIRST_FREE 6

static struct mpii_comm *comms[COMM_MAX];
static uint16_t gens[COMM_MAX];
static uint32_t next_ctx = CTX_FIRST_FREE;

static MPI_Comm
comm_handle(int i)
{
    return i < 2 ? COMM_BASE + i : COMM_BASE | (gens[i] << 12) | i;
}

struct mpii_comm *
mpii_comm_get(MPI_Comm h)
{
    int i = h & 0xfff;

    if ((h & ~0x00ffffff) != COMM_BASE || i >= COMM_MAX || comms[i] == NULL ||
        comms[i]->handle != h)
        return NULL;
    return comms[i];
}

/* A communicator of size ranks in a free slot. */
static struct mpii_comm *
comm_new(int size, int slot)
{
    struct mpii_comm *c;
    int i = slot;

    if (i < 0)
        for (i = 2; i < COMM_MAX && comms[i] != NULL; i++)
            ;
    if (i >= COMM_MAX || (c = calloc(1, sizeof *c)) == NULL)
        return NULL;
    if ((c->world = calloc((size_t)size, sizeof *c->world)) == NULL) {
        free(c);
        return NULL;
    }
    gens[i] = (uint16_t)((gens[i] + 1) & 0xfff);
    c->size = size;
    c->handle = comm_handle(i);
    c->errh = MPI_ERRORS_ARE_FATAL;
    c->refs = 1;
    comms[i] = c;
    return c;
}

static void
comm_drop(struct mpii_comm *c)
{
    comms[c->handle == COMM_BASE || c->handle == COMM_BASE + 1
              ? c->handle - COMM_BASE
              : c->handle & 0xfff] = NULL;
    free(c->world);
    free(c);
}

int
mpii_comm_init(int world_rank, int world_size)
{
    struct mpii_comm *w, *s;
    int i;

    if ((w = comm_new(world_size, 0)) == NULL ||
        (s = comm_new(1, 1)) == NULL)
        return MPI_ERR_NO_MEM;
    w->rank = world_rank;
    w->ctx = CTX_WORLD;
    for (i = 0; i < world_size; i++)
        w->world[i] = i;
    s->rank = 0;
    s->ctx = CTX_SELF;
    s->world[0] = world_rank;
    next_ctx = CTX_FIRST_FREE;
    return MPI_SUCCESS;
}

void
mpii_comm_fini(void)
{
    int i;

    for (i = 0; i < COMM_MAX; i++)
        if (comms[i] != NULL)
            comm_drop(comms[i]);
}

/* Every member's k ints, in rank order, to every member (gather to rank
 * 0, then spread). */
static int
comm_exchange(struct mpii_comm *c, const int *mine, int k, int *all)
{
    int r, rc = MPI_SUCCESS, tag = (int)c->ctx;

    if (c->rank == 0) {
        memcpy(all, mine, (size_t)k * sizeof *all);
        for (r = 1; r < c->size && rc == MPI_SUCCESS; r++)
            rc = mpii_recv(all + r * k, k, MPI_INT, r, tag, c,
                           MPII_CTX_INTERNAL, MPI_STATUS_IGNORE);
        for (r = 1; r < c->size && rc == MPI_SUCCESS; r++)
            rc = mpii_send(all, k * c->size, MPI_INT, r, tag, c,
                           MPII_CTX_INTERNAL);
        return rc;
    }
    rc = mpii_send(mine, k, MPI_INT, 0, tag, c, MPII_CTX_INTERNAL);
    if (rc == MPI_SUCCESS)
        rc = mpii_recv(all, k * c->size, MPI_INT, 0, tag, c,
                       MPII_CTX_INTERNAL, MPI_STATUS_IGNORE);
    return rc;
}

int
MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_rank");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_rank");
    if (rank == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}

int
MPI_Comm_size(MPI_Comm comm, int *size)
{
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_size");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_size");
    if (size == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_size");
    *size = c->size;
    return MPI_SUCCESS;
}

struct member {
    int color, key, rank;
};

static int
by_key(const void *a, const void *b)
{
    const struct member *x = a, *y = b;

    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

/* Split (dup is a split with one color, keys in rank order). */
static int
comm_split(struct mpii_comm *c, int color, int key, MPI_Comm *out,
           const char *fn)
{
    struct mpii_comm *n;
    struct member *m;
    int mine[3], *all, i, k = 0, rc;
    uint32_t ctx = 0;

    if (out == NULL)
        return mpii_err(c->handle, MPI_ERR_ARG, fn);
    if (color < 0 && color != MPI_UNDEFINED)
        return mpii_err(c->handle, MPI_ERR_ARG, fn);
    all = malloc((size_t)c->size * 3 * sizeof *all);
    m = malloc((size_t)c->size * sizeof *m);
    if (all == NULL || m == NULL) {
        free(all);
        free(m);
        return mpii_err(c->handle, MPI_ERR_NO_MEM, fn);
    }
    mine[0] = color;
    mine[1] = key;
    mine[2] = (int)next_ctx;
    if ((rc = comm_exchange(c, mine, 3, all)) != MPI_SUCCESS) {
        free(all);
        free(m);
        return mpii_err(c->handle, rc, fn);
    }
    for (i = 0; i < c->size; i++)
        if ((uint32_t)all[3 * i + 2] > ctx)
            ctx = (uint32_t)all[3 * i + 2];
    next_ctx = ctx + 2; /* every member moves past it, used or not */
    *out = MPI_COMM_NULL;
    if (color != MPI_UNDEFINED) {
        for (i = 0; i < c->size; i++)
            if (all[3 * i] == color) {
                m[k].color = color;
                m[k].key = all[3 * i + 1];
                m[k].rank = i;
                k++;
            }
        qsort(m, (size_t)k, sizeof *m, by_key);
        if ((n = comm_new(k, -1)) == NULL) {
            free(all);
            free(m);
            return mpii_err(c->handle, MPI_ERR_NO_MEM, fn);
        }
        n->ctx = ctx;
        n->errh = c->errh;
        for (i = 0; i < k; i++) {
            n->world[i] = c->world[m[i].rank];
            if (m[i].rank == c->rank)
                n->rank = i;
        }
        *out = n->handle;
    }
    free(all);
    free(m);
    return MPI_SUCCESS;
}

int
MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_split");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_split");
    return comm_split(c, color, key, newcomm, "MPI_Comm_split");
}

int
MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_dup");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_dup");
    return comm_split(c, 0, c->rank, newcomm, "MPI_Comm_dup");
}

int
MPI_Comm_free(MPI_Comm *comm)
{
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_free");
    if (comm == NULL || (c = mpii_comm_get(*comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_free");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpii_err(*comm, MPI_ERR_COMM, "MPI_Comm_free");
    comm_drop(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int
by_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

int
MPI_Comm_compare(MPI_Comm a, MPI_Comm b, int *result)
{
    struct mpii_comm *x, *y;
    int *sx, *sy, i, same_order = 1;

    MPII_CHECK_INIT("MPI_Comm_compare");
    if ((x = mpii_comm_get(a)) == NULL || (y = mpii_comm_get(b)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_compare");
    if (result == NULL)
        return mpii_err(a, MPI_ERR_ARG, "MPI_Comm_compare");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (x->size != y->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    for (i = 0; i < x->size; i++)
        if (x->world[i] != y->world[i])
            same_order = 0;
    if (same_order) {
        *result = MPI_CONGRUENT;
        return MPI_SUCCESS;
    }
    sx = malloc((size_t)x->size * sizeof *sx);
    sy = malloc((size_t)x->size * sizeof *sy);
    if (sx == NULL || sy == NULL) {
        free(sx);
        free(sy);
        return mpii_err(a, MPI_ERR_NO_MEM, "MPI_Comm_compare");
    }
    memcpy(sx, x->world, (size_t)x->size * sizeof *sx);
    memcpy(sy, y->world, (size_t)x->size * sizeof *sy);
    qsort(sx, (size_t)x->size, sizeof *sx, by_int);
    qsort(sy, (size_t)x->size, sizeof *sy, by_int);
    *result = memcmp(sx, sy, (size_t)x->size * sizeof *sx) == 0 ? MPI_SIMILAR
                                                                : MPI_UNEQUAL;
    free(sx);
    free(sy);
    return MPI_SUCCESS;
}
