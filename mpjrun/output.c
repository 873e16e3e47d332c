/*
 * The job's stdout and stderr, shown once per rank.
 *
 * The replicas of a rank run the same program, so each of its two streams
 * is one byte sequence that every replica produces; replicas only differ
 * in how far they have got.  For each (rank, stream) we count the bytes
 * shown so far; only the master (the lowest live replica) is shown, a
 * whole line at a time, so that lines of different ranks never mix.  Each
 * replica keeps the bytes it has received beyond what was shown: for the
 * master that is its partial last line (in memory), for a backup whatever
 * it has ahead of the display (in its spool, on disk: spool.c), so that
 * when the master dies the backup continues from the exact byte where the
 * display stopped, with nothing lost or repeated.
 *
 * Limits and back-pressure.  A backup's spool holds at most the quota
 * plus a slack per stream (OUTPUT_SLACK: what is still on its way once
 * the peer stops reading).  When a backup has a quota's worth of bytes
 * ahead of the display in either stream, the hold hook asks its peer to
 * stop reading that process's pipes (the process then blocks writing);
 * once it is below half the quota again, or becomes the master, reading
 * resumes.  The master is never held.  If a spool still overflows (a
 * peer that does not hold) or cannot be written, the bytes kept so far
 * are let go and the stream is marked with a gap; if that replica must
 * take over before the display has passed the gap, the rank's output
 * has a hole: it is said on stderr at once, naming the rank, and
 * output_lost() counts it so that the job does not end with status 0.
 * A partial line longer than OUTPUT_LINE_MAX is written out in pieces
 * rather than held forever.
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

#define OUTPUT_LINE_MAX (64 * 1024)
#define OUTPUT_NSTREAMS 2
/* Beyond the quota, what may still arrive from a held replica: the
 * peer's send backlog, socket buffers, a pipe. */
#define OUTPUT_SLACK ((uint64_t)32 * 1024 * 1024)
/* A spool is read back this much at a time when its replica takes over. */
#define OUTPUT_DRAIN_CHUNK (1024 * 1024)

/* Bytes data[head .. head + len). */
struct obuf {
    char *data;
    size_t head, len, cap;
};

/* One replica's copy of one stream.  The master holds its bytes
 * [recv - buf.len, recv) in buf; a backup holds [recv - spooled, recv) in
 * its replica's spool.  Bytes below gap_to were received but could not
 * be kept. */
struct orstream {
    struct obuf buf;
    uint64_t recv;
    uint64_t gap_to;
};

struct orep {
    int dead;
    int held; /* its peer was asked to stop reading it */
    struct spool *spool; /* made when first needed */
    char why[160];       /* why bytes could not be kept */
    struct orstream st[OUTPUT_NSTREAMS];
};

struct orank {
    int master; /* lowest live replica, -1 when none is left */
    uint64_t shown[OUTPUT_NSTREAMS];
    uint64_t lost; /* bytes that never reached the display */
    struct orep *reps;
};

