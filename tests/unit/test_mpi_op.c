/*
 * MPI reduction operations (mpjrun/mpi/op.c): every builtin operation on
 * every type the standard defines it on, against a plain reference; the
 * types it is not defined on; derived types; user operations; handles.
 */
#include <complex.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "mpii.h"
#include "test.h"

/* errh.c and env.c are not linked: the last error reported is kept. */
static int last_err;
static const char *last_fn;

int
mpii_err(MPI_Comm comm, int err, const char *fn)
{
    last_err = err;
    last_fn = fn;
    return err;
}

int
mpii_initialized(void)
{
    return 0;
}

/* request.c's, for thread.c: nothing moves here. */
unsigned long
mpii_events(void)
{
    return 0;
}

/* The type groups of the standard (MPI 3.1, 5.9.2), plus MPI_CHAR as an
 * integer as MPICH does. */
static const MPI_Datatype int_types[] = {
    MPI_CHAR,
    MPI_SIGNED_CHAR,
    MPI_UNSIGNED_CHAR,
    MPI_SHORT,
    MPI_UNSIGNED_SHORT,
    MPI_INT,
    MPI_UNSIGNED,
    MPI_LONG,
    MPI_UNSIGNED_LONG,
    MPI_LONG_LONG,
    MPI_UNSIGNED_LONG_LONG,
    MPI_INT8_T,
    MPI_INT16_T,
    MPI_INT32_T,
    MPI_INT64_T,
    MPI_UINT8_T,
    MPI_UINT16_T,
    MPI_UINT32_T,
    MPI_UINT64_T,
    MPI_AINT,
    MPI_OFFSET,
    MPI_COUNT,
#ifdef MPII_HAVE_INTEGER16
    MPI_INTEGER16,
#endif
};
/* The 16-byte Fortran kinds reduce where C has their types (mpii.h). */
static const MPI_Datatype float_types[] = {MPI_FLOAT, MPI_DOUBLE,
                                           MPI_LONG_DOUBLE, MPI_REAL2,
#ifdef MPII_HAVE_REAL16
                                           MPI_REAL16
#endif
};
static const MPI_Datatype complex_types[] = {
    MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX,
    MPI_COMPLEX4,
#ifdef MPII_HAVE_REAL16
    MPI_COMPLEX32
#endif
};
static const MPI_Datatype pair_types[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT,
                                          MPI_LONG_INT,  MPI_2INT,
                                          MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};

#define IN(dt, list) in_list(dt, list, sizeof list / sizeof list[0])

static int
in_list(MPI_Datatype dt, const MPI_Datatype *list, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (list[i] == dt)
            return 1;
    return 0;
}

/* Whether the standard defines op on dt. */
static int
defined_on(MPI_Op op, MPI_Datatype dt)
{
    int integer = IN(dt, int_types);

    switch (op) {
    case MPI_MAX:
    case MPI_MIN:
        return integer || IN(dt, float_types);
    case MPI_SUM:
    case MPI_PROD:
        return integer || IN(dt, float_types) || IN(dt, complex_types);
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR:
        return integer || dt == MPI_C_BOOL;
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR:
        return integer || dt == MPI_BYTE;
    case MPI_MINLOC:
    case MPI_MAXLOC:
        return IN(dt, pair_types);
    case MPI_REPLACE:
    case MPI_NO_OP:
        return 1;
    }
    return 0;
}

/* The C type a Fortran or C++ type (or a pair of one) stands for. */
static MPI_Datatype
c_equiv(MPI_Datatype dt)
{
    static const MPI_Datatype map[][2] = {
        {MPI_CXX_BOOL, MPI_C_BOOL},
        {MPI_CXX_FLOAT_COMPLEX, MPI_C_FLOAT_COMPLEX},
        {MPI_CXX_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX},
        {MPI_CHARACTER, MPI_CHAR},
        {MPI_LOGICAL, MPI_INT},
        {MPI_INTEGER, MPI_INT},
        {MPI_REAL, MPI_FLOAT},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE},
        {MPI_COMPLEX, MPI_C_FLOAT_COMPLEX},
        {MPI_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX},
        {MPI_INTEGER1, MPI_INT8_T},
        {MPI_INTEGER2, MPI_INT16_T},
        {MPI_INTEGER4, MPI_INT32_T},
        {MPI_INTEGER8, MPI_INT64_T},
        {MPI_REAL4, MPI_FLOAT},
        {MPI_REAL8, MPI_DOUBLE},
        {MPI_2REAL, MPI_FLOAT},
        {MPI_2DOUBLE_PRECISION, MPI_DOUBLE},
        {MPI_2INTEGER, MPI_INT},
        {MPI_COMPLEX8, MPI_C_FLOAT_COMPLEX},
        {MPI_COMPLEX16, MPI_C_DOUBLE_COMPLEX},
    };
    size_t i;

    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i][0] == dt)
            return map[i][1];
    return dt;
}

/* Each builtin op on each builtin type: done, or MPI_ERR_OP, even for
 * zero elements.  (MPI_WCHAR, MPI_PACKED: no operation but REPLACE.) */
