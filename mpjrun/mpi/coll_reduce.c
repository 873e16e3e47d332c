/*
 * coll_reduce.c: the reducing collectives (Reduce, Allreduce,
 * Reduce_scatter(_block), Scan, Exscan), on the communicator's private
 * collective context like those of coll.c.
 *
 * Operands are combined in working buffers.  For a builtin operation the
 * working form is an array of the datatype's builtin element (a vector
 * of MPI_INT becomes so many MPI_INT, compact), so that messages are
 * contiguous and the operation runs on whole arrays; a user operation
 * works on the user's own layout and datatype.  A non-commutative
 * operation always combines lower ranks on the left: the result is
 * x0 op x1 op ... op x(p-1).
 *
 * Algorithms (p ranks, n bytes):
 *   Reduce     binomial tree (rooted at 0 and forwarded, for a
 *              non-commutative op with another root); above 64 KiB with
 *              a commutative op on 5+ ranks, a ring reduce-scatter then
 *              a gather of the blocks at the root (on up to 4 ranks the
 *              tree's two steps beat the ring's p: 1 MiB on 3 ranks
 *              540 us against 670, on 4 ranks sharing 2 cores 800
 *              against 1180)
 *   Allreduce  recursive doubling, the p - 2^k extra ranks folded into
 *              their neighbours first; above 64 KiB with a commutative
 *              op, a ring reduce-scatter then a ring allgather
 *   Reduce_scatter  ring reduce-scatter (commutative), else a reduce to
 *              rank 0 and a linear scatter
 *   Scan, Exscan    recursive doubling
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

enum {
    TAG_REDUCE = 32,
    TAG_REDUCE_GATHER,
    TAG_ALLREDUCE,
    TAG_ALLREDUCE_GATHER,
    TAG_RSCATTER,
    TAG_RSCATTER_SEND,
    TAG_SCAN,
    TAG_EXSCAN,
};

#define CTX(c) ((c)->ctx + MPII_CTX_COLL)
#define RED_LONG (64 * 1024) /* bytes: ring algorithms above this */
#define RED_TREE_P 4         /* ranks: Reduce keeps the tree up to this */

/* How a reduction on (datatype, op) works on its operands. */
struct red {
    MPI_Op op;
    int commute;
    MPI_Datatype utype; /* the user's datatype */
    const struct mpii_type *ut;
    MPI_Datatype wtype; /* the working element */
    const struct mpii_type *wt;
    size_t per;   /* working elements in one user element */
    size_t wext;  /* bytes between working elements */
    MPI_Aint wlb; /* working buffers start at base + wlb */
    int direct;   /* user buffers can be copied as they are */
    int staged;   /* user <-> working goes through a packed copy */
};

static int
red_builtin_op(MPI_Op op)
{
    return op >= P2P_OP(1) && op <= P2P_OP(P2P_OP_BUILTIN_MAX);
}

/* Describes a reduction; MPI_ERR_TYPE or MPI_ERR_OP when invalid. */
static int
red_setup(struct red *rd, MPI_Datatype dt, MPI_Op op)
{
    MPI_Datatype b = MPI_DATATYPE_NULL;
    size_t per = 0;

    memset(rd, 0, sizeof *rd);
    if ((rd->ut = mpii_type_get(dt)) == NULL)
        return MPI_ERR_TYPE;
    if ((rd->commute = mpii_op_commutative(op)) < 0)
        return MPI_ERR_OP;
    rd->op = op;
    rd->utype = dt;
    if (red_builtin_op(op)) {
        if (dt >= P2P_DT(1) && dt <= P2P_DT(P2P_DT_BUILTIN_MAX)) {
            b = dt;
            per = 1;
        } else {
            b = mpii_type_basic(rd->ut, &per);
        }
    }
    if (b != MPI_DATATYPE_NULL && per > 0 &&
        (rd->wt = mpii_type_get(b)) != NULL) {
        rd->wtype = b;
        rd->per = per;
        rd->wext = (size_t)mpii_type_extent(rd->wt);
        rd->wlb = 0;
        rd->direct = b == dt;
        rd->staged = mpii_type_size(rd->wt) != rd->wext;
    } else {
        /* The user's layout; only the data moves, never the holes. */
        rd->wtype = dt;
        rd->wt = rd->ut;
        rd->per = 1;
        rd->wext = (size_t)mpii_type_extent(rd->ut);
        rd->wlb = mpii_type_lb(rd->ut);
        rd->direct = mpii_type_contiguous(rd->ut);
        rd->staged = 1;
    }
    if (red_builtin_op(op)) {
        /* Is the op defined on this type?  Asked now, before any message,
         * so that every rank reports it alike. */
        char dummy[1];

        if (mpii_op_apply(op, dummy, dummy, 0, rd->wtype) != MPI_SUCCESS)
            return MPI_ERR_OP;
    }
    return MPI_SUCCESS;
}

