/*
 * The progress rule of replicated jobs (mpjrun/progress.c): a replica
 * behind a current partner for longer than the lag is the laggard; one
 * that moves, even slowly, is not; equal replicas are never laggards; a
 * partner that finished normally counts as ahead; figures that disagree
 * both ways say nothing; one that waits but says it is alive is spared
 * until it falls silent; the silent one goes first; lags count afresh
 * after a restart; R = 1 has no laggards.
 */
#include <stdlib.h>

#include "mpjrun.h"
#include "test.h"

#define LAG 1000

static const char nl[128] = {[0 ... 127] = '\n'};
/* n lines of output (n <= 128). */
#define LINES(n) nl, (size_t)(n)

static void
t_stopped_replica_is_the_laggard(void)
{
    struct progress *pg = progress_new(2, 2, LAG);
    int partner = -1;
    uint64_t lag = 0;

    progress_start(pg, 0, 0);
    progress_start(pg, 1, 0);
    progress_start(pg, 2, 0);
    progress_start(pg, 3, 0);
    progress_output(pg, 0, 1, LINES(10), 10);
    progress_output(pg, 1, 1, LINES(10), 12);
    /* Replica 1 of rank 0 goes on, replica 0 stops at 10 bytes. */
    progress_output(pg, 1, 1, LINES(10), 100);
    CHECK_EQ_INT(progress_laggard(pg, 100 + LAG, NULL, NULL), -1);
    progress_output(pg, 1, 1, LINES(10), 500);
    CHECK_EQ_INT(progress_laggard(pg, 100 + LAG + 1, &partner, &lag), 0);
    CHECK_EQ_INT(partner, 1);
    CHECK_EQ_INT(lag, LAG + 1);
    progress_free(pg);
}

static void
t_slow_but_moving_is_not(void)
{
    struct progress *pg = progress_new(1, 2, LAG);
    uint64_t t;

    progress_start(pg, 0, 0);
    progress_start(pg, 1, 0);
    /* Replica 0 always one step behind, but moving every 600 ms. */
    for (t = 0; t < 10000; t += 600) {
        progress_count(pg, 1, t / 600 + 2, t);
        progress_count(pg, 0, t / 600 + 1, t + 1);
        CHECK_EQ_INT(progress_laggard(pg, t + 2, NULL, NULL), -1);
    }
    progress_free(pg);
}

static void
t_equal_and_disagreeing(void)
{
    struct progress *pg = progress_new(1, 2, LAG);

    progress_start(pg, 0, 0);
    progress_start(pg, 1, 0);
    /* Both waiting at the same point for a long time. */
    progress_count(pg, 0, 5, 0);
    progress_count(pg, 1, 5, 0);
    CHECK_EQ_INT(progress_laggard(pg, 100 * LAG, NULL, NULL), -1);
    /* Lines, not bytes: the same line count of different lengths. */
    progress_output(pg, 0, 1, "ws1\n", 4, 10);
    progress_output(pg, 1, 1, "workstation-2\n", 14, 10);
    CHECK_EQ_INT(progress_laggard(pg, 100 * LAG, NULL, NULL), -1);
    progress_output(pg, 1, 1, "no newline yet", 14, 20);
    CHECK_EQ_INT(progress_laggard(pg, 100 * LAG, NULL, NULL), -1);
    /* Ahead in one figure each: nobody can be called behind. */
    progress_output(pg, 0, 1, LINES(3), 0);
    progress_count(pg, 1, 6, 0);
    CHECK_EQ_INT(progress_laggard(pg, 100 * LAG, NULL, NULL), -1);
    /* Same counts again, from a replica that waits: alive, not moving. */
    progress_count(pg, 0, 5, 50 * LAG);
    CHECK_EQ_INT(progress_laggard(pg, 100 * LAG, NULL, NULL), -1);
    progress_free(pg);
}

