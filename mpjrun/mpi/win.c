/*
 * win.c: one-sided windows (MPI 3.1 11.2): Win_create, Win_allocate,
 * Win_allocate_shared, Win_create_dynamic with Win_attach/Win_detach,
 * Win_free, and what a window answers about itself (name, group, error
 * handler, Win_shared_query; attributes are in win_attr.c).  Operations and
 * synchronization are in rma.c, the target side in rma_target.c.
 *
 * Creating a window is collective: the communicator is duplicated (the
 * window's requests travel on the duplicate's context, out of the
 * program's way) and every rank learns every other's window size and
 * displacement unit, so that an origin checks a request's range before
 * sending it.  A window of a dynamic flavour has no size: the target
 * checks each request against the memory attached to it.
 *
 * Win_allocate_shared maps one shared memory object in every process of
 * the communicator (win_shared.c): they must be on one host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rma.h"

#define WIN_KIND 0x60000000u

struct rma_region {
    char *base;
    MPI_Aint size;
    struct rma_region *next;
};

static struct mpii_handles wins = {.kind = WIN_KIND};
static struct mpii_win **live; /* for the progress engine, in creation order */
static int nlive, caplive;
static uint32_t created;       /* windows created so far (ids) */
static struct mpii_win *dying; /* in Win_free, its communicator going */

struct mpii_win *
mpii_win_get(MPI_Win h)
{
    return mpii_handle_get(&wins, (uint32_t)h);
}

int
rma_win_count(void)
{
    return nlive;
}

struct mpii_win *
rma_win_of_comm(MPI_Comm comm)
{
    int i;

    if (dying != NULL && dying->comm == comm)
        return dying;
    for (i = 0; i < nlive; i++)
        if (live[i]->comm == comm)
            return live[i];
    return NULL;
}

uint32_t
rma_last_id(void)
{
    return created;
}

struct mpii_win *
rma_win_nth(int i)
{
    return i >= 0 && i < nlive ? live[i] : NULL;
}

int
rma_win_check(MPI_Win win, struct mpii_win **w, const char *fn)
{
    *w = NULL;
    if (!mpii_initialized())
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_OTHER, fn);
    if ((*w = mpii_win_get(win)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_WIN, fn);
    return MPI_SUCCESS;
}

int
rma_err(struct mpii_win *w, int err, const char *fn)
{
    return mpii_err(w != NULL ? w->comm : MPI_COMM_WORLD, err, fn);
}

char *
rma_win_at(struct mpii_win *w, int64_t disp, int64_t lo, int64_t len)
{
    struct rma_region *g;
    int64_t off;

    if (len < 0)
        return NULL;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* disp is an address: every byte must lie in attached memory,
         * in one region or in several that touch (MPICH's
         * rma/win_dynamic_rma_flush_get puts across two). */
        uintptr_t a = (uintptr_t)disp + (uintptr_t)lo, at = a, end;

        if (__builtin_add_overflow(a, (uintptr_t)len, &end))
            return NULL;
        do {
            for (g = w->regions; g != NULL; g = g->next)
                if (at >= (uintptr_t)g->base &&
                    at - (uintptr_t)g->base <= (uintptr_t)g->size &&
                    (at < (uintptr_t)g->base + (uintptr_t)g->size ||
                     at == end))
                    break;
            if (g == NULL)
                return NULL;
            at = (uintptr_t)g->base + (uintptr_t)g->size;
        } while (at < end);
        return (char *)a;
    }
    if (__builtin_mul_overflow(disp, (int64_t)w->disp_unit, &off) ||
        __builtin_add_overflow(off, lo, &off) || off < 0 ||
        off > (int64_t)w->bytes || len > (int64_t)w->bytes - off)
        return NULL;
    return (char *)w->base + off;
}

static void
win_destroy(struct mpii_win *w)
{
    struct rma_region *g;

    if (w == NULL)
        return;
    while ((g = w->regions) != NULL) {
        w->regions = g->next;
        free(g);
    }
    free(w->owned);
    rma_shared_free(w->shm, w->shmlen);
    free(w->shoff);
    free(w->rbytes);
    free(w->runit);
    free(w->sent);
    free(w->locked);
    free(w->access);
    free(w->exposed);
    free(w);
}

static void
live_remove(struct mpii_win *w)
{
    int i;

    for (i = 0; i < nlive; i++)
        if (live[i] == w) {
            memmove(live + i, live + i + 1,
                    (size_t)(nlive - i - 1) * sizeof *live);
            nlive--;
            return;
        }
}

