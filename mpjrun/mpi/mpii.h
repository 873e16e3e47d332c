/*
 * libp2pmpi internals (prefix mpii_).  The library lives inside user
 * processes: it never exits, aborts or prints on its own; every failure is
 * an MPI error code, handed to the communicator's error handler.  All
 * memory comes from malloc with checked results.
 *
 * Parts, one file each:
 *   env.c       MPI_Init/Finalize, wire-up with peerd, environment calls
 *   errh.c      error classes, strings, error handlers
 *   comm.c      communicators (world, self, dup, split, create, split_type,
 *               free, compare, names)
 *   group.c     process groups
 *   intercomm.c intercommunicators: create, merge, remote group
 *   keyval.c    keyvals and attribute lists of any object
 *   attr.c      attributes on communicators
 *   type_attr.c attributes on datatypes
 *   handles.c   tables of objects behind checked integer handles
 *   datatype.c  datatypes: layout, builtin table, sizes, extents, pack and
 *               unpack, envelope and contents, names
 *   datatype_create.c  the type constructors
 *   datatype_f90.c     the parameterised Fortran 90 types
 *   pack.c      MPI_Pack/Unpack, external32, Get_elements
 *   op.c        reduction operations
 *   transport.c TCP connections between ranks, framing, progress engine
 *   match.c     matching of incoming messages to posted receives: every
 *               matching decision (wildcards, probe) is taken here
 *   request.c   requests, wait and test families
 *   p2p.c       the point-to-point calls
 *   bsend.c     buffered sends and the attached buffer
 *   persist.c   persistent and generalized requests
 *   mprobe.c    matched probes (Mprobe ... Imrecv) and MPI_Message
 *   coll_sched.c, coll_nb.c  schedules and the nonblocking collectives
 *   coll_nb_inter.c  the nonblocking collectives over intercommunicators
 *   comm_idup.c MPI_Comm_idup
 *   info.c      info objects
 *   errclass.c  error classes and codes the program adds
 *   fint.c      C/Fortran handle conversion
 *   coll.c      the collective calls, built on point-to-point
 *   stubs.c     calls that only exist to link
 *   topo.c      process topologies (Cartesian, graph, distributed graph)
 *   coll_neighbor.c  the neighbour collectives over a topology
 *   coll_round.c  one round of sends and receives described by tables
 *   coll_inter.c  gather, scatter, allgather, alltoall, reduce_scatter
 *               over intercommunicators
 *   win.c       one-sided windows: creation, names, group, error handler
 *   win_attr.c  attributes on windows
 *   win_shared.c  the shared memory of Win_allocate_shared
 *   rma.c       one-sided operations and synchronization (origin side)
 *   rma_target.c  the target side that serves them
 *   thread.c    MPI_THREAD_MULTIPLE: one lock around the library
 */
#ifndef P2PMPI_MPII_H
#define P2PMPI_MPII_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"

/* --- thread.c ------------------------------------------------------- */

struct pollfd;
/* MPI_THREAD_MULTIPLE granted: every MPI call holds the library's lock. */
extern int mpii_mt;
void mpii_lock_enter(void);
void mpii_lock_leave(void);
/* 1 when it took the lock (mpii_leave gives it back then). */
static inline int
mpii_enter(void)
{
    if (!mpii_mt)
        return 0;
    mpii_lock_enter();
    return 1;
}
static inline void
mpii_leave(const int *entered)
{
    if (*entered)
        mpii_lock_leave();
}
/* The first line of every PMPI_ function: the lock, from here to every
 * return (tests/mpi/enter.sh checks that none lacks it). */
#define MPII_ENTER                                                        \
    const int mpii_entered __attribute__((cleanup(mpii_leave), unused)) = \
        mpii_enter()
/* MPI_Init_thread: multiple is MPI_THREAD_MULTIPLE granted; the calling
 * thread is the main one. */
void mpii_thread_init(int multiple);
int mpii_thread_is_main(void);
/* Passes of the progress engine this thread is inside (mpii_progress):
 * a wait nested in one (the target of a window receiving an operation's
 * data) keeps the lock, see thread.c. */
extern _Thread_local int mpii_passes;
/* For the waits: sched_yield(), poll() and a busy pass's pause, which let
 * other threads into the library (thread.c says how).  mpii_poll leaves
 * revents as they were under MPI_THREAD_MULTIPLE: only the wake counts. */