static void
t_defined(void)
{
    union {
        long double ld;
        char c[256];
    } a, b;
    int op, dt, want, rc;

    for (op = 1; op <= P2P_OP_BUILTIN_MAX; op++)
        for (dt = 1; dt <= P2P_DT_BUILTIN_MAX; dt++) {
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            want = defined_on(P2P_OP(op), c_equiv(P2P_DT(dt))) ? MPI_SUCCESS
                                                               : MPI_ERR_OP;
            rc = mpii_op_apply(P2P_OP(op), &a, &b, 3, P2P_DT(dt));
            if (!CHECK_EQ_INT(rc, want))
                fprintf(stderr, "  op %d type %d\n", op, dt);
            rc = mpii_op_apply(P2P_OP(op), &a, &b, 0, P2P_DT(dt));
            if (!CHECK_EQ_INT(rc, want))
                fprintf(stderr, "  op %d type %d, count 0\n", op, dt);
        }
    CHECK(!defined_on(MPI_SUM, MPI_WCHAR));
    CHECK(!defined_on(MPI_BAND, MPI_PACKED));
}

/* --- integers -------------------------------------------------------- */

static const MPI_Op int_ops[] = {MPI_MAX,  MPI_MIN, MPI_SUM,  MPI_PROD,
                                 MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND,
                                 MPI_BOR,  MPI_BXOR};

/* Small non-negative operands: every result fits every integer type. */
static const long long va[] = {3, 0, 7, 12, 1, 9, 0, 5};
static const long long vb[] = {5, 0, 2, 10, 9, 6, 4, 12};
#define NV (sizeof va / sizeof va[0])

static long long
int_ref(MPI_Op op, long long a, long long b)
{
    switch (op) {
    case MPI_MAX:
        return a > b ? a : b;
    case MPI_MIN:
        return a < b ? a : b;
    case MPI_SUM:
        return a + b;
    case MPI_PROD:
        return a * b;
    case MPI_LAND:
        return a && b;
    case MPI_LOR:
        return a || b;
    case MPI_LXOR:
        return !a != !b;
    case MPI_BAND:
        return a & b;
    case MPI_BOR:
        return a | b;
    case MPI_BXOR:
        return a ^ b;
    }
    return -1;
}

/* Every integer op on one type: inout changes as the reference says and
 * in does not change. */
#define INT_CASE(dt, T)                                                        \
    do {                                                                       \
        T a[NV], b[NV];                                                        \
        size_t i, k;                                                           \
        for (k = 0; k < sizeof int_ops / sizeof int_ops[0]; k++) {             \
            for (i = 0; i < NV; i++) {                                         \
                a[i] = (T)va[i];                                               \
                b[i] = (T)vb[i];                                               \
            }                                                                  \
            CHECK_EQ_INT(mpii_op_apply(int_ops[k], a, b, (int)NV, dt),         \
                         MPI_SUCCESS);                                         \
            for (i = 0; i < NV; i++) {                                         \
                if (!CHECK_EQ_INT((long long)b[i],                             \
                                  int_ref(int_ops[k], va[i], vb[i])) ||        \
                    !CHECK_EQ_INT((long long)a[i], va[i]))                     \
                    fprintf(stderr, "  %s, op %zu, element %zu\n", #T, k, i);  \
            }                                                                  \
        }                                                                      \
    } while (0)

static void
t_integers(void)
{
    INT_CASE(MPI_CHAR, char);
    INT_CASE(MPI_SIGNED_CHAR, signed char);
    INT_CASE(MPI_UNSIGNED_CHAR, unsigned char);
    INT_CASE(MPI_SHORT, short);
    INT_CASE(MPI_UNSIGNED_SHORT, unsigned short);
    INT_CASE(MPI_INT, int);
    INT_CASE(MPI_UNSIGNED, unsigned);
    INT_CASE(MPI_LONG, long);
    INT_CASE(MPI_UNSIGNED_LONG, unsigned long);
    INT_CASE(MPI_LONG_LONG, long long);
    INT_CASE(MPI_UNSIGNED_LONG_LONG, unsigned long long);
    INT_CASE(MPI_INT8_T, int8_t);
    INT_CASE(MPI_INT16_T, int16_t);
    INT_CASE(MPI_INT32_T, int32_t);
    INT_CASE(MPI_INT64_T, int64_t);
    INT_CASE(MPI_UINT8_T, uint8_t);
    INT_CASE(MPI_UINT16_T, uint16_t);
    INT_CASE(MPI_UINT32_T, uint32_t);
    INT_CASE(MPI_UINT64_T, uint64_t);
    INT_CASE(MPI_AINT, MPI_Aint);
    INT_CASE(MPI_OFFSET, MPI_Offset);
    INT_CASE(MPI_COUNT, MPI_Count);
}

/* x op y on one element of type T is want. */
#define ONE(T, dt, op, x, y, want)                                             \
    do {                                                                       \
        T a_ = (x), b_ = (y);                                                  \
        CHECK_EQ_INT(mpii_op_apply(op, &a_, &b_, 1, dt), MPI_SUCCESS);         \
        CHECK_EQ_INT((long long)b_, (long long)(T)(want));                     \
    } while (0)

/* Negative operands, and sums and products that wrap around as in two's
 * complement (the library must not overflow a signed type). */
static void
t_signed_and_wrap(void)
{
    ONE(int, MPI_INT, MPI_MAX, -5, 3, 3);
    ONE(int, MPI_INT, MPI_MIN, -5, 3, -5);
    ONE(int, MPI_INT, MPI_SUM, -5, 3, -2);
    ONE(int, MPI_INT, MPI_PROD, -5, 3, -15);
    ONE(int, MPI_INT, MPI_SUM, INT_MAX, 1, INT_MIN);
    ONE(int, MPI_INT, MPI_PROD, INT_MAX, 2, -2);
    ONE(int, MPI_INT, MPI_PROD, INT_MIN, -1, INT_MIN);
    ONE(int, MPI_INT, MPI_BAND, -1, 0x0f0f, 0x0f0f);
    ONE(int, MPI_INT, MPI_BOR, -256, 0xff, -1);
    ONE(int, MPI_INT, MPI_BXOR, -1, 0, -1);
    ONE(int, MPI_INT, MPI_LAND, -7, 2, 1);
    ONE(int, MPI_INT, MPI_LXOR, -7, 2, 0);
    ONE(int, MPI_INT, MPI_LOR, 0, 0, 0);
    ONE(signed char, MPI_SIGNED_CHAR, MPI_SUM, -128, -1, 127);
    ONE(signed char, MPI_SIGNED_CHAR, MPI_MAX, -128, -1, -1);
    ONE(int8_t, MPI_INT8_T, MPI_PROD, 100, 3, 44);
    ONE(short, MPI_SHORT, MPI_PROD, 300, 300, 24464);
    ONE(short, MPI_SHORT, MPI_MIN, -300, 300, -300);
    ONE(long long, MPI_LONG_LONG, MPI_SUM, LLONG_MAX, 1, LLONG_MIN);
    ONE(long long, MPI_LONG_LONG, MPI_PROD, -3, 4, -12);
    ONE(int64_t, MPI_INT64_T, MPI_MIN, INT64_MIN, 0, INT64_MIN);
    ONE(MPI_Aint, MPI_AINT, MPI_SUM, -1, -1, -2);
    ONE(uint8_t, MPI_UINT8_T, MPI_SUM, 200, 100, 44);
    ONE(uint8_t, MPI_UINT8_T, MPI_PROD, 16, 16, 0);
    ONE(unsigned, MPI_UNSIGNED, MPI_SUM, UINT_MAX, 2, 1);
    ONE(unsigned, MPI_UNSIGNED, MPI_MAX, UINT_MAX, 2, UINT_MAX);
    ONE(unsigned long long, MPI_UNSIGNED_LONG_LONG, MPI_PROD, ULLONG_MAX,
        ULLONG_MAX, 1);
    ONE(uint64_t, MPI_UINT64_T, MPI_BXOR, UINT64_MAX, 1, UINT64_MAX - 1);
}

/* --- floating point, complex, logical, byte -------------------------- */

static const MPI_Op float_ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD};
/* Exactly representable operands and results. */
static const long double fa[] = {1.5, -2, 0.25, 8, 0, -3.5};
static const long double fb[] = {-0.5, 3, 0.25, -8, 1024, -0.125};
#define NF (sizeof fa / sizeof fa[0])