static void
t_finished_partner_counts(void)
{
    struct progress *pg = progress_new(1, 2, LAG);

    progress_start(pg, 0, 0);
    progress_start(pg, 1, 0);
    progress_end(pg, 1, 1, 10);
    CHECK_EQ_INT(progress_laggard(pg, 10 + LAG, NULL, NULL), -1);
    CHECK_EQ_INT(progress_laggard(pg, 11 + LAG, NULL, NULL), 0);
    /* A partner that failed is nobody's measure. */
    progress_free(pg);
    pg = progress_new(1, 2, LAG);
    progress_start(pg, 0, 0);
    progress_start(pg, 1, 0);
    progress_output(pg, 1, 2, LINES(5), 0);
    progress_end(pg, 1, 0, 10);
    CHECK_EQ_INT(progress_laggard(pg, 100 * LAG, NULL, NULL), -1);
    /* Ended replicas are never laggards. */
    progress_end(pg, 0, 1, 20);
    CHECK_EQ_INT(progress_laggard(pg, 100 * LAG, NULL, NULL), -1);
    progress_free(pg);
}

static void
t_silent_first_and_restart(void)
{
    struct progress *pg = progress_new(2, 2, LAG);

    progress_start(pg, 0, 0);
    progress_start(pg, 1, 0);
    progress_start(pg, 2, 0);
    progress_start(pg, 3, 0);
    /* Rank 1 replica 0 stops (silent); rank 0 replica 0 waits for it
     * but still reports; both fall behind their partners at once. */
    progress_count(pg, 1, 3, 100);
    progress_count(pg, 3, 3, 100);
    progress_count(pg, 0, 1, 900); /* alive, unchanged */
    CHECK_EQ_INT(progress_laggard(pg, 200 + LAG, NULL, NULL), 2);
    progress_end(pg, 2, 0, 200 + LAG);
    progress_restart(pg, 200 + LAG);
    /* Rank 0 replica 0 gets its lag counted afresh... */
    CHECK_EQ_INT(progress_laggard(pg, 300 + LAG, NULL, NULL), -1);
    /* ...and is a laggard only if it still does not move. */
    CHECK_EQ_INT(progress_laggard(pg, 201 + 2 * LAG, NULL, NULL), 0);
    progress_free(pg);
}

static void
t_waiting_but_alive_is_not(void)
{
    struct progress *pg = progress_new(1, 2, LAG);
    uint64_t t;

    progress_start(pg, 0, 0);
    progress_start(pg, 1, 0);
    progress_count(pg, 1, 4, 0);
    /* Replica 0 stays behind but says every 400 ms that it is alive
     * (waiting inside MPI): not a laggard... */
    for (t = 400; t <= 4000; t += 400) {
        progress_count(pg, 0, 2, t);
        CHECK_EQ_INT(progress_laggard(pg, t + 100, NULL, NULL), -1);
    }
    /* ...until it falls silent for half the lag. */
    CHECK_EQ_INT(progress_laggard(pg, 4000 + LAG / 2, NULL, NULL), -1);
    CHECK_EQ_INT(progress_laggard(pg, 4001 + LAG / 2, NULL, NULL), 0);
    progress_free(pg);
}

static void
t_one_replica_and_bad_arguments(void)
{
    struct progress *pg = progress_new(2, 1, LAG);

    progress_start(pg, 0, 0);
    progress_start(pg, 1, 0);
    progress_output(pg, 1, 1, LINES(100), 0);
    CHECK_EQ_INT(progress_laggard(pg, 100 * LAG, NULL, NULL), -1);
    progress_output(pg, 7, 1, LINES(1), 0);
    progress_output(pg, -1, 1, LINES(1), 0);
    progress_output(pg, 0, 3, LINES(1), 0);
    progress_count(pg, 2, 1, 0);
    progress_end(pg, 9, 1, 0);
    progress_free(pg);
    progress_free(NULL);
    CHECK(progress_new(0, 2, LAG) == NULL);
    CHECK_EQ_INT(progress_laggard(NULL, 0, NULL, NULL), -1);
}

static const struct test_case cases[] = {
    {"stopped_replica_is_the_laggard", t_stopped_replica_is_the_laggard},
    {"slow_but_moving_is_not", t_slow_but_moving_is_not},
    {"equal_and_disagreeing", t_equal_and_disagreeing},
    {"finished_partner_counts", t_finished_partner_counts},
    {"silent_first_and_restart", t_silent_first_and_restart},
    {"waiting_but_alive_is_not", t_waiting_but_alive_is_not},
    {"one_replica_and_bad_arguments", t_one_replica_and_bad_arguments},
};

TEST_MAIN(cases)