void mpii_yield_cpu(void);
void mpii_let_in(void);
int mpii_poll(struct pollfd *, int n, int timeout_ms);
/* Requests completed plus frames taken in (request.c): changed, it wakes
 * the threads asleep in mpii_poll. */
unsigned long mpii_events(void);

/* --- errh.c --------------------------------------------------------- */

/* Report err on comm through its error handler (MPI_ERRORS_ARE_FATAL
 * aborts the job through its coordinator); returns err for
 * "return mpii_err(...)".  fn names the calling MPI function. */
int mpii_err(MPI_Comm comm, int err, const char *fn);
/* The library's own test of a request it posted, from inside the
 * progress engine: no progress pass of its own (the engine is running)
 * and no polling-loop yield (req_poll_missed); frees it when complete. */
int mpii_test_quiet(MPI_Request *req, int *flag);
/* Give the program one status (st may be MPI_STATUS_IGNORE): all of
 * from but MPI_ERROR, which only the calls that return several statuses
 * write (MPI 3.1 3.2.5). */
void mpii_status_one(MPI_Status *st, const MPI_Status *from);
/* Set comm's error handler: a window's (win) or a communicator's; a
 * handler made for the other kind is MPI_ERR_ARG. */
int mpii_errh_set(MPI_Comm comm, MPI_Errhandler e, int win, const char *fn);
/* The window whose private communicator comm is, or MPI_WIN_NULL. */
MPI_Win mpii_win_of(MPI_Comm comm);
/* The log hook: a line for the job's stderr when the library must speak
 * (fatal errors); nothing else is printed. */
void mpii_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- errclass.c ---------------------------------------------------- */

/* Error classes and codes the program added: the class of an added
 * code and its string ("" until set), or -1 / NULL for any other code;
 * the largest code in use (MPI_LASTUSEDCODE). */
int mpii_errclass_of(int code);
const char *mpii_errclass_text(int code);
int mpii_errclass_last(void);
void mpii_errclass_fini(void);

/* --- info.c --------------------------------------------------------- */

/* Free every info object (MPI_Finalize). */
void mpii_info_fini(void);
/* An info argument is MPI_INFO_NULL or a live info object. */
int mpii_info_arg(MPI_Info);

/* --- mprobe.c ------------------------------------------------------- */

/* Drop every MPI_Message not received (MPI_Finalize, after match_fini). */
void mpii_message_fini(void);

/* --- handles.c ------------------------------------------------------ */

/* Objects behind handles kind | generation << 16 | (0x1000 + slot), kind
 * the top byte: a freed or forged handle finds nothing.  Initialise as
 * {.kind = K}. */
struct mpii_handles {
    uint32_t kind;
    void **obj;   /* NULL: a free slot */
    uint8_t *gen; /* reuses of each slot */
    size_t n, next;
};

void *mpii_handle_get(const struct mpii_handles *, uint32_t h); /* or NULL */
/* A slot for obj and its handle in *h; MPI_ERR_NO_MEM when full. */
int mpii_handle_put(struct mpii_handles *, void *obj, uint32_t *h);
/* Free h's slot and return its object (NULL if h names none). */
void *mpii_handle_take(struct mpii_handles *, uint32_t h);
/* Destroy every object left and the table. */
void mpii_handles_fini(struct mpii_handles *, void (*destroy)(void *));

/* --- datatype.c ----------------------------------------------------- */

/* A datatype's layout, committed or builtin.  NULL for an invalid,
 * freed or uncommitted handle (uncommitted is valid only for
 * Type_commit/Type_free/Type_size/Type_get_extent: use
 * mpii_type_lookup). */
struct mpii_type;
const struct mpii_type *mpii_type_get(MPI_Datatype);
const struct mpii_type *mpii_type_lookup(MPI_Datatype); /* any live one */
/* Bytes of data in one element (no gaps). */
size_t mpii_type_size(const struct mpii_type *);
MPI_Aint mpii_type_extent(const struct mpii_type *);
MPI_Aint mpii_type_lb(const struct mpii_type *);
/* buf + lb: where a contiguous type's data begins. */
void *mpii_type_start(const void *buf, const struct mpii_type *);
/* Non-zero when count elements occupy size*count contiguous bytes at
 * buf + lb. */
int mpii_type_contiguous(const struct mpii_type *);
/* The builtin element type (e.g. MPI_INT for a vector of MPI_INT), and
 * how many of it one element holds; MPI_DATATYPE_NULL if mixed. */
