/*
 * CLOCK_MONOTONIC in microseconds and milliseconds.
 */
#include <time.h>

#include "monotime.h"

uint64_t
monotime_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t
monotime_ms(void)
{
    return monotime_us() / 1000u;
}