static long double
float_ref(MPI_Op op, long double a, long double b)
{
    switch (op) {
    case MPI_MAX:
        return a > b ? a : b;
    case MPI_MIN:
        return a < b ? a : b;
    case MPI_SUM:
        return a + b;
    case MPI_PROD:
        return a * b;
    }
    return -1;
}

#define FLOAT_CASE(dt, T)                                                      \
    do {                                                                       \
        T a[NF], b[NF];                                                        \
        size_t i, k;                                                           \
        for (k = 0; k < sizeof float_ops / sizeof float_ops[0]; k++) {         \
            for (i = 0; i < NF; i++) {                                         \
                a[i] = (T)fa[i];                                               \
                b[i] = (T)fb[i];                                               \
            }                                                                  \
            CHECK_EQ_INT(mpii_op_apply(float_ops[k], a, b, (int)NF, dt),       \
                         MPI_SUCCESS);                                         \
            for (i = 0; i < NF; i++)                                           \
                if (!CHECK((long double)b[i] ==                                \
                           float_ref(float_ops[k], fa[i], fb[i])) ||           \
                    !CHECK((long double)a[i] == fa[i]))                        \
                    fprintf(stderr, "  %s, op %zu, element %zu\n", #T, k, i);  \
        }                                                                      \
    } while (0)

static void
t_floats(void)
{
    FLOAT_CASE(MPI_FLOAT, float);
    FLOAT_CASE(MPI_DOUBLE, double);
    FLOAT_CASE(MPI_LONG_DOUBLE, long double);
}

/* CMPLX/CMPLXF are missing from glibc's header under clang; the
 * operands here are finite, so r + i * I is exact. */
#define MKF(r, i) ((float _Complex)((float)(r) + (float)(i)*I))
#define MKD(r, i) ((double _Complex)((double)(r) + (double)(i)*I))

#define COMPLEX_CASE(dt, T, MK)                                                \
    do {                                                                       \
        T a[3], b[3];                                                          \
        const T sum[3] = {MK(4, 1), MK(1.5, 2), MK(3, 0)};                     \
        const T prod[3] = {MK(5, 5), MK(-1, -1), MK(1, 3)};                    \
        size_t i;                                                              \
        a[0] = MK(1, 2), a[1] = MK(-0.5, 0), a[2] = MK(3, -1);                 \
        b[0] = MK(3, -1), b[1] = MK(2, 2), b[2] = MK(0, 1);                    \
        CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 3, dt), MPI_SUCCESS);        \
        for (i = 0; i < 3; i++)                                                \
            CHECK(creal(b[i]) == creal(sum[i]) &&                              \
                  cimag(b[i]) == cimag(sum[i]));                               \
        b[0] = MK(3, -1), b[1] = MK(2, 2), b[2] = MK(0, 1);                    \
        CHECK_EQ_INT(mpii_op_apply(MPI_PROD, a, b, 3, dt), MPI_SUCCESS);       \
        for (i = 0; i < 3; i++)                                                \
            CHECK(creal(b[i]) == creal(prod[i]) &&                             \
                  cimag(b[i]) == cimag(prod[i]));                              \
        CHECK_EQ_INT(mpii_op_apply(MPI_MAX, a, b, 3, dt), MPI_ERR_OP);         \
    } while (0)