MPI_Datatype mpii_type_basic(const struct mpii_type *, size_t *per_elem);
/* The C types of MPI_REAL16 (gfortran's REAL(16), IEEE binary128) and
 * MPI_INTEGER16.  Where the compiler has none, such a type is 16 bytes
 * that no reduction applies to. */
#if defined(__SIZEOF_FLOAT128__)
typedef __float128 mpii_real16;
#define MPII_HAVE_REAL16 1
#elif defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 113
typedef long double mpii_real16;
#define MPII_HAVE_REAL16 1
#else
typedef struct {
    _Alignas(16) unsigned char b[16];
} mpii_real16;
#endif
#if defined(__SIZEOF_INT128__)
typedef __int128 mpii_int16;
typedef unsigned __int128 mpii_uint16;
#define MPII_HAVE_INTEGER16 1
#else
typedef struct {
    _Alignas(16) unsigned char b[16];
} mpii_int16;
#endif
/* MPI_COMPLEX32: two of MPI_REAL16, as Fortran lays out COMPLEX(16). */
struct mpii_complex32 {
    mpii_real16 re, im;
};
/* MPI_REAL2 (IEEE binary16, as its bits: half.h) and MPI_COMPLEX4. */
typedef uint16_t mpii_real2;
struct mpii_complex4 {
    mpii_real2 re, im;
};
/* Copy count elements of the user's layout at buf into out (packed), or
 * bytes packed bytes from in into the user's layout (a truncated
 * message unpacks partially). */
void mpii_pack(const void *buf, int count, const struct mpii_type *,
               void *out);
void mpii_unpack(const void *in, size_t bytes, void *buf, int count,
                 const struct mpii_type *);
/* A pending request (or a type built from it) keeps a derived type
 * alive after MPI_Type_free; no-ops on builtin types. */
void mpii_type_hold(const struct mpii_type *);
void mpii_type_release(const struct mpii_type *);
/* A handle of the library's own for the type dt names, which stays
 * valid when the user frees dt (a nonblocking collective's later steps
 * use it), and its release.  Builtin types (and bad handles, to be
 * reported where they are used) are given back as they are. */
int mpii_type_handle_dup(MPI_Datatype dt, MPI_Datatype *out);
void mpii_type_handle_drop(MPI_Datatype);
/* Non-zero for a builtin type (a null buffer is then not MPI_BOTTOM). */
int mpii_type_is_builtin(const struct mpii_type *);
/* Basic elements in bytes packed bytes; *whole is 0 if they end inside
 * one. */
size_t mpii_type_elements(const struct mpii_type *, size_t bytes, int *whole);
/* Free every derived type (MPI_Finalize). */
void mpii_type_fini(void);
/* The runs of bytes of one element, relative to its origin, in packed
 * order: how many, and run i. */
size_t mpii_type_nblocks(const struct mpii_type *);
void mpii_type_block(const struct mpii_type *, size_t i, MPI_Aint *off,
                     size_t *len);

/* --- op.c ----------------------------------------------------------- */

/* inout[i] = in[i] op inout[i] for count elements of a datatype that is
 * builtin or made of one builtin type (pair types for MINLOC/MAXLOC).
 * MPI_ERR_OP for an invalid op or one not defined on the type. */
int mpii_op_apply(MPI_Op, const void *in, void *inout, int count,
                  MPI_Datatype);
/* Non-zero if the op commutes; -1 for an invalid handle. */
int mpii_op_commutative(MPI_Op);
/* A handle of the library's own for a user operation, and its release:
 * an operation the program frees while a nonblocking collective uses it
 * lives until that lets it go (MPI 3.1 5.9.5).  Builtin operations (and
 * bad handles) are given back as they are. */
int mpii_op_handle_dup(MPI_Op op, MPI_Op *out);
void mpii_op_handle_drop(MPI_Op);
void mpii_op_fini(void);

/* --- comm.c --------------------------------------------------------- */

