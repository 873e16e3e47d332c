/*
 * The MPI tool information interface (MPI 3.1 section 14.3, MPI_T_*):
 * what a tool (a profiler, a tuning script, MPI_T-aware test suites) may
 * read of the library without the program's help, before MPI_Init and
 * after MPI_Finalize too.
 *
 * Control variables are the library's settings: the eager limits, shared
 * memory, encryption, replicas, the thread level.  All but one are fixed
 * when the job starts (compile-time limits, what peerd put in the
 * environment): writing one is MPI_T_ERR_CVAR_SET_NEVER.  The one is
 * p2p_eager_max, the sender's choice between eager and rendezvous, which
 * a process may lower (and raise back) for itself.
 *
 * Performance variables are counters and queue lengths the library keeps
 * where they happen (struct mpii_counts: p2p.c, match.c; request.c's
 * poll yields).  All are bound to no object and continuous (counting
 * costs an increment, so there is nothing to start or stop): a handle
 * reads a counter from where the handle began (or was reset or written),
 * a level or the high-water mark as it stands.
 *
 * Nothing here talks to another process: under replication nothing needs
 * agreement, and the replicas of a rank may read different counters, as
 * they read different clocks.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mpii.h"
#include "shm.h"

struct mpii_counts mpii_counts;
size_t mpii_eager_cap = MPII_EAGER_MAX;

/* --- the variables ------------------------------------------------------ */

struct mpii_t_enum {
    const char *name;
    int n;
    const struct {
        int value;
        const char *name;
    } *items;
};

