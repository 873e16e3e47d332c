/*
 * droplog: the throttle on log lines about dropped connections.  A few
 * lines of detail per interval, then only counts, and one summary line
 * once the interval is over, only if something went unlogged.
 */
#include <stdint.h>
#include <string.h>

#include "droplog.h"
#include "test.h"

struct step {
    uint64_t at_ms;
    int drop; /* enum drop_why, or -1: ask for the summary */
    int want; /* drop: detail allowed?  summary: written? */
    const char *line; /* the summary expected, when written */
};

struct scenario {
    const char *name;
    unsigned budget;
    struct step steps[16];
};

static const struct scenario scenarios[] = {
    {"within the budget: no summary",
     2,
     {{0, DROP_BAD, 1, NULL},
      {10, DROP_DEADLINE, 1, NULL},
      {10000, -1, 0, NULL},
      {-1ULL, 0, 0, NULL}}},
    {"beyond the budget: counted, summed up at the end",
     2,
     {{0, DROP_BAD, 1, NULL},
      {1, DROP_CAP, 1, NULL},
      {2, DROP_CAP, 0, NULL},
      {3, DROP_SOURCE, 0, NULL},
      {4, DROP_DEADLINE, 0, NULL},
      {9999, -1, 0, NULL}, /* not over yet */
      {10000, -1, 1,
       "dropped 5 unauthenticated connections in the last 10 s (2 cap, 1 "
       "per-address cap, 1 deadline, 1 bad handshake)"},
      {10001, -1, 0, NULL}, /* said once */
      {-1ULL, 0, 0, NULL}}},
    {"a new interval gets a new budget",
     1,
     {{0, DROP_CLOSED, 1, NULL},
      {5, DROP_CLOSED, 0, NULL},
      {10000, -1, 1,
       "dropped 2 unauthenticated connections in the last 10 s (2 closed "
       "by client)"},
      {20000, DROP_BAD, 1, NULL},
      {20001, DROP_BAD, 0, NULL},
      {30000, -1, 1,
       "dropped 2 unauthenticated connections in the last 10 s (2 bad "
       "handshake)"},
      {-1ULL, 0, 0, NULL}}},
    {"a summary asked late: the next drop starts afresh",
     0,
     {{0, DROP_CAP, 0, NULL},
      {25000, DROP_CAP, 0, NULL}, /* the first interval is lost */
      {35000, -1, 1,
       "dropped 1 unauthenticated connections in the last 10 s (1 cap)"},
      {-1ULL, 0, 0, NULL}}},
    {"nothing dropped: nothing said",
     3,
     {{100000, -1, 0, NULL}, {-1ULL, 0, 0, NULL}}},
};

static void
t_scenarios(void)
{
    struct droplog d;
    char buf[512];
    size_t i, k;
    int got;

    for (i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        const struct scenario *sc = &scenarios[i];

        test_current_name = sc->name;
        droplog_init(&d, "unauthenticated connections", 10000, sc->budget);
        for (k = 0; sc->steps[k].at_ms != -1ULL; k++) {
            const struct step *st = &sc->steps[k];

            if (st->drop >= 0) {
                got = droplog_note(&d, (enum drop_why)st->drop, st->at_ms);
                CHECK_EQ_INT(got, st->want);
                continue;
            }
            buf[0] = '\0';
            got = droplog_summary(&d, st->at_ms, buf, sizeof buf);
            CHECK_EQ_INT(got, st->want);
            if (st->line != NULL)
                CHECK_EQ_STR(buf, st->line);
        }
    }
}

/* A summary into a small buffer is cut, never overrun. */
static void
t_small_buffer(void)
{
    struct droplog d;
    char buf[24];
    int i;

    droplog_init(&d, "unauthenticated connections", 1000, 0);
    for (i = 0; i < DROP__COUNT; i++)
        droplog_note(&d, (enum drop_why)i, 0);
    memset(buf, 'x', sizeof buf);
    CHECK_EQ_INT(droplog_summary(&d, 1000, buf, sizeof buf), 1);
    CHECK(memchr(buf, '\0', sizeof buf) != NULL);
    CHECK_EQ_INT(droplog_due(&d), 0);
}

static void
t_due(void)
{
    struct droplog d;

    droplog_init(&d, "x", 500, 1);
    CHECK_EQ_INT(droplog_due(&d), 0);
    droplog_note(&d, DROP_BAD, 1000);
    CHECK_EQ_INT(droplog_due(&d), 1500);
    CHECK_EQ_STR(droplog_why_name(DROP_SOURCE), "per-address cap");
    CHECK_EQ_STR(droplog_why_name(DROP__COUNT), "?");
}

static const struct test_case cases[] = {
    {"scenarios", t_scenarios},
    {"small buffer", t_small_buffer},
    {"due", t_due},
};

TEST_MAIN(cases)