struct mpii_comm {
    MPI_Comm handle;
    int rank, size;
    int *world; /* world rank of each rank of this communicator */
    uint32_t ctx; /* context id: point-to-point uses ctx, collectives
                     ctx + 1 (ids are even) */
    MPI_Errhandler errh;
    int refs;
    char name[MPI_MAX_OBJECT_NAME];
    struct mpii_attr *attrs; /* attr.c */
    /* An intercommunicator: rank, size and world are those of point-to-
     * point (rank in the local group, the remote group's size and world
     * ranks); the local group is here. */
    int inter;
    int lsize;
    int *lworld;
    MPI_Comm lcomm; /* the local group as a hidden intracommunicator */
    uint32_t nbc_seq; /* nonblocking collectives started (coll_sched.c) */
    struct mpii_topo *topo; /* topo.c: NULL without a topology */
    struct mpii_hosts *hosts; /* coll_host.c, once hosts_known */
    int hosts_known;
};

/* NULL for an invalid or freed handle. */
struct mpii_comm *mpii_comm_get(MPI_Comm);
/* The same, NULL for an intercommunicator too (collectives). */
struct mpii_comm *mpii_intra_get(MPI_Comm);
/* A member of a split: sorted by key, then by old rank (qsort). */
struct mpii_member {
    int color, key, rank;
};
int mpii_member_cmp(const void *, const void *);
/* For intercomm.c: a new communicator of size ranks (world to fill); the
 * lowest context id this process has not used, and moving past one; every
 * member's k ints, in rank order, to every member, over c's agreement
 * channel (internal context, this tag). */
struct mpii_comm *mpii_comm_new(int size);
void mpii_comm_drop(struct mpii_comm *);
/* Something pending keeps a communicator alive after MPI_Comm_free (a
 * request, a nonblocking collective's schedule, a matched-probe
 * message): its handle is gone, the memory stays until the last
 * release. */
void mpii_comm_hold(struct mpii_comm *);
void mpii_comm_release(struct mpii_comm *); /* NULL is fine */
/* This process's proposal for a new context id (the members take the
 * highest).  The next unused id of a counter, which every member of an
 * agreement moves past (mpii_comm_ctx_used) so that this process never
 * proposes an id it used; under MPI_THREAD_MULTIPLE, two agreements of
 * one process may be in flight at once and the counter would give both
 * the same, so each proposal is one of its own, unique in the whole job
 * (mpii_ctx_unique, multiples of 4 with MPII_CTX_UNIQUE set): the
 * highest proposal serves one agreement only.  Moving past such an id
 * leaves the counter be. */
uint32_t mpii_comm_propose_ctx(void);
void mpii_comm_ctx_used(uint32_t ctx);
#define MPII_CTX_UNIQUE 0x40000000u
/* comm_idup.c: this process's next unique proposal, 0 when its share of
 * the range is spent. */
uint32_t mpii_ctx_unique(void);
int mpii_comm_exchange(struct mpii_comm *, const int *mine, int k, int *all,
                       int tag);

/* --- intercomm.c ---------------------------------------------------- */

/* Comm_split over intercommunicator ic (MPI_UNDEFINED: no new
 * communicator): *out is the intercommunicator of the members of our
 * color on both sides, MPI_COMM_NULL if either side has none.  An MPI
 * error code (not reported). */
int mpii_inter_split(struct mpii_comm *ic, int color, int key, MPI_Comm *out);
/* A new intercommunicator (context ctx, its hidden local part ctx + 2)
 * of the nl local world ranks lw (we are local rank me) and the nr remote
 * ones rw, in *out; MPI_ERR_NO_MEM. */
int mpii_inter_build(const int *lw, int nl, int me, const int *rw, int nr,
                     uint32_t ctx, MPI_Errhandler errh, MPI_Comm *out);
/* Non-zero if comm is a live intercommunicator. */
int mpii_comm_inter(MPI_Comm);
/* The collectives over intercommunicators there are (errors reported). */
int mpii_inter_barrier(MPI_Comm);
int mpii_inter_bcast(void *buf, int count, MPI_Datatype, int root, MPI_Comm);
int mpii_inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype,
                      MPI_Op, int root, MPI_Comm);
int mpii_inter_allreduce(const void *sbuf, void *rbuf, int count,
                         MPI_Datatype, MPI_Op, MPI_Comm);
/* A scratch buffer for count elements of dt laid out as the user's would
 * be: the element origin to pass to MPI calls; *base is what to free.
 * NULL for a bad type or no memory. */
void *mpii_type_buf(int count, MPI_Datatype dt, void **base);

/* --- coll_host.c ---------------------------------------------------- */

