/*
 * match_cancel (match.c): the receiver's side of MPI_Cancel of a send.
 * A cancel frame names a message by its context and the sequence number
 * of its first frame on the connection it came on, and arrives from the
 * network: it must take back only a message that came on that same
 * connection (another rank cannot take back someone else's messages),
 * only one still unexpected (not claimed by a matched probe, not still
 * being read in), and only once.  match.c alone, with the rest of the
 * library stubbed out: no receive is ever posted here.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "decide.h"
#include "test.h"

/* --- what match.c calls, stubbed ------------------------------------ */

struct mpii_counts mpii_counts; /* tool.c's, which match.c counts in */

int
conn_rank(const struct conn *c)
{
    return c != NULL;
}

int
conn_ready(const struct conn *c)
{
    return c != NULL;
}

int
conn_send(struct conn *c, struct wire_hdr *h, const void *data, size_t len,
          int copy, struct mpii_req *done)
{
    return MPI_SUCCESS;
}

int
dec_master(void)
{
    return 1;
}

void
dec_matched(struct mpii_req *r, int src)
{
}

void
mpii_log(const char *fmt, ...)
{
}

int
mpii_type_contiguous(const struct mpii_type *t)
{
    return 1;
}

size_t
mpii_type_size(const struct mpii_type *t)
{
    return 1;
}

void *
mpii_type_start(const void *buf, const struct mpii_type *t)
{
    return (void *)buf;
}

void
mpii_unpack(const void *in, size_t bytes, void *buf, int count,
            const struct mpii_type *t)
{
}

int
mpii_world_rank(void)
{
    return 0;
}

struct mpii_req *
req_by_id(uint32_t id)
{
    return NULL;
}

void
req_complete(struct mpii_req *r, int err)
{
}

struct mpii_req *
req_find_rendezvous(int wsrc, uint64_t lseq)
{
    return NULL;
}

uint32_t
req_id(const struct mpii_req *r)
{
    return 0;
}

uint64_t
req_orphan(int wsrc)
{
    return 0;
}

/* --- the cases ------------------------------------------------------- */

/* Two connections: only their addresses matter to match.c. */
static char conn_a, conn_b;
#define A ((struct conn *)&conn_a)
#define B ((struct conn *)&conn_b)

/* A message on c: eager with a payload, or (len 0, rts) announced. */
static void
arrive(struct conn *c, uint32_t ctx, int tag, uint64_t seq, int rts,
       uint32_t sid)
{
    static const char payload[] = "hello";
    struct wire_hdr h;

    memset(&h, 0, sizeof h);
    h.type = rts ? FR_RTS : FR_EAGER;
    h.ctx = ctx;
    h.src = 1;
    h.tag = tag;
    h.seq = seq;
    h.len = rts ? 0 : sizeof payload;
    h.total = rts ? 1 << 20 : sizeof payload;
    h.sid = sid;
    match_incoming(c, &h, rts ? NULL : payload);
}

static int
waiting(uint32_t ctx, int tag)
{
    MPI_Status st;

    return match_probe(ctx, MPI_ANY_SOURCE, tag, &st);
}

/* Only the connection it came on, its context and its sequence number
 * name a message; then it is gone, once. */
static void
t_who_may_take_back(void)
{
    uint32_t sid = 12345;

    arrive(A, 7, 1, 5, 0, 0);
    CHECK_EQ_INT(match_cancel(B, 7, 5, &sid), 0); /* another rank */
    CHECK_EQ_INT(match_cancel(A, 8, 5, &sid), 0); /* another context */
    CHECK_EQ_INT(match_cancel(A, 7, 4, &sid), 0); /* another frame */
    CHECK_EQ_INT(match_cancel(NULL, 7, 5, &sid), 0); /* ourselves */
    CHECK(waiting(7, 1));
    CHECK_EQ_INT(match_cancel(A, 7, 5, &sid), 1);
    CHECK_EQ_INT(sid, 0); /* eager: no rendezvous to forget */
    CHECK(!waiting(7, 1));
    CHECK_EQ_INT(match_cancel(A, 7, 5, &sid), 0); /* not twice */
    match_fini();
}

/* Of two messages of one tag, the one named goes and the other stays;
 * a rendezvous gives its id back (a single copy announced for it is
 * forgotten by the caller). */
static void
t_the_one_named(void)
{
    uint32_t sid = 0;
    struct umsg *u;

    arrive(A, 7, 1, 10, 0, 0);
    arrive(A, 7, 1, 11, 1, 99);
    CHECK_EQ_INT(match_cancel(A, 7, 11, &sid), 1);
    CHECK_EQ_INT(sid, 99);
    CHECK((u = match_claim(7, MPI_ANY_SOURCE, 1)) != NULL);
    CHECK(!waiting(7, 1)); /* the eager one was left, and now claimed */
    match_fini();
}

/* A message a matched probe claimed is the Mrecv's; one still being
 * read in stays until it is whole. */
static void
t_claimed_or_filling(void)
{
    struct mpii_req *r;
    struct wire_hdr h;
    struct umsg *u;
    uint32_t sid;
    uint8_t *dst;

    arrive(B, 9, 3, 20, 0, 0);
    CHECK(match_claim(9, MPI_ANY_SOURCE, 3) != NULL);
    CHECK_EQ_INT(match_cancel(B, 9, 20, &sid), 0);

    memset(&h, 0, sizeof h);
    h.type = FR_EAGER;
    h.ctx = 9;
    h.tag = 4;
    h.seq = 21;
    h.len = h.total = 32 << 10;
    CHECK((dst = match_eager_begin(B, &h, &r, &u)) != NULL);
    CHECK(r == NULL && u != NULL);
    CHECK_EQ_INT(match_cancel(B, 9, 21, &sid), 0);
    match_filled(u, MPI_SUCCESS);
    CHECK_EQ_INT(match_cancel(B, 9, 21, &sid), 1);
    CHECK(!waiting(9, 4));
    match_fini();
}

static const struct test_case cases[] = {
    {"who_may_take_back", t_who_may_take_back},
    {"the_one_named", t_the_one_named},
    {"claimed_or_filling", t_claimed_or_filling},
};

TEST_MAIN(cases)
