/*
 * The owner's sharing window (owner.c): hours and days as the
 * configuration writes them, and whether a given moment is inside, with
 * the clock injected as a struct tm.
 */
#include <string.h>
#include <time.h>

#include "peerd.h"
#include "test.h"

static struct tm
at(int wday, int hour, int min)
{
    struct tm tm;

    memset(&tm, 0, sizeof tm);
    tm.tm_wday = wday;
    tm.tm_hour = hour;
    tm.tm_min = min;
    return tm;
}

static void
t_hours(void)
{
    int a, b;

    CHECK_EQ_INT(owner_parse_hours("19:00-08:00", &a, &b), 0);
    CHECK_EQ_INT(a, 19 * 60);
    CHECK_EQ_INT(b, 8 * 60);
    CHECK_EQ_INT(owner_parse_hours("0:00-24:00", &a, &b), 0);
    CHECK_EQ_INT(b, 24 * 60);
    CHECK_EQ_INT(owner_parse_hours("19-08", &a, &b), -1);
    CHECK_EQ_INT(owner_parse_hours("25:00-08:00", &a, &b), -1);
    CHECK_EQ_INT(owner_parse_hours("19:60-08:00", &a, &b), -1);
    CHECK_EQ_INT(owner_parse_hours("19:00-08:00 ", &a, &b), -1);
    CHECK_EQ_INT(owner_parse_hours("", &a, &b), -1);
}

static void
t_days(void)
{
    struct conf_list l;
    char *w[3];
    uint8_t m;

    memset(&l, 0, sizeof l);
    CHECK_EQ_INT(owner_parse_days(&l, &m), 0);
    CHECK_EQ_INT(m, 0x7f); /* none given: every day */
    w[0] = "mon-fri";
    l.v = w;
    l.n = 1;
    CHECK_EQ_INT(owner_parse_days(&l, &m), 0);
    CHECK_EQ_INT(m, 0x3e);
    w[0] = "sat";
    w[1] = "Sunday";
    l.n = 2;
    CHECK_EQ_INT(owner_parse_days(&l, &m), 0);
    CHECK_EQ_INT(m, 0x41);
    w[0] = "fri-mon"; /* across the weekend */
    l.n = 1;
    CHECK_EQ_INT(owner_parse_days(&l, &m), 0);
    CHECK_EQ_INT(m, 0x63);
    w[0] = "holiday";
    CHECK_EQ_INT(owner_parse_days(&l, &m), -1);
    w[0] = "mo";
    CHECK_EQ_INT(owner_parse_days(&l, &m), -1);
}

static void
t_window(void)
{
    struct tm tm;
    uint8_t weekdays = 0x3e;

    /* No hours: the days alone. */
    tm = at(1, 12, 0);
    CHECK(owner_window_open(-1, -1, 0x7f, &tm));
    tm = at(0, 12, 0);
    CHECK(!owner_window_open(-1, -1, weekdays, &tm));
    /* 09:00-17:00 on weekdays */
    tm = at(2, 9, 0);
    CHECK(owner_window_open(540, 1020, weekdays, &tm));
    tm = at(2, 16, 59);
    CHECK(owner_window_open(540, 1020, weekdays, &tm));
    tm = at(2, 17, 0);
    CHECK(!owner_window_open(540, 1020, weekdays, &tm));
    tm = at(6, 10, 0);
    CHECK(!owner_window_open(540, 1020, weekdays, &tm));
    /* 19:00-08:00 on weekdays: Friday night runs into Saturday morning,
     * Sunday night (not a weekday) does not run into Monday. */
    tm = at(5, 23, 0);
    CHECK(owner_window_open(1140, 480, weekdays, &tm));
    tm = at(6, 7, 59);
    CHECK(owner_window_open(1140, 480, weekdays, &tm));
    tm = at(6, 8, 0);
    CHECK(!owner_window_open(1140, 480, weekdays, &tm));
    tm = at(1, 3, 0);
    CHECK(!owner_window_open(1140, 480, weekdays, &tm));
    tm = at(1, 12, 0);
    CHECK(!owner_window_open(1140, 480, weekdays, &tm));
}

static const struct test_case cases[] = {
    {"hours", t_hours},
    {"days", t_days},
    {"window", t_window},
};

TEST_MAIN(cases)
