/*
 * The job's stdout and stderr, shown once per rank.
 *
 * The replicas of a rank run the same program, so each of its two streams
 * is one byte sequence that every replica produces; replicas only differ
 * in how far they have got.  For each (rank, stream) we count the bytes
 * shown so far; only the master (the lowest live replica) is shown, a
 * whole line at a time, so that lines of different ranks never mix.  Each
 * replica keeps the bytes it has received beyond what was shown: for the
 * master that is its partial last line, for a backup whatever it has ahead
 * of the display, so that when the master dies the backup continues from
 * the exact byte where the display stopped, with nothing lost or repeated.
 *
 * Limits.  A backup keeps at most OUTPUT_KEEP_MAX bytes per stream (its
 * buffer may take half as much again, for cheap compaction); if it runs
 * further ahead of the master, its oldest bytes are dropped but its offset
 * is still counted, so after a switch the display skips the dropped bytes
 * and continues at the right place.  A partial line longer than
 * OUTPUT_LINE_MAX is written out in pieces rather than held forever.
 *
 * With tagging, every line shown starts with "[rank] "; a piece written
 * before its newline (a long line's piece, or an unterminated last line at
 * the end of the rank) is ended with a newline so that the next line,
 * whoever's it is, starts with its own tag.  Without tagging the bytes are
 * exactly the program's.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpjrun.h"
#include "xmalloc.h"

#define OUTPUT_KEEP_MAX (4 * 1024 * 1024)
#define OUTPUT_LINE_MAX (64 * 1024)
#define OUTPUT_NSTREAMS 2

/* Bytes data[head .. head + len). */
struct obuf {
    char *data;
    size_t head, len, cap;
};

/* One replica's copy of one stream: buf holds its bytes
 * [recv - buf.len, recv). */
struct orstream {
    struct obuf buf;
    uint64_t recv;
};

struct orep {
    int dead;
    struct orstream st[OUTPUT_NSTREAMS];
};

struct orank {
    int master; /* lowest live replica, -1 when none is left */
    uint64_t shown[OUTPUT_NSTREAMS];
    struct orep *reps;
};

struct output {
    int nranks, nreplicas, tag;
    int fds[OUTPUT_NSTREAMS];
    struct orank *ranks;
    char *scratch; /* tagged lines are assembled here */
    size_t scratch_cap;
};

/* Drop n bytes from the front of a buffer. */
static void
obuf_drop(struct obuf *b, size_t n)
{
    if (n >= b->len) {
        b->head = b->len = 0;
        return;
    }
    b->head += n;
    b->len -= n;
}

/* Append bytes.  The buffer is compacted only when full and then made at
 * least half as large again as what it holds, so each byte is moved a
 * bounded number of times. */
static void
obuf_append(struct obuf *b, const char *p, size_t n)
{
    size_t need;

    if (n == 0)
        return;
    if (b->head + b->len + n > b->cap) {
        if (b->head > 0) {
            memmove(b->data, b->data + b->head, b->len);
            b->head = 0;
        }
        need = b->len + n;
        if (b->cap < need + need / 2) {
            b->cap = need < 128 ? 256 : need + need / 2;
            b->data = xreallocarray(b->data, b->cap, 1);
        }
    }
    memcpy(b->data + b->head + b->len, p, n);
    b->len += n;
}