/* A working buffer for n elements: the returned base is what messages
 * and operations use; *mem is what to free. */
static char *
red_alloc(const struct red *rd, size_t n, char **mem)
{
    if ((*mem = malloc(n * rd->wext + 1)) == NULL)
        return NULL;
    return *mem - rd->wlb;
}

/* Working buffers kept from one call to the next, one per role (the
 * accumulator, the received operand): a fresh buffer above glibc's mmap
 * threshold is mapped and unmapped on every call, and its page faults
 * cost more than the reduction (4 ranks on 2 cores, 1 MiB Reduce:
 * ~500 us of ~2250).  Each is kept up to KEEP_MAX bytes and freed by
 * MPI_Finalize; blocking reductions do not nest, so a role has one user
 * at a time.  Under MPI_THREAD_MULTIPLE they may run in several threads
 * at once (each on a communicator of its own): nothing is kept then. */
#define KEEP_MAX (16u << 20)
enum { KEEP_ACC, KEEP_TMP, KEEP_N };
static struct {
    char *mem;
    size_t cap;
} kept[KEEP_N];

/* A working buffer for n elements in role k: kept when it fits (then
 * *mem is NULL), else as red_alloc. */
static char *
red_keep(const struct red *rd, size_t n, int k, char **mem)
{
    size_t bytes = n * rd->wext + 1;

    if (bytes > KEEP_MAX || mpii_mt)
        return red_alloc(rd, n, mem);
    *mem = NULL;
    if (kept[k].cap < bytes) {
        free(kept[k].mem);
        kept[k].cap = 0;
        if ((kept[k].mem = malloc(bytes)) == NULL)
            return NULL;
        kept[k].cap = bytes;
    }
    return kept[k].mem - rd->wlb;
}

void
mpii_red_fini(void)
{
    for (int k = 0; k < KEEP_N; k++) {
        free(kept[k].mem);
        kept[k].mem = NULL;
        kept[k].cap = 0;
    }
}

/* Element i of a working buffer. */
static char *
red_at(const struct red *rd, const char *base, size_t i)
{
    return (char *)base + i * rd->wext;
}

/* Copies count user elements at ubuf into the working buffer w. */
static int
red_load(const struct red *rd, const void *ubuf, int count, char *w)
{
    size_t n = (size_t)count * rd->per, bytes;
    void *stage;

    if (rd->direct) {
        if (n > 0 && w != ubuf)
            memcpy(w + rd->wlb, (const char *)ubuf + rd->wlb, n * rd->wext);
        return MPI_SUCCESS;
    }
    bytes = (size_t)count * mpii_type_size(rd->ut);
    if (!rd->staged) {
        mpii_pack(ubuf, count, rd->ut, w);
        return MPI_SUCCESS;
    }
    if ((stage = malloc(bytes + 1)) == NULL)
        return MPI_ERR_NO_MEM;
    mpii_pack(ubuf, count, rd->ut, stage);
    mpii_unpack(stage, bytes, w, (int)n, rd->wt);
    free(stage);
    return MPI_SUCCESS;
}

