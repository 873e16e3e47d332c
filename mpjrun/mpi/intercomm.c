/*
 * intercomm.c: intercommunicators.  An intercommunicator is a
 * communicator whose point-to-point side (rank, size, world) addresses
 * the remote group, so that sends and receives need nothing new: a
 * message carries the sender's rank in its local group, which is its
 * rank in the receiver's remote group.  The local group is kept beside.
 *
 * Intercomm_create: the local group agrees on the highest context id its
 * members have not used (as Comm_split does), the two leaders swap that
 * and their groups over the peer communicator, and each leader hands the
 * higher id and the remote group to its members.  Intercomm_merge: the
 * same agreement over both groups; the group that passed high = 0 comes
 * first (when both passed the same, the group whose leader has the lower
 * world rank).  Everything runs on the build context of the communicator
 * it goes over (MPII_CTX_BUILD: the local, peer or intercommunicator),
 * Intercomm_create with the user's tag, the rest with tags apart from
 * Comm_split's; replicas of a rank exchange the same messages.
 *
 * Each group also gets a hidden intracommunicator of its own (context
 * id + 2), on which the collectives over the intercommunicator run their
 * local part: Barrier, Bcast (MPI_ROOT, MPI_PROC_NULL), Reduce and
 * Allreduce; the leaders (local rank 0) carry the data across.
 *
 * Comm_split over an intercommunicator (and Comm_dup and Comm_create,
 * which comm.c writes as splits): each group exchanges every member's
 * (color, key, highest unused context id), the leaders swap their
 * groups' lists over the intercommunicator, and each leader hands the
 * other group's list and the highest id of all to its members; each
 * process then keeps, on both sides, the members of its color in key
 * order.  The new intercommunicator takes the id, its hidden local
 * communicator id + 2, as Intercomm_create does.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* The local group of an intercommunicator as a communicator of its own,
 * for agreements only. */
static void
local_view(const struct mpii_comm *ic, struct mpii_comm *tmp)
{
    memset(tmp, 0, sizeof *tmp);
    tmp->handle = ic->handle;
    tmp->rank = ic->rank;
    tmp->size = ic->lsize;
    tmp->world = ic->lworld;
    tmp->ctx = ic->ctx;
    tmp->refs = 1; /* ours, never released: requests' holds leave it be */
}

/* The largest of every member's first int. */
static int
max_first(const int *all, int n, int k)
{
    int i, m = all[0];

    for (i = 1; i < n; i++)
        if (all[i * k] > m)
            m = all[i * k];
    return m;
}

/* The leader gives msg (n ints) to every other member of local; the
 * members receive it into msg (room for cap ints). */
static int
hand_out(struct mpii_comm *local, int leader, int *msg, int n, int cap,
         int tag)
{
    int r, rc = MPI_SUCCESS;

    if (local->rank == leader) {
        for (r = 0; r < local->size && rc == MPI_SUCCESS; r++)
            if (r != leader)
                rc = mpii_send(msg, n, MPI_INT, r, tag, local,
                               MPII_CTX_BUILD(local->ctx));
        return rc;
    }
    return mpii_recv(msg, cap, MPI_INT, leader, tag, local,
                     MPII_CTX_BUILD(local->ctx), MPI_STATUS_IGNORE);
}

