/*
 * coll.c: the collectives that move data without reducing it (Barrier,
 * Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v)).  They are
 * built on the internal point-to-point calls, on each communicator's
 * private collective context (ctx + MPII_CTX_COLL), so that they never
 * match a user's message.  One fixed tag per collective is enough: the
 * context is private, each pair of ranks exchanges the same sequence of
 * messages in every collective, and the transport does not overtake.
 * No collective sends to its own rank.  The reductions are in
 * coll_reduce.c.
 *
 * Algorithms (p ranks, n bytes):
 *   Barrier    over several hosts with several ranks on some
 *              (coll_host.c), each host's ranks report to one of them,
 *              those run the dissemination barrier, then release their
 *              host's; else dissemination, ceil(log2 p) rounds
 *   Bcast      above 64 KiB and 3+ ranks, a binomial scatter of n/p
 *              chunks then an allgather: recursive doubling for a
 *              power of two, else a ring.  Up to 64 KiB, where some
 *              host has several of the ranks and there are several
 *              hosts (coll_host.c), two levels: a binomial tree over
 *              one rank of each host, then one over each host's
 *              ranks; else up to 4 ranks and 16 KiB, the root sends to
 *              each rank (one hop: when ranks share cores, every hop
 *              costs a wake-up); else a binomial tree.  The choice
 *              depends on sizes, the rank count and the job's table
 *              only, so every rank makes the same
 *   Gather     binomial tree of packed blocks; linear for large blocks
 *   Scatter    blocks up to 8 KiB, over several hosts with several
 *              ranks on some: two levels (coll_host.c), each host's
 *              blocks to one rank of it down a binomial tree, then down
 *              one over the host's ranks; else a binomial tree of packed
 *              blocks; linear for large blocks and on up to 4 ranks
 *              (one hop)
 *   Gatherv, Scatterv   linear
 *   Allgather  recursive doubling for a power of two, else a ring
 *   Allgatherv ring
 *   Alltoall(v) all messages at once when small, pairwise exchange
 *              (p-1 rounds) when large
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

enum {
    TAG_BARRIER = 1,
    TAG_BCAST,
    TAG_BCAST_SCATTER,
    TAG_BCAST_RING,
    TAG_GATHER,
    TAG_SCATTER,
    TAG_ALLGATHER,
    TAG_ALLTOALL,
};

#define CTX(c) ((c)->ctx + MPII_CTX_COLL)
#define BCAST_LONG (64 * 1024)    /* bytes: scatter + ring above this */
#define FLAT_P 4                  /* ranks: the root talks to each ... */
#define BCAST_FLAT_N (16 * 1024)  /* ... in a Bcast up to this */
#define TREE_MAX (256 * 1024)     /* bytes in all: binomial gather/scatter */
#define HOSTS_BLOCK 8192          /* bytes a rank: scatter by host */
#define ALLTOALL_SHORT (8 * 1024) /* bytes per block: all at once */
#define MAXCHILD 32

/* Checks one buffer argument: count, type (returned in *t), address. */
static int
coll_check_buf(const void *buf, int count, MPI_Datatype dt,
               const struct mpii_type **t)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if ((*t = mpii_type_get(dt)) == NULL)
        return MPI_ERR_TYPE;
    if (buf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    if (buf == NULL && count > 0 && mpii_type_size(*t) > 0 &&
        mpii_type_is_builtin(*t))
        return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}

/* Copies (sbuf, scount, st) into (rbuf, rcount, rt) through the packed
 * form: MPI_ERR_TRUNCATE if it does not fit. */
static int
coll_copy(const void *sbuf, int scount, const struct mpii_type *st, void *rbuf,
          int rcount, const struct mpii_type *rt)
{
    size_t n = (size_t)scount * mpii_type_size(st);
    void *tmp;

    if (n > (size_t)rcount * mpii_type_size(rt))
        return MPI_ERR_TRUNCATE;
    if (n == 0)
        return MPI_SUCCESS;
    if (mpii_type_contiguous(st) && mpii_type_contiguous(rt)) {
        memmove(mpii_type_start(rbuf, rt), mpii_type_start(sbuf, st), n);
    } else if (mpii_type_contiguous(st)) {
        mpii_unpack(mpii_type_start(sbuf, st), n, rbuf, rcount, rt);
    } else if (mpii_type_contiguous(rt)) {
        mpii_pack(sbuf, scount, st, mpii_type_start(rbuf, rt));
    } else {
        if ((tmp = malloc(n)) == NULL)
            return MPI_ERR_NO_MEM;
        mpii_pack(sbuf, scount, st, tmp);
        mpii_unpack(tmp, n, rbuf, rcount, rt);
        free(tmp);
    }
    return MPI_SUCCESS;
}

/* Sends to dst and receives from src at once.  The receive is posted
 * first, so that the partner's message lands in place rather than in
 * the unexpected queue; both requests are always completed. */
static int
coll_sendrecv(const void *sbuf, int scount, MPI_Datatype st, int dst,
              void *rbuf, int rcount, MPI_Datatype rt, int src, int tag,
              struct mpii_comm *c)
{
    MPI_Request rreq, sreq;
    int err, err2;

    err = mpii_irecv(rbuf, rcount, rt, src, tag, c, CTX(c), &rreq);
    if (err != MPI_SUCCESS)
        return err;
    err = mpii_isend(sbuf, scount, st, dst, tag, c, CTX(c), MPII_SEND_STANDARD,
                     &sreq);
    err2 = mpii_wait(&rreq, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS) {
        err = err2;
        err2 = mpii_wait(&sreq, MPI_STATUS_IGNORE);
    }
    return err != MPI_SUCCESS ? err : err2;
}

/* Completes the n requests of reqs that were started (the others are
 * MPI_REQUEST_NULL); returns err if set, else the first failure. */
static int
coll_finish(int n, MPI_Request reqs[], int err)
{
    int err2 = n > 0 ? mpii_waitall(n, reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;

    return err != MPI_SUCCESS ? err : err2;
}

/* Allocates n request slots set to MPI_REQUEST_NULL. */
static MPI_Request *
coll_reqs(int n)
{
    MPI_Request *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);

    for (int i = 0; r != NULL && i < n; i++)
        r[i] = MPI_REQUEST_NULL;
    return r;
}

/* The binomial tree rooted at relative rank 0: *mask gets the lowest set
 * bit of vr (the smallest power of two >= p for the root); returns the
 * number of ranks in vr's subtree. */
static int
coll_subtree(int vr, int p, int *mask)
{
    int m = 1;

    if (vr == 0) {
        while (m < p)
            m <<= 1;
        *mask = m;
        return p;
    }
    m = vr & -vr;
    *mask = m;
    return m < p - vr ? m : p - vr;
}