static void
t_complex(void)
{
    COMPLEX_CASE(MPI_C_FLOAT_COMPLEX, float _Complex, MKF);
    COMPLEX_CASE(MPI_C_DOUBLE_COMPLEX, double _Complex, MKD);
    COMPLEX_CASE(MPI_C_COMPLEX, float _Complex, MKF);
}

static void
t_bool_and_byte(void)
{
    static const _Bool ba[4] = {0, 0, 1, 1}, bb[4] = {0, 1, 0, 1};
    static const _Bool land[4] = {0, 0, 0, 1}, lor[4] = {0, 1, 1, 1},
                       lxor[4] = {0, 1, 1, 0};
    static const unsigned char ya[4] = {0xf0, 0x3c, 0xff, 0x00},
                               yb[4] = {0x3c, 0x3c, 0x0f, 0x00};
    static const unsigned char band[4] = {0x30, 0x3c, 0x0f, 0},
                               bor[4] = {0xfc, 0x3c, 0xff, 0},
                               bxor[4] = {0xcc, 0x00, 0xf0, 0};
    _Bool b[4];
    unsigned char y[4];

    memcpy(b, bb, sizeof b);
    CHECK_EQ_INT(mpii_op_apply(MPI_LAND, ba, b, 4, MPI_C_BOOL), 0);
    CHECK_MEM(b, land, sizeof b);
    memcpy(b, bb, sizeof b);
    CHECK_EQ_INT(mpii_op_apply(MPI_LOR, ba, b, 4, MPI_C_BOOL), 0);
    CHECK_MEM(b, lor, sizeof b);
    memcpy(b, bb, sizeof b);
    CHECK_EQ_INT(mpii_op_apply(MPI_LXOR, ba, b, 4, MPI_C_BOOL), 0);
    CHECK_MEM(b, lxor, sizeof b);

    memcpy(y, yb, sizeof y);
    CHECK_EQ_INT(mpii_op_apply(MPI_BAND, ya, y, 4, MPI_BYTE), 0);
    CHECK_MEM(y, band, sizeof y);
    memcpy(y, yb, sizeof y);
    CHECK_EQ_INT(mpii_op_apply(MPI_BOR, ya, y, 4, MPI_BYTE), 0);
    CHECK_MEM(y, bor, sizeof y);
    memcpy(y, yb, sizeof y);
    CHECK_EQ_INT(mpii_op_apply(MPI_BXOR, ya, y, 4, MPI_BYTE), 0);
    CHECK_MEM(y, bxor, sizeof y);
    /* Bytes are not numbers. */
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, ya, y, 4, MPI_BYTE), MPI_ERR_OP);
    CHECK_EQ_INT(mpii_op_apply(MPI_MAX, ya, y, 4, MPI_BYTE), MPI_ERR_OP);
    CHECK_EQ_INT(mpii_op_apply(MPI_LAND, ya, y, 4, MPI_BYTE), MPI_ERR_OP);
    CHECK_EQ_INT(mpii_op_apply(MPI_BAND, ba, b, 4, MPI_C_BOOL), MPI_ERR_OP);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, ba, b, 4, MPI_C_BOOL), MPI_ERR_OP);
}

/* --- MINLOC and MAXLOC ---------------------------------------------- */

/* (value, index) of in and inout, and the MINLOC and MAXLOC results:
 * a tie keeps the value and takes the lower index. */
static const struct loc_case {
    int av, ai, bv, bi;
    int minv, mini, maxv, maxi;
} loc_cases[] = {
    {1, 5, 2, 3, 1, 5, 2, 3},           {4, 0, -1, 7, -1, 7, 4, 0},
    {3, 2, 3, 9, 3, 2, 3, 2},           {3, 9, 3, 2, 3, 2, 3, 2},
    {0, 4, 0, 4, 0, 4, 0, 4},           {-7, 1, -7, 0, -7, 0, -7, 0},
    {100, 8, -100, 9, -100, 9, 100, 8},
};
#define NLOC (sizeof loc_cases / sizeof loc_cases[0])