/* Copies count user elements' worth of the working buffer w to ubuf. */
static int
red_store(const struct red *rd, const char *w, void *ubuf, int count)
{
    size_t n = (size_t)count * rd->per, bytes;
    void *stage;

    if (rd->direct) {
        if (n > 0 && w != ubuf)
            memcpy((char *)ubuf + rd->wlb, w + rd->wlb, n * rd->wext);
        return MPI_SUCCESS;
    }
    bytes = (size_t)count * mpii_type_size(rd->ut);
    if (!rd->staged) {
        mpii_unpack(w, bytes, ubuf, count, rd->ut);
        return MPI_SUCCESS;
    }
    if ((stage = malloc(bytes + 1)) == NULL)
        return MPI_ERR_NO_MEM;
    mpii_pack(w, (int)n, rd->wt, stage);
    mpii_unpack(stage, bytes, ubuf, count, rd->ut);
    free(stage);
    return MPI_SUCCESS;
}

/* inout = in op inout over n working elements. */
static int
red_apply(const struct red *rd, const char *in, char *inout, size_t n)
{
    return n == 0 ? MPI_SUCCESS
                  : mpii_op_apply(rd->op, in, inout, (int)n, rd->wtype);
}

/* Folds a received operand into the accumulator: *acc holds lower
 * ranks' data than *tmp when acc_lower, else higher.  The result is in
 * *acc (the two pointers may be swapped). */
static int
red_fold(const struct red *rd, char **acc, char **tmp, size_t n, int acc_lower)
{
    char *t;
    int err;

    if (!acc_lower || rd->commute)
        return red_apply(rd, *tmp, *acc, n);
    if ((err = red_apply(rd, *acc, *tmp, n)) != MPI_SUCCESS)
        return err;
    t = *acc;
    *acc = *tmp;
    *tmp = t;
    return MPI_SUCCESS;
}

/* Sends sn working elements to dst while receiving rn from src (the
 * receive posted first, so that the message lands in place; both
 * requests are always completed). */
static int
red_sendrecv(const struct red *rd, const char *sbuf, size_t sn, int dst,
             char *rbuf, size_t rn, int src, int tag, struct mpii_comm *c)
{
    MPI_Request rreq, sreq;
    int err, err2;

    err = mpii_irecv(rbuf, (int)rn, rd->wtype, src, tag, c, CTX(c), &rreq);
    if (err != MPI_SUCCESS)
        return err;
    err = mpii_isend(sbuf, (int)sn, rd->wtype, dst, tag, c, CTX(c),
                     MPII_SEND_STANDARD, &sreq);
    err2 = mpii_wait(&rreq, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS) {
        err = err2;
        err2 = mpii_wait(&sreq, MPI_STATUS_IGNORE);
    }
    return err != MPI_SUCCESS ? err : err2;
}

/* Validates the common arguments of a reduction: count, datatype, op
 * and the send buffer (MPI_IN_PLACE allowed when inplace_ok). */
static int
red_check(const void *sbuf, const void *rbuf, int count, MPI_Datatype dt,
          MPI_Op op, int inplace_ok, int need_rbuf, struct red *rd)
{
    int err;

    if (count < 0)
        return MPI_ERR_COUNT;
    if ((err = red_setup(rd, dt, op)) != MPI_SUCCESS)
        return err;
    if (count == 0 || mpii_type_size(rd->ut) == 0)
        return MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE && !inplace_ok)
        return MPI_ERR_BUFFER;
    if (sbuf == NULL || (need_rbuf && (rbuf == NULL || rbuf == MPI_IN_PLACE)))
        return MPI_ERR_BUFFER;
    if (need_rbuf && sbuf == rbuf)
        return MPI_ERR_BUFFER;
    if ((long long)count * (long long)rd->per > INT_MAX)
        return MPI_ERR_COUNT;
    return MPI_SUCCESS;
}

/* Working elements in count user elements (0 for an empty type). */
static size_t
red_count(const struct red *rd, int count)
{
    return mpii_type_size(rd->ut) == 0 ? 0 : (size_t)count * rd->per;
}

/* Block b of n elements cut evenly into p blocks. */
static void
red_block(size_t n, int p, int b, size_t *off, size_t *cnt)
{
    size_t q = n / p, rm = n % p, ub = (size_t)b;

    *off = ub * q + (ub < rm ? ub : rm);
    *cnt = q + (ub < rm ? 1 : 0);
}