/* A list of ranks for a binomial tree: first, then base[0 .. n) but
 * base[front] (whose place first takes). */
struct rank_list {
    const int *base;
    int n, front, first;
};

static int
list_at(const struct rank_list *l, int i)
{
    return i == 0 ? l->first : l->base[i - 1 < l->front ? i - 1 : i];
}

/* The place in the list of base[q]. */
static int
list_index(const struct rank_list *l, int q)
{
    return q == l->front ? 0 : q < l->front ? q + 1 : q;
}

/* Binomial broadcast down list l from its first rank; me is our place
 * in it.  Receives, then starts the sends into reqs (*nreq of them). */
static int
bcast_list(void *buf, int count, MPI_Datatype dt, const struct rank_list *l,
           int me, int tag, struct mpii_comm *c, MPI_Request *reqs, int *nreq)
{
    int mask, err;

    coll_subtree(me, l->n, &mask);
    if (me != 0 &&
        (err = mpii_recv(buf, count, dt, list_at(l, me - mask), tag, c, CTX(c),
                         MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return err;
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (me + mask >= l->n)
            continue;
        err = mpii_isend(buf, count, dt, list_at(l, me + mask), tag, c, CTX(c),
                         MPII_SEND_STANDARD, &reqs[*nreq]);
        if (err != MPI_SUCCESS)
            return err;
        (*nreq)++;
    }
    return MPI_SUCCESS;
}

/* Where host h's ranks stand in a list from first (the root on its host,
 * else the host's lowest rank). */
static struct rank_list
host_list(const struct mpii_hosts *hs, int h, int root)
{
    int mine = hs->host[root] == h;

    return (struct rank_list){hs->order + hs->start[h],
                              hs->start[h + 1] - hs->start[h],
                              mine ? hs->pos[root] : 0,
                              mine ? root : hs->lead[h]};
}

/* Binomial fan-in of empty messages up list l to its first rank; me is
 * our place in it: from every child, then to the parent. */
static int
fan_in_list(const struct rank_list *l, int me, int tag, struct mpii_comm *c)
{
    MPI_Request reqs[MAXCHILD];
    char dummy = 0;
    int mask, nreq = 0, err = MPI_SUCCESS;

    coll_subtree(me, l->n, &mask);
    for (int m = 1; m < mask && me + m < l->n && err == MPI_SUCCESS; m <<= 1) {
        err = mpii_irecv(&dummy, 0, MPI_BYTE, list_at(l, me + m), tag, c,
                         CTX(c), &reqs[nreq]);
        if (err == MPI_SUCCESS)
            nreq++;
    }
    if ((err = coll_finish(nreq, reqs, err)) != MPI_SUCCESS || me == 0)
        return err;
    return mpii_send(&dummy, 0, MPI_BYTE, list_at(l, me - mask), tag, c,
                     CTX(c));
}

/* ---------------------------------------------------------------- */

/* Dissemination barrier. */
static int
coll_barrier(struct mpii_comm *c)
{
    char dummy = 0;
    int p = c->size, err;

    for (int k = 1; k < p; k <<= 1) {
        err = coll_sendrecv(&dummy, 0, MPI_BYTE, (c->rank + k) % p, &dummy, 0,
                            MPI_BYTE, (c->rank - k + p) % p, TAG_BARRIER, c);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Two-level barrier: the ranks of each host report to its lowest rank
 * (a binomial fan-in), those run the dissemination barrier among
 * themselves, then release their host's ranks down the same tree.  A
 * host's ranks meet through shared memory; the network carries one
 * exchange per host and round. */
static int
barrier_hosts(struct mpii_comm *c, const struct mpii_hosts *hs)
{
    MPI_Request reqs[MAXCHILD];
    char dummy = 0;
    int h = hs->host[c->rank], n = hs->n, nreq = 0, err;
    struct rank_list mine = host_list(hs, h, hs->lead[h]);
    int me = list_index(&mine, hs->pos[c->rank]);

    err = fan_in_list(&mine, me, TAG_BARRIER, c);
    for (int k = 1; me == 0 && k < n && err == MPI_SUCCESS; k <<= 1)
        err = coll_sendrecv(&dummy, 0, MPI_BYTE, hs->lead[(h + k) % n], &dummy,
                            0, MPI_BYTE, hs->lead[(h - k + n) % n], TAG_BARRIER,
                            c);
    if (err == MPI_SUCCESS)
        err = bcast_list(&dummy, 0, MPI_BYTE, &mine, me, TAG_BARRIER, c, reqs,
                         &nreq);
    return coll_finish(nreq, reqs, err);
}

#pragma weak MPI_Barrier = PMPI_Barrier
int
PMPI_Barrier(MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_hosts *hs;
    struct mpii_comm *c;
    int err;

    MPII_CHECK_INIT("MPI_Barrier");
    if (mpii_comm_inter(comm))
        return mpii_inter_barrier(comm);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Barrier");
    if ((hs = mpii_comm_hosts(c)) != NULL)
        err = barrier_hosts(c, hs);
    else
        err = coll_barrier(c);
    if (err != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Barrier");
    return MPI_SUCCESS;
}

/* Binomial broadcast of the user's buffer as it is. */
static int
bcast_tree(void *buf, int count, MPI_Datatype dt, int root, struct mpii_comm *c)
{
    MPI_Request reqs[MAXCHILD];
    int p = c->size, vr = (c->rank - root + p) % p, mask, n = 0, err;

    coll_subtree(vr, p, &mask);
    if (vr != 0) {
        err = mpii_recv(buf, count, dt, (vr - mask + root) % p, TAG_BCAST, c,
                        CTX(c), MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            return err;
    }
    err = MPI_SUCCESS;
    for (mask >>= 1; mask > 0 && err == MPI_SUCCESS; mask >>= 1) {
        if (vr + mask >= p)
            continue;
        err = mpii_isend(buf, count, dt, (vr + mask + root) % p, TAG_BCAST, c,
                         CTX(c), MPII_SEND_STANDARD, &reqs[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    return coll_finish(n, reqs, err);
}

/* Flat broadcast: the root sends to every rank at once. */
static int
bcast_flat(void *buf, int count, MPI_Datatype dt, int root,
           struct mpii_comm *c)
{
    MPI_Request reqs[FLAT_P];
    int n = 0, err = MPI_SUCCESS;

    if (c->rank != root)
        return mpii_recv(buf, count, dt, root, TAG_BCAST, c, CTX(c),
                         MPI_STATUS_IGNORE);
    for (int i = 0; i < c->size && err == MPI_SUCCESS; i++) {
        if (i == root)
            continue;
        err = mpii_isend(buf, count, dt, i, TAG_BCAST, c, CTX(c),
                         MPII_SEND_STANDARD, &reqs[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    return coll_finish(n, reqs, err);
}

/* Two-level broadcast: a binomial tree over one rank of each host (the
 * root on its own host), then one over each host's ranks from that one.
 * The message crosses the network once per host; the root's and every
 * host's first sends go out first. */
static int
bcast_hosts(void *buf, int count, MPI_Datatype dt, int root,
            struct mpii_comm *c, const struct mpii_hosts *hs)
{
    MPI_Request reqs[2 * MAXCHILD];
    int h = hs->host[c->rank], hr = hs->host[root], nreq = 0;
    int err = MPI_SUCCESS;
    struct rank_list leads = {hs->lead, hs->n, hr, root};
    struct rank_list mine = host_list(hs, h, root);

    if (c->rank == mine.first)
        err = bcast_list(buf, count, dt, &leads, list_index(&leads, h),
                         TAG_BCAST, c, reqs, &nreq);
    if (err == MPI_SUCCESS)
        err = bcast_list(buf, count, dt, &mine,
                         list_index(&mine, hs->pos[c->rank]), TAG_BCAST, c,
                         reqs, &nreq);
    return coll_finish(nreq, reqs, err);
}

/* Byte range of chunk i of n bytes cut in chunks of cs. */
static void
chunk(size_t n, size_t cs, long long i, size_t *lo, int *len)
{
    size_t a = (size_t)i * cs, b = a + cs;

    if (a > n)
        a = n;
    if (b > n)
        b = n;
    *lo = a;
    *len = (int)(b - a);
}

/* Long broadcast: the root's n bytes are cut into p chunks, scattered
 * down a binomial tree (relative rank i gets chunk i), then gathered by
 * all around a ring (the root only sends). */
static int
bcast_long(void *buf, int count, const struct mpii_type *t, int root,
           struct mpii_comm *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask, sub, len, err;
    size_t n = (size_t)count * mpii_type_size(t), cs = (n + p - 1) / p, lo, lo2;
    MPI_Request reqs[MAXCHILD];
    char *data, *tmp = NULL;
    int nreq = 0, left = (c->rank - 1 + p) % p, right = (c->rank + 1) % p;

    if (mpii_type_contiguous(t)) {
        data = mpii_type_start(buf, t);
    } else {
        if ((tmp = malloc(n)) == NULL)
            return MPI_ERR_NO_MEM;
        if (vr == 0)
            mpii_pack(buf, count, t, tmp);
        data = tmp;
    }

    /* Scatter: my subtree [vr, vr + sub) holds chunks [vr, vr + sub). */
    sub = coll_subtree(vr, p, &mask);
    if (vr != 0) {
        chunk(n, cs, vr, &lo, &len);
        chunk(n, cs, vr + sub, &lo2, &len);
        err = mpii_recv(data + lo, (int)(lo2 - lo), MPI_BYTE,
                        (vr - mask + root) % p, TAG_BCAST_SCATTER, c, CTX(c),
                        MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            goto error;
    }
    err = MPI_SUCCESS;
    for (mask >>= 1; mask > 0 && err == MPI_SUCCESS; mask >>= 1) {
        int child = vr + mask, csub;

        if (child >= p)
            continue;
        csub = mask < p - child ? mask : p - child;
        chunk(n, cs, child, &lo, &len);
        chunk(n, cs, child + csub, &lo2, &len);
        err = mpii_isend(data + lo, (int)(lo2 - lo), MPI_BYTE,
                         (child + root) % p, TAG_BCAST_SCATTER, c, CTX(c),
                         MPII_SEND_STANDARD, &reqs[nreq]);
        if (err == MPI_SUCCESS)
            nreq++;
    }
    if ((err = coll_finish(nreq, reqs, err)) != MPI_SUCCESS)
        goto error;

    /* A power of two: recursive doubling on relative ranks (at step
     * mask my aligned group of mask chunks goes to vr ^ mask and its
     * group comes back), log2 p steps where the ring takes p - 1 with
     * the same bytes; nobody sends to the root. */
    for (int m = 1; (p & (p - 1)) == 0 && m < p; m <<= 1) {
        MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int pv = vr ^ m, mine = vr & ~(m - 1), theirs = pv & ~(m - 1);

        chunk(n, cs, theirs, &lo, &len);
        chunk(n, cs, theirs + m, &lo2, &len);
        if (vr != 0)
            err = mpii_irecv(data + lo, (int)(lo2 - lo), MPI_BYTE,
                             (pv + root) % p, TAG_BCAST_RING, c, CTX(c),
                             &two[0]);
        chunk(n, cs, mine, &lo, &len);
        chunk(n, cs, mine + m, &lo2, &len);
        if (pv != 0 && err == MPI_SUCCESS)
            err = mpii_isend(data + lo, (int)(lo2 - lo), MPI_BYTE,
                             (pv + root) % p, TAG_BCAST_RING, c, CTX(c),
                             MPII_SEND_STANDARD, &two[1]);
        if ((err = coll_finish(2, two, err)) != MPI_SUCCESS)
            goto error;
    }
    /* Else a ring allgather on relative ranks; nobody sends to the root. */
    for (int s = 0; (p & (p - 1)) != 0 && s < p - 1; s++) {
        MPI_Request req = MPI_REQUEST_NULL;
        int err2;

        if ((vr + 1) % p != 0) {
            chunk(n, cs, (vr - s + p) % p, &lo, &len);
            err = mpii_isend(data + lo, len, MPI_BYTE, right, TAG_BCAST_RING, c,
                             CTX(c), MPII_SEND_STANDARD, &req);
            if (err != MPI_SUCCESS)
                goto error;
        }
        if (vr != 0) {
            chunk(n, cs, (vr - s - 1 + 2 * p) % p, &lo, &len);
            err = mpii_recv(data + lo, len, MPI_BYTE, left, TAG_BCAST_RING, c,
                            CTX(c), MPI_STATUS_IGNORE);
        }
        err2 = req != MPI_REQUEST_NULL ? mpii_wait(&req, MPI_STATUS_IGNORE)
                                       : MPI_SUCCESS;
        if (err == MPI_SUCCESS)
            err = err2;
        if (err != MPI_SUCCESS)
            goto error;
    }
    if (tmp != NULL && vr != 0)
        mpii_unpack(tmp, n, buf, count, t);
error:
    free(tmp);
    return err;
}

#pragma weak MPI_Bcast = PMPI_Bcast
int
PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_type *t;
    const struct mpii_hosts *hs;
    struct mpii_comm *c;
    size_t n;
    int err;

    MPII_CHECK_INIT("MPI_Bcast");
    if (mpii_comm_inter(comm))
        return mpii_inter_bcast(buf, count, dt, root, comm);
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Bcast");
    if ((err = coll_check_buf(buf, count, dt, &t)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Bcast");
    if (root < 0 || root >= c->size)
        return mpii_err(comm, MPI_ERR_ROOT, "MPI_Bcast");
    n = (size_t)count * mpii_type_size(t);
    if (n == 0 || c->size == 1)
        return MPI_SUCCESS;
    if (n > BCAST_LONG && n <= INT_MAX && c->size > 2)
        err = bcast_long(buf, count, t, root, c);
    else if ((hs = mpii_comm_hosts(c)) != NULL)
        err = bcast_hosts(buf, count, dt, root, c, hs);
    else if (c->size <= FLAT_P && n <= BCAST_FLAT_N)
        err = bcast_flat(buf, count, dt, root, c);
    else
        err = bcast_tree(buf, count, dt, root, c);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Bcast") : 0;
}

/* ---------------------------------------------------------------- */

/* One side of a gather or scatter at the root: counts[i] elements of t
 * at displs[i] (in extents), or count elements at i * count when counts
 * is NULL. */
struct vec {
    char *buf;
    int count;
    const int *counts, *displs;
    MPI_Datatype dt;
    const struct mpii_type *t;
};

static char *
vec_at(const struct vec *v, int i, int *count)
{
    MPI_Aint ext = mpii_type_extent(v->t);

    if (v->counts == NULL) {
        *count = v->count;
        return coll_at(v->buf, (long long)i * v->count, ext);
    }
    *count = v->counts[i];
    return coll_at(v->buf, v->displs[i], ext);
}

/* Linear gather: the root receives every block in place; mine is
 * (sbuf, scount, st), or already in place when sbuf is MPI_IN_PLACE. */
static int
gather_linear(const void *sbuf, int scount, MPI_Datatype st,
              const struct vec *rv, int root, struct mpii_comm *c)
{
    MPI_Request *reqs;
    int err = MPI_SUCCESS, n = 0, cnt;
    char *at;

    if (c->rank != root)
        return mpii_send(sbuf, scount, st, root, TAG_GATHER, c, CTX(c));
    if ((reqs = coll_reqs(c->size)) == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < c->size && err == MPI_SUCCESS; i++) {
        if (i == root)
            continue;
        at = vec_at(rv, i, &cnt);
        err = mpii_irecv(at, cnt, rv->dt, i, TAG_GATHER, c, CTX(c), &reqs[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    if (err == MPI_SUCCESS && sbuf != MPI_IN_PLACE) {
        at = vec_at(rv, root, &cnt);
        err = coll_copy(sbuf, scount, mpii_type_get(st), at, cnt, rv->t);
    }
    err = coll_finish(n, reqs, err);
    free(reqs);
    return err;
}

/* Binomial gather of nb-byte blocks: each node packs its subtree's
 * blocks, in relative rank order, and hands them to its parent. */
static int
gather_tree(const void *sbuf, int scount, MPI_Datatype st, size_t nb,
            const struct vec *rv, int root, struct mpii_comm *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask, sub, nreq = 0,
        err = MPI_SUCCESS, cnt;
    MPI_Request reqs[MAXCHILD];
    char *tmp;

    sub = coll_subtree(vr, p, &mask);
    if (sub == 1) /* a leaf sends its data as it is */
        return mpii_send(sbuf, scount, st, (vr - mask + root) % p, TAG_GATHER,
                         c, CTX(c));
    if ((tmp = malloc((size_t)sub * nb + 1)) == NULL)
        return MPI_ERR_NO_MEM;
    for (int m = 1; m < mask && vr + m < p && err == MPI_SUCCESS; m <<= 1) {
        int csub = m < p - vr - m ? m : p - vr - m;

        err =
            mpii_irecv(tmp + m * nb, (int)(csub * nb), MPI_BYTE,
                       (vr + m + root) % p, TAG_GATHER, c, CTX(c), &reqs[nreq]);
        if (err == MPI_SUCCESS)
            nreq++;
    }
    if (err == MPI_SUCCESS && vr != 0)
        mpii_pack(sbuf, scount, mpii_type_get(st), tmp);
    if ((err = coll_finish(nreq, reqs, err)) != MPI_SUCCESS)
        goto done;
    if (vr != 0) {
        err = mpii_send(tmp, (int)(sub * nb), MPI_BYTE, (vr - mask + root) % p,
                        TAG_GATHER, c, CTX(c));
        goto done;
    }
    for (int i = 1; i < p; i++) {
        char *at = vec_at(rv, (i + root) % p, &cnt);

        mpii_unpack(tmp + i * nb, nb, at, cnt, rv->t);
    }
    if (sbuf != MPI_IN_PLACE) {
        char *at = vec_at(rv, root, &cnt);

        err = coll_copy(sbuf, scount, mpii_type_get(st), at, cnt, rv->t);
    }
done:
    free(tmp);
    return err;
}

/* Checks the arguments shared by Gather and Gatherv; *st_out gets the
 * send type (NULL for MPI_IN_PLACE). */
static int
gather_check(const void *sbuf, int scount, MPI_Datatype st, int root,
             struct mpii_comm *c, const struct mpii_type **st_out)
{
    *st_out = NULL;
    if (root < 0 || root >= c->size)
        return MPI_ERR_ROOT;
    if (sbuf == MPI_IN_PLACE)
        return c->rank == root ? MPI_SUCCESS : MPI_ERR_BUFFER;
    return coll_check_buf(sbuf, scount, st, st_out);
}

#pragma weak MPI_Gather = PMPI_Gather
int
PMPI_Gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
            int rcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_type *stt, *rtt = NULL;
    struct mpii_comm *c;
    struct vec rv = {0};
    size_t nb;
    int err;

    MPII_CHECK_INIT("MPI_Gather");
    if (mpii_comm_inter(comm))
        return mpii_inter_gather(sbuf, scount, st, rbuf, NULL, rcount, NULL, rt,
                                 root, comm, "MPI_Gather");
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Gather");
    if ((err = gather_check(sbuf, scount, st, root, c, &stt)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Gather");
    if (c->rank == root) {
        err = coll_check_buf(rbuf, rcount, rt, &rtt);
        if (err == MPI_SUCCESS && rbuf == sbuf && rcount > 0)
            err = MPI_ERR_BUFFER;
        if (err != MPI_SUCCESS)
            return mpii_err(comm, err, "MPI_Gather");
        nb = (size_t)rcount * mpii_type_size(rtt);
    } else {
        nb = (size_t)scount * mpii_type_size(stt);
    }
    rv = (struct vec){rbuf, rcount, NULL, NULL, rt, rtt};
    if (c->size == 1)
        err = sbuf == MPI_IN_PLACE
                  ? MPI_SUCCESS
                  : coll_copy(sbuf, scount, stt, rbuf, rcount, rtt);
    else if (nb * c->size <= TREE_MAX)
        err = gather_tree(sbuf, scount, st, nb, &rv, root, c);
    else
        err = gather_linear(sbuf, scount, st, &rv, root, c);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Gather") : 0;
}

#pragma weak MPI_Gatherv = PMPI_Gatherv
int
PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
             const int rcounts[], const int displs[], MPI_Datatype rt, int root,
             MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_type *stt, *rtt = NULL;
    struct mpii_comm *c;
    struct vec rv = {0};
    int err;

    MPII_CHECK_INIT("MPI_Gatherv");
    if (mpii_comm_inter(comm))
        return mpii_inter_gather(sbuf, scount, st, rbuf, rcounts, 0, displs, rt,
                                 root, comm, "MPI_Gatherv");
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Gatherv");
    if ((err = gather_check(sbuf, scount, st, root, c, &stt)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Gatherv");
    if (c->rank == root) {
        err = coll_check_counts(rcounts, displs, c->size);
        if (err == MPI_SUCCESS && (rtt = mpii_type_get(rt)) == NULL)
            err = MPI_ERR_TYPE;
        if (err == MPI_SUCCESS && (rbuf == NULL || rbuf == MPI_IN_PLACE)) {
            for (int i = 0; i < c->size; i++)
                if (rcounts[i] > 0 && mpii_type_size(rtt) > 0)
                    err = MPI_ERR_BUFFER;
        }
        if (err != MPI_SUCCESS)
            return mpii_err(comm, err, "MPI_Gatherv");
    }
    rv = (struct vec){rbuf, 0, rcounts, displs, rt, rtt};
    err = gather_linear(sbuf, scount, st, &rv, root, c);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Gatherv") : 0;
}

/* Linear scatter: the root sends every block from its place. */
static int
scatter_linear(const struct vec *sv, void *rbuf, int rcount, MPI_Datatype rt,
               int root, struct mpii_comm *c)
{
    MPI_Request *reqs;
    int err = MPI_SUCCESS, n = 0, cnt;
    char *at;

    if (c->rank != root)
        return mpii_recv(rbuf, rcount, rt, root, TAG_SCATTER, c, CTX(c),
                         MPI_STATUS_IGNORE);
    if ((reqs = coll_reqs(c->size)) == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < c->size && err == MPI_SUCCESS; i++) {
        if (i == root)
            continue;
        at = vec_at(sv, i, &cnt);
        err = mpii_isend(at, cnt, sv->dt, i, TAG_SCATTER, c, CTX(c),
                         MPII_SEND_STANDARD, &reqs[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    if (err == MPI_SUCCESS && rbuf != MPI_IN_PLACE) {
        at = vec_at(sv, root, &cnt);
        err = coll_copy(at, cnt, sv->t, rbuf, rcount, mpii_type_get(rt));
    }
    err = coll_finish(n, reqs, err);
    free(reqs);
    return err;
}

/* Binomial scatter of nb-byte blocks (the reverse of gather_tree). */
static int
scatter_tree(const struct vec *sv, size_t nb, void *rbuf, int rcount,
             MPI_Datatype rt, int root, struct mpii_comm *c)
{
    int p = c->size, vr = (c->rank - root + p) % p, mask, sub, nreq = 0,
        err = MPI_SUCCESS, cnt;
    MPI_Request reqs[MAXCHILD];
    char *tmp, *at;

    sub = coll_subtree(vr, p, &mask);
    if (sub == 1) /* a leaf receives its data in place */
        return mpii_recv(rbuf, rcount, rt, (vr - mask + root) % p, TAG_SCATTER,
                         c, CTX(c), MPI_STATUS_IGNORE);
    if ((tmp = malloc((size_t)sub * nb + 1)) == NULL)
        return MPI_ERR_NO_MEM;
    if (vr == 0) {
        for (int i = 1; i < p; i++) {
            at = vec_at(sv, (i + root) % p, &cnt);
            mpii_pack(at, cnt, sv->t, tmp + i * nb);
        }
    } else {
        err = mpii_recv(tmp, (int)(sub * nb), MPI_BYTE, (vr - mask + root) % p,
                        TAG_SCATTER, c, CTX(c), MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            goto done;
    }
    for (int m = mask >> 1; m > 0 && err == MPI_SUCCESS; m >>= 1) {
        int csub;

        if (vr + m >= p)
            continue;
        csub = m < p - vr - m ? m : p - vr - m;
        err = mpii_isend(tmp + m * nb, (int)(csub * nb), MPI_BYTE,
                         (vr + m + root) % p, TAG_SCATTER, c, CTX(c),
                         MPII_SEND_STANDARD, &reqs[nreq]);
        if (err == MPI_SUCCESS)
            nreq++;
    }
    if (err == MPI_SUCCESS && vr != 0)
        mpii_unpack(tmp, nb, rbuf, rcount, mpii_type_get(rt));
    if (err == MPI_SUCCESS && vr == 0 && rbuf != MPI_IN_PLACE) {
        at = vec_at(sv, root, &cnt);
        err = coll_copy(at, cnt, sv->t, rbuf, rcount, mpii_type_get(rt));
    }
    err = coll_finish(nreq, reqs, err);
done:
    free(tmp);
    return err;
}

/* The bytes before place i of the host list leads, in a buffer of nb-
 * byte blocks host after host (each host's in its host_list order). */
static size_t
hosts_before(const struct mpii_hosts *hs, const struct rank_list *leads,
             int i, size_t nb)
{
    size_t n = 0;

    for (int j = 0; j < i; j++) {
        int h = hs->host[list_at(leads, j)];

        n += (size_t)(hs->start[h + 1] - hs->start[h]) * nb;
    }
    return n;
}

/* Two-level scatter of nb-byte blocks: the root packs every block host
 * after host and a binomial tree over one rank of each host hands each
 * host its blocks (a subtree's in one message), then a binomial tree
 * over each host's ranks hands each rank its own. */
static int
scatter_hosts(const struct vec *sv, size_t nb, void *rbuf, int rcount,
              MPI_Datatype rt, int root, struct mpii_comm *c,
              const struct mpii_hosts *hs)
{
    MPI_Request reqs[2 * MAXCHILD];
    int h = hs->host[c->rank], hr = hs->host[root], nreq = 0, cnt;
    int err = MPI_SUCCESS, li, mi, mask, lmask = 0, sub, lead;
    struct rank_list leads = {hs->lead, hs->n, hr, root};
    struct rank_list mine = host_list(hs, h, root);
    size_t off = 0, have;
    char *tmp, *at;

    lead = c->rank == mine.first;
    mi = list_index(&mine, hs->pos[c->rank]);
    sub = coll_subtree(mi, mine.n, &mask);
    if (!lead && sub == 1) /* a leaf receives its block in place */
        return mpii_recv(rbuf, rcount, rt, list_at(&mine, mi - mask),
                         TAG_SCATTER, c, CTX(c), MPI_STATUS_IGNORE);
    li = lead ? list_index(&leads, h) : 0;
    if (lead) {
        int lsub = coll_subtree(li, hs->n, &lmask);

        have = hosts_before(hs, &leads, li + lsub, nb) -
               hosts_before(hs, &leads, li, nb);
    } else {
        have = (size_t)sub * nb;
    }
    if ((tmp = malloc(have + 1)) == NULL)
        return MPI_ERR_NO_MEM;
    if (c->rank == root) {
        for (int i = 0; i < hs->n; i++) {
            struct rank_list m = host_list(hs, hs->host[list_at(&leads, i)],
                                           root);

            for (int j = 0; j < m.n; j++, off += nb) {
                at = vec_at(sv, list_at(&m, j), &cnt);
                mpii_pack(at, cnt, sv->t, tmp + off);
            }
        }
    } else {
        /* From the host list's parent, or our host's first rank. */
        int from =
            lead ? list_at(&leads, li - lmask) : list_at(&mine, mi - mask);

        err = mpii_recv(tmp, (int)have, MPI_BYTE, from, TAG_SCATTER, c, CTX(c),
                        MPI_STATUS_IGNORE);
    }
    /* The other hosts' blocks, down the host list. */
    for (int m = lmask >> 1; lead && err == MPI_SUCCESS && m > 0; m >>= 1) {
        int ci = li + m, csub;
        size_t a, b;

        if (ci >= hs->n)
            continue;
        csub = m < hs->n - ci ? m : hs->n - ci;
        a = hosts_before(hs, &leads, ci, nb) - hosts_before(hs, &leads, li, nb);
        b = hosts_before(hs, &leads, ci + csub, nb) -
            hosts_before(hs, &leads, li, nb);
        err = mpii_isend(tmp + a, (int)(b - a), MPI_BYTE, list_at(&leads, ci),
                         TAG_SCATTER, c, CTX(c), MPII_SEND_STANDARD,
                         &reqs[nreq]);
        if (err == MPI_SUCCESS)
            nreq++;
    }
    /* Our host's blocks (first in tmp), down the host's list. */
    for (int m = mask >> 1; err == MPI_SUCCESS && m > 0; m >>= 1) {
        int cj = mi + m, csub;

        if (cj >= mine.n)
            continue;
        csub = m < mine.n - cj ? m : mine.n - cj;
        err = mpii_isend(tmp + (size_t)m * nb, (int)((size_t)csub * nb),
                         MPI_BYTE, list_at(&mine, cj), TAG_SCATTER, c, CTX(c),
                         MPII_SEND_STANDARD, &reqs[nreq]);
        if (err == MPI_SUCCESS)
            nreq++;
    }
    if (err == MPI_SUCCESS && c->rank != root)
        mpii_unpack(tmp, nb, rbuf, rcount, mpii_type_get(rt));
    if (err == MPI_SUCCESS && c->rank == root && rbuf != MPI_IN_PLACE) {
        at = vec_at(sv, root, &cnt);
        err = coll_copy(at, cnt, sv->t, rbuf, rcount, mpii_type_get(rt));
    }
    err = coll_finish(nreq, reqs, err);
    free(tmp);
    return err;
}

/* Checks the receive side shared by Scatter and Scatterv. */
static int
scatter_check(void *rbuf, int rcount, MPI_Datatype rt, int root,
              struct mpii_comm *c)
{
    const struct mpii_type *t;

    if (root < 0 || root >= c->size)
        return MPI_ERR_ROOT;
    if (rbuf == MPI_IN_PLACE)
        return c->rank == root ? MPI_SUCCESS : MPI_ERR_BUFFER;
    return coll_check_buf(rbuf, rcount, rt, &t);
}

#pragma weak MPI_Scatter = PMPI_Scatter
int
PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
             int rcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_type *stt = NULL;
    const struct mpii_hosts *hs;
    struct mpii_comm *c;
    struct vec sv = {0};
    size_t nb;
    int err;

    MPII_CHECK_INIT("MPI_Scatter");
    if (mpii_comm_inter(comm))
        return mpii_inter_scatter(sbuf, NULL, scount, NULL, st, rbuf, rcount,
                                  rt, root, comm, "MPI_Scatter");
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Scatter");
    if ((err = scatter_check(rbuf, rcount, rt, root, c)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Scatter");
    if (c->rank == root) {
        err = coll_check_buf(sbuf, scount, st, &stt);
        if (err == MPI_SUCCESS && rbuf == sbuf && scount > 0)
            err = MPI_ERR_BUFFER;
        if (err != MPI_SUCCESS)
            return mpii_err(comm, err, "MPI_Scatter");
        nb = (size_t)scount * mpii_type_size(stt);
    } else {
        nb = (size_t)rcount * mpii_type_size(mpii_type_get(rt));
    }
    sv = (struct vec){(char *)sbuf, scount, NULL, NULL, st, stt};
    if (c->size == 1)
        err = rbuf == MPI_IN_PLACE ? MPI_SUCCESS
                                   : coll_copy(sbuf, scount, stt, rbuf, rcount,
                                               mpii_type_get(rt));
    else if (nb <= HOSTS_BLOCK && nb * c->size <= TREE_MAX &&
             (hs = mpii_comm_hosts(c)) != NULL)
        err = scatter_hosts(&sv, nb, rbuf, rcount, rt, root, c, hs);
    else if (nb * c->size <= TREE_MAX && c->size > FLAT_P)
        err = scatter_tree(&sv, nb, rbuf, rcount, rt, root, c);
    else
        err = scatter_linear(&sv, rbuf, rcount, rt, root, c);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Scatter") : 0;
}

#pragma weak MPI_Scatterv = PMPI_Scatterv
int
PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
              MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
              int root, MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_type *stt = NULL;
    struct mpii_comm *c;
    struct vec sv = {0};
    int err;

    MPII_CHECK_INIT("MPI_Scatterv");
    if (mpii_comm_inter(comm))
        return mpii_inter_scatter(sbuf, scounts, 0, displs, st, rbuf, rcount,
                                  rt, root, comm, "MPI_Scatterv");
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Scatterv");
    if ((err = scatter_check(rbuf, rcount, rt, root, c)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Scatterv");
    if (c->rank == root) {
        err = coll_check_counts(scounts, displs, c->size);
        if (err == MPI_SUCCESS && (stt = mpii_type_get(st)) == NULL)
            err = MPI_ERR_TYPE;
        if (err == MPI_SUCCESS && (sbuf == NULL || sbuf == MPI_IN_PLACE)) {
            for (int i = 0; i < c->size; i++)
                if (scounts[i] > 0 && mpii_type_size(stt) > 0)
                    err = MPI_ERR_BUFFER;
        }
        if (err != MPI_SUCCESS)
            return mpii_err(comm, err, "MPI_Scatterv");
    }
    sv = (struct vec){(char *)sbuf, 0, scounts, displs, st, stt};
    err = scatter_linear(&sv, rbuf, rcount, rt, root, c);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Scatterv") : 0;
}

/* ---------------------------------------------------------------- */

/* Ring allgather over the blocks of rv (mine is in place): at step s
 * block r - s goes right while block r - s - 1 comes from the left. */
static int
allgather_ring(const struct vec *rv, struct mpii_comm *c)
{
    int p = c->size, r = c->rank, scnt, rcnt, err;

    for (int s = 0; s < p - 1; s++) {
        char *sat = vec_at(rv, (r - s + p) % p, &scnt);
        char *rat = vec_at(rv, (r - s - 1 + 2 * p) % p, &rcnt);

        err = coll_sendrecv(sat, scnt, rv->dt, (r + 1) % p, rat, rcnt, rv->dt,
                            (r - 1 + p) % p, TAG_ALLGATHER, c);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Recursive doubling for a power of two p: at step mask, my aligned
 * group of mask blocks is swapped with the partner's.  The first step
 * sends my block from (sbuf, scount, st) and copies it into place while
 * the exchange is under way (2 ranks, 1 MiB: the copy was a third of the
 * call); MPI_IN_PLACE: it is in place already. */
static int
allgather_rd(const void *sbuf, int scount, MPI_Datatype st,
             const struct vec *rv, struct mpii_comm *c)
{
    int r = c->rank, err, cnt;

    for (int mask = 1; mask < c->size; mask <<= 1) {
        int partner = r ^ mask;
        char *mine = vec_at(rv, r & ~(mask - 1), &cnt);
        char *theirs = vec_at(rv, partner & ~(mask - 1), &cnt);
        MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};

        if (mask > 1 || sbuf == MPI_IN_PLACE) {
            err = coll_sendrecv(mine, mask * cnt, rv->dt, partner, theirs,
                                mask * cnt, rv->dt, partner, TAG_ALLGATHER, c);
            if (err != MPI_SUCCESS)
                return err;
            continue;
        }
        err = mpii_irecv(theirs, cnt, rv->dt, partner, TAG_ALLGATHER, c,
                         CTX(c), &reqs[0]);
        if (err == MPI_SUCCESS)
            err = mpii_isend(sbuf, scount, st, partner, TAG_ALLGATHER, c,
                             CTX(c), MPII_SEND_STANDARD, &reqs[1]);
        if (err == MPI_SUCCESS)
            err = coll_copy(sbuf, scount, mpii_type_get(st), mine, cnt, rv->t);
        if ((err = coll_finish(2, reqs, err)) != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Checks the arguments of Allgather(v) and, when copy, puts my block
 * in place. */
static int
allgather_start(const void *sbuf, int scount, MPI_Datatype st,
                const struct vec *rv, int copy, struct mpii_comm *c)
{
    const struct mpii_type *stt;
    int err, cnt;
    char *at;

    if (rv->t == NULL)
        return MPI_ERR_TYPE;
    if (rv->buf == MPI_IN_PLACE)
        return MPI_ERR_BUFFER;
    if (sbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    if ((err = coll_check_buf(sbuf, scount, st, &stt)) != MPI_SUCCESS)
        return err;
    at = vec_at(rv, c->rank, &cnt);
    if (sbuf == at && cnt > 0)
        return MPI_ERR_BUFFER;
    return copy ? coll_copy(sbuf, scount, stt, at, cnt, rv->t) : MPI_SUCCESS;
}

#pragma weak MPI_Allgather = PMPI_Allgather
int
PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
               int rcount, MPI_Datatype rt, MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_type *rtt;
    struct mpii_comm *c;
    struct vec rv;
    int err, rd;

    MPII_CHECK_INIT("MPI_Allgather");
    if (mpii_comm_inter(comm)) {
        struct mpii_blocks ics = {
            .buf = sbuf, .count = scount, .type = st, .same = 1};
        struct mpii_blocks icr = {.buf = rbuf, .count = rcount, .type = rt};

        return mpii_inter_exchange(&ics, &icr, comm, "MPI_Allgather");
    }
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Allgather");
    if ((err = coll_check_buf(rbuf, rcount, rt, &rtt)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Allgather");
    rv = (struct vec){rbuf, rcount, NULL, NULL, rt, rtt};
    rd = c->size > 1 && (c->size & (c->size - 1)) == 0 &&
         (long long)rcount * c->size <= INT_MAX &&
         (size_t)rcount * mpii_type_size(rtt) > 0;
    if ((err = allgather_start(sbuf, scount, st, &rv, !rd, c)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Allgather");
    if (c->size == 1 || (size_t)rcount * mpii_type_size(rtt) == 0)
        return MPI_SUCCESS;
    if (rd)
        err = allgather_rd(sbuf, scount, st, &rv, c);
    else
        err = allgather_ring(&rv, c);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Allgather") : 0;
}

#pragma weak MPI_Allgatherv = PMPI_Allgatherv
int
PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
                const int rcounts[], const int displs[], MPI_Datatype rt,
                MPI_Comm comm)
{
    MPII_ENTER;
    struct mpii_comm *c;
    struct vec rv;
    int err;

    MPII_CHECK_INIT("MPI_Allgatherv");
    if (mpii_comm_inter(comm)) {
        struct mpii_blocks ics = {
            .buf = sbuf, .count = scount, .type = st, .same = 1};
        struct mpii_blocks icr = {
            .buf = rbuf, .counts = rcounts, .displs = displs, .type = rt};

        return mpii_inter_exchange(&ics, &icr, comm, "MPI_Allgatherv");
    }
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Allgatherv");
    if ((err = coll_check_counts(rcounts, displs, c->size)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Allgatherv");
    rv = (struct vec){rbuf, 0, rcounts, displs, rt, mpii_type_get(rt)};
    if (rbuf == NULL && rv.t != NULL && mpii_type_size(rv.t) > 0) {
        for (int i = 0; i < c->size; i++)
            if (rcounts[i] > 0)
                return mpii_err(comm, MPI_ERR_BUFFER, "MPI_Allgatherv");
    }
    if ((err = allgather_start(sbuf, scount, st, &rv, 1, c)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Allgatherv");
    if (c->size > 1 && (err = allgather_ring(&rv, c)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Allgatherv");
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- */

/* Alltoall(v) between two struct vec.  Small blocks all go at once;
 * large ones in p - 1 rounds of pairwise exchange (send to r + s,
 * receive from r - s), so that few large messages are in flight. */
static int
alltoall_run(const struct vec *sv, const struct vec *rv, int large,
             struct mpii_comm *c)
{
    int p = c->size, r = c->rank, scnt, rcnt, n = 0, err = MPI_SUCCESS;
    MPI_Request *reqs;
    char *sat, *rat;

    sat = vec_at(sv, r, &scnt);
    rat = vec_at(rv, r, &rcnt);
    if ((err = coll_copy(sat, scnt, sv->t, rat, rcnt, rv->t)) != MPI_SUCCESS)
        return err;
    if (large) {
        for (int s = 1; s < p && err == MPI_SUCCESS; s++) {
            int dst = (r + s) % p, src = (r - s + p) % p;

            sat = vec_at(sv, dst, &scnt);
            rat = vec_at(rv, src, &rcnt);
            err = coll_sendrecv(sat, scnt, sv->dt, dst, rat, rcnt, rv->dt, src,
                                TAG_ALLTOALL, c);
        }
        return err;
    }
    if ((reqs = coll_reqs(2 * p)) == NULL)
        return MPI_ERR_NO_MEM;
    for (int s = 1; s < p && err == MPI_SUCCESS; s++) {
        int src = (r - s + p) % p;

        rat = vec_at(rv, src, &rcnt);
        err = mpii_irecv(rat, rcnt, rv->dt, src, TAG_ALLTOALL, c, CTX(c),
                         &reqs[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    for (int s = 1; s < p && err == MPI_SUCCESS; s++) {
        int dst = (r + s) % p;

        sat = vec_at(sv, dst, &scnt);
        err = mpii_isend(sat, scnt, sv->dt, dst, TAG_ALLTOALL, c, CTX(c),
                         MPII_SEND_STANDARD, &reqs[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    err = coll_finish(n, reqs, err);
    free(reqs);
    return err;
}

/* For MPI_IN_PLACE: a copy of the receive buffer's span (elements
 * [0, nelem) of rv's type) to send from; *sv describes it. */
static int
alltoall_inplace(const struct vec *rv, long long nelem, struct vec *sv,
                 char **mem)
{
    MPI_Aint ext = mpii_type_extent(rv->t), lb = mpii_type_lb(rv->t);
    size_t span = (size_t)(nelem * ext);

    if ((*mem = malloc(span + 1)) == NULL)
        return MPI_ERR_NO_MEM;
    if (span > 0)
        memcpy(*mem, rv->buf + lb, span);
    *sv = *rv;
    sv->buf = *mem - lb;
    return MPI_SUCCESS;
}

#pragma weak MPI_Alltoall = PMPI_Alltoall
int
PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
              int rcount, MPI_Datatype rt, MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_type *stt = NULL, *rtt;
    struct mpii_comm *c;
    struct vec sv, rv;
    char *mem = NULL;
    size_t nb;
    int err;

    MPII_CHECK_INIT("MPI_Alltoall");
    if (mpii_comm_inter(comm)) {
        struct mpii_blocks ics = {.buf = sbuf, .count = scount, .type = st};
        struct mpii_blocks icr = {.buf = rbuf, .count = rcount, .type = rt};

        return mpii_inter_exchange(&ics, &icr, comm, "MPI_Alltoall");
    }
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Alltoall");
    if ((err = coll_check_buf(rbuf, rcount, rt, &rtt)) != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Alltoall");
    rv = (struct vec){rbuf, rcount, NULL, NULL, rt, rtt};
    nb = (size_t)rcount * mpii_type_size(rtt);
    if (sbuf == MPI_IN_PLACE) {
        err = alltoall_inplace(&rv, (long long)rcount * c->size, &sv, &mem);
    } else {
        err = coll_check_buf(sbuf, scount, st, &stt);
        if (err == MPI_SUCCESS && sbuf == rbuf && nb > 0)
            err = MPI_ERR_BUFFER;
        sv = (struct vec){(char *)sbuf, scount, NULL, NULL, st, stt};
    }
    if (err == MPI_SUCCESS)
        err = alltoall_run(&sv, &rv, nb > ALLTOALL_SHORT, c);
    free(mem);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Alltoall") : 0;
}

#pragma weak MPI_Alltoallv = PMPI_Alltoallv
int
PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
               MPI_Datatype st, void *rbuf, const int rcounts[],
               const int rdispls[], MPI_Datatype rt, MPI_Comm comm)
{
    MPII_ENTER;
    const struct mpii_type *stt = NULL, *rtt = NULL;
    struct mpii_comm *c;
    struct vec sv, rv;
    char *mem = NULL;
    long long end = 0, maxb = 0;
    int err;

    MPII_CHECK_INIT("MPI_Alltoallv");
    if (mpii_comm_inter(comm)) {
        struct mpii_blocks ics = {
            .buf = sbuf, .counts = scounts, .displs = sdispls, .type = st};
        struct mpii_blocks icr = {
            .buf = rbuf, .counts = rcounts, .displs = rdispls, .type = rt};

        return mpii_inter_exchange(&ics, &icr, comm, "MPI_Alltoallv");
    }
    if ((c = mpii_intra_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Alltoallv");
    err = coll_check_counts(rcounts, rdispls, c->size);
    if (err == MPI_SUCCESS && (rtt = mpii_type_get(rt)) == NULL)
        err = MPI_ERR_TYPE;
    if (err != MPI_SUCCESS)
        return mpii_err(comm, err, "MPI_Alltoallv");
    for (int i = 0; i < c->size; i++) {
        if (rcounts[i] > 0 && (long long)rdispls[i] + rcounts[i] > end)
            end = (long long)rdispls[i] + rcounts[i];
        if (rcounts[i] > maxb)
            maxb = rcounts[i];
    }
    maxb *= (long long)mpii_type_size(rtt);
    if ((rbuf == NULL || rbuf == MPI_IN_PLACE) && maxb > 0)
        return mpii_err(comm, MPI_ERR_BUFFER, "MPI_Alltoallv");
    rv = (struct vec){rbuf, 0, rcounts, rdispls, rt, rtt};
    if (sbuf == MPI_IN_PLACE) {
        err = alltoall_inplace(&rv, end, &sv, &mem);
    } else {
        err = coll_check_counts(scounts, sdispls, c->size);
        if (err == MPI_SUCCESS && (stt = mpii_type_get(st)) == NULL)
            err = MPI_ERR_TYPE;
        if (err == MPI_SUCCESS && (sbuf == NULL || sbuf == rbuf)) {
            for (int i = 0; i < c->size; i++)
                if (scounts[i] > 0 && mpii_type_size(stt) > 0)
                    err = MPI_ERR_BUFFER;
        }
        sv = (struct vec){(char *)sbuf, 0, scounts, sdispls, st, stt};
    }
    if (err == MPI_SUCCESS)
        err = alltoall_run(&sv, &rv, maxb > ALLTOALL_SHORT, c);
    free(mem);
    return err != MPI_SUCCESS ? mpii_err(comm, err, "MPI_Alltoallv") : 0;
}
