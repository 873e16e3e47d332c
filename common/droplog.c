/*
 * Throttled logging of dropped connections (see droplog.h).
 */
#include <stdio.h>
#include <string.h>

#include "droplog.h"

const char *
droplog_why_name(enum drop_why w)
{
    switch (w) {
    case DROP_CAP:
        return "cap";
    case DROP_SOURCE:
        return "per-address cap";
    case DROP_DEADLINE:
        return "deadline";
    case DROP_BAD:
        return "bad handshake";
    case DROP_CLOSED:
        return "closed by client";
    case DROP__COUNT:
        break;
    }
    return "?";
}

void
droplog_init(struct droplog *d, const char *what, uint64_t interval_ms,
             unsigned budget)
{
    memset(d, 0, sizeof *d);
    d->what = what;
    d->interval_ms = interval_ms > 0 ? interval_ms : 1;
    d->budget = budget;
}

static uint64_t
droplog_total(const struct droplog *d)
{
    uint64_t n = 0;
    int i;

    for (i = 0; i < DROP__COUNT; i++)
        n += d->count[i];
    return n;
}

int
droplog_note(struct droplog *d, enum drop_why why, uint64_t now_ms)
{
    if ((unsigned)why >= DROP__COUNT)
        why = DROP_BAD;
    if (!d->open || now_ms >= d->start_ms + d->interval_ms) {
        /* A new interval (a summary of the last one, if the owner did not
         * ask for it in time, is lost rather than late). */
        memset(d->count, 0, sizeof d->count);
        d->detailed = 0;
        d->start_ms = now_ms;
        d->open = 1;
    }
    d->count[why]++;
    if (d->detailed < d->budget) {
        d->detailed++;
        return 1;
    }
    return 0;
}

uint64_t
droplog_due(const struct droplog *d)
{
    return d->open ? d->start_ms + d->interval_ms : 0;
}

int
droplog_summary(struct droplog *d, uint64_t now_ms, char *buf, size_t len)
{
    uint64_t total;
    size_t used;
    int i, n, first = 1;

    if (!d->open || now_ms < d->start_ms + d->interval_ms)
        return 0;
    d->open = 0;
    total = droplog_total(d);
    if (total <= d->detailed)
        return 0; /* every one was logged already */
    n = snprintf(buf, len, "dropped %llu %s in the last %llu s (",
                 (unsigned long long)total, d->what,
                 (unsigned long long)((d->interval_ms + 999) / 1000));
    used = n > 0 && (size_t)n < len ? (size_t)n : len;
    for (i = 0; i < DROP__COUNT && used + 1 < len; i++) {
        if (d->count[i] == 0)
            continue;
        n = snprintf(buf + used, len - used, "%s%llu %s", first ? "" : ", ",
                     (unsigned long long)d->count[i],
                     droplog_why_name((enum drop_why)i));
        first = 0;
        if (n < 0 || (size_t)n >= len - used) {
            used = len;
            break;
        }
        used += (size_t)n;
    }
    if (used + 1 < len)
        snprintf(buf + used, len - used, ")");
    return 1;
}