struct output {
    int nranks, nreplicas, tag;
    int fds[OUTPUT_NSTREAMS];
    struct orank *ranks;
    char *scratch; /* tagged lines are assembled here */
    size_t scratch_cap;
    uint64_t quota;
    char *spool_dir;
    output_hold_fn hold;
    void *hold_arg;
    int lost_ranks;
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

/* Bytes a backup keeps ahead of the display in one stream. */
static uint64_t
output_kept(const struct orep *rp, int stream)
{
    return spool_len(rp->spool, stream);
}

/* Ask for a backup's pipes to be read again, or no longer. */
static void
output_set_hold(struct output *o, int rank, int replica, int on)
{
    struct orep *rp = &o->ranks[rank].reps[replica];

    if (rp->held == on)
        return;
    rp->held = on;
    if (o->hold != NULL)
        o->hold(o->hold_arg, rank, replica, on);
}

/* A backup well below its quota again is read again. */
static void
output_maybe_release(struct output *o, int rank, int replica)
{
    struct orep *rp = &o->ranks[rank].reps[replica];
    int i;

    if (!rp->held)
        return;
    for (i = 0; i < OUTPUT_NSTREAMS; i++)
        if (output_kept(rp, i) >= o->quota / 2)
            return;
    output_set_hold(o, rank, replica, 0);
}

/* Forget what every live backup holds below the shown offset. */
static void
output_trim_backups(struct output *o, int rank, int stream)
{
    struct orank *rk = &o->ranks[rank];
    struct orep *rp;
    struct orstream *s;
    uint64_t start;
    int i;

    for (i = 0; i < o->nreplicas; i++) {
        rp = &rk->reps[i];
        if (rp->dead || i == rk->master)
            continue;
        s = &rp->st[stream];
        start = s->recv - output_kept(rp, stream);
        if (start < rk->shown[stream])
            spool_drop(rp->spool, stream, rk->shown[stream] - start);
        output_maybe_release(o, rank, i);
        /* An empty spool goes (a job of many ranks must not hold a
         * descriptor per backup); it comes back when needed. */
        if (rp->spool != NULL && output_kept(rp, 0) == 0 &&
            output_kept(rp, 1) == 0) {
            spool_close(rp->spool);
            rp->spool = NULL;
        }
    }
}

/* A hole in a rank's output: one line on stderr, counted for the exit
 * status. */
static void
output_say_lost(struct output *o, int rank, int stream, uint64_t n)
{
    struct orank *rk = &o->ranks[rank];
    struct orep *rp = &rk->reps[rk->master];
    char line[512];
    int len;

    if (rk->lost == 0)
        o->lost_ranks++;
    rk->lost += n;
    len = snprintf(line, sizeof line,
                   "p2prun: rank %d: %llu bytes of its %s are lost: replica "
                   "%d took over but could not keep them (%s)\n",
                   rank, (unsigned long long)n,
                   stream == 0 ? "standard output" : "standard error",
                   rk->master, rp->why[0] ? rp->why : "spool full");
    if (len > 0)
        output_write_full(o->fds[1], line,
                          (size_t)len < sizeof line ? (size_t)len
                                                    : sizeof line - 1);
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
    /* A replica whose spool overflowed took over before the display had
     * passed the gap: those bytes are gone.  Say so; the job must not end
     * as if nothing happened. */
    if (start > rk->shown[stream]) {
        output_say_lost(o, rank, stream, start - rk->shown[stream]);
        rk->shown[stream] = start;
    }
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
    o->quota = OUTPUT_SPOOL_DEFAULT;
    o->ranks = xcalloc((size_t)nranks, sizeof *o->ranks);
    for (i = 0; i < nranks; i++) {
        o->ranks[i].master = 0;
        o->ranks[i].reps = xcalloc((size_t)nreplicas, sizeof(struct orep));
    }
    return o;
}

void
output_set_spool(struct output *o, uint64_t quota, const char *dir,
                 output_hold_fn hold, void *arg)
{
    if (o == NULL)
        return;
    if (quota > 0)
        o->quota = quota;
    free(o->spool_dir);
    o->spool_dir = dir != NULL ? xstrdup(dir) : NULL;
    o->hold = hold;
    o->hold_arg = arg;
}

int
output_lost(const struct output *o)
{
    return o == NULL ? 0 : o->lost_ranks;
}

/* A backup's bytes beyond the display go to its spool; when they cannot,
 * what it kept is let go and the stream has a gap up to here. */
static void
output_keep(struct output *o, int rank, int replica, int stream,
            const char *p, size_t n)
{
    struct orep *rp = &o->ranks[rank].reps[replica];
    struct orstream *s = &rp->st[stream];
    char err[128];

    if (n == 0)
        return;
    if (rp->spool == NULL &&
        (rp->spool = spool_open(o->spool_dir, OUTPUT_NSTREAMS,
                                o->quota + OUTPUT_SLACK, err, sizeof err)) ==
            NULL)
        snprintf(rp->why, sizeof rp->why, "cannot spool: %s", err);
    if (rp->spool != NULL && s->gap_to <= s->recv - n &&
        spool_put(rp->spool, stream, p, n) == 0)
        return;
    if (rp->spool != NULL && rp->why[0] == '\0')
        snprintf(rp->why, sizeof rp->why, "%s",
                 errno == ENOSPC ? "more than its spool's quota and slack"
                                 : strerror(errno));
    spool_drop(rp->spool, stream, spool_len(rp->spool, stream));
    s->gap_to = s->recv;
}

void
output_data(struct output *o, int rank, int replica, int stream,
            const void *data, size_t len)
{
    struct orank *rk;
    struct orep *rp;
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
    rp = &rk->reps[replica];
    if (rp->dead)
        return;
    s = &rp->st[stream];
    shown = rk->shown[stream];

    /* Keep only what lies beyond the display. */
    skip = 0;
    if (s->recv < shown)
        skip = shown - s->recv < len ? (size_t)(shown - s->recv) : len;
    s->recv += len;
    if (replica != rk->master) {
        /* A gap the display has passed is no gap. */
        if (s->gap_to <= shown)
            s->gap_to = 0;
        output_keep(o, rank, replica, stream, p + skip, len - skip);
        if (!rp->held && output_kept(rp, stream) >= o->quota)
            output_set_hold(o, rank, replica, 1);
        return;
    }
    old = s->buf.len;
    obuf_append(&s->buf, p + skip, len - skip);
    output_emit(o, rank, stream, old, 0);
}

/* A backup becomes the master: what it kept comes out of its spool,
 * through the master's buffer, a chunk at a time. */
static void
output_take_over(struct output *o, int rank)
{
    struct orank *rk = &o->ranks[rank];
    struct orep *rp = &rk->reps[rk->master];
    struct orstream *s;
    char *chunk;
    uint64_t kept, start;
    size_t n, old;
    int i;

    output_set_hold(o, rank, rk->master, 0);
    chunk = xmalloc(OUTPUT_DRAIN_CHUNK);
    for (i = 0; i < OUTPUT_NSTREAMS; i++) {
        s = &rp->st[i];
        kept = output_kept(rp, i);
        start = s->recv - kept;
        /* Its oldest kept byte is where the display must go on. */
        if (kept == 0 && s->recv > rk->shown[i])
            start = s->recv;
        if (start > rk->shown[i]) {
            output_say_lost(o, rank, i, start - rk->shown[i]);
            rk->shown[i] = start;
        } else if (start < rk->shown[i]) {
            spool_drop(rp->spool, i, rk->shown[i] - start);
            kept = output_kept(rp, i);
        }
        /* The master's buffer holds its bytes [recv - buf.len, recv):
         * the spool's content is exactly that range. */
        s->buf.head = s->buf.len = 0;
        s->recv -= kept;
        while (kept > 0) {
            n = spool_get(rp->spool, i, chunk, OUTPUT_DRAIN_CHUNK);
            if (n == 0) {
                /* The spool cannot be read back: what is left is lost. */
                snprintf(rp->why, sizeof rp->why, "reading its spool: %s",
                         strerror(errno));
                s->recv += kept;
                output_say_lost(o, rank, i, kept);
                rk->shown[i] = s->recv;
                spool_drop(rp->spool, i, kept);
                break;
            }
            spool_drop(rp->spool, i, n);
            kept -= n;
            s->recv += n;
            old = s->buf.len;
            obuf_append(&s->buf, chunk, n);
            output_emit(o, rank, i, old, 0);
        }
        s->gap_to = 0;
    }
    free(chunk);
    spool_close(rp->spool);
    rp->spool = NULL;
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
    rp->held = 0; /* nothing more to read from it */
    for (i = 0; i < OUTPUT_NSTREAMS; i++)
        obuf_free(&rp->st[i].buf);
    spool_close(rp->spool);
    rp->spool = NULL;
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
    if (rk->master >= 0)
        output_take_over(o, rank);
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
        {
            for (k = 0; k < OUTPUT_NSTREAMS; k++)
                obuf_free(&o->ranks[i].reps[j].st[k].buf);
            spool_close(o->ranks[i].reps[j].spool);
        }
        free(o->ranks[i].reps);
    }
    free(o->ranks);
    free(o->scratch);
    free(o->spool_dir);
    free(o);
}