/* The collective part of every creation: w's memory is set. */
static int
win_setup(struct mpii_win *w, MPI_Comm comm, MPI_Win *win)
{
    struct mpii_comm *c;
    long long mine[2], *all = NULL;
    struct mpii_win **nl;
    int i, rc;

    if ((c = mpii_intra_get(comm)) == NULL)
        return MPI_ERR_COMM;
    if ((rc = PMPI_Comm_dup(comm, &w->comm)) != MPI_SUCCESS)
        return rc;
    w->c = mpii_comm_get(w->comm);
    w->rank = w->c->rank;
    w->size = w->c->size;
    w->id = ++created;
    w->rbytes = malloc((size_t)w->size * sizeof *w->rbytes);
    w->runit = malloc((size_t)w->size * sizeof *w->runit);
    w->sent = calloc((size_t)w->size, sizeof *w->sent);
    w->locked = calloc((size_t)w->size, sizeof *w->locked);
    all = malloc((size_t)w->size * sizeof mine);
    if (w->rbytes == NULL || w->runit == NULL || w->sent == NULL ||
        w->locked == NULL || all == NULL) {
        free(all);
        return MPI_ERR_NO_MEM;
    }
    mine[0] = (long long)w->bytes;
    mine[1] = w->disp_unit;
    rc = PMPI_Allgather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, w->comm);
    for (i = 0; rc == MPI_SUCCESS && i < w->size; i++) {
        w->rbytes[i] = (MPI_Aint)all[2 * i];
        w->runit[i] = (int)all[2 * i + 1];
    }
    free(all);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nlive == caplive) {
        int ncap = caplive ? caplive * 2 : 8;

        if ((nl = realloc(live, (size_t)ncap * sizeof *nl)) == NULL)
            return MPI_ERR_NO_MEM;
        live = nl;
        caplive = ncap;
    }
    if ((rc = rma_target_start(w)) != MPI_SUCCESS)
        return rc;
    if ((rc = mpii_handle_put(&wins, w, (uint32_t *)&w->handle)) != MPI_SUCCESS)
        return rc;
    live[nlive++] = w;
    *win = w->handle;
    return MPI_SUCCESS;
}

/* A failed creation: undo what win_setup did. */
static void
win_fail(struct mpii_win *w)
{
    if (w->hreq != NULL)
        rma_target_stop(w);
    if (w->comm != MPI_COMM_NULL && w->comm != 0)
        (void)PMPI_Comm_free(&w->comm);
    win_destroy(w);
}