#define LOC_CASE(dt, T)                                                        \
    do {                                                                       \
        struct {                                                               \
            T v;                                                               \
            int i;                                                             \
        } a[NLOC], b[NLOC], c[NLOC];                                           \
        size_t k;                                                              \
        for (k = 0; k < NLOC; k++) {                                           \
            a[k].v = (T)loc_cases[k].av;                                       \
            a[k].i = loc_cases[k].ai;                                          \
            b[k].v = (T)loc_cases[k].bv;                                       \
            b[k].i = loc_cases[k].bi;                                          \
            c[k] = b[k];                                                       \
        }                                                                      \
        CHECK_EQ_INT(mpii_op_apply(MPI_MINLOC, a, b, (int)NLOC, dt), 0);       \
        CHECK_EQ_INT(mpii_op_apply(MPI_MAXLOC, a, c, (int)NLOC, dt), 0);       \
        for (k = 0; k < NLOC; k++)                                             \
            if (!CHECK(b[k].v == (T)loc_cases[k].minv &&                       \
                       b[k].i == loc_cases[k].mini &&                          \
                       c[k].v == (T)loc_cases[k].maxv &&                       \
                       c[k].i == loc_cases[k].maxi))                           \
                fprintf(stderr, "  %s, case %zu\n", #dt, k);                   \
    } while (0)

static void
t_minloc_maxloc(void)
{
    LOC_CASE(MPI_FLOAT_INT, float);
    LOC_CASE(MPI_DOUBLE_INT, double);
    LOC_CASE(MPI_LONG_INT, long);
    LOC_CASE(MPI_2INT, int);
    LOC_CASE(MPI_SHORT_INT, short);
    LOC_CASE(MPI_LONG_DOUBLE_INT, long double);
}

/* --- derived types --------------------------------------------------- */

struct double_int {
    double v;
    int i;
};
struct short_int {
    short v;
    int i;
};

static void
t_derived_contiguous(void)
{
    static const int bl[] = {1}, disp[] = {-2};
    MPI_Datatype c4, neg;
    int a[8], b[8], i;

    CHECK_EQ_INT(MPI_Type_contiguous(4, MPI_INT, &c4), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&c4), MPI_SUCCESS);
    for (i = 0; i < 8; i++) {
        a[i] = i * 3 - 7;
        b[i] = 100 * i;
    }
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 2, c4), MPI_SUCCESS);
    for (i = 0; i < 8; i++)
        CHECK_EQ_INT(b[i], i * 3 - 7 + 100 * i);
    CHECK_EQ_INT(mpii_op_apply(MPI_BAND, a, b, 2, c4), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_op_apply(MPI_MINLOC, a, b, 2, c4), MPI_ERR_OP);

    /* One int at displacement -2: elements at -2, -1, 0 from origin. */
    CHECK_EQ_INT(MPI_Type_indexed(1, bl, disp, MPI_INT, &neg), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&neg), MPI_SUCCESS);
    for (i = 0; i < 8; i++) {
        a[i] = i + 1;
        b[i] = 10 * (i + 1);
    }
    CHECK_EQ_INT(mpii_op_apply(MPI_PROD, a + 4, b + 4, 3, neg), 0);
    for (i = 0; i < 8; i++)
        CHECK_EQ_INT(b[i],
                     i >= 2 && i <= 4 ? 10 * (i + 1) * (i + 1) : 10 * (i + 1));
    MPI_Type_free(&c4);
    MPI_Type_free(&neg);
}

/* A strided type: the op touches the data and leaves the gaps. */
static void
t_derived_strided(void)
{
    static const int data[] = {0, 2, 4, 5, 7, 9};
    static const int bl[] = {1, 1}, disp[] = {1, 1};
    MPI_Datatype vec, dup;
    double a[12], b[12], want[12];
    int ia[4], ib[4], i, k;

    /* vector(3, 1, 2): doubles 0, 2, 4; extent 5. */
    CHECK_EQ_INT(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&vec), MPI_SUCCESS);
    for (i = 0; i < 12; i++) {
        a[i] = -77;
        b[i] = want[i] = 99;
    }
    for (k = 0; k < 6; k++) {
        a[data[k]] = k % 2 ? 1000 + k : -k;
        b[data[k]] = 10 * k;
        want[data[k]] = a[data[k]] > b[data[k]] ? a[data[k]] : b[data[k]];
    }
    CHECK_EQ_INT(mpii_op_apply(MPI_MAX, a, b, 2, vec), MPI_SUCCESS);
    CHECK_MEM(b, want, sizeof b);
    CHECK_EQ_INT(a[1], -77);

    /* MPI_REPLACE copies the data and leaves the gaps; NO_OP nothing. */
    for (k = 0; k < 6; k++)
        want[data[k]] = a[data[k]];
    CHECK_EQ_INT(mpii_op_apply(MPI_REPLACE, a, b, 2, vec), MPI_SUCCESS);
    CHECK_MEM(b, want, sizeof b);
    for (i = 0; i < 12; i++)
        b[i] = want[i] = i;
    CHECK_EQ_INT(mpii_op_apply(MPI_NO_OP, a, b, 2, vec), MPI_SUCCESS);
    CHECK_MEM(b, want, sizeof b);
    CHECK_EQ_INT(mpii_op_apply(MPI_BOR, a, b, 2, vec), MPI_ERR_OP);

    /* The same int twice in one element: combined once, not twice. */
    CHECK_EQ_INT(MPI_Type_indexed(2, bl, disp, MPI_INT, &dup), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&dup), MPI_SUCCESS);
    for (i = 0; i < 4; i++) {
        ia[i] = i + 1;
        ib[i] = 10;
    }
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, ia, ib, 1, dup), MPI_SUCCESS);
    CHECK(ib[0] == 10 && ib[1] == 12 && ib[2] == 10 && ib[3] == 10);
    MPI_Type_free(&vec);
    MPI_Type_free(&dup);
}

/* Derived types over padded pairs go element by element and keep the
 * padding of inout. */