/* The ranks of an intracommunicator by host (where their processes
 * listen): hosts numbered 0 .. n - 1 in the order of the lowest process
 * index on each. */
struct mpii_hosts {
    int n;      /* hosts, 2 .. size - 1 */
    int *host;  /* [size]: each rank's host */
    int *pos;   /* [size]: each rank's place among its host's ranks */
    int *lead;  /* [n]: each host's lowest rank */
    int *order; /* [size]: the ranks host by host, ascending within one */
    int *start; /* [n + 1]: host h's are order[start[h] .. start[h + 1]) */
};
/* c's hosts, worked out on the first call; NULL where a two-level
 * algorithm has nothing to gain (see coll_host.c).  The same answer at
 * every member. */
const struct mpii_hosts *mpii_comm_hosts(struct mpii_comm *);
void mpii_hosts_free(struct mpii_hosts *); /* NULL is fine */

/* --- topo.c --------------------------------------------------------- */

struct mpii_topo;
void mpii_topo_free(struct mpii_topo *); /* NULL is fine */
/* A copy for Comm_dup; NULL on no memory. */
struct mpii_topo *mpii_topo_dup(const struct mpii_topo *);
/* c's in- and out-neighbours in the order the neighbour collectives use
 * (MPI_PROC_NULL possible for a Cartesian grid): malloc'ed, the caller
 * frees both; MPI_ERR_TOPOLOGY without a topology. */
int mpii_topo_neighbors(struct mpii_comm *c, int **in, int *nin, int **out,
                        int *nout);

/* --- coll_round.c ---------------------------------------------------- */

/* A vector of counts (and displacements, which may be anything): both
 * given, no count negative.  An MPI error code. */
int coll_check_counts(const int counts[], const int displs[], int n);
/* Address of element i of a buffer of elements of extent ext. */
char *coll_at(const void *buf, long long i, MPI_Aint ext);

/* The blocks of one side of a round: block i is at buf + displacement,
 * count elements of type. */
struct mpii_blocks {
    const void *buf;
    const int *counts;         /* NULL: count for every block */
    int count;
    const int *displs;         /* elements; NULL: block i at i * count */
    const MPI_Aint *bdispls;   /* bytes (the w forms) */
    const MPI_Datatype *types; /* NULL: type for every block */
    MPI_Datatype type;
    int same; /* every block is the start of buf (one send to all) */
    /* Sent blocks 1, 0, 3, 2 ...: a Cartesian process's two neighbours of
     * a dimension, + before - (coll_neighbor.c says why). */
    int pairs_swapped;
};
/* Block i's address, count and type; MPI_ERR_COUNT/TYPE if bad. */
int mpii_blocks_at(const struct mpii_blocks *, int i, char **addr,
                   int *count, MPI_Datatype *type);
/* The block that goes i-th of n. */
int mpii_blocks_nth(const struct mpii_blocks *, int i, int n);
/* Receive block i of rcv from rank in[i] (i < nin) and send block j of
 * snd to out[j] (j < nout), on c's collective context with tag, and wait
 * for all.  in or out NULL: ranks 0, 1, ... .  An MPI error code. */
int mpii_blocks_round(struct mpii_comm *c, const int *in, int nin,
                      const struct mpii_blocks *rcv, const int *out, int nout,
                      const struct mpii_blocks *snd, int tag);

/* --- coll_inter.c: the other intercommunicator collectives ---------- */

int mpii_inter_gather(const void *sbuf, int scount, MPI_Datatype st,
                      void *rbuf, const int rcounts[], int rcount,
                      const int displs[], MPI_Datatype rt, int root,
                      MPI_Comm comm, const char *fn);
int mpii_inter_scatter(const void *sbuf, const int scounts[], int scount,
                       const int displs[], MPI_Datatype st, void *rbuf,
                       int rcount, MPI_Datatype rt, int root, MPI_Comm comm,
                       const char *fn);
/* Allgather(v) (rcv.same unset) and Alltoall(v, w): one round with every
 * remote rank. */
int mpii_inter_exchange(const struct mpii_blocks *snd,
                        const struct mpii_blocks *rcv, MPI_Comm comm,
                        const char *fn);
int mpii_inter_alltoallw(const void *sbuf, const int scounts[],
                         const int sdispls[], const MPI_Datatype stypes[],
                         void *rbuf, const int rcounts[], const int rdispls[],
                         const MPI_Datatype rtypes[], MPI_Comm comm);
