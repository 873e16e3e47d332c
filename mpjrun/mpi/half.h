/*
 * IEEE 754 binary16 (MPI_REAL2, the parts of MPI_COMPLEX4), kept as its
 * 16 bits: not every compiler here has a C type of it (gcc 12 has
 * _Float16 on x86-64, clang 14 does not), so reductions convert each
 * value to float, compute there and round back.  For sums and products
 * that is the correctly rounded binary16 result: float's 24 bits are at
 * least 2 * 11 + 2, so rounding twice gives the same as rounding once.
 */
#ifndef P2PMPI_HALF_H
#define P2PMPI_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float
half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, x;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float f;

    if (e == 0) {
        /* Zero or subnormal: m * 2^-24, exact in float. */
        f = (float)m * 0x1p-24f;
        return sign ? -f : f;
    }
    if (e == 0x1f)
        x = sign | 0x7f800000u | (m << 13); /* infinity, NaN */
    else
        x = sign | ((e + 112) << 23) | (m << 13);
    memcpy(&f, &x, sizeof f);
    return f;
}

/* Rounded to nearest, ties to even; beyond 65504 infinity; a NaN stays
 * a NaN (quiet). */
static inline uint16_t
half_from_float(float f)
{
    uint32_t x, ax, sign;
    float a;

    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* 65520 and up: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {
        /* Below 2^-14: a subnormal (or zero, or 2^-14 itself once
         * rounded), |f| * 2^24 rounded to an integer. */
        memcpy(&a, &ax, sizeof a);
        return (uint16_t)(sign | (uint32_t)nearbyintf(a * 0x1p24f));
    }
    /* Rebias the exponent (127 to 15) and round the 13 bits dropped. */
    ax += 0xc8000fffu + ((ax >> 13) & 1u);
    return (uint16_t)(sign | (ax >> 13));
}

#endif