static void
t_derived_pairs(void)
{
    MPI_Datatype cdi, vsi;
    struct double_int a[4], b[4];
    struct short_int sa[4], sb[4];
    unsigned char *p;
    int k;

    CHECK_EQ_INT(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &cdi), 0);
    CHECK_EQ_INT(MPI_Type_commit(&cdi), MPI_SUCCESS);
    memset(a, 0, sizeof a);
    memset(b, 0xab, sizeof b);
    for (k = 0; k < 4; k++) {
        a[k].v = k;
        a[k].i = k;
        b[k].v = 3 - k;
        b[k].i = 10 + k;
    }
    CHECK_EQ_INT(mpii_op_apply(MPI_MINLOC, a, b, 2, cdi), MPI_SUCCESS);
    CHECK(b[0].v == 0 && b[0].i == 0);
    CHECK(b[1].v == 1 && b[1].i == 1);
    CHECK(b[2].v == 1 && b[2].i == 12);
    CHECK(b[3].v == 0 && b[3].i == 13);
    for (k = 0; k < 4; k++) {
        p = (unsigned char *)&b[k];
        if (sizeof b[k] > 12)
            CHECK_EQ_INT(p[sizeof b[k] - 1], 0xab);
    }
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 2, cdi), MPI_ERR_OP);

    /* vector(2, 1, 3) of SHORT_INT: pairs 0 and 3. */
    CHECK_EQ_INT(MPI_Type_vector(2, 1, 3, MPI_SHORT_INT, &vsi), 0);
    CHECK_EQ_INT(MPI_Type_commit(&vsi), MPI_SUCCESS);
    memset(sb, 0xcd, sizeof sb);
    for (k = 0; k < 4; k++) {
        sa[k].v = (short)(k * 100);
        sa[k].i = k;
        sb[k].v = 150;
        sb[k].i = 7;
    }
    CHECK_EQ_INT(mpii_op_apply(MPI_MAXLOC, sa, sb, 1, vsi), MPI_SUCCESS);
    CHECK(sb[0].v == 150 && sb[0].i == 7);
    CHECK(sb[1].v == 150 && sb[1].i == 7);
    CHECK(sb[2].v == 150 && sb[2].i == 7);
    CHECK(sb[3].v == 300 && sb[3].i == 3);
    p = (unsigned char *)&sb[3];
    if (offsetof(struct short_int, i) > sizeof(short))
        CHECK_EQ_INT(p[sizeof(short)], 0xcd);
    MPI_Type_free(&cdi);
    MPI_Type_free(&vsi);
}

/* Types and counts are checked too. */
static void
t_bad_types(void)
{
    MPI_Datatype unc, freed;
    int a[4] = {0}, b[4] = {0};

    CHECK_EQ_INT(MPI_Type_contiguous(2, MPI_INT, &unc), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 1, unc), MPI_ERR_TYPE);
    CHECK_EQ_INT(MPI_Type_contiguous(2, MPI_INT, &freed), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&freed), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 1, freed), MPI_SUCCESS);
    {
        MPI_Datatype copy = freed;

        MPI_Type_free(&freed);
        CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 1, copy), MPI_ERR_TYPE);
        CHECK_EQ_INT(mpii_op_apply(MPI_REPLACE, a, b, 1, copy), MPI_ERR_TYPE);
    }
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 1, 0), MPI_ERR_TYPE);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 1, -1), MPI_ERR_TYPE);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 1, MPI_DATATYPE_NULL),
                 MPI_ERR_TYPE);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, 1, MPI_SUM), MPI_ERR_TYPE);
    CHECK_EQ_INT(
        mpii_op_apply(MPI_SUM, a, b, 1, P2P_DT(P2P_DT_BUILTIN_MAX + 1)),
        MPI_ERR_TYPE);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, -1, MPI_INT), MPI_ERR_COUNT);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, b, INT_MIN, MPI_INT), MPI_ERR_COUNT);
    MPI_Type_free(&unc);
}

/* MPI_REPLACE on builtins, in place too. */
static void
t_replace(void)
{
    int a[3] = {1, 2, 3}, b[3] = {7, 8, 9};

    CHECK_EQ_INT(mpii_op_apply(MPI_REPLACE, a, b, 3, MPI_INT), 0);
    CHECK_MEM(b, a, sizeof a);
    CHECK_EQ_INT(mpii_op_apply(MPI_REPLACE, a, a, 3, MPI_INT), 0);
    CHECK(a[0] == 1 && a[1] == 2 && a[2] == 3);
    b[0] = 5;
    CHECK_EQ_INT(mpii_op_apply(MPI_NO_OP, a, b, 3, MPI_INT), 0);
    CHECK_EQ_INT(b[0], 5);
}

/* --- user operations ------------------------------------------------- */

static struct {
    int calls;
    void *in, *inout;
    int len;
    MPI_Datatype dt;
} seen;

/* Not commutative: inout = 10 * in + inout, ints only. */
static void
user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int i;

    seen.calls++;
    seen.in = in;
    seen.inout = inout;
    seen.len = *len;
    seen.dt = *dt;
    if (*dt == MPI_INT)
        for (i = 0; i < *len; i++)
            ((int *)inout)[i] = 10 * ((int *)in)[i] + ((int *)inout)[i];
}