static int
win_new(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm, int flavor,
        void *owned, MPI_Win *win, const char *fn)
{
    struct mpii_win *w;
    int rc;

    MPII_CHECK_INIT(fn);
    if (win == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    *win = MPI_WIN_NULL;
    if (mpii_intra_get(comm) == NULL) {
        free(owned);
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    }
    if (size < 0 || disp_unit <= 0) {
        free(owned);
        return mpii_err(comm, size < 0 ? MPI_ERR_SIZE : MPI_ERR_DISP, fn);
    }
    if ((w = calloc(1, sizeof *w)) == NULL) {
        free(owned);
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    }
    w->base = base;
    w->bytes = size;
    w->disp_unit = disp_unit;
    w->flavor = flavor;
    w->owned = owned;
    w->comm = MPI_COMM_NULL;
    if ((rc = win_setup(w, comm, win)) != MPI_SUCCESS) {
        win_fail(w);
        *win = MPI_WIN_NULL;
        return mpii_err(comm, rc, fn);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_create = PMPI_Win_create
int
PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                MPI_Comm comm, MPI_Win *win)
{
    MPII_ENTER;
    (void)info;
    return win_new(base, size, disp_unit, comm, MPI_WIN_FLAVOR_CREATE, NULL,
                   win, "MPI_Win_create");
}

/* Memory for Win_allocate: zeroed, never NULL (even for 0 bytes). */
static void *
win_memory(MPI_Aint size)
{
    return calloc(1, size > 0 ? (size_t)size : 1);
}

#pragma weak MPI_Win_allocate = PMPI_Win_allocate
int
PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                  void *baseptr, MPI_Win *win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_allocate";
    void *mem;

    (void)info;
    if (baseptr == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((mem = size >= 0 ? win_memory(size) : NULL) == NULL && size >= 0)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    *(void **)baseptr = mem;
    return win_new(mem, size, disp_unit, comm, MPI_WIN_FLAVOR_ALLOCATE, mem,
                   win, fn);
}

#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared
int
PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                         MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_allocate_shared";
    struct mpii_comm *c;
    struct mpii_win *w;
    MPI_Aint *offsets = NULL;
    void *map = NULL, *mem;
    size_t maplen = 0;
    int rc;

    (void)info;
    MPII_CHECK_INIT(fn);
    if (baseptr == NULL || win == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (size < 0)
        return mpii_err(comm, MPI_ERR_SIZE, fn);
    if (c->size == 1) {
        /* Alone: ordinary memory is shared with everyone there is. */
        if ((mem = win_memory(size)) == NULL)
            return mpii_err(comm, MPI_ERR_NO_MEM, fn);
        *(void **)baseptr = mem;
        return win_new(mem, size, disp_unit, comm, MPI_WIN_FLAVOR_SHARED, mem,
                       win, fn);
    }
    if ((rc = rma_shared_alloc(comm, size, &map, &maplen, &offsets)) !=
        MPI_SUCCESS) {
        free(offsets);
        return mpii_err(comm, rc, fn);
    }
    mem = (char *)map + offsets[c->rank];
    *(void **)baseptr = mem;
    if ((rc = win_new(mem, size, disp_unit, comm, MPI_WIN_FLAVOR_SHARED, NULL,
                      win, fn)) != MPI_SUCCESS) {
        rma_shared_free(map, maplen);
        free(offsets);
        return rc;
    }
    w = mpii_win_get(*win);
    w->shm = map;
    w->shmlen = maplen;
    w->shoff = offsets;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query
int
PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                      void *baseptr)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_shared_query";
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, fn)) != MPI_SUCCESS)
        return rc;
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return rma_err(w, MPI_ERR_RMA_FLAVOR, fn);
    if (size == NULL || disp_unit == NULL || baseptr == NULL)
        return rma_err(w, MPI_ERR_ARG, fn);
    if (rank == MPI_PROC_NULL) /* the first segment that has memory */
        for (rank = 0; rank < w->size - 1 && w->rbytes[rank] == 0; rank++)
            ;
    if (rank < 0 || rank >= w->size)
        return rma_err(w, MPI_ERR_RANK, fn);
    *size = w->rbytes[rank];
    *disp_unit = w->runit[rank];
    /* No memory, no address (as MPICH answers; Open MPI 4.1 gives one). */
    if (w->rbytes[rank] == 0)
        *(void **)baseptr = NULL;
    else
        *(void **)baseptr =
            w->shm != NULL ? (char *)w->shm + w->shoff[rank] : w->base;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic
int
PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    MPII_ENTER;
    (void)info;
    return win_new(MPI_BOTTOM, 0, 1, comm, MPI_WIN_FLAVOR_DYNAMIC, NULL, win,
                   "MPI_Win_create_dynamic");
}

#pragma weak MPI_Win_attach = PMPI_Win_attach
int
PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_attach";
    struct mpii_win *w;
    int rc;
    struct rma_region *g;

    if ((rc = rma_win_check(win, &w, fn)) != MPI_SUCCESS)
        return rc;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return rma_err(w, MPI_ERR_RMA_FLAVOR, fn);
    if (size < 0 || (base == NULL && size > 0))
        return rma_err(w, MPI_ERR_RMA_ATTACH, fn);
    for (g = w->regions; g != NULL; g = g->next)
        if ((char *)base < g->base + g->size && g->base < (char *)base + size)
            return rma_err(w, MPI_ERR_RMA_ATTACH, fn); /* overlaps */
    if ((g = calloc(1, sizeof *g)) == NULL)
        return rma_err(w, MPI_ERR_NO_MEM, fn);
    g->base = base;
    g->size = size;
    g->next = w->regions;
    w->regions = g;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_detach = PMPI_Win_detach
int
PMPI_Win_detach(MPI_Win win, const void *base)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_detach";
    struct mpii_win *w;
    int rc;
    struct rma_region **gp, *g;

    if ((rc = rma_win_check(win, &w, fn)) != MPI_SUCCESS)
        return rc;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return rma_err(w, MPI_ERR_RMA_FLAVOR, fn);
    for (gp = &w->regions; (g = *gp) != NULL; gp = &g->next)
        if (g->base == base) {
            *gp = g->next;
            free(g);
            return MPI_SUCCESS;
        }
    return rma_err(w, MPI_ERR_RMA_ATTACH, fn);
}

