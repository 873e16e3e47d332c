/*
 * The progress rule of a replicated job (docs/replication.md): a replica
 * that falls behind its partners for longer than the lag allowed, while
 * a partner of the same rank is live and current, is to be declared dead
 * by the coordinator as a silent host would be.  Pure: the coordinator
 * feeds it what it hears and the time, and asks who is to go.
 *
 * What counts as progress, for each process (rank, replica):
 *   - the lines of its stdout and of its stderr received so far (lines,
 *     not bytes: a host name or a time printed by each replica differs
 *     in length, rarely in lines);
 *   - the counter its MPI library reports (messages sent and accepted),
 *     relayed by its peer at a bounded rate;
 *   - a normal end (exit 0): a finished replica is ahead of any partner
 *     still running.
 * Replicas of a deterministic rank go through the same values, so Y is
 * ahead of X when Y has every figure at least as high as X and one
 * higher (figures that disagree both ways say nothing).  X is behind
 * when a live partner (running or finished normally) is ahead of it; its
 * lag is measured from when it became behind or last moved, whichever is
 * later, so a replica that moves, even slowly, is not a laggard.  It must
 * also have been silent (no output, no report) for half the lag: a
 * stopped process is silent, while a replica that only waits for it
 * (blocked in MPI on a message the stopped one owes) still reports,
 * every half second, that it is alive.  Of the laggards whose partner
 * ahead is current (not behind anyone itself), the one heard from least
 * recently goes first.
 * After a process is declared dead every other lag is measured afresh
 * (progress_restart), since those that waited for it can now go on.
 */
#include <stdlib.h>
#include <string.h>

#include "mpjrun.h"
#include "xmalloc.h"

enum pg_state {
    PG_PENDING, /* not started */
    PG_RUNNING, /* running: may lag */
    PG_OK,      /* finished normally: ahead of every running partner */
    PG_DEAD,    /* failed or declared dead: nobody's partner */
};

struct pg_proc {
    enum pg_state state;
    uint64_t out[2]; /* stdout, stderr lines */
    uint64_t count;  /* the MPI library's counter */
    uint64_t heard_ms;
    uint64_t behind_ms; /* lagging since, 0: not behind */
};

struct progress {
    int n, r;
    uint64_t lag_ms;
    struct pg_proc *p;
};

struct progress *
progress_new(int n, int r, uint64_t lag_ms)
{
    struct progress *pg;

    if (n < 1 || r < 1)
        return NULL;
    pg = xcalloc(1, sizeof *pg);
    pg->n = n;
    pg->r = r;
    pg->lag_ms = lag_ms;
    pg->p = xcalloc((size_t)n * (size_t)r, sizeof *pg->p);
    return pg;
}

void
progress_free(struct progress *pg)
{
    if (pg == NULL)
        return;
    free(pg->p);
    free(pg);
}

/* Is y ahead of x?  Both are replicas of one rank. */
static int
pg_ahead(const struct pg_proc *y, const struct pg_proc *x)
{
    if (y->state == PG_OK)
        return x->state == PG_RUNNING;
    if (y->state != PG_RUNNING)
        return 0;
    if (y->out[0] < x->out[0] || y->out[1] < x->out[1] || y->count < x->count)
        return 0;
    return y->out[0] > x->out[0] || y->out[1] > x->out[1] ||
           y->count > x->count;
}

/* Recompute who of a rank is behind; moved is the process that just
 * advanced (-1: none). */
static void
pg_update(struct progress *pg, int rank, int moved, uint64_t now)
{
    struct pg_proc *x;
    int i, k, behind;

    for (i = rank * pg->r; i < (rank + 1) * pg->r; i++) {
        x = &pg->p[i];
        if (x->state != PG_RUNNING) {
            x->behind_ms = 0;
            continue;
        }
        behind = 0;
        for (k = rank * pg->r; k < (rank + 1) * pg->r && !behind; k++)
            behind = k != i && pg_ahead(&pg->p[k], x);
        if (!behind)
            x->behind_ms = 0;
        else if (x->behind_ms == 0 || i == moved)
            x->behind_ms = now;
    }
}

static struct pg_proc *
pg_get(struct progress *pg, int i)
{
    if (pg == NULL || i < 0 || i >= pg->n * pg->r)
        return NULL;
    return &pg->p[i];
}

void
progress_start(struct progress *pg, int i, uint64_t now)
{
    struct pg_proc *x = pg_get(pg, i);

    if (x == NULL || x->state != PG_PENDING)
        return;
    x->state = PG_RUNNING;
    x->heard_ms = now;
    pg_update(pg, i / pg->r, i, now);
}

void
progress_output(struct progress *pg, int i, int stream, const void *data,
                size_t n, uint64_t now)
{
    struct pg_proc *x = pg_get(pg, i);
    const char *p = data, *end = p + n;
    uint64_t lines = 0;

    if (x == NULL || (stream != 1 && stream != 2) || x->state != PG_RUNNING ||
        data == NULL)
        return;
    x->heard_ms = now;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        lines++;
        p++;
    }
    if (lines == 0)
        return;
    x->out[stream - 1] += lines;
    pg_update(pg, i / pg->r, i, now);
}

void
progress_count(struct progress *pg, int i, uint64_t count, uint64_t now)
{
    struct pg_proc *x = pg_get(pg, i);

    if (x == NULL || x->state != PG_RUNNING)
        return;
    x->heard_ms = now;
    if (count <= x->count)
        return; /* the same again: alive, not moving */
    x->count = count;
    pg_update(pg, i / pg->r, i, now);
}

void
progress_end(struct progress *pg, int i, int ok, uint64_t now)
{
    struct pg_proc *x = pg_get(pg, i);

    if (x == NULL || x->state == PG_OK || x->state == PG_DEAD)
        return;
    x->state = ok ? PG_OK : PG_DEAD;
    pg_update(pg, i / pg->r, -1, now);
}

void
progress_restart(struct progress *pg, uint64_t now)
{
    int i;

    for (i = 0; pg != NULL && i < pg->n * pg->r; i++)
        if (pg->p[i].behind_ms != 0)
            pg->p[i].behind_ms = now;
}

int
progress_laggard(struct progress *pg, uint64_t now, int *partner,
                 uint64_t *lag)
{
    const struct pg_proc *x, *y;
    int i, k, best = -1, best_partner = -1;

    if (pg == NULL || pg->r < 2)
        return -1;
    for (i = 0; i < pg->n * pg->r; i++) {
        x = &pg->p[i];
        if (x->state != PG_RUNNING || x->behind_ms == 0 ||
            now - x->behind_ms <= pg->lag_ms ||
            now - x->heard_ms <= pg->lag_ms / 2)
            continue;
        /* Someone ahead of it that is itself current. */
        for (k = (i / pg->r) * pg->r; k < (i / pg->r + 1) * pg->r; k++) {
            y = &pg->p[k];
            if (k != i && pg_ahead(y, x) &&
                (y->state == PG_OK || y->behind_ms == 0))
                break;
        }
        if (k == (i / pg->r + 1) * pg->r)
            continue;
        if (best == -1 || x->heard_ms < pg->p[best].heard_ms) {
            best = i;
            best_partner = k % pg->r;
        }
    }
    if (best >= 0) {
        if (partner != NULL)
            *partner = best_partner;
        if (lag != NULL)
            *lag = now - pg->p[best].behind_ms;
    }
    return best;
}