static const struct {
    int value;
    const char *name;
} off_on_items[] = {{0, "off"}, {1, "on"}},
  level_items[] = {{MPI_THREAD_SINGLE, "MPI_THREAD_SINGLE"},
                   {MPI_THREAD_FUNNELED, "MPI_THREAD_FUNNELED"},
                   {MPI_THREAD_SERIALIZED, "MPI_THREAD_SERIALIZED"},
                   {MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE"}};

static struct mpii_t_enum enums[] = {
    {"p2p_off_on", 2, (const void *)off_on_items},
    {"p2p_thread_level", 4, (const void *)level_items},
};
#define ENUM_OFF_ON (&enums[0])
#define ENUM_LEVEL (&enums[1])

static int
cv_eager_max(void)
{
    return (int)mpii_eager_cap;
}

/* Lowered, or raised back, as far as MPII_EAGER_MAX (what receivers are
 * made for). */
static int
cv_set_eager_max(int v)
{
    if (v < 0 || v > MPII_EAGER_MAX)
        return MPI_T_ERR_INVALID;
    mpii_eager_cap = (size_t)v;
    return MPI_SUCCESS;
}

static int
cv_shm_eager_max(void)
{
    return (int)shm_eager_max(MPII_EAGER_MAX);
}

static int
cv_shm(void)
{
    return shm_enabled();
}

static int
cv_coll_hosts(void)
{
    return !mpii_env_off("P2P_COLL_HOSTS");
}

static const struct cvar {
    const char *name, *desc;
    int verbosity, scope;
    MPI_T_enum enumtype;
    int (*value)(void);
    int (*set)(int); /* NULL: fixed */
} cvars[] = {
    {"p2p_eager_max",
     "Largest standard send this process writes at once, in bytes "
     "(65536 at most, the default); larger ones wait for their receive "
     "(rendezvous).  Lower it and more sends wait",
     MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_SCOPE_LOCAL, MPI_T_ENUM_NULL,
     cv_eager_max, cv_set_eager_max},
    {"p2p_shm_eager_max",
     "Largest message sent at once to a rank on the same host through "
     "shared memory, in bytes (P2P_SHM_EAGER_MAX)",
     MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_SCOPE_READONLY, MPI_T_ENUM_NULL,
     cv_shm_eager_max, NULL},
    {"p2p_shm",
     "Ranks on the same host talk through shared memory (P2P_SHM)",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_SCOPE_READONLY, ENUM_OFF_ON, cv_shm,
     NULL},
    {"p2p_coll_hosts",
     "Barrier, Bcast and Scatter go host by host where a communicator has "
     "several ranks on some of its hosts (P2P_COLL_HOSTS)",
     MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_SCOPE_READONLY, ENUM_OFF_ON,
     cv_coll_hosts, NULL},
    {"p2p_encrypt",
     "Frames between hosts are sealed with AES-256-GCM (p2prun "
     "--no-encrypt turns it off)",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_SCOPE_READONLY, ENUM_OFF_ON,
     mpii_sealed, NULL},
    {"p2p_replicas",
     "Replicas every rank runs as, on distinct hosts (p2prun -r)",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_SCOPE_READONLY, MPI_T_ENUM_NULL,
     mpii_nreplicas, NULL},
    {"p2p_thread_level",
     "Thread level MPI_Init_thread provided (MPI_THREAD_SINGLE before "
     "MPI_Init)",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_SCOPE_READONLY, ENUM_LEVEL,
     mpii_thread_level, NULL},
};
#define NCVARS ((int)(sizeof cvars / sizeof cvars[0]))

static uint64_t
pv_sent(void)
{
    return mpii_counts.sent;
}

static uint64_t
pv_sent_bytes(void)
{
    return mpii_counts.sent_bytes;
}

static uint64_t
pv_arrived(void)
{
    return mpii_counts.arrived;
}

static uint64_t
pv_arrived_bytes(void)
{
    return mpii_counts.arrived_bytes;
}

static uint64_t
pv_unexpected(void)
{
    return mpii_counts.unexpected;
}

static uint64_t
pv_unexpected_peak(void)
{
    return mpii_counts.unexpected_peak;
}

static uint64_t
pv_posted(void)
{
    return mpii_counts.posted;
}

static uint64_t
pv_yields(void)
{
    return req_poll_yields();
}

static const struct pvar {
    const char *name, *desc;
    int cls;
    uint64_t (*value)(void);
} pvars[] = {
    {"p2p_msgs_sent",
     "Messages sent to a rank (point to point, and those collectives and "
     "one-sided calls send)",
     MPI_T_PVAR_CLASS_COUNTER, pv_sent},
    {"p2p_bytes_sent", "Bytes of data in the messages sent",
     MPI_T_PVAR_CLASS_COUNTER, pv_sent_bytes},
    {"p2p_msgs_arrived", "Messages that arrived for a receive",
     MPI_T_PVAR_CLASS_COUNTER, pv_arrived},
    {"p2p_bytes_arrived", "Bytes of data in the messages that arrived",
     MPI_T_PVAR_CLASS_COUNTER, pv_arrived_bytes},
    {"p2p_unexpected",
     "Messages arrived that no receive has taken yet (the unexpected "
     "queue)",
     MPI_T_PVAR_CLASS_LEVEL, pv_unexpected},
    {"p2p_unexpected_peak",
     "The most messages the unexpected queue held at once",
     MPI_T_PVAR_CLASS_HIGHWATERMARK, pv_unexpected_peak},
    {"p2p_posted", "Receives posted that no message has matched yet",
     MPI_T_PVAR_CLASS_LEVEL, pv_posted},
    {"p2p_poll_yields",
     "Times a test or probe that found nothing gave up the core to "
     "another process",
     MPI_T_PVAR_CLASS_COUNTER, pv_yields},
};
#define NPVARS ((int)(sizeof pvars / sizeof pvars[0]))

/* Only counters may be reset and written (from a handle's own start). */
static int
pv_readonly(int i)
{
    return pvars[i].cls != MPI_T_PVAR_CLASS_COUNTER;
}

static const int cat_transport_cvars[] = {0, 1, 2, 3};
static const int cat_transport_pvars[] = {0, 1, 2, 3};
static const int cat_matching_pvars[] = {4, 5, 6, 7};
static const int cat_job_cvars[] = {4, 5};
static const int cat_all_cats[] = {0, 1, 2};

static const struct category {
    const char *name, *desc;
    int ncvars, npvars, ncats;
    const int *cvars, *pvars, *cats;
} cats[] = {
    {"p2p_transport",
     "How messages travel (eager limits, shared memory, encryption) and "
     "how many went and came",
     4, 4, 0, cat_transport_cvars, cat_transport_pvars, NULL},
    {"p2p_matching", "Messages and receives waiting for each other", 0, 4,
     0, NULL, cat_matching_pvars, NULL},
    {"p2p_job", "The job this process belongs to", 2, 0, 0, cat_job_cvars,
     NULL, NULL},
    {"p2pmpi", "Everything p2pmpi's library shows", 0, 0, 3, NULL, NULL,
     cat_all_cats},
};
#define NCATS ((int)(sizeof cats / sizeof cats[0]))

/* --- state: initialisations, handles, sessions ------------------------- */

/* Handles and sessions live on lists, each starting with its link, so
 * that one the program gives back is looked for, not followed: a freed
 * or made-up one is refused. */
struct link {
    struct link *next;
};

struct mpii_t_cvar {
    struct link link;
    int index;
};

struct mpii_t_pvar {
    struct link link;
    int index;
    uint64_t base; /* a counter's value where this handle started */
};

struct mpii_t_session {
    struct link link;
    struct link *handles; /* its struct mpii_t_pvar */
};

/* MPI_T has a lock of its own besides the library's (MPII_ENTER, taken
 * only under MPI_THREAD_MULTIPLE): a tool may call it from any thread,
 * whatever level the program asked MPI_Init_thread for, and before
 * MPI_Init and after MPI_Finalize. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int inits; /* MPI_T_init_thread calls not yet finalized */
static struct link *sessions;     /* struct mpii_t_session */
static struct link *cvar_handles; /* struct mpii_t_cvar */

/* Every call but init: MPI_T is initialised, and the lock is held. */
#define T_ENTER                                  \
    do {                                         \
        pthread_mutex_lock(&lock);               \
        if (inits == 0) {                        \
            pthread_mutex_unlock(&lock);         \
            return MPI_T_ERR_NOT_INITIALIZED;    \
        }                                        \
    } while (0)
#define T_RETURN(rc)                 \
    do {                             \
        int t_rc_ = (rc);            \
        pthread_mutex_unlock(&lock); \
        return t_rc_;                \
    } while (0)

/* MPI 3.1 14.3.3: a string goes out truncated to *len - 1 characters and
 * its null, *len set to what was written with the null; *len 0 on input,
 * or no string, asks only the length needed; no length writes nothing
 * (MPICH's mpi_t_str checks each case). */
static void
put_string(const char *s, char *out, int *len)
{
    size_t n = strlen(s);

    if (len == NULL)
        return;
    if (out == NULL || *len <= 0) {
        *len = (int)n + 1;
        return;
    }
    if (n > (size_t)*len - 1)
        n = (size_t)*len - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    *len = (int)n + 1;
}

static void
put_int(int *p, int v)
{
    if (p != NULL)
        *p = v;
}

static int
valid_enum(MPI_T_enum e)
{
    size_t i;

    for (i = 0; i < sizeof enums / sizeof enums[0]; i++)
        if (e == &enums[i])
            return 1;
    return 0;
}

/* Names by index, for by_name: a performance variable's only in its
 * class (two of different classes may share a name). */
static const char *
cvar_name(int i, int cls)
{
    (void)cls;
    return cvars[i].name;
}

static const char *
pvar_name(int i, int cls)
{
    return pvars[i].cls == cls ? pvars[i].name : NULL;
}

static const char *
cat_name(int i, int cls)
{
    (void)cls;
    return cats[i].name;
}

/* The get_index calls: the index of name among n. */
static int
by_name(const char *name, int cls, int n, const char *(*name_of)(int, int),
        int *index)
{
    const char *s;
    int i;

    if (name == NULL || index == NULL)
        return MPI_ERR_ARG;
    for (i = 0; i < n; i++)
        if ((s = name_of(i, cls)) != NULL && strcmp(s, name) == 0) {
            *index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

static void
link_push(struct link **head, struct link *l)
{
    l->next = *head;
    *head = l;
}

/* The entry p of a list (compared, never followed), or NULL; with take,
 * it is off the list as well. */
static struct link *
link_find(struct link **head, const void *p, int take)
{
    struct link **lp, *l;

    for (lp = head; (l = *lp) != NULL; lp = &l->next)
        if ((const void *)l == p) {
            if (take)
                *lp = l->next;
            return l;
        }
    return NULL;
}

static void
link_free_all(struct link **head)
{
    struct link *l;

    while ((l = *head) != NULL) {
        *head = l->next;
        free(l);
    }
}

/* The live session s, or NULL. */
static struct mpii_t_session *
session_of(MPI_T_pvar_session s)
{
    return (struct mpii_t_session *)link_find(&sessions, s, 0);
}

/* Session s's live handle h, or NULL. */
static struct mpii_t_pvar *
pvar_of(struct mpii_t_session *s, MPI_T_pvar_handle h)
{
    return (struct mpii_t_pvar *)link_find(&s->handles, h, 0);
}

/* A session with its handles. */
static void
session_free(struct mpii_t_session *s)
{
    link_free_all(&s->handles);
    free(s);
}

/* --- initialisation ---------------------------------------------------- */

#pragma weak MPI_T_init_thread = PMPI_T_init_thread
int
PMPI_T_init_thread(int required, int *provided)
{
    MPII_ENTER;
    if (provided == NULL)
        return MPI_ERR_ARG;
    pthread_mutex_lock(&lock);
    inits++;
    pthread_mutex_unlock(&lock);
    /* Every level: MPI_T calls take a lock of their own. */
    *provided = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_finalize = PMPI_T_finalize
int
PMPI_T_finalize(void)
{
    MPII_ENTER;
    struct link *l;

    T_ENTER;
    /* The last one: sessions and handles left behind go. */
    if (--inits == 0) {
        while ((l = sessions) != NULL) {
            sessions = l->next;
            session_free((struct mpii_t_session *)l);
        }
        link_free_all(&cvar_handles);
    }
    T_RETURN(MPI_SUCCESS);
}

/* --- enumerations ------------------------------------------------------ */

#pragma weak MPI_T_enum_get_info = PMPI_T_enum_get_info
int
PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    MPII_ENTER;
    T_ENTER;
    if (!valid_enum(enumtype))
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    put_int(num, enumtype->n);
    put_string(enumtype->name, name, name_len);
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_enum_get_item = PMPI_T_enum_get_item
int
PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name,
                     int *name_len)
{
    MPII_ENTER;
    T_ENTER;
    if (!valid_enum(enumtype))
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (index < 0 || index >= enumtype->n)
        T_RETURN(MPI_T_ERR_INVALID_ITEM);
    put_int(value, enumtype->items[index].value);
    put_string(enumtype->items[index].name, name, name_len);
    T_RETURN(MPI_SUCCESS);
}

/* --- control variables ------------------------------------------------- */

#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num
int
PMPI_T_cvar_get_num(int *num_cvar)
{
    MPII_ENTER;
    T_ENTER;
    if (num_cvar == NULL)
        T_RETURN(MPI_ERR_ARG);
    *num_cvar = NCVARS;
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_get_info = PMPI_T_cvar_get_info
int
PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                     MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                     int *desc_len, int *bind, int *scope)
{
    MPII_ENTER;
    const struct cvar *v;

    T_ENTER;
    if (cvar_index < 0 || cvar_index >= NCVARS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    v = &cvars[cvar_index];
    put_string(v->name, name, name_len);
    put_int(verbosity, v->verbosity);
    if (datatype != NULL)
        *datatype = MPI_INT;
    if (enumtype != NULL)
        *enumtype = v->enumtype;
    put_string(v->desc, desc, desc_len);
    put_int(bind, MPI_T_BIND_NO_OBJECT);
    put_int(scope, v->scope);
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_get_index = PMPI_T_cvar_get_index
int
PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MPII_ENTER;
    T_ENTER;
    T_RETURN(by_name(name, 0, NCVARS, cvar_name, cvar_index));
}

#pragma weak MPI_T_cvar_handle_alloc = PMPI_T_cvar_handle_alloc
int
PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle,
                         MPI_T_cvar_handle *handle, int *count)
{
    MPII_ENTER;
    struct mpii_t_cvar *h;

    (void)obj_handle; /* bound to no object */
    T_ENTER;
    if (cvar_index < 0 || cvar_index >= NCVARS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (handle == NULL || count == NULL)
        T_RETURN(MPI_ERR_ARG);
    if ((h = malloc(sizeof *h)) == NULL)
        T_RETURN(MPI_T_ERR_MEMORY);
    h->index = cvar_index;
    link_push(&cvar_handles, &h->link);
    *handle = h;
    *count = 1;
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_handle_free = PMPI_T_cvar_handle_free
int
PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPII_ENTER;
    struct link *l;

    T_ENTER;
    if (handle == NULL)
        T_RETURN(MPI_ERR_ARG);
    if ((l = link_find(&cvar_handles, *handle, 1)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    free(l);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_read = PMPI_T_cvar_read
int
PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MPII_ENTER;
    int v;

    T_ENTER;
    if (link_find(&cvar_handles, handle, 0) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (buf == NULL)
        T_RETURN(MPI_ERR_ARG);
    v = cvars[handle->index].value();
    memcpy(buf, &v, sizeof v);
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_write = PMPI_T_cvar_write
int
PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    MPII_ENTER;
    int v;

    T_ENTER;
    if (link_find(&cvar_handles, handle, 0) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (cvars[handle->index].set == NULL)
        T_RETURN(MPI_T_ERR_CVAR_SET_NEVER);
    if (buf == NULL)
        T_RETURN(MPI_ERR_ARG);
    memcpy(&v, buf, sizeof v);
    T_RETURN(cvars[handle->index].set(v));
}

/* --- performance variables --------------------------------------------- */

#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num
int
PMPI_T_pvar_get_num(int *num_pvar)
{
    MPII_ENTER;
    T_ENTER;
    if (num_pvar == NULL)
        T_RETURN(MPI_ERR_ARG);
    *num_pvar = NPVARS;
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_get_info = PMPI_T_pvar_get_info
int
PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                     int *var_class, MPI_Datatype *datatype,
                     MPI_T_enum *enumtype, char *desc, int *desc_len,
                     int *bind, int *readonly, int *continuous, int *atomic)
{
    MPII_ENTER;
    const struct pvar *v;

    T_ENTER;
    if (pvar_index < 0 || pvar_index >= NPVARS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    v = &pvars[pvar_index];
    put_string(v->name, name, name_len);
    put_int(verbosity, MPI_T_VERBOSITY_TUNER_BASIC);
    put_int(var_class, v->cls);
    if (datatype != NULL)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype != NULL)
        *enumtype = MPI_T_ENUM_NULL;
    put_string(v->desc, desc, desc_len);
    put_int(bind, MPI_T_BIND_NO_OBJECT);
    put_int(readonly, pv_readonly(pvar_index));
    put_int(continuous, 1);
    put_int(atomic, 0);
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_get_index = PMPI_T_pvar_get_index
int
PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPII_ENTER;
    T_ENTER;
    T_RETURN(by_name(name, var_class, NPVARS, pvar_name, pvar_index));
}

#pragma weak MPI_T_pvar_session_create = PMPI_T_pvar_session_create
int
PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    MPII_ENTER;
    struct mpii_t_session *s;

    T_ENTER;
    if (session == NULL)
        T_RETURN(MPI_ERR_ARG);
    if ((s = calloc(1, sizeof *s)) == NULL)
        T_RETURN(MPI_T_ERR_MEMORY);
    link_push(&sessions, &s->link);
    *session = s;
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_session_free = PMPI_T_pvar_session_free
int
PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MPII_ENTER;
    struct link *l;

    T_ENTER;
    if (session == NULL)
        T_RETURN(MPI_ERR_ARG);
    if ((l = link_find(&sessions, *session, 1)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    session_free((struct mpii_t_session *)l);
    *session = MPI_T_PVAR_SESSION_NULL;
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_handle_alloc = PMPI_T_pvar_handle_alloc
int
PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index,
                         void *obj_handle, MPI_T_pvar_handle *handle,
                         int *count)
{
    MPII_ENTER;
    struct mpii_t_session *s;
    struct mpii_t_pvar *p;

    (void)obj_handle; /* bound to no object */
    T_ENTER;
    if ((s = session_of(session)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (pvar_index < 0 || pvar_index >= NPVARS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (handle == NULL || count == NULL)
        T_RETURN(MPI_ERR_ARG);
    if ((p = calloc(1, sizeof *p)) == NULL)
        T_RETURN(MPI_T_ERR_MEMORY);
    p->index = pvar_index;
    if (!pv_readonly(pvar_index))
        p->base = pvars[pvar_index].value();
    link_push(&s->handles, &p->link);
    *handle = p;
    *count = 1;
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_handle_free = PMPI_T_pvar_handle_free
int
PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    MPII_ENTER;
    struct mpii_t_session *s;
    struct link *l;

    T_ENTER;
    if ((s = session_of(session)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (handle == NULL)
        T_RETURN(MPI_ERR_ARG);
    if ((l = link_find(&s->handles, *handle, 1)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    free(l);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    T_RETURN(MPI_SUCCESS);
}

/* Start and stop: every variable is continuous.  With
 * MPI_T_PVAR_ALL_HANDLES they act on the session's handles that can be
 * started (none) and succeed. */
static int
startstop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    struct mpii_t_session *s;

    T_ENTER;
    if ((s = session_of(session)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        T_RETURN(MPI_SUCCESS);
    if (pvar_of(s, handle) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    T_RETURN(MPI_T_ERR_PVAR_NO_STARTSTOP);
}

#pragma weak MPI_T_pvar_start = PMPI_T_pvar_start
int
PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPII_ENTER;
    return startstop(session, handle);
}

#pragma weak MPI_T_pvar_stop = PMPI_T_pvar_stop
int
PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPII_ENTER;
    return startstop(session, handle);
}

/* The handle's value: a counter from its start, the rest as they stand;
 * then, with reset, the counter starts again from there. */
static uint64_t
pvar_value(struct mpii_t_pvar *p, int reset)
{
    uint64_t now = pvars[p->index].value(), v;

    if (pv_readonly(p->index))
        return now;
    v = now - p->base;
    if (reset)
        p->base = now;
    return v;
}

/* Read, reset or both, of one handle (MPI_T_PVAR_ALL_HANDLES only for a
 * reset: every handle of the session that can be reset). */
static int
pvar_access(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf,
            int reset)
{
    struct mpii_t_session *s;
    struct mpii_t_pvar *p;
    uint64_t v;

    T_ENTER;
    if ((s = session_of(session)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    if (handle == MPI_T_PVAR_ALL_HANDLES && buf == NULL) {
        struct link *l;

        for (l = s->handles; l != NULL; l = l->next)
            if (!pv_readonly((p = (struct mpii_t_pvar *)l)->index))
                (void)pvar_value(p, 1);
        T_RETURN(MPI_SUCCESS);
    }
    if ((p = pvar_of(s, handle)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (reset && pv_readonly(p->index))
        T_RETURN(MPI_T_ERR_PVAR_NO_WRITE);
    v = pvar_value(p, reset);
    if (buf != NULL)
        memcpy(buf, &v, sizeof v);
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_read = PMPI_T_pvar_read
int
PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                 void *buf)
{
    MPII_ENTER;
    if (buf == NULL)
        return MPI_ERR_ARG;
    return pvar_access(session, handle, buf, 0);
}

#pragma weak MPI_T_pvar_reset = PMPI_T_pvar_reset
int
PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPII_ENTER;
    return pvar_access(session, handle, NULL, 1);
}

#pragma weak MPI_T_pvar_readreset = PMPI_T_pvar_readreset
int
PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                      void *buf)
{
    MPII_ENTER;
    if (buf == NULL)
        return MPI_ERR_ARG;
    return pvar_access(session, handle, buf, 1);
}

#pragma weak MPI_T_pvar_write = PMPI_T_pvar_write
int
PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                  const void *buf)
{
    MPII_ENTER;
    struct mpii_t_session *s;
    struct mpii_t_pvar *p;
    uint64_t v;

    T_ENTER;
    if ((s = session_of(session)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_SESSION);
    if ((p = pvar_of(s, handle)) == NULL)
        T_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (pv_readonly(p->index))
        T_RETURN(MPI_T_ERR_PVAR_NO_WRITE);
    if (buf == NULL)
        T_RETURN(MPI_ERR_ARG);
    /* The handle reads v from now on, and counts up from there. */
    memcpy(&v, buf, sizeof v);
    p->base = pvars[p->index].value() - v;
    T_RETURN(MPI_SUCCESS);
}

/* --- categories -------------------------------------------------------- */

#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num
int
PMPI_T_category_get_num(int *num_cat)
{
    MPII_ENTER;
    T_ENTER;
    if (num_cat == NULL)
        T_RETURN(MPI_ERR_ARG);
    *num_cat = NCATS;
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_category_get_info = PMPI_T_category_get_info
int
PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
                         int *desc_len, int *num_cvars, int *num_pvars,
                         int *num_categories)
{
    MPII_ENTER;
    const struct category *c;

    T_ENTER;
    if (cat_index < 0 || cat_index >= NCATS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    c = &cats[cat_index];
    put_string(c->name, name, name_len);
    put_string(c->desc, desc, desc_len);
    put_int(num_cvars, c->ncvars);
    put_int(num_pvars, c->npvars);
    put_int(num_categories, c->ncats);
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_category_get_index = PMPI_T_category_get_index
int
PMPI_T_category_get_index(const char *name, int *cat_index)
{
    MPII_ENTER;
    T_ENTER;
    T_RETURN(by_name(name, 0, NCATS, cat_name, cat_index));
}

/* The first len members of one of a category's lists. */
static int
members(int cat_index, int len, int indices[], int which)
{
    const struct category *c;
    const int *list;
    int n, i;

    T_ENTER;
    if (cat_index < 0 || cat_index >= NCATS)
        T_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && indices == NULL))
        T_RETURN(MPI_ERR_ARG);
    c = &cats[cat_index];
    list = which == 0 ? c->cvars : which == 1 ? c->pvars : c->cats;
    n = which == 0 ? c->ncvars : which == 1 ? c->npvars : c->ncats;
    for (i = 0; i < n && i < len; i++)
        indices[i] = list[i];
    T_RETURN(MPI_SUCCESS);
}

#pragma weak MPI_T_category_get_cvars = PMPI_T_category_get_cvars
int
PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    MPII_ENTER;
    return members(cat_index, len, indices, 0);
}

#pragma weak MPI_T_category_get_pvars = PMPI_T_category_get_pvars
int
PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    MPII_ENTER;
    return members(cat_index, len, indices, 1);
}

#pragma weak MPI_T_category_get_categories = PMPI_T_category_get_categories
int
PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    MPII_ENTER;
    return members(cat_index, len, indices, 2);
}

#pragma weak MPI_T_category_changed = PMPI_T_category_changed
int
PMPI_T_category_changed(int *stamp)
{
    MPII_ENTER;
    T_ENTER;
    if (stamp == NULL)
        T_RETURN(MPI_ERR_ARG);
    *stamp = 0; /* the variables and categories never change */
    T_RETURN(MPI_SUCCESS);
}
