/*
 * Monotonic time for timeouts, ages and round-trip times.
 */
#ifndef P2P_MONOTIME_H
#define P2P_MONOTIME_H

#include <stdint.h>

uint64_t monotime_us(void);
uint64_t monotime_ms(void);

#endif