/* Offsets and counts of the p blocks: even, or recvcounts[i] user
 * elements each when counts is non-NULL.  Returns the two arrays in one
 * allocation. */
static size_t *
red_blocks(const struct red *rd, size_t n, const int *counts, int p)
{
    size_t *v = malloc(2 * (size_t)p * sizeof *v), off = 0;

    if (v == NULL)
        return NULL;
    for (int i = 0; i < p; i++) {
        if (counts == NULL) {
            red_block(n, p, i, &v[i], &v[p + i]);
        } else {
            v[i] = off;
            v[p + i] = (size_t)counts[i] * rd->per;
            off += v[p + i];
        }
    }
    return v;
}

/* Ring reduce-scatter: at step s, block r - s - 1 goes right while block
 * r - s - 2 comes from the left and is folded in; after p - 1 steps
 * block r of acc holds the full reduction.  tmp holds a block. */
static int
ring_reduce_scatter(const struct red *rd, char *acc, char *tmp,
                    const size_t *blk, int tag, struct mpii_comm *c)
{
    int p = c->size, r = c->rank, err;

    for (int s = 0; s < p - 1; s++) {
        int sb = (r - s - 1 + 2 * p) % p, rb = (r - s - 2 + 2 * p) % p;

        err =
            red_sendrecv(rd, red_at(rd, acc, blk[sb]), blk[p + sb], (r + 1) % p,
                         tmp, blk[p + rb], (r - 1 + p) % p, tag, c);
        if (err == MPI_SUCCESS)
            err = red_apply(rd, tmp, red_at(rd, acc, blk[rb]), blk[p + rb]);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Ring allgather of the blocks of acc (block r is mine). */
static int
ring_allgather(const struct red *rd, char *acc, const size_t *blk, int tag,
               struct mpii_comm *c)
{
    int p = c->size, r = c->rank, err;

    for (int s = 0; s < p - 1; s++) {
        int sb = (r - s + p) % p, rb = (r - s - 1 + 2 * p) % p;

        err = red_sendrecv(rd, red_at(rd, acc, blk[sb]), blk[p + sb],
                           (r + 1) % p, red_at(rd, acc, blk[rb]), blk[p + rb],
                           (r - 1 + p) % p, tag, c);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Whether this rank folds a child's operand in reduce_tree (a leaf
 * only sends its own). */
static int
reduce_tree_folds(const struct red *rd, int root, const struct mpii_comm *c)
{
    int p = c->size, top = rd->commute ? root : 0;
    int vr = (c->rank - top + p) % p;

    return vr % 2 == 0 && vr + 1 < p;
}

/* Binomial reduce of n working elements to root; *acc holds my operand
 * and, at the root, ends holding the result (acc and tmp may swap).
 * With src (only at the root, when it is the top of the tree), my
 * operand is there instead and *acc holds nothing yet. */
static int
reduce_tree(const struct red *rd, char **acc, char **tmp, const char *src,
            size_t n, int root, struct mpii_comm *c)
{
    int p = c->size, top = rd->commute ? root : 0;
    int vr = (c->rank - top + p) % p, err;

    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            err = mpii_send(*acc, (int)n, rd->wtype, (vr - mask + top) % p,
                            TAG_REDUCE, c, CTX(c));
            if (err != MPI_SUCCESS)
                return err;
            break;
        }
        if (vr + mask >= p)
            continue;
        err = mpii_recv(src != NULL ? *acc : *tmp, (int)n, rd->wtype,
                        (vr + mask + top) % p, TAG_REDUCE, c, CTX(c),
                        MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS && src != NULL)
            err = red_apply(rd, src, *acc, n); /* acc = mine op child's */
        else if (err == MPI_SUCCESS)
            err = red_fold(rd, acc, tmp, n, 1);
        src = NULL;
        if (err != MPI_SUCCESS)
            return err;
    }
    if (top == root)
        return MPI_SUCCESS;
    if (c->rank == top)
        return mpii_send(*acc, (int)n, rd->wtype, root, TAG_REDUCE, c, CTX(c));
    if (c->rank == root)
        return mpii_recv(*acc, (int)n, rd->wtype, top, TAG_REDUCE, c, CTX(c),
                         MPI_STATUS_IGNORE);
    return MPI_SUCCESS;
}

/* Long commutative reduce: ring reduce-scatter, then every rank sends
 * its finished block to the root. */
static int
reduce_long(const struct red *rd, char *acc, char *tmp, size_t n, int root,
            struct mpii_comm *c)
{
    MPI_Request *reqs;
    size_t *blk;
    int p = c->size, err, nreq = 0, err2;

    if ((blk = red_blocks(rd, n, NULL, p)) == NULL)
        return MPI_ERR_NO_MEM;
    err = ring_reduce_scatter(rd, acc, tmp, blk, TAG_REDUCE, c);
    if (err != MPI_SUCCESS || c->rank != root) {
        if (err == MPI_SUCCESS)
            err =
                mpii_send(red_at(rd, acc, blk[c->rank]), (int)blk[p + c->rank],
                          rd->wtype, root, TAG_REDUCE_GATHER, c, CTX(c));
        free(blk);
        return err;
    }
    if ((reqs = malloc((size_t)p * sizeof *reqs)) == NULL) {
        free(blk);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < p && err == MPI_SUCCESS; i++) {
        if (i == root)
            continue;
        err = mpii_irecv(red_at(rd, acc, blk[i]), (int)blk[p + i], rd->wtype, i,
                         TAG_REDUCE_GATHER, c, CTX(c), &reqs[nreq]);
        if (err == MPI_SUCCESS)
            nreq++;
    }
    err2 = nreq > 0 ? mpii_waitall(nreq, reqs, MPI_STATUSES_IGNORE) : 0;
    free(reqs);
    free(blk);
    return err != MPI_SUCCESS ? err : err2;
}

#pragma weak MPI_Reduce = PMPI_Reduce
int
PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
            int root, MPI_Comm comm)
{
    MPII_ENTER;
    struct mpii_comm *c;
    struct red rd;
    char *m1 = NULL, *m2 = NULL, *acc, *tmp;
    size_t n;
    const char *src;
    int err, isroot, longalg, folds;

    MPII_CHECK_INIT("MPI_Reduce");
    if (mpii_comm_inter(comm))
        return mpii_inter_reduce(sbuf, rbuf, count, dt, op, root, comm);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Reduce");
    if (root < 0 || root >= c->size)
        return mpii_err(comm, MPI_ERR_ROOT, "MPI_Reduce");
    isroot = c->rank == root;
    err = red_check(sbuf, rbuf, count, dt, op, isroot, isroot, &rd);
    if (err != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Reduce");
    n = red_count(&rd, count);
    if (n == 0)
        return MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    longalg = rd.commute && n * mpii_type_size(rd.wt) > RED_LONG &&
              n >= (size_t)c->size && c->size > RED_TREE_P;
    folds = longalg || reduce_tree_folds(&rd, root, c);
    /* Fresh working buffers cost a copy and, at this size, page faults:
     * the root accumulates in its receive buffer and a leaf of the tree
     * sends its operand as it is, as Allreduce does. */
    if (rd.direct && (isroot || !folds))
        acc = isroot ? rbuf : (char *)sbuf;
    else
        acc = red_keep(&rd, n, KEEP_ACC, &m1);
    /* The tree's root, combining in its receive buffer, receives its
     * first child's operand there and folds its own in: no copy of its
     * operand (it is the lower one of the two, as the order wants). */
    src = !longalg && isroot && rd.direct && sbuf != rbuf && c->size > 1 &&
                  (rd.commute || root == 0)
              ? sbuf
              : NULL;
    tmp = folds ? red_keep(&rd, n, KEEP_TMP, &m2) : NULL;
    if (acc == NULL || (folds && tmp == NULL)) {
        err = MPI_ERR_NO_MEM;
        goto done;
    }
    if (src == NULL && (err = red_load(&rd, sbuf, count, acc)) != MPI_SUCCESS)
        goto done;
    if (longalg)
        err = reduce_long(&rd, acc, tmp, n, root, c);
    else
        err = reduce_tree(&rd, &acc, &tmp, src, n, root, c);
    if (err == MPI_SUCCESS && isroot)
        err = red_store(&rd, acc, rbuf, count);
done:
    free(m1);
    free(m2);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Reduce") : 0;
}

/* Recursive doubling allreduce of n working elements in *acc; the
 * first 2 * (p - 2^k) ranks pair up, the even one handing its operand
 * to the odd one, which takes part for both. */
static int
allreduce_rd(const struct red *rd, char **acc, char **tmp, size_t n,
             struct mpii_comm *c)
{
    int p = c->size, r = c->rank, pof2 = 1, rem, vr, err;

    while (pof2 * 2 <= p)
        pof2 *= 2;
    rem = p - pof2;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            err = mpii_send(*acc, (int)n, rd->wtype, r + 1, TAG_ALLREDUCE, c,
                            CTX(c));
            vr = -1;
        } else {
            err = mpii_recv(*tmp, (int)n, rd->wtype, r - 1, TAG_ALLREDUCE, c,
                            CTX(c), MPI_STATUS_IGNORE);
            if (err == MPI_SUCCESS)
                err = red_fold(rd, acc, tmp, n, 0);
            vr = r / 2;
        }
        if (err != MPI_SUCCESS)
            return err;
    } else {
        vr = r - rem;
    }
    for (int mask = 1; vr >= 0 && mask < pof2; mask <<= 1) {
        int vd = vr ^ mask, dst = vd < rem ? vd * 2 + 1 : vd + rem;

        err = red_sendrecv(rd, *acc, n, dst, *tmp, n, dst, TAG_ALLREDUCE, c);
        if (err == MPI_SUCCESS)
            err = red_fold(rd, acc, tmp, n, dst > r);
        if (err != MPI_SUCCESS)
            return err;
    }
    if (r < 2 * rem) {
        if (r % 2 == 1)
            return mpii_send(*acc, (int)n, rd->wtype, r - 1, TAG_ALLREDUCE, c,
                             CTX(c));
        return mpii_recv(*acc, (int)n, rd->wtype, r + 1, TAG_ALLREDUCE, c,
                         CTX(c), MPI_STATUS_IGNORE);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Allreduce = PMPI_Allreduce
int
PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
               MPI_Op op, MPI_Comm comm)
{
    MPII_ENTER;
    struct mpii_comm *c;
    struct red rd;
    char *m1 = NULL, *m2 = NULL, *acc, *tmp;
    size_t n, *blk;
    int err;

    MPII_CHECK_INIT("MPI_Allreduce");
    if (mpii_comm_inter(comm))
        return mpii_inter_allreduce(sbuf, rbuf, count, dt, op, comm);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Allreduce");
    err = red_check(sbuf, rbuf, count, dt, op, 1, 1, &rd);
    if (err != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Allreduce");
    n = red_count(&rd, count);
    if (n == 0)
        return MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    /* With the user's layout, the receive buffer is the accumulator. */
    acc = rd.direct ? rbuf : red_keep(&rd, n, KEEP_ACC, &m1);
    if (acc == NULL || (tmp = red_keep(&rd, n, KEEP_TMP, &m2)) == NULL) {
        err = MPI_ERR_NO_MEM;
        goto done;
    }
    if ((err = red_load(&rd, sbuf, count, acc)) != MPI_SUCCESS)
        goto done;
    if (c->size == 1) {
        /* nothing to combine */
    } else if (rd.commute && n * mpii_type_size(rd.wt) > RED_LONG &&
               n >= (size_t)c->size) {
        if ((blk = red_blocks(&rd, n, NULL, c->size)) == NULL) {
            err = MPI_ERR_NO_MEM;
            goto done;
        }
        err = ring_reduce_scatter(&rd, acc, tmp, blk, TAG_ALLREDUCE, c);
        if (err == MPI_SUCCESS)
            err = ring_allgather(&rd, acc, blk, TAG_ALLREDUCE_GATHER, c);
        free(blk);
    } else {
        err = allreduce_rd(&rd, &acc, &tmp, n, c);
    }
    if (err == MPI_SUCCESS)
        err = red_store(&rd, acc, rbuf, count);
done:
    free(m1);
    free(m2);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Allreduce") : 0;
}

/* Reduce_scatter with counts[i] user elements for rank i. */
static int
reduce_scatter(const void *sbuf, void *rbuf, const int counts[],
               MPI_Datatype dt, MPI_Op op, struct mpii_comm *c)
{
    struct red rd;
    char *m1 = NULL, *m2 = NULL, *acc, *tmp;
    size_t n = 0, *blk = NULL;
    long long total = 0;
    int err, err2, p = c->size, r = c->rank, nreq = 0;
    MPI_Request *reqs = NULL;

    if (counts == NULL)
        return MPI_ERR_ARG;
    for (int i = 0; i < p; i++) {
        if (counts[i] < 0)
            return MPI_ERR_COUNT;
        total += counts[i];
    }
    if (total > INT_MAX)
        return MPI_ERR_COUNT;
    err = red_check(sbuf, rbuf, (int)total, dt, op, 1,
                    counts[r] > 0 || sbuf == MPI_IN_PLACE, &rd);
    if (err != MPI_SUCCESS)
        return err;
    n = red_count(&rd, (int)total);
    if (n == 0)
        return MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    if ((blk = red_blocks(&rd, n, counts, p)) == NULL ||
        (acc = red_alloc(&rd, n, &m1)) == NULL ||
        (tmp = red_alloc(&rd, n, &m2)) == NULL) {
        err = MPI_ERR_NO_MEM;
        goto done;
    }
    if ((err = red_load(&rd, sbuf, (int)total, acc)) != MPI_SUCCESS)
        goto done;
    if (rd.commute) {
        err = ring_reduce_scatter(&rd, acc, tmp, blk, TAG_RSCATTER, c);
        if (err == MPI_SUCCESS)
            err = red_store(&rd, red_at(&rd, acc, blk[r]), rbuf, counts[r]);
        goto done;
    }
    /* Keep the operand order: reduce all to rank 0, then scatter. */
    if ((err = reduce_tree(&rd, &acc, &tmp, NULL, n, 0, c)) != MPI_SUCCESS)
        goto done;
    if (r != 0) {
        err = mpii_recv(acc, (int)blk[p + r], rd.wtype, 0, TAG_RSCATTER_SEND, c,
                        CTX(c), MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS)
            err = red_store(&rd, acc, rbuf, counts[r]);
        goto done;
    }
    if ((reqs = malloc((size_t)p * sizeof *reqs)) == NULL) {
        err = MPI_ERR_NO_MEM;
        goto done;
    }
    for (int i = 1; i < p && err == MPI_SUCCESS; i++) {
        err = mpii_isend(red_at(&rd, acc, blk[i]), (int)blk[p + i], rd.wtype, i,
                         TAG_RSCATTER_SEND, c, CTX(c), MPII_SEND_STANDARD,
                         &reqs[nreq]);
        if (err == MPI_SUCCESS)
            nreq++;
    }
    if (err == MPI_SUCCESS)
        err = red_store(&rd, acc, rbuf, counts[0]);
    err2 = nreq > 0 ? mpii_waitall(nreq, reqs, MPI_STATUSES_IGNORE) : 0;
    if (err == MPI_SUCCESS)
        err = err2;
done:
    free(reqs);
    free(blk);
    free(m1);
    free(m2);
    return err;
}

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
int
PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
                    MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    MPII_ENTER;
    struct mpii_comm *c;
    int err;

    MPII_CHECK_INIT("MPI_Reduce_scatter");
    if (mpii_comm_inter(comm))
        return mpii_inter_reduce_scatter(sbuf, rbuf, rcounts, -1, dt, op, comm,
                                         "MPI_Reduce_scatter");
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Reduce_scatter");
    err = reduce_scatter(sbuf, rbuf, rcounts, dt, op, c);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Reduce_scatter") : 0;
}