static void
obuf_free(struct obuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* Write everything, retrying on EINTR and waiting when the descriptor is
 * non-blocking; on any other error the bytes are dropped. */
static void
output_write_full(int fd, const char *p, size_t n)
{
    struct pollfd pfd;
    ssize_t w;

    while (n > 0) {
        w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                pfd.fd = fd;
                pfd.events = POLLOUT;
                pfd.revents = 0;
                if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                    return;
                continue;
            }
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Show bytes of a rank's stream: complete lines, or with end_line a piece
 * that does not end in a newline (the tag then needs one added). */
static void
output_show(struct output *o, int rank, int stream, const char *p, size_t n,
            int end_line)
{
    char prefix[24];
    const char *nl, *end = p + n;
    size_t plen, lines, need, at;

    if (n == 0)
        return;
    if (!o->tag) {
        output_write_full(o->fds[stream], p, n);
        return;
    }
    plen = (size_t)snprintf(prefix, sizeof prefix, "[%d] ", rank);
    lines = 0;
    for (nl = p; (nl = memchr(nl, '\n', (size_t)(end - nl))) != NULL; nl++)
        lines++;
    need = n + (lines + 1) * (plen + 1);
    if (need > o->scratch_cap) {
        o->scratch = xreallocarray(o->scratch, need, 1);
        o->scratch_cap = need;
    }
    at = 0;
    while (p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        nl = nl == NULL ? end : nl + 1;
        memcpy(o->scratch + at, prefix, plen);
        at += plen;
        memcpy(o->scratch + at, p, (size_t)(nl - p));
        at += (size_t)(nl - p);
        p = nl;
    }
    if (end_line && end[-1] != '\n')
        o->scratch[at++] = '\n';
    output_write_full(o->fds[stream], o->scratch, at);
}

/* Forget what every live backup holds below the shown offset. */
static void
output_trim_backups(struct output *o, int rank, int stream)
{
    struct orank *rk = &o->ranks[rank];
    struct orstream *s;
    uint64_t start;
    int i;

    for (i = 0; i < o->nreplicas; i++) {
        if (rk->reps[i].dead || i == rk->master)
            continue;
        s = &rk->reps[i].st[stream];
        start = s->recv - s->buf.len;
        if (start < rk->shown[stream])
            obuf_drop(&s->buf, (size_t)(rk->shown[stream] - start));
    }
}

/* Show what the master has: its complete lines, its partial line if it is
 * too long or if flush is set.  Only bytes from offset scan of its buffer
 * on can hold a newline not yet seen. */
static void
output_emit(struct output *o, int rank, int stream, size_t scan, int flush)
{
    struct orank *rk = &o->ranks[rank];
    struct orstream *s;
    const char *base, *nl;
    uint64_t start;
    size_t n;

    if (rk->master < 0)
        return;
    s = &rk->reps[rk->master].st[stream];
    start = s->recv - s->buf.len;
    /* A backup that had to drop bytes: they are lost, go on from its
     * oldest. */
    if (start > rk->shown[stream])
        rk->shown[stream] = start;
    if (scan < s->buf.len) {
        base = s->buf.data + s->buf.head;
        nl = memrchr(base + scan, '\n', s->buf.len - scan);
        if (nl != NULL) {
            n = (size_t)(nl - base) + 1;
            output_show(o, rank, stream, base, n, 0);
            rk->shown[stream] += n;
            obuf_drop(&s->buf, n);
        }
    }
    if (s->buf.len > 0 && (flush || s->buf.len >= OUTPUT_LINE_MAX)) {
        base = s->buf.data + s->buf.head;
        output_show(o, rank, stream, base, s->buf.len, 1);
        rk->shown[stream] += s->buf.len;
        obuf_drop(&s->buf, s->buf.len);
    }
    output_trim_backups(o, rank, stream);
}

struct output *
output_new(int nranks, int nreplicas, int tag, int fd_out, int fd_err)
{
    struct output *o;
    int i;

    if (nranks < 1 || nreplicas < 1)
        return NULL;
    o = xcalloc(1, sizeof *o);
    o->nranks = nranks;
    o->nreplicas = nreplicas;
    o->tag = tag;
    o->fds[0] = fd_out;
    o->fds[1] = fd_err;
    o->ranks = xcalloc((size_t)nranks, sizeof *o->ranks);
    for (i = 0; i < nranks; i++) {
        o->ranks[i].master = 0;
        o->ranks[i].reps = xcalloc((size_t)nreplicas, sizeof(struct orep));
    }
    return o;
}

void
output_data(struct output *o, int rank, int replica, int stream,
            const void *data, size_t len)
{
    struct orank *rk;
    struct orstream *s;
    const char *p = data;
    uint64_t shown;
    size_t skip, old;

    if (o == NULL || rank < 0 || rank >= o->nranks || replica < 0 ||
        replica >= o->nreplicas || (stream != 1 && stream != 2) || len == 0 ||
        data == NULL)
        return;
    stream--;
    rk = &o->ranks[rank];
    if (rk->reps[replica].dead)
        return;
    s = &rk->reps[replica].st[stream];
    shown = rk->shown[stream];

    /* Keep only what lies beyond the display. */
    skip = 0;
    if (s->recv < shown)
        skip = shown - s->recv < len ? (size_t)(shown - s->recv) : len;
    /* A backup never keeps more than its limit of the newest bytes. */
    if (replica != rk->master && len - skip > OUTPUT_KEEP_MAX) {
        skip = len - OUTPUT_KEEP_MAX;
        obuf_drop(&s->buf, s->buf.len);
    }
    s->recv += len;
    old = s->buf.len;
    obuf_append(&s->buf, p + skip, len - skip);

    if (replica == rk->master)
        output_emit(o, rank, stream, old, 0);
    else if (s->buf.len > OUTPUT_KEEP_MAX)
        obuf_drop(&s->buf, s->buf.len - OUTPUT_KEEP_MAX);
}

void
output_replica_dead(struct output *o, int rank, int replica)
{
    struct orank *rk;
    struct orep *rp;
    int i;

    if (o == NULL || rank < 0 || rank >= o->nranks || replica < 0 ||
        replica >= o->nreplicas)
        return;
    rk = &o->ranks[rank];
    rp = &rk->reps[replica];
    if (rp->dead)
        return;
    rp->dead = 1;
    for (i = 0; i < OUTPUT_NSTREAMS; i++)
        obuf_free(&rp->st[i].buf);
    if (replica != rk->master)
        return;

    /* The next live replica takes over from the shown offset; what it
     * already has from there on may hold complete lines. */
    rk->master = -1;
    for (i = 0; i < o->nreplicas; i++)
        if (!rk->reps[i].dead) {
            rk->master = i;
            break;
        }
    for (i = 0; i < OUTPUT_NSTREAMS; i++)
        output_emit(o, rank, i, 0, 0);
}

void
output_rank_done(struct output *o, int rank)
{
    int i;

    if (o == NULL || rank < 0 || rank >= o->nranks)
        return;
    for (i = 0; i < OUTPUT_NSTREAMS; i++)
        output_emit(o, rank, i, 0, 1);
}

void
output_free(struct output *o)
{
    int i, j, k;

    if (o == NULL)
        return;
    for (i = 0; i < o->nranks; i++) {
        for (j = 0; j < o->nreplicas; j++)
            for (k = 0; k < OUTPUT_NSTREAMS; k++)
                obuf_free(&o->ranks[i].reps[j].st[k].buf);
        free(o->ranks[i].reps);
    }
    free(o->ranks);
    free(o->scratch);
    free(o);
}
