/*
 * MPI datatypes (mpjrun/mpi/datatype.c): builtin sizes and extents
 * against the C compiler, derived types against an independent model of
 * their type map, pack and unpack, and the checks on every handle.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

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

struct float_int {
    float v;
    int i;
};
struct double_int {
    double v;
    int i;
};
struct long_int {
    long v;
    int i;
};
struct int_int {
    int v;
    int i;
};
struct short_int {
    short v;
    int i;
};
struct long_double_int {
    long double v;
    int i;
};

/* Size, extent, and whether it is one run of bytes. */
struct builtin_case {
    MPI_Datatype dt;
    size_t size;
    size_t extent;
};

#define ONE(dt, T)                                                             \
    {                                                                          \
        dt, sizeof(T), sizeof(T)                                               \
    }
#define PAIR(dt, S)                                                            \
    {                                                                          \
        dt, sizeof(((S *)0)->v) + sizeof(int), sizeof(S)                       \
    }

static const struct builtin_case builtins[] = {
    ONE(MPI_CHAR, char),
    ONE(MPI_SIGNED_CHAR, signed char),
    ONE(MPI_UNSIGNED_CHAR, unsigned char),
    ONE(MPI_BYTE, unsigned char),
    ONE(MPI_WCHAR, wchar_t),
    ONE(MPI_SHORT, short),
    ONE(MPI_UNSIGNED_SHORT, unsigned short),
    ONE(MPI_INT, int),
    ONE(MPI_UNSIGNED, unsigned),
    ONE(MPI_LONG, long),
    ONE(MPI_UNSIGNED_LONG, unsigned long),
    ONE(MPI_LONG_LONG_INT, long long),
    ONE(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    ONE(MPI_FLOAT, float),
    ONE(MPI_DOUBLE, double),
    ONE(MPI_LONG_DOUBLE, long double),
    ONE(MPI_INT8_T, int8_t),
    ONE(MPI_INT16_T, int16_t),
    ONE(MPI_INT32_T, int32_t),
    ONE(MPI_INT64_T, int64_t),
    ONE(MPI_UINT8_T, uint8_t),
    ONE(MPI_UINT16_T, uint16_t),
    ONE(MPI_UINT32_T, uint32_t),
    ONE(MPI_UINT64_T, uint64_t),
    ONE(MPI_C_BOOL, _Bool),
    ONE(MPI_AINT, MPI_Aint),
    ONE(MPI_OFFSET, long long),
    ONE(MPI_COUNT, long long),
    ONE(MPI_PACKED, char),
    PAIR(MPI_FLOAT_INT, struct float_int),
    PAIR(MPI_DOUBLE_INT, struct double_int),
    PAIR(MPI_LONG_INT, struct long_int),
    PAIR(MPI_2INT, struct int_int),
    PAIR(MPI_SHORT_INT, struct short_int),
    PAIR(MPI_LONG_DOUBLE_INT, struct long_double_int),
    ONE(MPI_C_FLOAT_COMPLEX, float _Complex),
    ONE(MPI_C_DOUBLE_COMPLEX, double _Complex),
    ONE(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
    ONE(MPI_CXX_BOOL, _Bool),
    ONE(MPI_CXX_FLOAT_COMPLEX, float _Complex),
    ONE(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    ONE(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
    ONE(MPI_CHARACTER, char),
    ONE(MPI_LOGICAL, int),
    ONE(MPI_INTEGER, int),
    ONE(MPI_REAL, float),
    ONE(MPI_DOUBLE_PRECISION, double),
    ONE(MPI_COMPLEX, float _Complex),
    ONE(MPI_DOUBLE_COMPLEX, double _Complex),
    ONE(MPI_INTEGER1, int8_t),
    ONE(MPI_INTEGER2, int16_t),
    ONE(MPI_INTEGER4, int32_t),
    ONE(MPI_INTEGER8, int64_t),
    ONE(MPI_REAL4, float),
    ONE(MPI_REAL8, double),
    {MPI_2REAL, 2 * sizeof(float), 2 * sizeof(float)},
    {MPI_2DOUBLE_PRECISION, 2 * sizeof(double), 2 * sizeof(double)},
    {MPI_2INTEGER, 2 * sizeof(int), 2 * sizeof(int)},
    ONE(MPI_REAL16, mpii_real16),
    ONE(MPI_COMPLEX8, float _Complex),
    ONE(MPI_COMPLEX16, double _Complex),
    ONE(MPI_COMPLEX32, struct mpii_complex32),
    ONE(MPI_INTEGER16, mpii_int16),
    ONE(MPI_REAL2, mpii_real2),
    ONE(MPI_COMPLEX4, struct mpii_complex4),
};

#define NBUILTINS (sizeof builtins / sizeof builtins[0])

/* Every builtin type has the size and extent of its C type; a pair type
 * counts its data only (the C padding is in the extent). */
static void
t_builtin_sizes(void)
{
    const struct mpii_type *t;
    MPI_Aint lb, extent;
    size_t i, per;
    int size;

    CHECK_EQ_INT(NBUILTINS, P2P_DT_BUILTIN_MAX);
    for (i = 0; i < NBUILTINS; i++) {
        const struct builtin_case *c = &builtins[i];

        CHECK_EQ_INT(c->dt, P2P_DT(i + 1));
        CHECK_EQ_INT(MPI_Type_size(c->dt, &size), MPI_SUCCESS);
        CHECK_EQ_INT(size, c->size);
        lb = extent = -7;
        CHECK_EQ_INT(MPI_Type_get_extent(c->dt, &lb, &extent), MPI_SUCCESS);
        CHECK_EQ_INT(lb, 0);
        CHECK_EQ_INT(extent, c->extent);
        if (!CHECK((t = mpii_type_get(c->dt)) != NULL))
            continue;
        CHECK(mpii_type_lookup(c->dt) == t);
        CHECK_EQ_INT(mpii_type_size(t), c->size);
        CHECK_EQ_INT(mpii_type_extent(t), c->extent);
        CHECK_EQ_INT(mpii_type_lb(t), 0);
        CHECK_EQ_INT(mpii_type_contiguous(t) != 0, c->size == c->extent);
        per = 99;
        /* Fortran and C++ types reduce as the C type they stand for
         * (those of 16-byte and 2-byte parts as themselves: C has none
         * that every compiler takes). */
        if (c->dt > MPI_C_LONG_DOUBLE_COMPLEX && c->dt != MPI_REAL16 &&
            c->dt != MPI_COMPLEX32 && c->dt != MPI_INTEGER16 &&
            c->dt != MPI_REAL2 && c->dt != MPI_COMPLEX4) {
            CHECK(mpii_type_basic(t, &per) <= MPI_C_LONG_DOUBLE_COMPLEX);
            continue;
        }
        CHECK_EQ_INT(mpii_type_basic(t, &per), c->dt);
        CHECK_EQ_INT(per, 1);
    }
    /* The aliases. */
    CHECK_EQ_INT(MPI_LONG_LONG, MPI_LONG_LONG_INT);
    CHECK_EQ_INT(MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX);
    /* The padded pairs on this ABI, spelled out. */
    CHECK_EQ_INT(MPI_Type_size(MPI_SHORT_INT, &size), MPI_SUCCESS);
    CHECK_EQ_INT(size, sizeof(short) + sizeof(int));
    CHECK_EQ_INT(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent), 0);
    CHECK_EQ_INT(extent, sizeof(struct double_int));
}

/* Pair types pack value then index without the C padding, and unpack
 * leaves the padding alone. */
static void
t_pair_pack(void)
{
    struct short_int si[2], back[2];
    struct double_int di[2], dback[2];
    unsigned char packed[64], want[64], *p;
    size_t k;

    memset(si, 0x11, sizeof si);
    si[0].v = 1234;
    si[0].i = -5;
    si[1].v = -7;
    si[1].i = 1 << 20;
    for (p = want, k = 0; k < 2; k++) {
        memcpy(p, &si[k].v, sizeof si[k].v);
        p += sizeof si[k].v;
        memcpy(p, &si[k].i, sizeof si[k].i);
        p += sizeof si[k].i;
    }
    mpii_pack(si, 2, mpii_type_get(MPI_SHORT_INT), packed);
    CHECK_MEM(packed, want, (size_t)(p - want));
    memset(back, 0xee, sizeof back);
    mpii_unpack(packed, (size_t)(p - want), back, 2,
                mpii_type_get(MPI_SHORT_INT));
    CHECK_EQ_INT(back[0].v, 1234);
    CHECK_EQ_INT(back[0].i, -5);
    CHECK_EQ_INT(back[1].v, -7);
    CHECK_EQ_INT(back[1].i, 1 << 20);
    /* The hole between v and i is not written. */
    for (k = sizeof(short); k < offsetof(struct short_int, i); k++)
        CHECK_EQ_INT(((unsigned char *)&back[1])[k], 0xee);

    memset(di, 0, sizeof di);
    di[0].v = 2.5;
    di[0].i = 3;
    di[1].v = -1e300;
    di[1].i = 4;
    mpii_pack(di, 2, mpii_type_get(MPI_DOUBLE_INT), packed);
    CHECK_MEM(packed, &di[0], sizeof(double) + sizeof(int));
    CHECK_MEM(packed + 12, &di[1], sizeof(double) + sizeof(int));
    memset(dback, 0xee, sizeof dback);
    mpii_unpack(packed, 24, dback, 2, mpii_type_get(MPI_DOUBLE_INT));
    CHECK(dback[0].v == 2.5 && dback[0].i == 3);
    CHECK(dback[1].v == -1e300 && dback[1].i == 4);
    CHECK_EQ_INT(((unsigned char *)&dback[0])[sizeof(struct double_int) - 1],
                 0xee);
}

/* The properties of a derived type in one call. */
static void
check_type(MPI_Datatype dt, int size, MPI_Aint lb, MPI_Aint extent,
           int contiguous, MPI_Datatype basic, size_t per)
{
    const struct mpii_type *t;
    MPI_Aint glb = -1, gext = -1;
    size_t gper = 0;
    int gsize = -1;

    CHECK_EQ_INT(MPI_Type_size(dt, &gsize), MPI_SUCCESS);
    CHECK_EQ_INT(gsize, size);
    CHECK_EQ_INT(MPI_Type_get_extent(dt, &glb, &gext), MPI_SUCCESS);
    CHECK_EQ_INT(glb, lb);
    CHECK_EQ_INT(gext, extent);
    if (!CHECK((t = mpii_type_lookup(dt)) != NULL))
        return;
    CHECK_EQ_INT(mpii_type_contiguous(t) != 0, contiguous);
    CHECK_EQ_INT(mpii_type_basic(t, &gper), basic);
    CHECK_EQ_INT(gper, per);
}

static void
t_contiguous(void)
{
    MPI_Datatype a, b, c;

    CHECK_EQ_INT(MPI_Type_contiguous(5, MPI_INT, &a), MPI_SUCCESS);
    check_type(a, 20, 0, 20, 1, MPI_INT, 5);
    CHECK_EQ_INT(MPI_Type_contiguous(0, MPI_INT, &b), MPI_SUCCESS);
    check_type(b, 0, 0, 0, 1, MPI_INT, 0);
    /* Padding between pairs keeps the elements apart. */
    CHECK_EQ_INT(MPI_Type_contiguous(3, MPI_DOUBLE_INT, &c), MPI_SUCCESS);
    check_type(c, 36, 0, 3 * (MPI_Aint)sizeof(struct double_int), 0,
               MPI_DOUBLE_INT, 3);
    CHECK_EQ_INT(MPI_Type_free(&a), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_free(&b), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_free(&c), MPI_SUCCESS);
}

/* Pack a type into a fresh buffer and compare with the ints at want[]
 * (offsets in ints from the origin at buf[64]). */
static void
check_pack_ints(MPI_Datatype dt, int count, const int *want, size_t nwant)
{
    int buf[128], packed[128];
    size_t i;

    for (i = 0; i < 128; i++)
        buf[i] = (int)i - 64;
    if (!CHECK(mpii_type_get(dt) != NULL))
        return;
    memset(packed, 0, sizeof packed);
    mpii_pack(buf + 64, count, mpii_type_get(dt), packed);
    for (i = 0; i < nwant; i++)
        CHECK_EQ_INT(packed[i], want[i]);
    /* Nothing past the data. */
    CHECK_EQ_INT(packed[nwant], 0);
}

static void
t_vector(void)
{
    MPI_Datatype v, w, neg, ov, sh, sh2, vv;
    static const int want_v[] = {0, 1, 4, 5, 8, 9};
    static const int want_v2[] = {0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19};
    static const int want_neg[] = {0, 1, -4, -3, -8, -7};
    static const int want_ov[] = {3, 3};
    static const int want_vv[] = {0, 1, 4, 5, 8, 9, 12, 13};

    CHECK_EQ_INT(MPI_Type_vector(3, 2, 4, MPI_INT, &v), MPI_SUCCESS);
    check_type(v, 24, 0, 40, 0, MPI_INT, 6);
    CHECK_EQ_INT(MPI_Type_commit(&v), MPI_SUCCESS);
    check_pack_ints(v, 1, want_v, 6);
    /* Count elements follow one another at the extent (10 ints). */
    check_pack_ints(v, 2, want_v2, 12);

    /* Stride equal to the block length: one run. */
    CHECK_EQ_INT(MPI_Type_vector(3, 2, 2, MPI_INT, &w), MPI_SUCCESS);
    check_type(w, 24, 0, 24, 1, MPI_INT, 6);

    /* A negative stride puts later blocks below the origin. */
    CHECK_EQ_INT(MPI_Type_vector(3, 2, -4, MPI_INT, &neg), MPI_SUCCESS);
    check_type(neg, 24, -32, 40, 0, MPI_INT, 6);
    CHECK_EQ_INT(MPI_Type_commit(&neg), MPI_SUCCESS);
    check_pack_ints(neg, 1, want_neg, 6);

    /* Stride 0: blocks overlap; the extent is one block. */
    CHECK_EQ_INT(MPI_Type_vector(2, 1, 0, MPI_INT, &ov), MPI_SUCCESS);
    check_type(ov, 8, 0, 4, 0, MPI_INT, 2);
    CHECK_EQ_INT(MPI_Type_commit(&ov), MPI_SUCCESS);
    {
        int buf[4] = {3, 4, 5, 6}, packed[2] = {0, 0};

        mpii_pack(buf, 1, mpii_type_get(ov), packed);
        CHECK_MEM(packed, want_ov, sizeof want_ov);
    }

    /* The stride counts extents of the old type, derived or not. */
    CHECK_EQ_INT(MPI_Type_contiguous(2, MPI_SHORT, &sh2), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_vector(2, 1, 3, sh2, &vv), MPI_SUCCESS);
    check_type(vv, 8, 0, 16, 0, MPI_SHORT, 4);
    MPI_Type_free(&vv);
    MPI_Type_free(&sh2);
    /* A vector of vectors: 2 blocks of (2 ints, gap 2) at stride 1. */
    CHECK_EQ_INT(MPI_Type_vector(2, 2, 4, MPI_INT, &sh), MPI_SUCCESS);
    check_type(sh, 16, 0, 24, 0, MPI_INT, 4);
    CHECK_EQ_INT(MPI_Type_vector(2, 1, 2, sh, &vv), MPI_SUCCESS);
    check_type(vv, 32, 0, 72, 0, MPI_INT, 8);
    CHECK_EQ_INT(MPI_Type_commit(&vv), MPI_SUCCESS);
    {
        static const int want_vv2[] = {0, 1, 4, 5, 12, 13, 16, 17};

        check_pack_ints(vv, 1, want_vv2, 8);
    }
    MPI_Type_free(&vv);
    CHECK_EQ_INT(MPI_Type_vector(2, 2, 1, sh, &vv), MPI_SUCCESS);
    /* Element extent 6 ints: blocks at 0 and 6, each 2 elements. */
    check_type(vv, 64, 0, 18 * 4, 0, MPI_INT, 16);
    MPI_Type_free(&vv);
    CHECK_EQ_INT(MPI_Type_vector(1, 2, 9, MPI_INT, &vv), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&vv), MPI_SUCCESS);
    check_pack_ints(vv, 1, want_vv, 2);
    MPI_Type_free(&vv);

    MPI_Type_free(&sh);
    MPI_Type_free(&v);
    MPI_Type_free(&w);
    MPI_Type_free(&neg);
    MPI_Type_free(&ov);
}

static void
t_indexed(void)
{
    static const int bl[] = {2, 1, 3}, disp[] = {4, -2, 10};
    static const int want[] = {4, 5, -2, 10, 11, 12};
    static const int bl0[] = {0, 1}, disp0[] = {-100, 3};
    static const int want0[] = {3, 4};
    static const int blz[] = {0, 0}, dispz[] = {5, -5};
    MPI_Datatype a, b, z, pi, vpi;

    CHECK_EQ_INT(MPI_Type_indexed(3, bl, disp, MPI_INT, &a), MPI_SUCCESS);
    check_type(a, 24, -8, 60, 0, MPI_INT, 6);
    CHECK_EQ_INT(MPI_Type_commit(&a), MPI_SUCCESS);
    check_pack_ints(a, 1, want, 6);

    /* An empty block does not count for the bounds; what is left is
     * one int at displacement 3, contiguous at buf + lb. */
    CHECK_EQ_INT(MPI_Type_indexed(2, bl0, disp0, MPI_INT, &b), MPI_SUCCESS);
    check_type(b, 4, 12, 4, 1, MPI_INT, 1);
    CHECK_EQ_INT(MPI_Type_commit(&b), MPI_SUCCESS);
    check_pack_ints(b, 2, want0, 2);

    CHECK_EQ_INT(MPI_Type_indexed(2, blz, dispz, MPI_INT, &z), MPI_SUCCESS);
    check_type(z, 0, 0, 0, 1, MPI_INT, 0);
    CHECK_EQ_INT(MPI_Type_indexed(0, NULL, NULL, MPI_INT, &z), MPI_SUCCESS);
    check_type(z, 0, 0, 0, 1, MPI_INT, 0);
    MPI_Type_free(&z);

    /* Indexed over a padded pair, then a vector of that. */
    CHECK_EQ_INT(MPI_Type_indexed(3, bl, disp, MPI_DOUBLE_INT, &pi),
                 MPI_SUCCESS);
    check_type(pi, 6 * 12, -2 * 16, 15 * 16, 0, MPI_DOUBLE_INT, 6);
    CHECK_EQ_INT(MPI_Type_vector(2, 1, -1, pi, &vpi), MPI_SUCCESS);
    check_type(vpi, 12 * 12, -32 - 240, 2 * 240, 0, MPI_DOUBLE_INT, 12);

    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MPI_Type_free(&pi);
    MPI_Type_free(&vpi);
}

/* Pack then unpack restores every byte of the data and none of the
 * gaps; a truncated unpack fills the first bytes in type-map order. */
static void
t_roundtrip_and_truncate(void)
{
    static const int bl[] = {2, 1, 3}, disp[] = {4, -2, 10};
    static const int order[] = {4, 5, -2, 10, 11, 12};
    MPI_Datatype a;
    int src[64], dst[64], want[64], packed[32];
    size_t i, k;
    const struct mpii_type *t;

    CHECK_EQ_INT(MPI_Type_indexed(3, bl, disp, MPI_INT, &a), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&a), MPI_SUCCESS);
    if (!CHECK((t = mpii_type_get(a)) != NULL))
        return;
    for (i = 0; i < 64; i++)
        src[i] = 1000 + (int)i;
    mpii_pack(src + 8, 2, t, packed);
    memset(dst, 0x5a, sizeof dst);
    mpii_unpack(packed, 12 * sizeof(int), dst + 8, 2, t);
    memset(want, 0x5a, sizeof want);
    for (k = 0; k < 2; k++)
        for (i = 0; i < 6; i++)
            want[8 + 15 * k + order[i]] = src[8 + 15 * k + order[i]];
    CHECK_MEM(dst, want, sizeof dst);

    /* 7 ints and 2 bytes of a message of 12 ints. */
    memset(dst, 0x5a, sizeof dst);
    mpii_unpack(packed, 7 * sizeof(int) + 2, dst + 8, 2, t);
    memset(want, 0x5a, sizeof want);
    for (i = 0; i < 7; i++) {
        k = i / 6;
        want[8 + 15 * k + order[i % 6]] = src[8 + 15 * k + order[i % 6]];
    }
    memcpy(&want[8 + 15 + order[1]], &src[8 + 15 + order[1]], 2);
    CHECK_MEM(dst, want, sizeof dst);

    /* More bytes than count elements hold: only count elements. */
    memset(dst, 0x5a, sizeof dst);
    mpii_unpack(packed, 12 * sizeof(int), dst + 8, 1, t);
    memset(want, 0x5a, sizeof want);
    for (i = 0; i < 6; i++)
        want[8 + order[i]] = src[8 + order[i]];
    CHECK_MEM(dst, want, sizeof dst);

    /* A contiguous type truncates the same way. */
    memset(dst, 0x5a, sizeof dst);
    mpii_unpack(src, 3 * sizeof(int) + 1, dst, 8, mpii_type_get(MPI_INT));
    memset(want, 0x5a, sizeof want);
    memcpy(want, src, 3 * sizeof(int) + 1);
    CHECK_MEM(dst, want, sizeof dst);
    MPI_Type_free(&a);
}

/* --- a model of type maps over MPI_CHAR ----------------------------- */

/* The byte offsets of one element's chars in type-map order. */
struct model {
    MPI_Datatype dt;
    long *off;
    size_t n;
    long lb, ub;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static unsigned
rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (unsigned)(rng_state >> 33) % n;
}

static int
rnd_range(int lo, int hi)
{
    return lo + (int)rnd((unsigned)(hi - lo + 1));
}

/* Blocks (disp[i] old extents, bl[i] old elements) of old, as a type map:
 * the bounds are those of the chars themselves. */
static int
model_build(struct model *m, const struct model *old, int nblk,
            const long *disp, const int *bl)
{
    long ext = old->ub - old->lb, o;
    size_t n = 0, k;
    int i, j;

    for (i = 0; i < nblk; i++)
        n += (size_t)bl[i] * old->n;
    if (n > 2048)
        return -1;
    m->off = malloc((n ? n : 1) * sizeof *m->off);
    m->n = 0;
    for (i = 0; i < nblk; i++)
        for (j = 0; j < bl[i]; j++)
            for (k = 0; k < old->n; k++) {
                o = (disp[i] + j) * ext + old->off[k];
                m->off[m->n++] = o;
            }
    m->lb = m->ub = 0;
    for (k = 0; k < m->n; k++) {
        if (k == 0 || m->off[k] < m->lb)
            m->lb = m->off[k];
        if (k == 0 || m->off[k] + 1 > m->ub)
            m->ub = m->off[k] + 1;
    }
    if (m->ub - m->lb > 4096) {
        free(m->off);
        m->off = NULL;
        return -1;
    }
    return 0;
}

/* Check a modelled type: size, bounds, contiguity, pack, unpack, and a
 * truncated unpack, for a few counts. */
static void
model_check(const struct model *m)
{
    const struct mpii_type *t;
    unsigned char *src, *dst, *want, *packed, *exp;
    long ext = m->ub - m->lb, base, pos;
    size_t len, total, k, bytes, at;
    int count, size, consecutive;
    MPI_Aint lb, extent;

    CHECK_EQ_INT(MPI_Type_size(m->dt, &size), MPI_SUCCESS);
    CHECK_EQ_INT(size, m->n);
    CHECK_EQ_INT(MPI_Type_get_extent(m->dt, &lb, &extent), MPI_SUCCESS);
    CHECK_EQ_INT(lb, m->lb);
    CHECK_EQ_INT(extent, ext);
    if (!CHECK((t = mpii_type_get(m->dt)) != NULL))
        return;
    CHECK_EQ_INT(mpii_type_basic(t, &k), MPI_CHAR);
    CHECK_EQ_INT(k, m->n);

    for (count = 0; count <= 3; count++) {
        /* The buffer spans [lb, lb + count * extent) around base. */
        len = (size_t)(count * ext) + 64;
        base = 32 - m->lb;
        total = (size_t)count * m->n;
        src = malloc(len);
        dst = malloc(len);
        want = malloc(len);
        packed = malloc(total + 1);
        exp = malloc(total + 1);
        for (k = 0; k < len; k++) {
            src[k] = (unsigned char)rnd(256);
            dst[k] = want[k] = (unsigned char)rnd(256);
        }
        consecutive = 1;
        for (k = 0; k < total; k++) {
            pos = base + (long)(k / m->n) * ext + m->off[k % m->n];
            exp[k] = src[pos];
            if (pos != base + m->lb + (long)k)
                consecutive = 0;
        }
        if (count >= 2)
            CHECK_EQ_INT(mpii_type_contiguous(t) != 0, consecutive);
        packed[total] = 0x77;
        mpii_pack(src + base, count, t, packed);
        CHECK_MEM(packed, exp, total);
        CHECK_EQ_INT(packed[total], 0x77);

        /* A random prefix of the message, then the whole of it. */
        bytes = total ? rnd((unsigned)total + 1) : 0;
        for (at = 0; at < 2; at++) {
            for (k = 0; k < bytes; k++)
                want[base + (long)(k / m->n) * ext + m->off[k % m->n]] =
                    packed[k];
            mpii_unpack(packed, bytes, dst + base, count, t);
            CHECK_MEM(dst, want, len);
            bytes = total;
        }
        free(src);
        free(dst);
        free(want);
        free(packed);
        free(exp);
    }
}

/* Random nests of contiguous, vector and indexed types over MPI_CHAR,
 * each checked against the model. */
static void
t_random_model(void)
{
    enum { POOL = 8 };
    struct model pool[POOL], m;
    static long zero = 0;
    long disp[4];
    int bl[4], idisp[4], n, i, round, blocklen, stride, rc, which;
    const struct model *old;

    memset(pool, 0, sizeof pool);
    pool[0].dt = MPI_CHAR;
    pool[0].off = &zero;
    pool[0].n = 1;
    pool[0].ub = 1;
    for (i = 1; i < POOL; i++)
        pool[i].dt = MPI_DATATYPE_NULL;

    for (round = 0; round < 600; round++) {
        do
            which = (int)rnd(POOL);
        while (pool[which].dt == MPI_DATATYPE_NULL);
        old = &pool[which];
        memset(&m, 0, sizeof m);
        switch (rnd(3)) {
        case 0: /* contiguous: one block */
            bl[0] = rnd_range(0, 3);
            disp[0] = 0;
            if (model_build(&m, old, 1, disp, bl) != 0)
                continue;
            rc = MPI_Type_contiguous(bl[0], old->dt, &m.dt);
            break;
        case 1: /* vector: n blocks at i * stride */
            n = rnd_range(0, 3);
            blocklen = rnd_range(0, 3);
            stride = rnd_range(-4, 4);
            for (i = 0; i < n; i++) {
                bl[i] = blocklen;
                disp[i] = (long)i * stride;
            }
            if (model_build(&m, old, n, disp, bl) != 0)
                continue;
            rc = MPI_Type_vector(n, blocklen, stride, old->dt, &m.dt);
            break;
        default: /* indexed */
            n = rnd_range(0, 3);
            for (i = 0; i < n; i++) {
                bl[i] = rnd_range(0, 2);
                disp[i] = idisp[i] = rnd_range(-4, 4);
            }
            if (model_build(&m, old, n, disp, bl) != 0)
                continue;
            rc = MPI_Type_indexed(n, bl, idisp, old->dt, &m.dt);
            break;
        }
        if (!CHECK_EQ_INT(rc, MPI_SUCCESS)) {
            free(m.off);
            continue;
        }
        CHECK_EQ_INT(MPI_Type_commit(&m.dt), MPI_SUCCESS);
        model_check(&m);
        /* Replace a random pool entry (never MPI_CHAR). */
        which = rnd_range(1, POOL - 1);
        if (pool[which].dt != MPI_DATATYPE_NULL) {
            CHECK_EQ_INT(MPI_Type_free(&pool[which].dt), MPI_SUCCESS);
            free(pool[which].off);
        }
        pool[which] = m;
    }
    for (i = 1; i < POOL; i++)
        if (pool[i].dt != MPI_DATATYPE_NULL) {
            CHECK_EQ_INT(MPI_Type_free(&pool[i].dt), MPI_SUCCESS);
            free(pool[i].off);
        }
}

/* --- handles and arguments ------------------------------------------ */

/* Every call refuses a bad handle with MPI_ERR_TYPE and leaves the
 * output alone. */
static void
check_bad_type(MPI_Datatype bad)
{
    static const int bl[] = {1}, disp[] = {0};
    MPI_Datatype out = 12345, h;
    MPI_Aint lb = 5, ext = 6;
    int size = 7;

    CHECK(mpii_type_get(bad) == NULL);
    CHECK(mpii_type_lookup(bad) == NULL);
    last_err = 0;
    CHECK_EQ_INT(MPI_Type_size(bad, &size), MPI_ERR_TYPE);
    CHECK_EQ_INT(last_err, MPI_ERR_TYPE);
    CHECK_EQ_STR(last_fn, "MPI_Type_size");
    CHECK_EQ_INT(size, 7);
    CHECK_EQ_INT(MPI_Type_get_extent(bad, &lb, &ext), MPI_ERR_TYPE);
    CHECK(lb == 5 && ext == 6);
    CHECK_EQ_INT(MPI_Type_contiguous(1, bad, &out), MPI_ERR_TYPE);
    CHECK_EQ_INT(MPI_Type_vector(1, 1, 1, bad, &out), MPI_ERR_TYPE);
    CHECK_EQ_STR(last_fn, "MPI_Type_vector");
    CHECK_EQ_INT(MPI_Type_indexed(1, bl, disp, bad, &out), MPI_ERR_TYPE);
    CHECK_EQ_INT(out, 12345);
    h = bad;
    CHECK_EQ_INT(MPI_Type_commit(&h), MPI_ERR_TYPE);
    CHECK_EQ_INT(MPI_Type_free(&h), MPI_ERR_TYPE);
    CHECK_EQ_INT(h, bad);
}

static void
t_bad_handles(void)
{
    MPI_Datatype freed, live;
    unsigned u;

    check_bad_type(0);
    check_bad_type(-1);
    check_bad_type(INT_MIN);
    check_bad_type(0x7fffffff);
    check_bad_type(MPI_DATATYPE_NULL);
    check_bad_type(P2P_DT(0));
    check_bad_type(P2P_DT(P2P_DT_BUILTIN_MAX + 1));
    check_bad_type(P2P_DT(0xfff));
    check_bad_type(P2P_DT(0xffff));
    check_bad_type(P2P_DT(0xffffff));
    check_bad_type(0x4c010008); /* MPI_INT with generation bits */
    check_bad_type(0x4d000008); /* MPI_INT with bit 24 set */
    /* Other kinds of handle. */
    check_bad_type(MPI_SUM);
    check_bad_type(MPI_COMM_WORLD);
    check_bad_type(MPI_REQUEST_NULL);
    check_bad_type(MPI_ERRORS_RETURN);

    CHECK_EQ_INT(MPI_Type_contiguous(2, MPI_INT, &freed), MPI_SUCCESS);
    u = (unsigned)freed;
    CHECK_EQ_INT(MPI_Type_free(&freed), MPI_SUCCESS);
    CHECK_EQ_INT(freed, MPI_DATATYPE_NULL);
    check_bad_type((MPI_Datatype)u);
    /* The slot comes back in use: the old handle still fails. */
    CHECK_EQ_INT(MPI_Type_contiguous(2, MPI_INT, &live), MPI_SUCCESS);
    check_bad_type((MPI_Datatype)u);
    check_bad_type((MPI_Datatype)((unsigned)live ^ (1u << 16)));
    check_bad_type((MPI_Datatype)((unsigned)live + 0x800));
    MPI_Type_free(&live);
}

static void
t_bad_args(void)
{
    static const int bl[] = {1, -1}, disp[] = {0, 1};
    MPI_Datatype out = 12345, dt;
    MPI_Aint lb;

    last_err = 0;
    CHECK_EQ_INT(MPI_Type_contiguous(-1, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_EQ_INT(last_err, MPI_ERR_COUNT);
    CHECK_EQ_STR(last_fn, "MPI_Type_contiguous");
    CHECK_EQ_INT(MPI_Type_contiguous(1, MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_vector(-1, 1, 1, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_EQ_INT(MPI_Type_vector(INT_MIN, 1, 1, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_EQ_INT(MPI_Type_vector(1, -1, 1, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_vector(1, 1, 1, MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_indexed(-3, bl, disp, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_EQ_INT(MPI_Type_indexed(2, bl, disp, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_EQ_STR(last_fn, "MPI_Type_indexed");
    CHECK_EQ_INT(MPI_Type_indexed(1, NULL, disp, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_indexed(1, bl, NULL, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_indexed(1, bl, disp, MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_EQ_INT(out, 12345);
    CHECK_EQ_INT(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_get_extent(MPI_INT, &lb, NULL), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_get_extent(MPI_INT, NULL, &lb), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_commit(NULL), MPI_ERR_ARG);
    CHECK_EQ_INT(MPI_Type_free(NULL), MPI_ERR_ARG);
    /* Builtin types can be committed but not freed. */
    dt = MPI_INT;
    CHECK_EQ_INT(MPI_Type_commit(&dt), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_free(&dt), MPI_ERR_TYPE);
    CHECK_EQ_INT(dt, MPI_INT);
    CHECK(mpii_type_get(MPI_INT) != NULL);
}

/* A derived type is usable for communication only once committed; it
 * can be described and built upon before. */
static void
t_commit_free(void)
{
    MPI_Datatype a, b, copy;
    int size;

    CHECK_EQ_INT(MPI_Type_contiguous(3, MPI_INT, &a), MPI_SUCCESS);
    CHECK(mpii_type_get(a) == NULL);
    CHECK(mpii_type_lookup(a) != NULL);
    CHECK_EQ_INT(MPI_Type_size(a, &size), MPI_SUCCESS);
    CHECK_EQ_INT(size, 12);
    CHECK_EQ_INT(MPI_Type_vector(2, 1, 2, a, &b), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&a), MPI_SUCCESS);
    CHECK(mpii_type_get(a) != NULL);
    CHECK(mpii_type_get(b) == NULL);
    CHECK_EQ_INT(MPI_Type_commit(&a), MPI_SUCCESS);
    /* Freeing the old type leaves the new one whole. */
    copy = a;
    CHECK_EQ_INT(MPI_Type_free(&a), MPI_SUCCESS);
    CHECK_EQ_INT(a, MPI_DATATYPE_NULL);
    CHECK_EQ_INT(MPI_Type_free(&copy), MPI_ERR_TYPE);
    CHECK(mpii_type_get(copy) == NULL);
    CHECK_EQ_INT(MPI_Type_commit(&b), MPI_SUCCESS);
    check_type(b, 24, 0, 36, 0, MPI_INT, 6);
    MPI_Type_free(&b);
}

/* Sizes past INT_MAX are MPI_UNDEFINED for MPI_Type_size; overflowing
 * sizes and extents are refused. */
static void
t_overflow(void)
{
    static const int bl[] = {1, 1}, disp[] = {INT_MAX, INT_MIN};
    MPI_Datatype d, big, huge, out = 12345;
    MPI_Aint lb, ext;
    int size = 0;

    CHECK_EQ_INT(MPI_Type_contiguous(INT_MAX, MPI_DOUBLE, &d), 0);
    CHECK_EQ_INT(MPI_Type_size(d, &size), MPI_SUCCESS);
    CHECK_EQ_INT(size, MPI_UNDEFINED);
    CHECK_EQ_INT(MPI_Type_get_extent(d, &lb, &ext), MPI_SUCCESS);
    CHECK_EQ_INT(ext, (MPI_Aint)INT_MAX * 8);
    MPI_Type_free(&d);

    CHECK_EQ_INT(MPI_Type_contiguous(INT_MAX, MPI_CHAR, &big), 0);
    CHECK_EQ_INT(MPI_Type_size(big, &size), MPI_SUCCESS);
    CHECK_EQ_INT(size, INT_MAX);
    /* 2^62 bytes: still representable. */
    CHECK_EQ_INT(MPI_Type_contiguous(INT_MAX, big, &huge), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_get_extent(huge, &lb, &ext), MPI_SUCCESS);
    CHECK_EQ_INT(ext, (MPI_Aint)INT_MAX * INT_MAX);
    CHECK_EQ_INT(MPI_Type_size(huge, &size), MPI_SUCCESS);
    CHECK_EQ_INT(size, MPI_UNDEFINED);
    /* Past 2^63: refused, whatever the constructor. */
    CHECK(MPI_Type_contiguous(INT_MAX, huge, &out) != MPI_SUCCESS);
    CHECK(MPI_Type_contiguous(3, huge, &out) != MPI_SUCCESS);
    CHECK(MPI_Type_vector(2, 1, INT_MAX, huge, &out) != MPI_SUCCESS);
    CHECK(MPI_Type_vector(2, 1, INT_MIN, huge, &out) != MPI_SUCCESS);
    CHECK(MPI_Type_vector(2, INT_MAX, 1, huge, &out) != MPI_SUCCESS);
    CHECK(MPI_Type_indexed(2, bl, disp, huge, &out) != MPI_SUCCESS);
    CHECK_EQ_INT(out, 12345);
    /* The extreme displacements over 2^31 bytes fit in 2^63. */
    CHECK_EQ_INT(MPI_Type_indexed(2, bl, disp, big, &out), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_get_extent(out, &lb, &ext), MPI_SUCCESS);
    CHECK_EQ_INT(lb, (MPI_Aint)INT_MIN * INT_MAX);
    CHECK_EQ_INT(ext, (MPI_Aint)INT_MAX * INT_MAX + (MPI_Aint)INT_MAX -
                          (MPI_Aint)INT_MIN * INT_MAX);
    MPI_Type_free(&out);
    MPI_Type_free(&big);
    MPI_Type_free(&huge);
}

/* Many live types get distinct handles; after they are freed none of
 * the old handles is accepted, even once their slots are reused. */
static void
t_many_handles(void)
{
    enum { N = 300 };
    static MPI_Datatype h[N], old[N];
    int i, j, size;

    for (i = 0; i < N; i++)
        CHECK_EQ_INT(MPI_Type_contiguous(i, MPI_CHAR, &h[i]), MPI_SUCCESS);
    for (i = 0; i < N; i++) {
        CHECK_EQ_INT(MPI_Type_size(h[i], &size), MPI_SUCCESS);
        CHECK_EQ_INT(size, i);
        for (j = 0; j < i; j++)
            if (h[i] == h[j])
                CHECK(h[i] != h[j]);
    }
    memcpy(old, h, sizeof old);
    for (i = 0; i < N; i++)
        CHECK_EQ_INT(MPI_Type_free(&h[i]), MPI_SUCCESS);
    for (i = 0; i < N; i++)
        CHECK(mpii_type_lookup(old[i]) == NULL);
    for (i = 0; i < N; i++)
        CHECK_EQ_INT(MPI_Type_contiguous(1, MPI_INT, &h[i]), MPI_SUCCESS);
    for (i = 0; i < N; i++) {
        CHECK(mpii_type_lookup(old[i]) == NULL);
        CHECK_EQ_INT(MPI_Type_free(&h[i]), MPI_SUCCESS);
    }
    /* Create and free in a loop: the stale handle stays refused. */
    for (i = 0; i < 200; i++) {
        MPI_Datatype t, t2;

        CHECK_EQ_INT(MPI_Type_contiguous(1, MPI_INT, &t), MPI_SUCCESS);
        t2 = t;
        CHECK_EQ_INT(MPI_Type_free(&t), MPI_SUCCESS);
        CHECK(mpii_type_lookup(t2) == NULL);
    }
}

/* mpii_type_fini frees every derived type (ASan sees leaks) and leaves
 * the builtins alone. */
static void
t_fini(void)
{
    MPI_Datatype a, b;

    CHECK_EQ_INT(MPI_Type_vector(3, 1, 2, MPI_INT, &a), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_indexed(0, NULL, NULL, a, &b), MPI_SUCCESS);
    CHECK_EQ_INT(MPI_Type_commit(&a), MPI_SUCCESS);
    mpii_type_fini();
    CHECK(mpii_type_lookup(a) == NULL);
    CHECK(mpii_type_lookup(b) == NULL);
    CHECK(mpii_type_get(MPI_DOUBLE) != NULL);
    CHECK_EQ_INT(MPI_Type_contiguous(2, MPI_INT, &a), MPI_SUCCESS);
    CHECK(mpii_type_lookup(a) != NULL);
    mpii_type_fini();
}

static const struct test_case cases[] = {
    {"builtin_sizes", t_builtin_sizes},
    {"pair_pack", t_pair_pack},
    {"contiguous", t_contiguous},
    {"vector", t_vector},
    {"indexed", t_indexed},
    {"roundtrip_and_truncate", t_roundtrip_and_truncate},
    {"random_model", t_random_model},
    {"bad_handles", t_bad_handles},
    {"bad_args", t_bad_args},
    {"commit_free", t_commit_free},
    {"overflow", t_overflow},
    {"many_handles", t_many_handles},
    {"fini", t_fini},
};

TEST_MAIN(cases)