#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
int
PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                          MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Reduce_scatter_block";
    struct mpii_comm *c;
    int err, *counts;

    MPII_CHECK_INIT("MPI_Reduce_scatter_block");
    if (mpii_comm_inter(comm))
        return mpii_inter_reduce_scatter(sbuf, rbuf, NULL, rcount, dt, op, comm,
                                         "MPI_Reduce_scatter_block");
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (rcount < 0)
        return mpii_err(comm, MPI_ERR_COUNT, fn);
    if ((counts = malloc((size_t)c->size * sizeof *counts)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < c->size; i++)
        counts[i] = rcount;
    err = reduce_scatter(sbuf, rbuf, counts, dt, op, c);
    free(counts);
    return err != MPI_SUCCESS ? mpii_err(comm, err, fn) : 0;
}

/* Recursive doubling scan: partial holds the reduction of my aligned
 * group so far, result that of ranks up to mine (exclusive: those
 * below mine, and *have says whether there are any). */
static int
scan_rd(const struct red *rd, char **partial, char **tmp, char *result,
        size_t n, int exclusive, int *have, struct mpii_comm *c)
{
    int r = c->rank, tag = exclusive ? TAG_EXSCAN : TAG_SCAN, err;

    for (int mask = 1; mask < c->size; mask <<= 1) {
        int dst = r ^ mask;

        if (dst >= c->size)
            continue;
        err = red_sendrecv(rd, *partial, n, dst, *tmp, n, dst, tag, c);
        if (err != MPI_SUCCESS)
            return err;
        if (dst < r) {
            /* tmp holds ranks below all of mine */
            if (exclusive && !*have) {
                memcpy(result + rd->wlb, *tmp + rd->wlb, n * rd->wext);
                *have = 1;
            } else if ((err = red_apply(rd, *tmp, result, n)) != MPI_SUCCESS) {
                return err;
            }
            err = red_apply(rd, *tmp, *partial, n);
        } else {
            err = red_fold(rd, partial, tmp, n, 1);
        }
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Scan (exclusive = 0) and Exscan (exclusive = 1). */
static int
scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
     MPI_Comm comm, int exclusive, const char *fn)
{
    struct mpii_comm *c;
    struct red rd;
    char *m1 = NULL, *m2 = NULL, *m3 = NULL, *partial, *tmp, *result;
    size_t n;
    int err, have = 0;

    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if ((err = red_check(sbuf, rbuf, count, dt, op, 1, 1, &rd)) != 0)
        return mpii_err(comm, err, fn);
    n = red_count(&rd, count);
    if (n == 0 || (exclusive && c->size == 1))
        return MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE)
        sbuf = rbuf;
    if ((partial = red_alloc(&rd, n, &m1)) == NULL ||
        (tmp = red_alloc(&rd, n, &m2)) == NULL ||
        (result = red_alloc(&rd, n, &m3)) == NULL) {
        err = MPI_ERR_NO_MEM;
        goto done;
    }
    if ((err = red_load(&rd, sbuf, count, partial)) != MPI_SUCCESS)
        goto done;
    if (!exclusive)
        memcpy(result + rd.wlb, partial + rd.wlb, n * rd.wext);
    err = scan_rd(&rd, &partial, &tmp, result, n, exclusive, &have, c);
    if (err == MPI_SUCCESS && (!exclusive || have))
        err = red_store(&rd, result, rbuf, count);
done:
    free(m1);
    free(m2);
    free(m3);
    return err != MPI_SUCCESS ? mpii_err(comm, err, fn) : 0;
}

#pragma weak MPI_Scan = PMPI_Scan
int
PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
          MPI_Comm comm)
{
    MPII_ENTER;
    MPII_CHECK_INIT("MPI_Scan");
    return scan(sbuf, rbuf, count, dt, op, comm, 0, "MPI_Scan");
}

#pragma weak MPI_Exscan = PMPI_Exscan
int
PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
            MPI_Comm comm)
{
    MPII_ENTER;
    MPII_CHECK_INIT("MPI_Exscan");
    return scan(sbuf, rbuf, count, dt, op, comm, 1, "MPI_Exscan");
}