int mpii_inter_reduce_scatter(const void *sbuf, void *rbuf,
                              const int rcounts[], int rcount,
                              MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                              const char *fn);

/* --- win.c, rma.c, rma_target.c: one-sided communication ----------- */

/* The target side of passive-target epochs is served from the progress
 * engine (transport_progress calls this); a no-op without windows. */
void mpii_rma_poll(void);
/* MPI_Finalize: free the windows the program left. */
void mpii_win_fini(void);

/* --- group.c -------------------------------------------------------- */

/* A new group of n world ranks; the members of a group (size, or -1 for
 * a bad handle). */
int mpii_group_of(int n, const int *world, MPI_Group *out);
int mpii_group_members(MPI_Group, const int **world);
void mpii_group_fini(void);

/* --- keyval.c, attr.c ------------------------------------------------- */

struct mpii_attr;
/* The kind of object a keyval serves, and its callbacks (those of the
 * kind's member pair; NULL: none). */
enum mpii_attr_kind { MPII_ATTR_COMM, MPII_ATTR_TYPE };
struct mpii_keyval_fns {
    enum mpii_attr_kind kind;
    MPI_Comm_copy_attr_function *comm_copy;
    MPI_Comm_delete_attr_function *comm_del;
    MPI_Type_copy_attr_function *type_copy;
    MPI_Type_delete_attr_function *type_del;
};
/* A new keyval (*keyval) / the program frees one of this kind. */
int mpii_keyval_new(const struct mpii_keyval_fns *, void *extra, int *keyval);
int mpii_keyval_free(enum mpii_attr_kind, int *keyval);
/* Attribute lists of any object (obj its handle, given to callbacks),
 * MPI error codes; MPI_ERR_KEYVAL for a keyval of another kind. */
int mpii_attrs_set(enum mpii_attr_kind, int obj, struct mpii_attr **list,
                   int key, void *val);
int mpii_attrs_get(enum mpii_attr_kind, struct mpii_attr *list, int key,
                   void *val, int *flag);
int mpii_attrs_delete(enum mpii_attr_kind, int obj, struct mpii_attr **list,
                      int key);
/* Append to *to what the copy callbacks of from's attributes keep. */
int mpii_attrs_copy(int from_obj, const struct mpii_attr *from,
                    struct mpii_attr **to);
int mpii_attrs_delete_all(int obj, struct mpii_attr **list);
void mpii_attrs_drop(struct mpii_attr **list); /* no callbacks */
void mpii_keyval_fini(void); /* every keyval goes (MPI_Finalize) */
/* Comm_dup: copy from's attributes to to through their copy callbacks. */
int mpii_attr_copy(struct mpii_comm *from, struct mpii_comm *to);
/* Comm_free: delete every attribute through its delete callback. */
int mpii_attr_delete_all(struct mpii_comm *);
/* A communicator goes without callbacks (finalize): free its list. */
void mpii_attr_drop(struct mpii_comm *);
/* MPI_Finalize: MPI_COMM_SELF's attributes go first (callbacks run);
 * mpii_attr_fini then frees the keyvals. */
int mpii_attr_finalize(void);
void mpii_attr_fini(void);
/* Non-zero if a live communicator has error handler e (errh.c keeps a
 * freed handler for it). */
int mpii_comm_uses_errh(MPI_Errhandler e);
int mpii_comm_init(int world_rank, int world_size); /* env.c calls it */
void mpii_comm_fini(void);

/* --- transport.c, match.c, request.c: messages between ranks -------- */

#define MPII_CTX_COLL 1 /* added to a communicator's ctx for collectives */
/* The agreements that make communicators from a communicator (dup,
 * split, create, Comm_create_group, Intercomm_create, _merge) run on its
 * build context.  Ids are even and below 2^31: ctx carries point-to-point,
 * ctx + 1 collectives, ctx | 2^31 nonblocking collectives, so
 * (ctx + 1) | 2^31 is no other communicator's.  Every id has its own,
 * unfolded, whatever range it comes from (Comm_idup's ids: bit 30). */
#define MPII_CTX_BUILD(ctx) (((uint32_t)(ctx) + 1u) | 0x80000000u)
/* Tags on a build context: the user's tag for Comm_create_group and
 * Intercomm_create (which tell concurrent calls apart by it); these for
 * the rest, whose calls on one communicator come in program order. */