#pragma weak MPI_Win_free = PMPI_Win_free
int
PMPI_Win_free(MPI_Win *win)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_free";
    struct mpii_win *w;
    int rc, rc2;

    MPII_CHECK_INIT(fn);
    if (win == NULL || (w = mpii_win_get(*win)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_WIN, fn);
    /* Everything this rank started completes; once everyone is here no
     * request can come any more (each origin waited for its own). */
    rc = rma_origin_wait(w);
    rc2 = PMPI_Barrier(w->comm);
    if (rc == MPI_SUCCESS)
        rc = rc2;
    live_remove(w);
    rma_target_stop(w);
    rma_origin_free(w);
    /* The attributes' delete callbacks run with the window's handle. */
    dying = w;
    rc2 = PMPI_Comm_free(&w->comm);
    dying = NULL;
    if (rc == MPI_SUCCESS)
        rc = rc2;
    (void)mpii_handle_take(&wins, (uint32_t)w->handle);
    win_destroy(w);
    *win = MPI_WIN_NULL;
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

void
mpii_win_fini(void)
{
    struct mpii_win *w;

    /* Windows the program did not free: their memory only (the
     * requests and communicators go with the rest of the library). */
    while (nlive > 0) {
        w = live[--nlive];
        (void)mpii_handle_take(&wins, (uint32_t)w->handle);
        rma_origin_free(w);
        free(w->hdr);
        free(w->hreq);
        win_destroy(w);
    }
    free(live);
    live = NULL;
    caplive = 0;
    mpii_handles_fini(&wins, NULL);
    mpii_win_attr_fini();
}

/* --- what a window answers about itself (attributes: win_attr.c) --- */

#pragma weak MPI_Win_get_group = PMPI_Win_get_group
int
PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    MPII_ENTER;
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, "MPI_Win_get_group")) != MPI_SUCCESS)
        return rc;
    return PMPI_Comm_group(w->comm, group);
}

#pragma weak MPI_Win_set_name = PMPI_Win_set_name
int
PMPI_Win_set_name(MPI_Win win, const char *name)
{
    MPII_ENTER;
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, "MPI_Win_set_name")) != MPI_SUCCESS)
        return rc;
    if (name == NULL)
        return rma_err(w, MPI_ERR_ARG, "MPI_Win_set_name");
    snprintf(w->name, sizeof w->name, "%s", name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_name = PMPI_Win_get_name
int
PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    MPII_ENTER;
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, "MPI_Win_get_name")) != MPI_SUCCESS)
        return rc;
    if (name == NULL || resultlen == NULL)
        return rma_err(w, MPI_ERR_ARG, "MPI_Win_get_name");
    strcpy(name, w->name);
    *resultlen = (int)strlen(w->name);
    return MPI_SUCCESS;
}

/* No hint changes what a window does here: Win_set_info checks the info
 * and keeps nothing; Win_get_info gives a new, empty info (the hints in
 * use: none), which the program frees. */
#pragma weak MPI_Win_set_info = PMPI_Win_set_info
int
PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_set_info";
    struct mpii_win *w;
    int rc, n;

    if ((rc = rma_win_check(win, &w, fn)) != MPI_SUCCESS)
        return rc;
    if (info != MPI_INFO_NULL && PMPI_Info_get_nkeys(info, &n) != MPI_SUCCESS)
        return rma_err(w, MPI_ERR_ARG, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_info = PMPI_Win_get_info
int
PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_get_info";
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, fn)) != MPI_SUCCESS)
        return rc;
    if (info_used == NULL)
        return rma_err(w, MPI_ERR_ARG, fn);
    return PMPI_Info_create(info_used);
}

/* A window's errors go through its private communicator's error handler
 * (which starts as MPI_ERRORS_ARE_FATAL); one made by
 * Win_create_errhandler is called with the window (errh.c). */
#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler
int
PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    MPII_ENTER;
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, "MPI_Win_set_errhandler")) != MPI_SUCCESS)
        return rc;
    return mpii_errh_set(w->comm, errhandler, 1, "MPI_Win_set_errhandler");
}

#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler
int
PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    MPII_ENTER;
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, "MPI_Win_call_errhandler")) !=
        MPI_SUCCESS)
        return rc;
    /* The handler runs (or the job ends); the call itself succeeded. */
    (void)rma_err(w, errorcode, "MPI_Win_call_errhandler");
    return MPI_SUCCESS;
}

MPI_Win
mpii_win_of(MPI_Comm comm)
{
    for (int i = 0; i < nlive; i++)
        if (live[i]->comm == comm)
            return live[i]->handle;
    return MPI_WIN_NULL;
}

#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler
int
PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    MPII_ENTER;
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, "MPI_Win_get_errhandler")) != MPI_SUCCESS)
        return rc;
    return PMPI_Comm_get_errhandler(w->comm, errhandler);
}
