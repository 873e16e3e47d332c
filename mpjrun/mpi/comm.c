/*
 * Communicators: MPI_COMM_WORLD, MPI_COMM_SELF and those made by dup and
 * split.  Each has a context id that its messages carry (ids are even;
 * the odd id above is the communicator's collective context).  New ids
 * are agreed among the members: each proposes the lowest id it has not
 * used, the highest proposal wins, so the id is free for every member.
 * The agreement runs on the parent's build context (MPII_CTX_BUILD), so
 * agreements on different communicators never mix.  Comm_create is a
 * split by group membership; Comm_create_group agrees among the group's
 * members only (the user's tag as tag, whole).  Over an
 * intercommunicator, split (and so dup and create) is intercomm.c's.
 */
#include <stdint.h>
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

struct mpii_comm *
mpii_intra_get(MPI_Comm h)
{
    struct mpii_comm *c = mpii_comm_get(h);

    return c != NULL && !c->inter ? c : NULL;
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

static void comm_drop(struct mpii_comm *);

/* Free a communicator nothing refers to any more. */
static void
comm_destroy(struct mpii_comm *c)
{
    struct mpii_comm *l;

    mpii_attr_drop(c);
    mpii_topo_free(c->topo);
    mpii_hosts_free(c->hosts);
    free(c->lworld);
    if (c->inter && (l = mpii_comm_get(c->lcomm)) != NULL && l != c)
        comm_drop(l);
    free(c->world);
    free(c);
}

/* The handle goes at once; the communicator when the last thing pending
 * on it lets it go (mpii_comm_hold: requests through req_bind, schedules,
 * matched-probe messages). */
static void
comm_drop(struct mpii_comm *c)
{
    comms[c->handle == COMM_BASE || c->handle == COMM_BASE + 1
              ? c->handle - COMM_BASE
              : c->handle & 0xfff] = NULL;
    mpii_comm_release(c);
}

void
mpii_comm_hold(struct mpii_comm *c)
{
    c->refs++;
}

void
mpii_comm_release(struct mpii_comm *c)
{
    if (c != NULL && --c->refs == 0)
        comm_destroy(c);
}

struct mpii_comm *
mpii_comm_new(int size)
{
    return comm_new(size, -1);
}

void
mpii_comm_drop(struct mpii_comm *c)
{
    comm_drop(c);
}

uint32_t
mpii_comm_propose_ctx(void)
{
    uint32_t id;

    if (mpii_mt && (id = mpii_ctx_unique()) != 0)
        return id;
    return next_ctx;
}

void
mpii_comm_ctx_used(uint32_t ctx)
{
    if ((ctx & MPII_CTX_UNIQUE) == 0 && ctx + 2 > next_ctx)
        next_ctx = ctx + 2;
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
    strcpy(w->name, "MPI_COMM_WORLD");
    strcpy(s->name, "MPI_COMM_SELF");
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

/* The k ints of each of n members of c (c's ranks rk[0..n-1], or all of
 * c in rank order when rk is NULL; we are member me), in member order,
 * to every member: gathered at the first, then spread, on c's build
 * context.  Messages carry c's ranks, never a member's place among the n,
 * so that exchanges among different subsets of c on one tag (successive
 * Comm_create_group calls) cannot take each other's messages. */
static int
comm_exchange_among(struct mpii_comm *c, const int *rk, int n, int me,
                    const int *mine, int k, int *all, int tag)
{
    uint32_t ctx = MPII_CTX_BUILD(c->ctx);
    int r, rc = MPI_SUCCESS;

#define MEMBER(i) (rk != NULL ? rk[i] : (i))
    if (me == 0) {
        memcpy(all, mine, (size_t)k * sizeof *all);
        for (r = 1; r < n && rc == MPI_SUCCESS; r++)
            rc = mpii_recv(all + r * k, k, MPI_INT, MEMBER(r), tag, c, ctx,
                           MPI_STATUS_IGNORE);
        for (r = 1; r < n && rc == MPI_SUCCESS; r++)
            rc = mpii_send(all, k * n, MPI_INT, MEMBER(r), tag, c, ctx);
        return rc;
    }
    rc = mpii_send(mine, k, MPI_INT, MEMBER(0), tag, c, ctx);
    if (rc == MPI_SUCCESS)
        rc = mpii_recv(all, k * n, MPI_INT, MEMBER(0), tag, c, ctx,
                       MPI_STATUS_IGNORE);
    return rc;
#undef MEMBER
}

/* Every member's k ints, in rank order, to every member. */
static int
comm_exchange_tag(struct mpii_comm *c, const int *mine, int k, int *all,
                  int tag)
{
    return comm_exchange_among(c, NULL, c->size, c->rank, mine, k, all, tag);
}

static int
comm_exchange(struct mpii_comm *c, const int *mine, int k, int *all)
{
    return comm_exchange_tag(c, mine, k, all, MPII_TAG_SPLIT);
}

int
mpii_comm_exchange(struct mpii_comm *c, const int *mine, int k, int *all,
                   int tag)
{
    return comm_exchange_tag(c, mine, k, all, tag);
}

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int
PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_rank");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_rank");
    if (rank == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int
PMPI_Comm_size(MPI_Comm comm, int *size)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_size");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_size");
    if (size == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_size");
    *size = c->inter ? c->lsize : c->size;
    return MPI_SUCCESS;
}

int
mpii_member_cmp(const void *a, const void *b)
{
    const struct mpii_member *x = a, *y = b;

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
    struct mpii_member *m;
    int mine[3], *all, i, k = 0, rc;
    uint32_t ctx = 0;

    if (out == NULL)
        return mpii_err(c->handle, MPI_ERR_ARG, fn);
    if (color < 0 && color != MPI_UNDEFINED)
        return mpii_err(c->handle, MPI_ERR_ARG, fn);
    if (c->inter) { /* intercomm.c */
        rc = mpii_inter_split(c, color, key, out);
        return rc == MPI_SUCCESS ? rc : mpii_err(c->handle, rc, fn);
    }
    all = malloc((size_t)c->size * 3 * sizeof *all);
    m = malloc((size_t)c->size * sizeof *m);
    if (all == NULL || m == NULL) {
        free(all);
        free(m);
        return mpii_err(c->handle, MPI_ERR_NO_MEM, fn);
    }
    mine[0] = color;
    mine[1] = key;
    mine[2] = (int)mpii_comm_propose_ctx();
    if ((rc = comm_exchange(c, mine, 3, all)) != MPI_SUCCESS) {
        free(all);
        free(m);
        return mpii_err(c->handle, rc, fn);
    }
    for (i = 0; i < c->size; i++)
        if ((uint32_t)all[3 * i + 2] > ctx)
            ctx = (uint32_t)all[3 * i + 2];
    mpii_comm_ctx_used(ctx); /* every member moves past it, used or not */
    *out = MPI_COMM_NULL;
    if (color != MPI_UNDEFINED) {
        for (i = 0; i < c->size; i++)
            if (all[3 * i] == color) {
                m[k].color = color;
                m[k].key = all[3 * i + 1];
                m[k].rank = i;
                k++;
            }
        qsort(m, (size_t)k, sizeof *m, mpii_member_cmp);
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

/* Dup: a split with one color, keys in rank order, then the attributes
 * through their copy callbacks. */
static int
comm_dup(struct mpii_comm *c, MPI_Comm *newcomm, const char *fn)
{
    struct mpii_comm *n;
    int rc;

    if ((rc = comm_split(c, 0, c->rank, newcomm, fn)) != MPI_SUCCESS)
        return rc;
    n = mpii_comm_get(*newcomm);
    if (c->topo != NULL && (n->topo = mpii_topo_dup(c->topo)) == NULL)
        rc = MPI_ERR_NO_MEM;
    else
        rc = mpii_attr_copy(c, n);
    if (rc != MPI_SUCCESS) {
        mpii_attr_delete_all(n);
        comm_drop(n);
        *newcomm = MPI_COMM_NULL;
        return mpii_err(c->handle, rc, fn);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_split = PMPI_Comm_split
int
PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_split");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_split");
    return comm_split(c, color, key, newcomm, "MPI_Comm_split");
}

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
int
PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_dup");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_dup");
    return comm_dup(c, newcomm, "MPI_Comm_dup");
}

#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
int
PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    MPII_ENTER;
    struct mpii_comm *c;

    (void)info; /* no hints are used */
    MPII_CHECK_INIT("MPI_Comm_dup_with_info");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_dup_with_info");
    return comm_dup(c, newcomm, "MPI_Comm_dup_with_info");
}

