/*
 * What this peer runs, reported to each supernode for its dashboard
 * (docs/dashboard.md): a whole snapshot of its jobs (rank and replica of
 * each process here, its state) and farms (task counts, never one entry
 * per task), bounded by the wire's limits.  A link sends it only when it
 * differs from the last one it sent (the first after each registration
 * included), or after REPORT_REFRESH_MS while jobs run, so an idle peer
 * costs its supernode nothing beyond heartbeats.  Never keys,
 * never a job's environment or arguments: user name, program base name.
 */
#include <stdlib.h>
#include <string.h>

#include "peerd.h"
#include "xmalloc.h"

#define REPORT_REFRESH_MS 10000

struct report {
    struct job_info jobs[WIRE_MAX_REPORT_JOBS];
    struct job_proc procs[WIRE_MAX_REPORT_PROCS];
    uint8_t *last; /* encoded form of the last report sent */
    size_t last_len;
    uint64_t last_ms;
    int last_empty; /* the last report sent said "nothing runs" */
};

struct report *
report_new(void)
{
    return xcalloc(1, sizeof(struct report));
}

void
report_free(struct report *r)
{
    if (r == NULL)
        return;
    free(r->last);
    free(r);
}

void
report_reset(struct report *r)
{
    free(r->last);
    r->last = NULL;
    r->last_len = 0;
    r->last_ms = 0;
    r->last_empty = 0;
}

/* Make s a token the codec accepts: printable, no spaces ('_' instead);
 * an empty one becomes "?". */
static void
report_token(char *s)
{
    size_t i;

    for (i = 0; s[i] != '\0'; i++)
        if (s[i] <= ' ' || s[i] > '~')
            s[i] = '_';
    if (i == 0)
        strcpy(s, "?");
}

int
report_due(struct report *r, const struct peerd *pd, uint64_t now_ms,
           struct msg *m)
{
    uint8_t *buf;
    size_t n, i, len;
    uint32_t more = 0;

    memset(m, 0, sizeof *m);
    n = job_report(pd, r->jobs, WIRE_MAX_REPORT_JOBS, r->procs,
                   WIRE_MAX_REPORT_PROCS, &more);
    n += farm_report(pd, r->jobs + n, WIRE_MAX_REPORT_JOBS - n, &more);
    for (i = 0; i < n; i++) {
        report_token(r->jobs[i].user);
        report_token(r->jobs[i].command);
    }
    /* Nothing runs, as the supernode was last told: the common idle
     * heartbeat, decided without encoding anything. */
    if (n == 0 && more == 0 && r->last != NULL && r->last_empty)
        return 0;
    m->type = MSG_JOB_REPORT;
    m->u.report.jobs = r->jobs;
    m->u.report.njobs = n;
    m->u.report.more = more;
    if (codec_encode(m, &buf, &len) == -1)
        return 0;
    if (r->last != NULL && len == r->last_len &&
        memcmp(buf, r->last, len) == 0 &&
        (n == 0 || now_ms - r->last_ms < REPORT_REFRESH_MS)) {
        free(buf);
        return 0;
    }
    free(r->last);
    r->last = buf;
    r->last_len = len;
    r->last_ms = now_ms;
    r->last_empty = n == 0 && more == 0;
    return 1;
}
