/*
 * Throttled logging of dropped connections.  A flood must not turn into a
 * flood of log lines: the first few drops of an interval are logged one
 * line each (whoever debugs one client still sees its reason), the rest
 * are only counted, and one summary line per interval says how many went
 * and why.  Pure bookkeeping with the time passed in, so that unit tests
 * drive it; the caller owns the timer that asks for the summary.
 */
#ifndef P2P_DROPLOG_H
#define P2P_DROPLOG_H

#include <stddef.h>
#include <stdint.h>

enum drop_why {
    DROP_CAP,      /* the oldest, pushed out by the global cap */
    DROP_SOURCE,   /* the oldest of one address, pushed out by its cap */
    DROP_DEADLINE, /* first frame or handshake not in time */
    DROP_BAD,      /* not our protocol, or failed authentication */
    DROP_CLOSED,   /* the other side hung up before authenticating */
    DROP__COUNT
};

struct droplog {
    const char *what;     /* "unauthenticated connections" */
    uint64_t interval_ms; /* one summary per interval at most */
    unsigned budget;      /* lines of detail per interval */
    uint64_t start_ms;    /* start of the current interval */
    int open;             /* an interval is under way */
    unsigned detailed;    /* detail lines in this interval */
    uint64_t count[DROP__COUNT];
};

void droplog_init(struct droplog *, const char *what, uint64_t interval_ms,
                  unsigned budget);
/* Count a drop; 1 if the caller may log its own line for it, 0 if it is
 * only counted (and a summary will follow). */
int droplog_note(struct droplog *, enum drop_why, uint64_t now_ms);
/* Once the interval is over: if it saw drops that were not logged one by
 * one, write the summary line into buf and return 1; either way the next
 * drop starts a new interval.  0 (nothing written) before the end. */
int droplog_summary(struct droplog *, uint64_t now_ms, char *buf, size_t len);
/* When droplog_summary() should be asked next; 0 if nothing is pending. */
uint64_t droplog_due(const struct droplog *);
/* The name of a reason, as the summary writes it. */
const char *droplog_why_name(enum drop_why);

#endif
