/*
 * For unit tests that drive a real libevent loop: the test's one base,
 * running it for a while, and waiting (with a 5 s guard, so that no case
 * can hang) until a condition holds.  Header only, like test.h.
 */
#ifndef P2P_TEST_LOOP_H
#define P2P_TEST_LOOP_H

#include <time.h>

#include <event2/event.h>

#include "test.h"

#define GUARD_MS 5000

static struct event_base *base;

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Run the loop for about ms milliseconds. */
static void
pump(int ms)
{
    struct timeval tv = {0, ms * 1000};

    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

#define WAIT_FOR(expr)                                                         \
    do {                                                                       \
        double t0_ = now_ms();                                                 \
        while (!(expr) && now_ms() - t0_ < GUARD_MS)                           \
            pump(5);                                                           \
        if (!(expr))                                                           \
            test_fail(__FILE__, __LINE__, "timed out waiting for %s", #expr);  \
    } while (0)

#endif