#define MPII_TAG_SPLIT 1  /* intracommunicator dup, split, split_type */
#define MPII_TAG_MERGE 4  /* Intercomm_merge: + step 1..3 */
#define MPII_TAG_ISPLIT 8 /* split over an intercommunicator: + step */

/* BUFFERED: a standard send of a private copy of the data (MPI_Bsend). */
enum mpii_send_mode { MPII_SEND_STANDARD, MPII_SEND_SYNC, MPII_SEND_BUFFERED };

/* Start a send of count elements to rank dest of comm on context ctx
 * (comm->ctx or comm->ctx + MPII_CTX_COLL).  *req gets a request handle.
 * The buffer must stay untouched until the request completes. */
int mpii_isend(const void *buf, int count, MPI_Datatype, int dest, int tag,
               struct mpii_comm *, uint32_t ctx, enum mpii_send_mode,
               MPI_Request *req);
/* Start a receive (source may be MPI_ANY_SOURCE, tag MPI_ANY_TAG). */
int mpii_irecv(void *buf, int count, MPI_Datatype, int source, int tag,
               struct mpii_comm *, uint32_t ctx, MPI_Request *req);
/* Complete requests (status may be MPI_STATUS_IGNORE).  Returns the
 * request's error, MPI_SUCCESS otherwise; *req becomes
 * MPI_REQUEST_NULL. */
int mpii_wait(MPI_Request *req, MPI_Status *status);
/* Run the progress engine until cond(arg) holds, as the waits do
 * (request.c: req_wait_until); an MPI error code. */
int mpii_wait_until(int (*cond)(void *), void *arg);
/* Frees the working buffers the reductions keep between calls. */
void mpii_red_fini(void);
int mpii_waitall(int n, MPI_Request reqs[], MPI_Status statuses[]);
/* Blocking shorthands on a context, for the collectives. */
int mpii_send(const void *buf, int count, MPI_Datatype, int dest, int tag,
              struct mpii_comm *, uint32_t ctx);
int mpii_recv(void *buf, int count, MPI_Datatype, int source, int tag,
              struct mpii_comm *, uint32_t ctx, MPI_Status *status);

/* Bring the transport up with the job's table; tear it down. */
int mpii_transport_init(void);
void mpii_transport_fini(void);

/* --- env.c ---------------------------------------------------------- */

int mpii_initialized(void); /* 1 between Init and Finalize */
/* The job runs every rank more than once (p2prun -r). */
int mpii_replicated(void);
/* Replicas per rank (p2prun -r; 1 without). */
int mpii_nreplicas(void);
/* Environment variable name is 0, no or off. */
int mpii_env_off(const char *name);
/* Frames between hosts are sealed (P2P_ENCRYPT not 0/no/off). */
int mpii_sealed(void);
/* The thread level MPI_Init_thread provided (MPI_THREAD_SINGLE before). */
int mpii_thread_level(void);
/* testkill.c: fault injection for tests (P2P_TEST_KILL); a no-op
 * otherwise. */
void mpii_test_point(const char *where);
/* testkill.c: 1 when P2P_TEST_KILL names this process and where, a point
 * where the caller itself acts (kills another process), counted as
 * mpii_test_point counts. */
int mpii_test_hit(const char *where);
/* testkill.c: 1 when the sealed frame about to be sent (data: a
 * rendezvous payload) is the one P2P_TEST_CORRUPT names, to be damaged
 * on its way out. */
int mpii_test_corrupt(int data);
/* Fault injection (P2P_TEST_ACCEPTCUT, testkill.c): close the connection
 * just accepted from process proc, once proven?  Read at each
 * acceptance (rare). */
int mpii_test_accept_cut(int proc);
/* Fault injection (P2P_TEST_LATEREAD, testkill.c): the process whose
 * frames this one leaves unread until it has gone, or -1. */
int mpii_test_late_read(void);
/* Exit status of a replica that could not join its job. */
#define MPII_EXIT_WIREUP 75
/* Ask the coordinator to end the job with this status (MPI_Abort and
 * fatal errors); returns only if that was impossible. */
void mpii_abort(int status);

/* Every MPI call checks the library is initialised. */
#define MPII_CHECK_INIT(fn)                                                   \
    do {                                                                      \
        if (!mpii_initialized())                                              \
            return mpii_err(MPI_COMM_WORLD, MPI_ERR_OTHER, fn);               \
    } while (0)

#endif
