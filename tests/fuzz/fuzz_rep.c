/*
 * The replication core (replication/rep.c, decide.c) fed hostile frames
 * and views in a simulated job of 3 ranks x 2 replicas (tests/unit/
 * repsim.c), mixed with the honest traffic of a running program.  The
 * input is a list of operations, each a byte that picks it and the
 * bytes it reads:
 *   0, 1  a forged frame (receiver, sender, a whole header, a payload
 *         for the types that carry one), of a type the transport passes
 *         on (wf_frame_check refuses the others before rep.c sees them)
 *   2     an honest message: every live replica of rank a sends to b
 *   3     deliver some of the frames in flight
 *   4     the coordinator declares a process dead (never the last
 *         replica of a rank: the job would be over)
 *   5     a raw datagram on a process's control socket (views)
 *   6     a master decides a wildcard receive (held until its backups
 *         know), or publishes a passive-target decision
 *   7     a rendezvous send announced, or a rendezvous receive done
 * Besides "no crash": whatever came, every process accepted from every
 * rank the numbers 1, 2, 3 ... once each and in order.
 *
 * Decision numbers in forged program-order frames are kept below 2^18,
 * four times the window (DEC_WINDOW, 2^16) a backup keeps decisions in:
 * the numbers on both sides of the bound come often; far beyond, refused
 * the same way, would add nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "rep.h"
#include "repsim.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define RANKS 3
#define NREP 2
#define NPROC (RANKS * NREP)
#define POOL 64

static struct sim sim;
static struct mpii_req pool[POOL];
static int npool;

static const uint8_t types[] = {FR_EAGER,    FR_RTS,    FR_FIN,       FR_ACK,
                                FR_TAKEOVER, FR_DECIDE, FR_DECIDE_ACK};

/* The input, read from the front. */
struct in {
    const uint8_t *p;
    size_t n;
};

static int
take(struct in *in, void *out, size_t len)
{
    if (in->n < len)
        return -1;
    memcpy(out, in->p, len);
    in->p += len;
    in->n -= len;
    return 0;
}

static int
byte(struct in *in)
{
    uint8_t b;

    return take(in, &b, 1) == 0 ? b : -1;
}

static struct mpii_req *
req(void)
{
    struct mpii_req *r;

    if (npool == POOL)
        return NULL;
    r = &pool[npool++];
    memset(r, 0, sizeof *r);
    r->kind = REQ_RECV;
    r->active = 1;
    return r;
}

static void
forged(struct in *in)
{
    uint8_t payload[64 * sizeof(int32_t)];
    struct wire_hdr h;
    int to = byte(in), from = byte(in), len = byte(in);

    if (len < 0 || take(in, &h, sizeof h) == -1)
        return;
    to %= NPROC;
    from %= NPROC;
    if (to == from)
        return; /* no connection to oneself */
    h.type = types[h.type % sizeof types];
    len %= (int)sizeof payload + 1;
    if (h.type != FR_EAGER && h.type != FR_DECIDE)
        len = 0;
    if (take(in, payload, (size_t)len) == -1)
        return;
    h.len = (uint64_t)len;
    if (h.type == FR_DECIDE && h.ctx == 0)
        h.total &= 4 * (uint64_t)DEC_WINDOW - 1;
    sim_inject(&sim, from, to, &h, len > 0 ? payload : NULL);
}

static void
honest(struct in *in)
{
    int a = byte(in), b = byte(in), tag = byte(in);

    if (tag < 0 || a % RANKS == b % RANKS)
        return;
    sim_send_all(&sim, a % RANKS, b % RANKS, tag, &tag, sizeof tag);
}

static void
declare_dead(struct in *in)
{
    int p = byte(in), y, alive = 0;

    if (p < 0)
        return;
    p %= NPROC;
    for (y = 0; y < NREP; y++)
        alive += !sim.p[p / NREP * NREP + y].dead;
    if (!sim.p[p].dead && alive > 1)
        sim_kill(&sim, p);
}

static void
datagram(struct in *in)
{
    uint8_t buf[64];
    int p = byte(in), len = byte(in);

    if (len < 0)
        return;
    len %= (int)sizeof buf + 1;
    if (take(in, buf, (size_t)len) == -1)
        return;
    sim_ctl(&sim, p % NPROC, buf, (size_t)len);
}

static void
decide(struct in *in)
{
    int rank = byte(in), v = byte(in), p;
    struct mpii_req *r;
    int32_t vals[2];

    if (v < 0)
        return;
    rank %= RANKS;
    for (p = rank * NREP; p < rank * NREP + NREP && sim.p[p].dead; p++)
        ;
    sim_use(&sim, p);
    if (v & 1) {
        vals[0] = v;
        vals[1] = rank;
        dec_async_publish((uint32_t)v, vals, 2);
    } else if ((r = req()) != NULL) {
        r->peer = MPI_ANY_SOURCE;
        r->dn = dec_next();
        dec_matched(r, v % RANKS);
        (void)dec_hold(r, MPI_SUCCESS);
    }
    rep_instance_select(NULL);
}

static void
rendezvous(struct in *in)
{
    int p = byte(in), b = byte(in), lseq = byte(in);
    struct mpii_req *r;

    if (lseq < 0)
        return;
    p %= NPROC;
    b %= RANKS;
    if (lseq & 1) {
        sim_use(&sim, p);
        rep_recv_done(b, (uint64_t)(lseq >> 1));
        rep_instance_select(NULL);
    } else if (b != p / NREP && (r = req()) != NULL) {
        r->kind = REQ_SEND;
        (void)sim_send(&sim, p, b, 0, NULL, 100000, r);
    }
}

/* Every live process took 1, 2, 3 ... from every rank, once each. */
static void
check(void)
{
    uint64_t want[RANKS];
    int p, i, a;

    for (p = 0; p < NPROC; p++) {
        if (sim.p[p].dead)
            continue;
        for (a = 0; a < RANKS; a++)
            want[a] = 1;
        for (i = 0; i < sim.p[p].ngot; i++) {
            a = sim.p[p].got[i].src;
            if (a == p / NREP || sim.p[p].got[i].lseq != want[a]++)
                abort();
        }
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct in in = {data, size};
    int op;

    if (sim_init(&sim, RANKS, NREP) != 0)
        abort();
    npool = 0;
    while ((op = byte(&in)) >= 0) {
        switch (op % 8) {
        case 0:
        case 1:
            forged(&in);
            break;
        case 2:
            honest(&in);
            break;
        case 3:
            sim_run(&sim, byte(&in) & 0x3f);
            break;
        case 4:
            declare_dead(&in);
            break;
        case 5:
            datagram(&in);
            break;
        case 6:
            decide(&in);
            break;
        default:
            rendezvous(&in);
            break;
        }
    }
    sim_run(&sim, -1);
    check();
    sim_fini(&sim);
    return 0;
}