/* Swap a message with the other leader over c (dest, source: other). */
static int
swap(struct mpii_comm *c, int other, const int *mine, int n, int *theirs,
     int cap, int tag)
{
    MPI_Request req;
    int rc;

    if ((rc = mpii_isend(mine, n, MPI_INT, other, tag, c,
                         MPII_CTX_BUILD(c->ctx), MPII_SEND_STANDARD, &req)) !=
        MPI_SUCCESS)
        return rc;
    rc = mpii_recv(theirs, cap, MPI_INT, other, tag, c, MPII_CTX_BUILD(c->ctx),
                   MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = mpii_wait(&req, MPI_STATUS_IGNORE);
    else
        mpii_wait(&req, MPI_STATUS_IGNORE);
    return rc;
}

#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create
int
PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                      MPI_Comm peer_comm, int remote_leader, int tag,
                      MPI_Comm *newintercomm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Intercomm_create";
    struct mpii_comm *lc, *pc = NULL, *w;
    int mine, *all = NULL, *msg = NULL, cap, rc, ctx, rsize;

    MPII_CHECK_INIT(fn);
    if ((lc = mpii_intra_get(local_comm)) == NULL ||
        (w = mpii_comm_get(MPI_COMM_WORLD)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (newintercomm == NULL || tag < 0)
        return mpii_err(local_comm, MPI_ERR_ARG, fn);
    if (local_leader < 0 || local_leader >= lc->size)
        return mpii_err(local_comm, MPI_ERR_RANK, fn);
    if (lc->rank == local_leader) {
        if ((pc = mpii_comm_get(peer_comm)) == NULL)
            return mpii_err(local_comm, MPI_ERR_COMM, fn);
        if (remote_leader < 0 || remote_leader >= pc->size)
            return mpii_err(local_comm, MPI_ERR_RANK, fn);
    }
    /* [ctx, size, world ranks...]: no group outgrows the world. */
    cap = 2 + w->size;
    all = malloc((size_t)lc->size * sizeof *all);
    msg = malloc((size_t)cap * sizeof *msg);
    if (all == NULL || msg == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    /* 1. The local group's highest unused context id. */
    mine = (int)mpii_comm_propose_ctx();
    if ((rc = mpii_comm_exchange(lc, &mine, 1, all, tag)) != MPI_SUCCESS)
        goto out;
    /* 2. The leaders swap it with their groups. */
    if (lc->rank == local_leader) {
        int *out = malloc((size_t)(2 + lc->size) * sizeof *out);

        if (out == NULL) {
            rc = MPI_ERR_NO_MEM;
            goto out;
        }
        out[0] = max_first(all, lc->size, 1);
        out[1] = lc->size;
        memcpy(out + 2, lc->world, (size_t)lc->size * sizeof *out);
        rc = swap(pc, remote_leader, out, 2 + lc->size, msg, cap, tag);
        if (rc == MPI_SUCCESS && msg[0] < out[0])
            msg[0] = out[0];
        free(out);
        if (rc == MPI_SUCCESS && (msg[1] <= 0 || msg[1] > w->size))
            rc = MPI_ERR_INTERN;
        if (rc != MPI_SUCCESS)
            goto out;
    }
    /* 3. The leader hands [ctx, remote size, remote group] out. */
    if ((rc = hand_out(lc, local_leader, msg,
                       lc->rank == local_leader ? 2 + msg[1] : 0, cap, tag)) !=
        MPI_SUCCESS)
        goto out;
    ctx = msg[0];
    rsize = msg[1];
    /* ctx for the intercommunicator, ctx + 2 for each group's hidden
     * local communicator (the groups are disjoint: no message mixes). */
    mpii_comm_ctx_used((uint32_t)ctx + 2);
    rc = mpii_inter_build(lc->world, lc->size, lc->rank, msg + 2, rsize,
                     (uint32_t)ctx, lc->errh, newintercomm);
out:
    free(all);
    free(msg);
    return rc == MPI_SUCCESS ? rc : mpii_err(local_comm, rc, fn);
}

#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
int
PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Intercomm_merge";
    struct mpii_comm *ic, tmp, *n;
    int mine[2], *all, msg[2] = {0, 0}, mine_lead[2], rc, ctx, lhigh,
                        first_local, i, k = 0;
    int t;

    MPII_CHECK_INIT(fn);
    if ((ic = mpii_comm_get(intercomm)) == NULL || !ic->inter)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (newintracomm == NULL)
        return mpii_err(intercomm, MPI_ERR_ARG, fn);
    t = MPII_TAG_MERGE;
    local_view(ic, &tmp);
    if ((all = malloc((size_t)ic->lsize * 2 * sizeof *all)) == NULL)
        return mpii_err(intercomm, MPI_ERR_NO_MEM, fn);
    mine[0] = (int)mpii_comm_propose_ctx();
    mine[1] = high != 0;
    rc = mpii_comm_exchange(&tmp, mine, 2, all, t | 1);
    lhigh = all[1]; /* the leader's word for the group */
    if (rc == MPI_SUCCESS && ic->rank == 0) {
        mine_lead[0] = max_first(all, ic->lsize, 2);
        mine_lead[1] = lhigh;
        rc = swap(ic, 0, mine_lead, 2, msg, 2, t | 2);
        if (msg[0] < mine_lead[0])
            msg[0] = mine_lead[0];
    }
    free(all);
    if (rc == MPI_SUCCESS)
        rc = hand_out(&tmp, 0, msg, ic->rank == 0 ? 2 : 0, 2, t | 3);
    if (rc != MPI_SUCCESS)
        return mpii_err(intercomm, rc, fn);
    ctx = msg[0];
    mpii_comm_ctx_used((uint32_t)ctx);
    if (lhigh != msg[1])
        first_local = !lhigh;
    else
        first_local = ic->lworld[0] < ic->world[0];
    if ((n = mpii_comm_new(ic->lsize + ic->size)) == NULL)
        return mpii_err(intercomm, MPI_ERR_NO_MEM, fn);
    if (first_local) {
        for (i = 0; i < ic->lsize; i++)
            n->world[k++] = ic->lworld[i];
        for (i = 0; i < ic->size; i++)
            n->world[k++] = ic->world[i];
        n->rank = ic->rank;
    } else {
        for (i = 0; i < ic->size; i++)
            n->world[k++] = ic->world[i];
        for (i = 0; i < ic->lsize; i++)
            n->world[k++] = ic->lworld[i];
        n->rank = ic->size + ic->rank;
    }
    n->ctx = (uint32_t)ctx;
    n->errh = ic->errh;
    *newintracomm = n->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
int
PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_test_inter");
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_test_inter");
    if (flag == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_test_inter");
    *flag = c->inter;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
int
PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    MPII_ENTER;
    struct mpii_comm *c;

    MPII_CHECK_INIT("MPI_Comm_remote_size");
    if ((c = mpii_comm_get(comm)) == NULL || !c->inter)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_remote_size");
    if (size == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_remote_size");
    *size = c->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
int
PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    MPII_ENTER;
    struct mpii_comm *c;
    int rc;

    MPII_CHECK_INIT("MPI_Comm_remote_group");
    if ((c = mpii_comm_get(comm)) == NULL || !c->inter)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_remote_group");
    if (group == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_remote_group");
    if ((rc = mpii_group_of(c->size, c->world, group)) != MPI_SUCCESS)
        return mpii_err(comm, rc, "MPI_Comm_remote_group");
    return MPI_SUCCESS;
}

/* --- collectives ---------------------------------------------------- */

#define TAG_BARRIER 1
#define TAG_BCAST 2
#define TAG_REDUCE 3
#define TAG_ALLREDUCE 4

int
mpii_comm_inter(MPI_Comm comm)
{
    struct mpii_comm *c = mpii_comm_get(comm);

    return c != NULL && c->inter;
}

/* The intercommunicator behind comm and its hidden local one. */
static int
inter_get(MPI_Comm comm, struct mpii_comm **ic, struct mpii_comm **lc)
{
    if ((*ic = mpii_comm_get(comm)) == NULL || !(*ic)->inter ||
        (*lc = mpii_comm_get((*ic)->lcomm)) == NULL)
        return MPI_ERR_COMM;
    return MPI_SUCCESS;
}

int
mpii_inter_barrier(MPI_Comm comm)
{
    static const char fn[] = "MPI_Barrier";
    struct mpii_comm *ic, *lc;
    int rc, one = 1, got = 0;

    if ((rc = inter_get(comm, &ic, &lc)) != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, fn);
    /* Everyone here is in; the leaders tell each other; then out. */
    rc = PMPI_Barrier(lc->handle);
    if (rc == MPI_SUCCESS && ic->rank == 0)
        rc = swap(ic, 0, &one, 1, &got, 1, TAG_BARRIER);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Bcast(&got, 1, MPI_INT, 0, lc->handle);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

int
mpii_inter_bcast(void *buf, int count, MPI_Datatype dt, int root,
                 MPI_Comm comm)
{
    static const char fn[] = "MPI_Bcast";
    struct mpii_comm *ic, *lc;
    int rc;

    if ((rc = inter_get(comm, &ic, &lc)) != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, fn);
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) /* to the other group's leader, who spreads it */
        rc = mpii_send(buf, count, dt, 0, TAG_BCAST, ic,
                       ic->ctx + MPII_CTX_COLL);
    else if (root < 0 || root >= ic->size)
        rc = MPI_ERR_ROOT;
    else {
        if (ic->rank == 0)
            rc = mpii_recv(buf, count, dt, root, TAG_BCAST, ic,
                           ic->ctx + MPII_CTX_COLL, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Bcast(buf, count, dt, 0, lc->handle);
    }
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

/* A buffer for count elements of dt laid out as the user's would be. */
void *
mpii_type_buf(int count, MPI_Datatype dt, void **base)
{
    const struct mpii_type *t = mpii_type_get(dt);
    MPI_Aint ext, lb, tlb, text;
    size_t n;

    *base = NULL;
    if (t == NULL || count < 0)
        return NULL;
    ext = mpii_type_extent(t);
    lb = mpii_type_lb(t);
    PMPI_Type_get_true_extent(dt, &tlb, &text);
    if (ext < 0 || text < 0)
        return NULL;
    n = (size_t)(count > 0 ? (count - 1) : 0) * (size_t)ext + (size_t)text +
        (size_t)(lb > tlb ? lb - tlb : tlb - lb) + 1;
    if ((*base = malloc(n)) == NULL)
        return NULL;
    /* The element origin, so that the data starts at base. */
    return (char *)((uintptr_t)*base - (uintptr_t)tlb);
}

int
mpii_inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                  MPI_Op op, int root, MPI_Comm comm)
{
    static const char fn[] = "MPI_Reduce";
    struct mpii_comm *ic, *lc;
    void *tmp = NULL, *base = NULL;
    int rc = MPI_SUCCESS;

    if ((rc = inter_get(comm, &ic, &lc)) != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, fn);
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT) {
        rc = mpii_recv(rbuf, count, dt, 0, TAG_REDUCE, ic,
                       ic->ctx + MPII_CTX_COLL, MPI_STATUS_IGNORE);
        return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
    }
    if (root < 0 || root >= ic->size)
        return mpii_err(comm, MPI_ERR_ROOT, fn);
    /* The sending group reduces to its leader, who sends to the root. */
    if (ic->rank == 0 && (tmp = mpii_type_buf(count, dt, &base)) == NULL)
        rc = mpii_type_get(dt) != NULL ? MPI_ERR_NO_MEM : MPI_ERR_TYPE;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Reduce(sbuf, tmp, count, dt, op, 0, lc->handle);
    if (rc == MPI_SUCCESS && ic->rank == 0)
        rc = mpii_send(tmp, count, dt, root, TAG_REDUCE, ic,
                       ic->ctx + MPII_CTX_COLL);
    free(base);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

int
mpii_inter_allreduce(const void *sbuf, void *rbuf, int count,
                     MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    static const char fn[] = "MPI_Allreduce";
    struct mpii_comm *ic, *lc;
    void *tmp = NULL, *base = NULL;
    MPI_Request req;
    int rc = MPI_SUCCESS;

    if ((rc = inter_get(comm, &ic, &lc)) != MPI_SUCCESS)
        return mpii_err(MPI_COMM_WORLD, rc, fn);
    if (sbuf == MPI_IN_PLACE)
        return mpii_err(comm, MPI_ERR_BUFFER, fn);
    /* Each group reduces to its leader; the leaders swap; each leader
     * spreads the other group's result. */
    if (ic->rank == 0 && (tmp = mpii_type_buf(count, dt, &base)) == NULL)
        rc = mpii_type_get(dt) != NULL ? MPI_ERR_NO_MEM : MPI_ERR_TYPE;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Reduce(sbuf, tmp, count, dt, op, 0, lc->handle);
    if (rc == MPI_SUCCESS && ic->rank == 0) {
        rc = mpii_isend(tmp, count, dt, 0, TAG_ALLREDUCE, ic,
                        ic->ctx + MPII_CTX_COLL, MPII_SEND_STANDARD, &req);
        if (rc == MPI_SUCCESS) {
            rc = mpii_recv(rbuf, count, dt, 0, TAG_ALLREDUCE, ic,
                           ic->ctx + MPII_CTX_COLL, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = mpii_wait(&req, MPI_STATUS_IGNORE);
            else
                mpii_wait(&req, MPI_STATUS_IGNORE);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Bcast(rbuf, count, dt, 0, lc->handle);
    free(base);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

/* --- Comm_split over an intercommunicator ---------------------------- */

/* The world ranks of the members of one side (n (color, key) pairs,
 * world ranks in world) with this color, in key order, into out; how
 * many; *me gets our position when mine is our rank there (else -1). */
static int
split_side(const int *ck, int n, const int *world, int color, int mine,
           int *out, int *me)
{
    struct mpii_member *m = malloc((size_t)(n > 0 ? n : 1) * sizeof *m);
    int i, k = 0;

    if (m == NULL)
        return -1;
    for (i = 0; i < n; i++)
        if (ck[2 * i] == color) {
            m[k].key = ck[2 * i + 1];
            m[k].rank = i;
            k++;
        }
    qsort(m, (size_t)k, sizeof *m, mpii_member_cmp);
    *me = -1;
    for (i = 0; i < k; i++) {
        out[i] = world[m[i].rank];
        if (m[i].rank == mine)
            *me = i;
    }
    free(m);
    return k;
}

/* A new intercommunicator (context ctx, its local part ctx + 2) of the
 * nl local world ranks lw (we are local rank me) and nr remote ones rw. */
int
mpii_inter_build(const int *lw, int nl, int me, const int *rw, int nr,
            uint32_t ctx, MPI_Errhandler errh, MPI_Comm *out)
{
    struct mpii_comm *n, *l;

    if ((l = mpii_comm_new(nl)) == NULL)
        return MPI_ERR_NO_MEM;
    memcpy(l->world, lw, (size_t)nl * sizeof *lw);
    l->rank = me;
    l->ctx = ctx + 2;
    l->errh = MPI_ERRORS_RETURN;
    if ((n = mpii_comm_new(nr)) == NULL ||
        (n->lworld = malloc((size_t)nl * sizeof *n->lworld)) == NULL) {
        if (n != NULL)
            mpii_comm_drop(n);
        mpii_comm_drop(l);
        return MPI_ERR_NO_MEM;
    }
    memcpy(n->world, rw, (size_t)nr * sizeof *rw);
    memcpy(n->lworld, lw, (size_t)nl * sizeof *lw);
    n->inter = 1;
    n->lsize = nl;
    n->rank = me;
    n->ctx = ctx;
    n->errh = errh;
    n->lcomm = l->handle;
    *out = n->handle;
    return MPI_SUCCESS;
}

int
mpii_inter_split(struct mpii_comm *ic, int color, int key, MPI_Comm *out)
{
    struct mpii_comm tmp, *w = mpii_comm_get(MPI_COMM_WORLD);
    int t = MPII_TAG_ISPLIT;
    int mine[3], *all = NULL, *msg = NULL, *lw = NULL, *rw = NULL, cap, i;
    int rc, nl, nr, me, dummy;

    *out = MPI_COMM_NULL;
    if (w == NULL)
        return MPI_ERR_COMM;
    local_view(ic, &tmp);
    cap = 2 + 2 * w->size; /* [ctx, size, (color, key)...] */
    all = malloc((size_t)ic->lsize * 3 * sizeof *all);
    msg = malloc((size_t)cap * sizeof *msg);
    lw = malloc((size_t)(ic->lsize + ic->size) * sizeof *lw);
    if (all == NULL || msg == NULL || lw == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rw = lw + ic->lsize;
    /* 1. Every member's color, key and highest unused id, in the group. */
    mine[0] = color;
    mine[1] = key;
    mine[2] = (int)mpii_comm_propose_ctx();
    if ((rc = mpii_comm_exchange(&tmp, mine, 3, all, t | 1)) != MPI_SUCCESS)
        goto out;
    /* 2. The leaders swap [highest id, size, (color, key)...]. */
    if (ic->rank == 0) {
        int *mylist = malloc((size_t)(2 + 2 * ic->lsize) * sizeof *mylist);

        if (mylist == NULL) {
            rc = MPI_ERR_NO_MEM;
            goto out;
        }
        mylist[0] = max_first(all + 2, ic->lsize, 3);
        mylist[1] = ic->lsize;
        for (i = 0; i < ic->lsize; i++) {
            mylist[2 + 2 * i] = all[3 * i];
            mylist[3 + 2 * i] = all[3 * i + 1];
        }
        rc = swap(ic, 0, mylist, 2 + 2 * ic->lsize, msg, cap, t | 2);
        if (rc == MPI_SUCCESS && msg[0] < mylist[0])
            msg[0] = mylist[0];
        free(mylist);
        if (rc == MPI_SUCCESS && msg[1] != ic->size)
            rc = MPI_ERR_INTERN;
        if (rc != MPI_SUCCESS)
            goto out;
    }
    /* 3. The leader hands [id, size, the other group's list] out. */
    if ((rc = hand_out(&tmp, 0, msg, ic->rank == 0 ? 2 + 2 * ic->size : 0,
                       cap, t | 3)) != MPI_SUCCESS)
        goto out;
    mpii_comm_ctx_used((uint32_t)msg[0] + 2);
    if (color == MPI_UNDEFINED)
        goto out;
    /* 4. Our color on both sides, in key order. */
    for (i = 0; i < ic->lsize; i++) { /* (color, key) pairs in place */
        all[2 * i] = all[3 * i];
        all[2 * i + 1] = all[3 * i + 1];
    }
    nl = split_side(all, ic->lsize, ic->lworld, color, ic->rank, lw, &me);
    nr = split_side(msg + 2, ic->size, ic->world, color, -1, rw, &dummy);
    if (nl < 0 || nr < 0)
        rc = MPI_ERR_NO_MEM;
    else if (nl > 0 && nr > 0) /* else no intercommunicator: NULL */
        rc = mpii_inter_build(lw, nl, me, rw, nr, (uint32_t)msg[0], ic->errh,
                              out);
out:
    free(all);
    free(msg);
    free(lw);
    return rc;
}