static void
t_user_op(void)
{
    MPI_Op op, op2, stale;
    MPI_Datatype vec;
    int a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, i;
    double d[10] = {0}, e[10] = {0};

    memset(&seen, 0, sizeof seen);
    CHECK_EQ_INT(MPI_Op_create(user_fn, 0, &op), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_op_commutative(op), 0);
    CHECK_EQ_INT(mpii_op_apply(op, a, b, 3, MPI_INT), MPI_SUCCESS);
    CHECK_EQ_INT(seen.calls, 1);
    CHECK(seen.in == (void *)a);
    CHECK(seen.inout == (void *)b);
    CHECK_EQ_INT(seen.len, 3);
    CHECK_EQ_INT(seen.dt, MPI_INT);
    for (i = 0; i < 3; i++)
        CHECK_EQ_INT(b[i], 10 * (i + 1) + i + 4);

    /* A derived type is handed over as the user gave it. */
    CHECK_EQ_INT(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vec), 0);
    CHECK_EQ_INT(MPI_Type_commit(&vec), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_op_apply(op, d, e, 2, vec), MPI_SUCCESS);
    CHECK_EQ_INT(seen.calls, 2);
    CHECK(seen.in == (void *)d && seen.inout == (void *)e);
    CHECK_EQ_INT(seen.len, 2);
    CHECK_EQ_INT(seen.dt, vec);
    /* Nothing to combine, no call; a bad type, no call. */
    CHECK_EQ_INT(mpii_op_apply(op, a, b, 0, MPI_INT), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_op_apply(op, a, b, 1, MPI_DATATYPE_NULL), MPI_ERR_TYPE);
    CHECK_EQ_INT(mpii_op_apply(op, a, b, -1, MPI_INT), MPI_ERR_COUNT);
    CHECK_EQ_INT(seen.calls, 2);

    CHECK_EQ_INT(MPI_Op_create(user_fn, 7, &op2), MPI_SUCCESS);
    CHECK(op2 != op);
    CHECK_EQ_INT(mpii_op_commutative(op2), 1);

    /* Freed: the handle is refused everywhere, even after its slot is
     * reused. */
    stale = op;
    CHECK_EQ_INT(MPI_Op_free(&op), MPI_SUCCESS);
    CHECK_EQ_INT(op, MPI_OP_NULL);
    CHECK_EQ_INT(mpii_op_apply(stale, a, b, 3, MPI_INT), MPI_ERR_OP);
    CHECK_EQ_INT(mpii_op_commutative(stale), -1);
    last_err = 0;
    CHECK_EQ_INT(MPI_Op_free(&stale), MPI_ERR_OP);
    CHECK_EQ_INT(last_err, MPI_ERR_OP);
    CHECK_EQ_STR(last_fn, "MPI_Op_free");
    for (i = 0; i < 20; i++) {
        CHECK_EQ_INT(MPI_Op_create(user_fn, 1, &op), MPI_SUCCESS);
        CHECK(op != stale);
        CHECK_EQ_INT(mpii_op_apply(stale, a, b, 3, MPI_INT), MPI_ERR_OP);
        CHECK_EQ_INT(MPI_Op_free(&op), MPI_SUCCESS);
    }
    CHECK_EQ_INT(seen.calls, 2);
    CHECK_EQ_INT(MPI_Op_free(&op2), MPI_SUCCESS);
    MPI_Type_free(&vec);
}

/* Bad op handles of every kind are MPI_ERR_OP, never a crash. */
static void
t_bad_ops(void)
{
    static const MPI_Op bad[] = {
        0,
        -1,
        INT_MIN,
        0x7fffffff,
        MPI_OP_NULL,
        P2P_OP(0),
        P2P_OP(15),
        P2P_OP(0xfff),
        P2P_OP(0xffff),
        0x58010003, /* MPI_SUM with generation bits */
        0x58001000,
        0x5800ffff,
        MPI_INT,
        MPI_COMM_WORLD,
        MPI_DATATYPE_NULL,
        MPI_REQUEST_NULL,
    };
    int a[2] = {1, 2}, b[2] = {3, 4};
    MPI_Op h;
    size_t i;
    int n;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(mpii_op_apply(bad[i], a, b, 2, MPI_INT), MPI_ERR_OP);
        CHECK_EQ_INT(mpii_op_apply(bad[i], a, b, 0, MPI_INT), MPI_ERR_OP);
        CHECK_EQ_INT(mpii_op_commutative(bad[i]), -1);
        h = bad[i];
        CHECK_EQ_INT(MPI_Op_free(&h), MPI_ERR_OP);
        CHECK_EQ_INT(h, bad[i]);
    }
    CHECK(b[0] == 3 && b[1] == 4);
    /* Builtin operations cannot be freed. */
    for (n = 1; n <= P2P_OP_BUILTIN_MAX; n++) {
        h = P2P_OP(n);
        CHECK_EQ_INT(MPI_Op_free(&h), MPI_ERR_OP);
        CHECK_EQ_INT(h, P2P_OP(n));
    }
    CHECK_EQ_INT(MPI_Op_create(NULL, 1, &h), MPI_ERR_ARG);
    CHECK_EQ_STR(last_fn, "MPI_Op_create");
    CHECK_EQ_INT(MPI_Op_create(user_fn, 1, NULL), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Op_free(NULL), MPI_ERR_ARG);
}

static void
t_commutative(void)
{
    int n;

    for (n = 1; n <= P2P_OP_BUILTIN_MAX; n++)
        CHECK_EQ_INT(mpii_op_commutative(P2P_OP(n)),
                     P2P_OP(n) != MPI_REPLACE && P2P_OP(n) != MPI_NO_OP);
}

/* mpii_op_fini frees every user op (ASan sees leaks); the builtins
 * stay. */
static void
t_fini(void)
{
    MPI_Op a, b;
    int x = 1, y = 2;

    CHECK_EQ_INT(MPI_Op_create(user_fn, 1, &a), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Op_create(user_fn, 0, &b), MPI_SUCCESS);
    mpii_op_fini();
    CHECK_EQ_INT(mpii_op_commutative(a), -1);
    CHECK_EQ_INT(mpii_op_apply(b, &x, &y, 1, MPI_INT), MPI_ERR_OP);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, &x, &y, 1, MPI_INT), MPI_SUCCESS);
    CHECK_EQ_INT(y, 3);
    CHECK_EQ_INT(MPI_Op_create(user_fn, 1, &a), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_op_commutative(a), 1);
    mpii_op_fini();
    mpii_type_fini();
}

/* --- half precision (MPI_REAL2, MPI_COMPLEX4) ----------------------- */