#pragma weak MPI_Comm_free = PMPI_Comm_free
int
PMPI_Comm_free(MPI_Comm *comm)
{
    MPII_ENTER;
    struct mpii_comm *c;
    int rc;

    MPII_CHECK_INIT("MPI_Comm_free");
    if (comm == NULL || (c = mpii_comm_get(*comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_free");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpii_err(*comm, MPI_ERR_COMM, "MPI_Comm_free");
    if ((rc = mpii_attr_delete_all(c)) != MPI_SUCCESS)
        return mpii_err(*comm, rc, "MPI_Comm_free");
    comm_drop(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int
by_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

#pragma weak MPI_Comm_compare = PMPI_Comm_compare
int
PMPI_Comm_compare(MPI_Comm a, MPI_Comm b, int *result)
{
    MPII_ENTER;
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
    if (x->inter || y->inter) {
        *result = x->inter && y->inter && x->size == y->size &&
                          x->lsize == y->lsize &&
                          memcmp(x->world, y->world,
                                 (size_t)x->size * sizeof *x->world) == 0 &&
                          memcmp(x->lworld, y->lworld,
                                 (size_t)x->lsize * sizeof *x->lworld) == 0
                      ? MPI_CONGRUENT
                      : MPI_UNEQUAL;
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

/* Our position in a group's world ranks, or MPI_UNDEFINED; -1 if some
 * member is not in c. */
static int
group_position(struct mpii_comm *c, int n, const int *world)
{
    /* An intercommunicator's groups are subsets of its local group. */
    int size = c->inter ? c->lsize : c->size;
    const int *cw = c->inter ? c->lworld : c->world;
    int i, j, me = MPI_UNDEFINED, found;

    for (i = 0; i < n; i++) {
        for (j = 0, found = 0; j < size && !found; j++)
            found = cw[j] == world[i];
        if (!found)
            return -1;
        if (world[i] == cw[c->rank])
            me = i;
    }
    return me;
}

/* The lowest rank in c of a group's members (all of them in c): what
 * tells one group from another when the processes of an
 * intracommunicator give Comm_create disjoint groups (MPI 3.1 6.4.2),
 * each making a communicator of its own. */
static int
group_first(struct mpii_comm *c, int n, const int *world)
{
    int first = c->size;

    for (int i = 0; i < n; i++)
        for (int j = 0; j < first; j++)
            if (c->world[j] == world[i]) {
                first = j;
                break;
            }
    return first;
}

#pragma weak MPI_Comm_create = PMPI_Comm_create
int
PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_create";
    struct mpii_comm *c;
    const int *world;
    int n, me, color;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if ((n = mpii_group_members(group, &world)) < 0)
        return mpii_err(comm, MPI_ERR_GROUP, fn);
    if ((me = group_position(c, n, world)) == -1)
        return mpii_err(comm, MPI_ERR_GROUP, fn);
    if (me == MPI_UNDEFINED)
        color = MPI_UNDEFINED;
    else if (c->inter)
        color = 0; /* one group on each side */
    else
        color = group_first(c, n, world);
    return comm_split(c, color, me, newcomm, fn);
}

#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
int
PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                       MPI_Comm *newcomm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_create_group";
    struct mpii_comm *c, *n;
    const int *world;
    int size, me, mine, *all, *rk, i, j, rc;
    uint32_t ctx = 0;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (newcomm == NULL || tag < 0)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if (c->inter)
        return mpii_err(comm, MPI_ERR_COMM, fn);
    if ((size = mpii_group_members(group, &world)) < 0)
        return mpii_err(comm, MPI_ERR_GROUP, fn);
    if ((me = group_position(c, size, world)) == -1)
        return mpii_err(comm, MPI_ERR_GROUP, fn);
    *newcomm = MPI_COMM_NULL;
    if (me == MPI_UNDEFINED)
        return MPI_SUCCESS; /* not a member: nothing to agree */
    /* The members' ranks in c: the agreement's messages go between them. */
    all = malloc((size_t)size * sizeof *all);
    rk = malloc((size_t)size * sizeof *rk);
    if (all == NULL || rk == NULL) {
        free(all);
        free(rk);
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    }
    for (i = 0; i < size; i++)
        for (j = 0; j < c->size; j++)
            if (c->world[j] == world[i]) {
                rk[i] = j;
                break;
            }
    mine = (int)mpii_comm_propose_ctx();
    rc = comm_exchange_among(c, rk, size, me, &mine, 1, all, tag);
    free(rk);
    if (rc != MPI_SUCCESS) {
        free(all);
        return mpii_err(comm, rc, fn);
    }
    for (i = 0; i < size; i++)
        if ((uint32_t)all[i] > ctx)
            ctx = (uint32_t)all[i];
    free(all);
    mpii_comm_ctx_used(ctx);
    if ((n = comm_new(size, -1)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    memcpy(n->world, world, (size_t)size * sizeof *world);
    n->rank = me;
    n->ctx = ctx;
    n->errh = c->errh;
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

/* FNV-1a, to fold a long host label into the exchanged ints. */
static uint32_t
label_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

#define LABEL_INTS 16

/* The color of MPI_COMM_TYPE_SHARED over intracommunicator c: the
 * lowest rank of c whose process has our host label (P2P_HOST, given by
 * peerd).  An MPI error. */
static int
shared_color(struct mpii_comm *c, int *color)
{
    int mine[LABEL_INTS], *all, i, rc;
    const char *host = getenv("P2P_HOST");

    memset(mine, 0, sizeof mine);
    if (host == NULL)
        host = "";
    strncpy((char *)mine, host, sizeof mine - sizeof(int) - 1);
    mine[LABEL_INTS - 1] = (int)label_hash(host);
    if ((all = malloc((size_t)c->size * sizeof mine)) == NULL)
        return MPI_ERR_NO_MEM;
    if ((rc = comm_exchange(c, mine, LABEL_INTS, all)) != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    for (i = 0, *color = c->rank; i < c->rank; i++)
        if (memcmp(all + i * LABEL_INTS, mine, sizeof mine) == 0) {
            *color = i;
            break;
        }
    free(all);
    return MPI_SUCCESS;
}

/* The same over intercommunicator ic: colors must mean the same in both
 * groups, so they come from both groups merged for the while. */
static int
shared_color_inter(struct mpii_comm *ic, int *color)
{
    struct mpii_comm *m;
    MPI_Comm mh;
    int rc;

    if ((rc = PMPI_Intercomm_merge(ic->handle, 0, &mh)) != MPI_SUCCESS)
        return rc;
    if ((m = mpii_comm_get(mh)) == NULL)
        return MPI_ERR_INTERN;
    rc = shared_color(m, color);
    comm_drop(m);
    return rc;
}

/* MPI_COMM_TYPE_SHARED: the ranks whose processes share a host label,
 * colored by the lowest such rank.  Over an intercommunicator (which MPI
 * 3.1 does not rule out, and Open MPI and MPICH accept), the result is
 * the intercommunicator between the local and the remote processes on
 * one host, MPI_COMM_NULL where one side has none there (Comm_split's
 * rule).  Replicas of one rank run on distinct hosts, so with replicas
 * (p2prun -r) every rank is alone: the same answer for all of its
 * replicas (over an intercommunicator: MPI_COMM_NULL everywhere). */
#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
int
PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                     MPI_Comm *newcomm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_split_type";
    struct mpii_comm *c;
    int color, rc;

    (void)info;
    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (split_type == MPI_UNDEFINED)
        return comm_split(c, MPI_UNDEFINED, key, newcomm, fn);
    if (split_type != MPI_COMM_TYPE_SHARED)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if (mpii_replicated())
        color = c->inter ? mpii_world_rank() : c->rank;
    else if ((rc = c->inter ? shared_color_inter(c, &color)
                            : shared_color(c, &color)) != MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    return comm_split(c, color, key, newcomm, fn);
}

#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
int
PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_set_name");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_set_name");
    if (name == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_set_name");
    strncpy(c->name, name, sizeof c->name - 1);
    c->name[sizeof c->name - 1] = '\0';
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
int
PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_get_name");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_get_name");
    if (name == NULL || resultlen == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_get_name");
    memcpy(name, c->name, sizeof c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int
mpii_comm_uses_errh(MPI_Errhandler e)
{
    for (int i = 0; i < COMM_MAX; i++)
        if (comms[i] != NULL && comms[i]->errh == e)
            return 1;
    return 0;
}