/* The conversions, by bit patterns IEEE 754 gives. */
static void
t_half_bits(void)
{
    static const struct {
        uint16_t h;
        float f;
    } exact[] = {
        {0x3c00, 1.0f},   {0xc000, -2.0f},          {0x3e00, 1.5f},
        {0xb400, -0.25f}, {0x7bff, 65504.0f},       {0x0400, 0x1p-14f},
        {0x0001, 0x1p-24f}, {0x8001, -0x1p-24f},    {0x03ff, 1023 * 0x1p-24f},
        {0x0000, 0.0f},
    };
    uint32_t h;
    float f;

    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        CHECK(half_to_float(exact[i].h) == exact[i].f);
        CHECK_EQ_INT(half_from_float(exact[i].f), exact[i].h);
    }
    CHECK_EQ_INT(half_from_float(-0.0f), 0x8000);
    CHECK_EQ_INT(half_from_float(0.1f), 0x2e66);
    /* Ties to even: 1 + 2^-11 lies halfway between 1 and the next. */
    CHECK_EQ_INT(half_from_float(1.0f + 0x1p-11f), 0x3c00);
    CHECK_EQ_INT(half_from_float(1.0f + 3 * 0x1p-11f), 0x3c02);
    CHECK_EQ_INT(half_from_float(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    CHECK_EQ_INT(half_from_float(0x1p-25f), 0x0000);     /* subnormal tie */
    CHECK_EQ_INT(half_from_float(3 * 0x1p-25f), 0x0002); /* to even */
    CHECK_EQ_INT(half_from_float(1023.5f * 0x1p-24f), 0x0400);
    /* Beyond the largest: infinity from 65520 up. */
    CHECK_EQ_INT(half_from_float(65519.0f), 0x7bff);
    CHECK_EQ_INT(half_from_float(65520.0f), 0x7c00);
    CHECK_EQ_INT(half_from_float(-1e30f), 0xfc00);
    CHECK_EQ_INT(half_from_float(1.0f / 0.0f), 0x7c00);
    CHECK(half_to_float(0x7c00) == 1.0f / 0.0f);
    f = half_to_float(0x7e01);
    CHECK(f != f);
    h = half_from_float(f);
    CHECK((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0);
    /* Every value that is not a NaN comes back as it went. */
    for (h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0)
            continue;
        if (!CHECK_EQ_INT(half_from_float(half_to_float((uint16_t)h)), h))
            break;
    }
}

/* The reductions on MPI_REAL2 and MPI_COMPLEX4: in float, rounded back. */
static void
t_half_ops(void)
{
    mpii_real2 a[4] = {0x3c00, 0x4000, 0xc500, 0x3c00}; /* 1 2 -5 1 */
    mpii_real2 b[4] = {0x4200, 0x4200, 0x4900, 0x1000}; /* 3 3 10 2^-11 */
    mpii_real2 io[4];
    struct mpii_complex4 x = {0x3c00, 0x4000}, y = {0x4200, 0x4400};

    memcpy(io, b, sizeof io);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, a, io, 4, MPI_REAL2), MPI_SUCCESS);
    CHECK_EQ_INT(io[0], 0x4400); /* 4 */
    CHECK_EQ_INT(io[1], 0x4500); /* 5 */
    CHECK_EQ_INT(io[2], 0x4500); /* 5 */
    CHECK_EQ_INT(io[3], 0x3c00); /* 1 + 2^-11: the tie goes to 1 */
    memcpy(io, b, sizeof io);
    CHECK_EQ_INT(mpii_op_apply(MPI_PROD, a, io, 4, MPI_REAL2), MPI_SUCCESS);
    CHECK_EQ_INT(io[0], 0x4200); /* 3 */
    CHECK_EQ_INT(io[1], 0x4600); /* 6 */
    CHECK_EQ_INT(io[2], 0xd240); /* -50 */
    CHECK_EQ_INT(io[3], 0x1000);
    memcpy(io, b, sizeof io);
    CHECK_EQ_INT(mpii_op_apply(MPI_MAX, a, io, 4, MPI_REAL2), MPI_SUCCESS);
    CHECK_EQ_INT(io[0], 0x4200);
    CHECK_EQ_INT(io[2], 0x4900);
    CHECK_EQ_INT(io[3], 0x3c00);
    memcpy(io, b, sizeof io);
    CHECK_EQ_INT(mpii_op_apply(MPI_MIN, a, io, 4, MPI_REAL2), MPI_SUCCESS);
    CHECK_EQ_INT(io[0], 0x3c00);
    CHECK_EQ_INT(io[2], 0xc500);
    CHECK_EQ_INT(io[3], 0x1000);
    CHECK_EQ_INT(a[2], 0xc500); /* in is left alone */
    /* (1 + 2i)(3 + 4i) = -5 + 10i; then + (1 + 2i) = -4 + 12i */
    CHECK_EQ_INT(mpii_op_apply(MPI_PROD, &x, &y, 1, MPI_COMPLEX4),
                 MPI_SUCCESS);
    CHECK_EQ_INT(y.re, 0xc500);
    CHECK_EQ_INT(y.im, 0x4900);
    CHECK_EQ_INT(mpii_op_apply(MPI_SUM, &x, &y, 1, MPI_COMPLEX4), MPI_SUCCESS);
    CHECK_EQ_INT(y.re, 0xc400);
    CHECK_EQ_INT(y.im, 0x4a00);
}

static const struct test_case cases[] = {
    {"defined", t_defined},
    {"integers", t_integers},
    {"signed_and_wrap", t_signed_and_wrap},
    {"floats", t_floats},
    {"complex", t_complex},
    {"half_bits", t_half_bits},
    {"half_ops", t_half_ops},
    {"bool_and_byte", t_bool_and_byte},
    {"minloc_maxloc", t_minloc_maxloc},
    {"derived_contiguous", t_derived_contiguous},
    {"derived_strided", t_derived_strided},
    {"derived_pairs", t_derived_pairs},
    {"bad_types", t_bad_types},
    {"replace", t_replace},
    {"user_op", t_user_op},
    {"bad_ops", t_bad_ops},
    {"commutative", t_commutative},
    {"fini", t_fini},
};

TEST_MAIN(cases)
