/*
 * datatype.c: MPI datatypes.  A type is a flattened list of (byte offset,
 * byte length) blocks relative to an element's origin, in type-map order,
 * with adjacent blocks merged; pack and unpack are loops over it.  Beside
 * it, the type signature (runs of basic elements, for Get_elements and
 * external32) and what Type_get_contents gives back.  The builtin types
 * are a table; derived types live behind handles of handles.c, which
 * carry a generation, so that a freed or forged handle is detected rather
 * than followed.  A derived type is reference-counted: each handle, each
 * pending request using it and each type built from it holds it, so
 * MPI_Type_free while a receive is pending is safe.
 *
 * The constructors are in datatype_create.c, Pack/Unpack in pack.c.
 *
 * Derived handle: 0x4c000000 | generation << 16 | (0x1000 + slot).
 */
#include <complex.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "datatype.h"

/* The pair types of MINLOC and MAXLOC, as C lays them out. */
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

/* A builtin type of one C type, of basic type b (itself, or the C type a
 * Fortran or C++ type stands for), swapped in units of u bytes. */
#define BUILTIN_N(h, T, b, u, n)                                               \
    [(h)-DT_KIND] = {                                                          \
        .handle = (h),                                                         \
        .committed = 1,                                                        \
        .size = sizeof(T),                                                     \
        .lb = 0,                                                               \
        .extent = sizeof(T),                                                   \
        .align = _Alignof(T),                                                  \
        .nblocks = 1,                                                          \
        .blk = (struct mpii_blk[]){{0, sizeof(T)}},                            \
        .basic = (b),                                                          \
        .per_elem = 1,                                                         \
        .nsig = 1,                                                             \
        .sig = (struct mpii_sig[]){{sizeof(T), (u), 1}},                       \
        .combiner = MPI_COMBINER_NAMED,                                        \
        .name = n,                                                             \
    }
#define BUILTIN_AS(h, T, b, u) BUILTIN_N(h, T, b, u, #h)
#define BUILTIN(h, T) BUILTIN_N(h, T, h, sizeof(T), #h)
#define COMPLEX(h, T, b) BUILTIN_N(h, T _Complex, b, sizeof(T), #h)
/* Two of one Fortran type (MPI_2REAL...): two elements. */
#define TWO(h, T, b)                                                           \
    [(h)-DT_KIND] = {                                                          \
        .handle = (h),                                                         \
        .committed = 1,                                                        \
        .size = 2 * sizeof(T),                                                 \
        .extent = 2 * sizeof(T),                                               \
        .align = _Alignof(T),                                                  \
        .nblocks = 1,                                                          \
        .blk = (struct mpii_blk[]){{0, 2 * sizeof(T)}},                        \
        .basic = (b),                                                          \
        .per_elem = 2,                                                         \
        .nsig = 1,                                                             \
        .sig = (struct mpii_sig[]){{sizeof(T), sizeof(T), 2}},                 \
        .combiner = MPI_COMBINER_NAMED,                                        \
        .name = #h,                                                            \
    }

/* A pair type: value then int, one block when C leaves no hole; the
 * value swapped in units of u bytes. */
#define PAIR_VSIZE(S) sizeof(((S *)0)->v)
#define PAIR_ADJ(S) (offsetof(S, i) == PAIR_VSIZE(S))
#define PAIR(h, S) PAIR_U(h, S, PAIR_VSIZE(S), #h)
#define PAIR_U(h, S, u, n)                                                     \
    [(h)-DT_KIND] = {                                                          \
        .handle = (h),                                                         \
        .committed = 1,                                                        \
        .size = PAIR_VSIZE(S) + sizeof(int),                                   \
        .lb = 0,                                                               \
        .extent = sizeof(S),                                                   \
        .align = _Alignof(S),                                                  \
        .nblocks = PAIR_ADJ(S) ? 1 : 2,                                        \
        .blk =                                                                 \
            (struct mpii_blk[]){{0, PAIR_ADJ(S) ? PAIR_VSIZE(S) + sizeof(int)  \
                                                : PAIR_VSIZE(S)},              \
                                {offsetof(S, i), sizeof(int)}},                \
        .basic = (h),                                                          \
        .per_elem = 1,                                                         \
        .nsig = 2,                                                             \
        .sig = (struct mpii_sig[]){{PAIR_VSIZE(S), (u), 1},                    \
                                   {sizeof(int), sizeof(int), 1}},             \
        .combiner = MPI_COMBINER_NAMED,                                        \
        .name = n,                                                             \
    }

/* Not const: MPI_Type_set_name may rename a builtin type. */
static struct mpii_type builtin[P2P_DT_BUILTIN_MAX + 1] = {
    BUILTIN(MPI_CHAR, char),
    BUILTIN(MPI_SIGNED_CHAR, signed char),
    BUILTIN(MPI_UNSIGNED_CHAR, unsigned char),
    BUILTIN(MPI_BYTE, unsigned char),
    BUILTIN(MPI_WCHAR, wchar_t),
    BUILTIN(MPI_SHORT, short),
    BUILTIN(MPI_UNSIGNED_SHORT, unsigned short),
    BUILTIN(MPI_INT, int),
    BUILTIN(MPI_UNSIGNED, unsigned),
    BUILTIN(MPI_LONG, long),
    BUILTIN(MPI_UNSIGNED_LONG, unsigned long),
    BUILTIN(MPI_LONG_LONG_INT, long long),
    BUILTIN(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    BUILTIN(MPI_FLOAT, float),
    BUILTIN(MPI_DOUBLE, double),
    BUILTIN_N(MPI_LONG_DOUBLE, long double, MPI_LONG_DOUBLE,
              MPII_LDOUBLE_UNIT, "MPI_LONG_DOUBLE"),
    BUILTIN(MPI_INT8_T, int8_t),
    BUILTIN(MPI_INT16_T, int16_t),
    BUILTIN(MPI_INT32_T, int32_t),
    BUILTIN(MPI_INT64_T, int64_t),
    BUILTIN(MPI_UINT8_T, uint8_t),
    BUILTIN(MPI_UINT16_T, uint16_t),
    BUILTIN(MPI_UINT32_T, uint32_t),
    BUILTIN(MPI_UINT64_T, uint64_t),
    BUILTIN(MPI_C_BOOL, _Bool),
    BUILTIN(MPI_AINT, MPI_Aint),
    BUILTIN(MPI_OFFSET, MPI_Offset),
    BUILTIN(MPI_COUNT, MPI_Count),
    BUILTIN(MPI_PACKED, unsigned char),
    PAIR(MPI_FLOAT_INT, struct float_int),
    PAIR(MPI_DOUBLE_INT, struct double_int),
    PAIR(MPI_LONG_INT, struct long_int),
    PAIR(MPI_2INT, struct int_int),
    PAIR(MPI_SHORT_INT, struct short_int),
    PAIR_U(MPI_LONG_DOUBLE_INT, struct long_double_int, MPII_LDOUBLE_UNIT,
           "MPI_LONG_DOUBLE_INT"),
    /* MPI_C_COMPLEX is its name, MPI_C_FLOAT_COMPLEX the synonym (MPI 3.1
     * 3.2.2), as MPICH and Open MPI name it. */
    BUILTIN_N(MPI_C_FLOAT_COMPLEX, float _Complex, MPI_C_FLOAT_COMPLEX,
              sizeof(float), "MPI_C_COMPLEX"),
    COMPLEX(MPI_C_DOUBLE_COMPLEX, double, MPI_C_DOUBLE_COMPLEX),
    BUILTIN_N(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex,
              MPI_C_LONG_DOUBLE_COMPLEX, MPII_LDOUBLE_UNIT,
              "MPI_C_LONG_DOUBLE_COMPLEX"),
    BUILTIN_AS(MPI_CXX_BOOL, bool, MPI_C_BOOL, sizeof(bool)),
    COMPLEX(MPI_CXX_FLOAT_COMPLEX, float, MPI_C_FLOAT_COMPLEX),
    COMPLEX(MPI_CXX_DOUBLE_COMPLEX, double, MPI_C_DOUBLE_COMPLEX),
    BUILTIN_N(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex,
              MPI_C_LONG_DOUBLE_COMPLEX, MPII_LDOUBLE_UNIT,
              "MPI_CXX_LONG_DOUBLE_COMPLEX"),
    BUILTIN_AS(MPI_CHARACTER, char, MPI_CHAR, 1),
    BUILTIN_AS(MPI_LOGICAL, int, MPI_INT, sizeof(int)),
    BUILTIN_AS(MPI_INTEGER, int, MPI_INT, sizeof(int)),
    BUILTIN_AS(MPI_REAL, float, MPI_FLOAT, sizeof(float)),
    BUILTIN_AS(MPI_DOUBLE_PRECISION, double, MPI_DOUBLE, sizeof(double)),
    COMPLEX(MPI_COMPLEX, float, MPI_C_FLOAT_COMPLEX),
    COMPLEX(MPI_DOUBLE_COMPLEX, double, MPI_C_DOUBLE_COMPLEX),
    BUILTIN_AS(MPI_INTEGER1, int8_t, MPI_INT8_T, 1),
    BUILTIN_AS(MPI_INTEGER2, int16_t, MPI_INT16_T, 2),
    BUILTIN_AS(MPI_INTEGER4, int32_t, MPI_INT32_T, 4),
    BUILTIN_AS(MPI_INTEGER8, int64_t, MPI_INT64_T, 8),
    BUILTIN_AS(MPI_REAL4, float, MPI_FLOAT, 4),
    BUILTIN_AS(MPI_REAL8, double, MPI_DOUBLE, 8),
    TWO(MPI_2REAL, float, MPI_FLOAT),
    TWO(MPI_2DOUBLE_PRECISION, double, MPI_DOUBLE),
    TWO(MPI_2INTEGER, int, MPI_INT),
    BUILTIN(MPI_REAL16, mpii_real16),
    COMPLEX(MPI_COMPLEX8, float, MPI_C_FLOAT_COMPLEX),
    COMPLEX(MPI_COMPLEX16, double, MPI_C_DOUBLE_COMPLEX),
    BUILTIN_N(MPI_COMPLEX32, struct mpii_complex32, MPI_COMPLEX32,
              sizeof(mpii_real16), "MPI_COMPLEX32"),
    BUILTIN(MPI_INTEGER16, mpii_int16),
    BUILTIN_N(MPI_REAL2, mpii_real2, MPI_REAL2, 2, "MPI_REAL2"),
    BUILTIN_N(MPI_COMPLEX4, struct mpii_complex4, MPI_COMPLEX4, 2,
              "MPI_COMPLEX4"),
};

/* The derived types (handles.c). */
static struct mpii_handles derived = {.kind = DT_KIND};

int
mpii_type_builtin(const struct mpii_type *t)
{
    return t >= builtin && t <= builtin + P2P_DT_BUILTIN_MAX;
}

int
mpii_type_is_builtin(const struct mpii_type *t)
{
    return mpii_type_builtin(t);
}

/* The derived type behind a handle, live or not yet committed. */
static struct mpii_type *
derived_lookup(MPI_Datatype h)
{
    return mpii_handle_get(&derived, (uint32_t)h);
}

/* Free a derived type and drop what it holds. */
static void
type_destroy(struct mpii_type *t)
{
    int i;

    if (t == NULL || mpii_type_builtin(t))
        return;
    mpii_attrs_drop(&t->attrs); /* Type_free ran the callbacks */
    for (i = 0; i < t->nd; i++)
        if (t->types != NULL)
            mpii_type_release(t->types[i]);
    free(t->ints);
    free(t->aints);
    free(t->types);
    free(t->sig);
    free(t->blk);
    free(t);
}

void
mpii_type_hold(const struct mpii_type *t)
{
    if (t != NULL && !mpii_type_builtin(t))
        ((struct mpii_type *)(uintptr_t)t)->refs++;
}

void
mpii_type_release(const struct mpii_type *ct)
{
    struct mpii_type *t = (struct mpii_type *)(uintptr_t)ct;

    if (t == NULL || mpii_type_builtin(t))
        return;
    if (--t->refs <= 0)
        type_destroy(t);
}

const struct mpii_type *
mpii_type_lookup(MPI_Datatype h)
{
    unsigned u = (unsigned)h;

    if (u >= (unsigned)P2P_DT(1) && u <= (unsigned)P2P_DT(P2P_DT_BUILTIN_MAX))
        return &builtin[u - DT_KIND];
    return derived_lookup(h);
}

const struct mpii_type *
mpii_type_get(MPI_Datatype h)
{
    const struct mpii_type *t = mpii_type_lookup(h);

    return t != NULL && t->committed ? t : NULL;
}

/* A type the library names, a builtin or a Fortran 90 one: it is its
 * own handle, handed out as it is and never freed by a caller. */
static int
own_handle(const struct mpii_type *t)
{
    return mpii_type_builtin(t) || t->predefined;
}

int
mpii_type_handle_dup(MPI_Datatype dt, MPI_Datatype *out)
{
    const struct mpii_type *t = mpii_type_lookup(dt);

    *out = dt;
    if (t == NULL || own_handle(t))
        return MPI_SUCCESS;
    return mpii_type_new_handle(t, out);
}

void
mpii_type_handle_drop(MPI_Datatype h)
{
    struct mpii_type *t = derived_lookup(h);

    if (t == NULL || own_handle(t))
        return;
    (void)mpii_handle_take(&derived, (uint32_t)h);
    mpii_type_release(t);
}

int
mpii_type_new_handle(const struct mpii_type *ct, MPI_Datatype *h)
{
    struct mpii_type *t = (struct mpii_type *)(uintptr_t)ct;
    uint32_t u;
    int rc;

    if (own_handle(t)) {
        *h = t->handle;
        return MPI_SUCCESS;
    }
    if ((rc = mpii_handle_put(&derived, t, &u)) != MPI_SUCCESS)
        return rc;
    t->refs++;
    *h = (MPI_Datatype)u;
    return MPI_SUCCESS;
}

size_t
mpii_type_size(const struct mpii_type *t)
{
    return t->size;
}

MPI_Aint
mpii_type_extent(const struct mpii_type *t)
{
    return t->extent;
}

MPI_Aint
mpii_type_lb(const struct mpii_type *t)
{
    return t->lb;
}

void *
mpii_type_start(const void *buf, const struct mpii_type *t)
{
    return (void *)((uintptr_t)buf + (uintptr_t)t->lb);
}

int
mpii_type_contiguous(const struct mpii_type *t)
{
    if (t->size == 0)
        return 1;
    return t->nblocks == 1 && t->blk[0].off == t->lb &&
           (size_t)t->extent == t->size;
}

MPI_Datatype
mpii_type_basic(const struct mpii_type *t, size_t *per_elem)
{
    if (per_elem != NULL)
        *per_elem = t->basic == MPI_DATATYPE_NULL ? 0 : t->per_elem;
    return t->basic;
}

/* buf + off without arithmetic on a null pointer (MPI_BOTTOM). */
static inline char *
at(const void *buf, MPI_Aint off)
{
    return (char *)((uintptr_t)buf + (uintptr_t)off);
}

void
mpii_pack(const void *buf, int count, const struct mpii_type *t, void *out)
{
    char *dst = out;
    MPI_Aint e, base = 0;
    size_t k;

    if (count <= 0 || t->size == 0)
        return;
    if (mpii_type_contiguous(t)) {
        memcpy(dst, at(buf, t->lb), (size_t)count * t->size);
        return;
    }
    for (e = 0; e < count; e++, base += t->extent)
        for (k = 0; k < t->nblocks; k++) {
            memcpy(dst, at(buf, base + t->blk[k].off), t->blk[k].len);
            dst += t->blk[k].len;
        }
}

void
mpii_unpack(const void *in, size_t bytes, void *buf, int count,
            const struct mpii_type *t)
{
    const char *src = in;
    size_t total, n, k;
    MPI_Aint e, base = 0;

    if (count <= 0 || t->size == 0)
        return;
    if (!__builtin_mul_overflow((size_t)count, t->size, &total) &&
        total < bytes)
        bytes = total;
    if (mpii_type_contiguous(t)) {
        memcpy(at(buf, t->lb), src, bytes);
        return;
    }
    for (e = 0; e < count && bytes > 0; e++, base += t->extent)
        for (k = 0; k < t->nblocks && bytes > 0; k++) {
            n = t->blk[k].len < bytes ? t->blk[k].len : bytes;
            memcpy(at(buf, base + t->blk[k].off), src, n);
            src += n;
            bytes -= n;
        }
}

size_t
mpii_type_elements(const struct mpii_type *t, size_t bytes, int *whole)
{
    size_t per = 0, n, k, i, full;

    for (k = 0; k < t->nsig; k++)
        per += t->sig[k].n;
    if (t->size == 0) {
        *whole = bytes == 0;
        return 0;
    }
    full = bytes / t->size;
    n = full * per;
    bytes -= full * t->size;
    for (k = 0; k < t->nsig && bytes > 0; k++)
        for (i = 0; i < t->sig[k].n && bytes >= t->sig[k].esize; i++) {
            bytes -= t->sig[k].esize;
            n++;
        }
    *whole = bytes == 0;
    return n;
}

static void
type_release_any(void *t)
{
    /* The table's reference only: a type held by another dies with it. */
    mpii_type_release(t);
}

void
mpii_type_fini(void)
{
    mpii_handles_fini(&derived, type_release_any);
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        mpii_attrs_drop(&builtin[i].attrs);
}

/* --- construction --------------------------------------------------- */

int
mpii_build_start(struct mpii_build *b, const struct mpii_type *old)
{
    memset(b, 0, sizeof *b);
    b->old = old;
    if ((b->t = calloc(1, sizeof *b->t)) == NULL)
        return MPI_ERR_NO_MEM;
    b->t->basic = old != NULL ? old->basic : MPI_DATATYPE_NULL;
    b->t->combiner = MPI_COMBINER_NAMED;
    return MPI_SUCCESS;
}

void
mpii_build_abort(struct mpii_build *b)
{
    type_destroy(b->t);
    b->t = NULL;
}

/* Append a run of bytes, merging it with the previous one if adjacent. */
static int
build_append(struct mpii_build *b, MPI_Aint off, size_t len)
{
    struct mpii_type *t = b->t;
    struct mpii_blk *nb, *last;
    size_t ncap;

    if (t->nblocks > 0) {
        last = &t->blk[t->nblocks - 1];
        if (last->off + (MPI_Aint)last->len == off) {
            last->len += len;
            return MPI_SUCCESS;
        }
    }
    if (t->nblocks == b->cap) {
        ncap = b->cap == 0 ? 4 : b->cap * 2;
        if (ncap < b->cap || ncap > SIZE_MAX / sizeof *nb)
            return MPI_ERR_NO_MEM;
        if ((nb = realloc(t->blk, ncap * sizeof *nb)) == NULL)
            return MPI_ERR_NO_MEM;
        t->blk = nb;
        b->cap = ncap;
    }
    t->blk[t->nblocks].off = off;
    t->blk[t->nblocks].len = len;
    t->nblocks++;
    return MPI_SUCCESS;
}

/* Append reps copies of old's signature. */
static int
build_sig(struct mpii_build *b, size_t reps)
{
    const struct mpii_type *old = b->old;
    struct mpii_type *t = b->t;
    struct mpii_sig *ns, *last;
    size_t k, n, ncap;

    if (reps == 0 || old->nsig == 0)
        return MPI_SUCCESS;
    /* One run repeated stays one run. */
    for (k = 0; k < (old->nsig == 1 ? 1 : reps * old->nsig); k++) {
        const struct mpii_sig *s = &old->sig[k % old->nsig];

        n = old->nsig == 1 ? s->n * reps : s->n;
        if (t->nsig > 0) {
            last = &t->sig[t->nsig - 1];
            if (last->esize == s->esize && last->unit == s->unit) {
                last->n += n;
                continue;
            }
        }
        if (t->nsig == b->sigcap) {
            ncap = b->sigcap == 0 ? 2 : b->sigcap * 2;
            if (ncap > SIZE_MAX / sizeof *ns)
                return MPI_ERR_NO_MEM;
            if ((ns = realloc(t->sig, ncap * sizeof *ns)) == NULL)
                return MPI_ERR_NO_MEM;
            t->sig = ns;
            b->sigcap = ncap;
        }
        t->sig[t->nsig].esize = s->esize;
        t->sig[t->nsig].unit = s->unit;
        t->sig[t->nsig].n = n;
        t->nsig++;
    }
    return MPI_SUCCESS;
}

int
mpii_build_block(struct mpii_build *b, long long disp, int blocklen)
{
    MPI_Aint off;

    if (__builtin_mul_overflow(disp, b->old->extent, &off))
        return MPI_ERR_ARG;
    return mpii_build_block_at(b, off, blocklen);
}

/* Add blocklen consecutive old elements at byte offset off.  Sizes and
 * bounds are checked for overflow before any offset is formed. */
int
mpii_build_block_at(struct mpii_build *b, MPI_Aint off, long long blocklen)
{
    const struct mpii_type *old = b->old;
    struct mpii_type *t = b->t;
    MPI_Aint ext = old->extent, first, last, lo, hi, span, a;
    size_t bytes, elems, j, k;
    int rc;

    if (blocklen < 0)
        return MPI_ERR_ARG;
    if (blocklen == 0)
        return MPI_SUCCESS;
    /* Element j spans [first + j ext, first + (j + 1) ext]: the block's
     * bounds are its first and last elements' outer ends, whichever way
     * a (resized, negative) extent runs. */
    if (__builtin_add_overflow(off, old->lb, &first) ||
        __builtin_mul_overflow((MPI_Aint)blocklen - 1, ext, &span) ||
        __builtin_add_overflow(first, span, &last) ||
        __builtin_add_overflow(ext < 0 ? first : last, ext, &hi))
        return MPI_ERR_ARG;
    lo = ext < 0 ? last : first;
    if (old->align > t->align)
        t->align = old->align;
    t->sticky |= old->sticky;
    if (__builtin_mul_overflow((size_t)blocklen, old->size, &bytes) ||
        __builtin_add_overflow(t->size, bytes, &t->size))
        return MPI_ERR_COUNT;
    if (old->basic == MPI_DATATYPE_NULL ||
        (t->basic != MPI_DATATYPE_NULL && t->basic != old->basic))
        b->mixed = 1;
    if (!b->mixed) {
        t->basic = old->basic;
        if (__builtin_mul_overflow((size_t)blocklen, old->per_elem, &elems) ||
            __builtin_add_overflow(t->per_elem, elems, &t->per_elem))
            return MPI_ERR_COUNT;
    }
    if (!b->bounded || lo < t->lb)
        t->lb = lo;
    if (!b->bounded || hi > b->ub)
        b->ub = hi;
    b->bounded = 1;

    if ((rc = build_sig(b, (size_t)blocklen)) != MPI_SUCCESS)
        return rc;
    if (old->size == 0)
        return MPI_SUCCESS;
    if (mpii_type_contiguous(old))
        return build_append(b, first, bytes);
    /* Element j starts at first - old->lb + j * ext; old offsets are
     * taken relative to old->lb so that every sum stays within [lo, hi]. */
    for (j = 0; j < (size_t)blocklen; j++) {
        a = first + (MPI_Aint)j * ext;
        for (k = 0; k < old->nblocks; k++) {
            rc = build_append(b, a + (old->blk[k].off - old->lb),
                              old->blk[k].len);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

void
mpii_build_bounds(struct mpii_build *b, MPI_Aint lb, MPI_Aint extent)
{
    b->t->lb = lb;
    b->ub = lb + extent;
    b->bounded = 1;
    b->t->sticky = 1;
}

void
mpii_build_pad(struct mpii_build *b)
{
    const struct mpii_type *t = b->t;
    MPI_Aint ext, rest, ub;

    if (!b->bounded || t->sticky || t->align < 2 ||
        __builtin_sub_overflow(b->ub, t->lb, &ext) || ext <= 0)
        return;
    if ((rest = ext % (MPI_Aint)t->align) != 0 &&
        !__builtin_add_overflow(b->ub, (MPI_Aint)t->align - rest, &ub))
        b->ub = ub;
}

int
mpii_build_contents(struct mpii_build *b, int combiner, int ni, const int *ints,
                    int na, const MPI_Aint *aints, int nd,
                    const MPI_Datatype *types)
{
    struct mpii_type *t = b->t;
    int i;

    t->combiner = combiner;
    if ((ni > 0 && (t->ints = malloc((size_t)ni * sizeof *t->ints)) == NULL) ||
        (na > 0 &&
         (t->aints = malloc((size_t)na * sizeof *t->aints)) == NULL) ||
        (nd > 0 && (t->types = calloc((size_t)nd, sizeof *t->types)) == NULL))
        return MPI_ERR_NO_MEM;
    if (ni > 0)
        memcpy(t->ints, ints, (size_t)ni * sizeof *ints);
    if (na > 0)
        memcpy(t->aints, aints, (size_t)na * sizeof *aints);
    t->ni = ni;
    t->na = na;
    t->nd = nd;
    for (i = 0; i < nd; i++) {
        t->types[i] = mpii_type_lookup(types[i]);
        mpii_type_hold(t->types[i]);
    }
    return MPI_SUCCESS;
}

int
mpii_build_finish(struct mpii_build *b, MPI_Datatype *newtype)
{
    struct mpii_type *t = b->t;
    struct mpii_blk *nb;
    uint32_t h;
    int rc;

    if (!b->bounded) {
        t->lb = 0;
        t->extent = 0;
    } else if (__builtin_sub_overflow(b->ub, t->lb, &t->extent)) {
        return MPI_ERR_ARG;
    }
    if (b->mixed)
        t->basic = MPI_DATATYPE_NULL;
    if (t->basic == MPI_DATATYPE_NULL)
        t->per_elem = 0;
    if (b->cap > t->nblocks && t->nblocks > 0 &&
        (nb = realloc(t->blk, t->nblocks * sizeof *nb)) != NULL) {
        t->blk = nb;
        b->cap = t->nblocks;
    }
    if ((rc = mpii_handle_put(&derived, t, &h)) != MPI_SUCCESS)
        return rc;
    t->refs = 1;
    t->handle = (MPI_Datatype)h;
    *newtype = t->handle;
    b->t = NULL;
    return MPI_SUCCESS;
}

/* --- the MPI calls on any type ---------------------------------------- */

#define TYPE_ERR(rc, fn) mpii_err(MPI_COMM_WORLD, rc, fn)

/* The named type of a class and a size (MPI 3.1 17.1.9): the Fortran
 * sized types (16-byte reals are REAL(16), binary128, not the x87 long
 * double C has in as many bytes), and the C long double kinds where
 * their size has no Fortran type. */
#pragma weak MPI_Type_match_size = PMPI_Type_match_size
int
PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    MPII_ENTER;
    static const struct {
        int class, size;
        MPI_Datatype type;
    } match[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16},
        {MPI_TYPECLASS_REAL, 2, MPI_REAL2},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},
        {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},
        {MPI_TYPECLASS_REAL, sizeof(long double), MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_COMPLEX, 4, MPI_COMPLEX4},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_DOUBLE_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
        {MPI_TYPECLASS_COMPLEX, sizeof(long double _Complex),
         MPI_C_LONG_DOUBLE_COMPLEX},
    };

    if (datatype == NULL)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_match_size");
    for (size_t i = 0; i < sizeof match / sizeof match[0]; i++)
        if (match[i].class == typeclass && match[i].size == size) {
            *datatype = match[i].type;
            return MPI_SUCCESS;
        }
    return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_match_size");
}

#pragma weak MPI_Type_commit = PMPI_Type_commit
int
PMPI_Type_commit(MPI_Datatype *datatype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_commit";
    struct mpii_type *t;

    if (datatype == NULL)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    if (mpii_type_lookup(*datatype) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    /* Committing a builtin type is allowed and changes nothing. */
    if ((t = derived_lookup(*datatype)) != NULL)
        t->committed = 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_free = PMPI_Type_free
int
PMPI_Type_free(MPI_Datatype *datatype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_free";
    struct mpii_type *t;
    int rc;

    if (datatype == NULL)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    /* Builtin types cannot be freed; a type still used by a pending
     * request or by another type lives on until they let it go.  Its
     * attributes go now, through their delete callbacks. */
    if ((t = derived_lookup(*datatype)) == NULL || t->predefined)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (t->handle == *datatype && (rc = mpii_type_attr_free(t)) != MPI_SUCCESS)
        return TYPE_ERR(rc, fn);
    (void)mpii_handle_take(&derived, (uint32_t)*datatype);
    mpii_type_release(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_size = PMPI_Type_size
int
PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_size";
    const struct mpii_type *t;

    if (size == NULL)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    if ((t = mpii_type_lookup(datatype)) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_size_x = PMPI_Type_size_x
int
PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_size_x";
    const struct mpii_type *t;

    if (size == NULL)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    if ((t = mpii_type_lookup(datatype)) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
int
PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_get_extent";
    const struct mpii_type *t;

    if (lb == NULL || extent == NULL)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    if ((t = mpii_type_lookup(datatype)) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
int
PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPII_ENTER;
    MPI_Aint l = 0, e = 0;
    int rc;

    if (lb == NULL || extent == NULL)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_get_extent_x");
    if ((rc = PMPI_Type_get_extent(datatype, &l, &e)) != MPI_SUCCESS)
        return rc;
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

/* The bounds of the data itself, ignoring explicit bounds. */
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
int
PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_get_true_extent";
    const struct mpii_type *t;
    MPI_Aint lo = 0, hi = 0;
    size_t k;

    if (lb == NULL || extent == NULL)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    if ((t = mpii_type_lookup(datatype)) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    for (k = 0; k < t->nblocks; k++) {
        if (k == 0 || t->blk[k].off < lo)
            lo = t->blk[k].off;
        if (k == 0 || t->blk[k].off + (MPI_Aint)t->blk[k].len > hi)
            hi = t->blk[k].off + (MPI_Aint)t->blk[k].len;
    }
    *lb = lo;
    *extent = hi - lo;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
int
PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *lb,
                            MPI_Count *extent)
{
    MPII_ENTER;
    MPI_Aint l = 0, e = 0;
    int rc;

    if (lb == NULL || extent == NULL)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_get_true_extent_x");
    if ((rc = PMPI_Type_get_true_extent(datatype, &l, &e)) != MPI_SUCCESS)
        return rc;
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
int
PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers,
                       int *num_addresses, int *num_datatypes, int *combiner)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_get_envelope";
    const struct mpii_type *t;

    if (num_integers == NULL || num_addresses == NULL ||
        num_datatypes == NULL || combiner == NULL)
        return TYPE_ERR(MPI_ERR_ARG, fn);
    if ((t = mpii_type_lookup(datatype)) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    *num_integers = t->ni;
    *num_addresses = t->na;
    *num_datatypes = t->nd;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
int
PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                       int max_addresses, int max_datatypes, int integers[],
                       MPI_Aint addresses[], MPI_Datatype datatypes[])
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_get_contents";
    const struct mpii_type *t;
    int i, rc;

    if ((t = mpii_type_lookup(datatype)) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (t->combiner == MPI_COMBINER_NAMED)
        return TYPE_ERR(MPI_ERR_TYPE, fn);
    if (max_integers < t->ni || max_addresses < t->na ||
        max_datatypes < t->nd || (t->ni > 0 && integers == NULL) ||
        (t->na > 0 && addresses == NULL) || (t->nd > 0 && datatypes == NULL))
        return TYPE_ERR(MPI_ERR_ARG, fn);
    if (t->ni > 0)
        memcpy(integers, t->ints, (size_t)t->ni * sizeof *integers);
    if (t->na > 0)
        memcpy(addresses, t->aints, (size_t)t->na * sizeof *addresses);
    for (i = 0; i < t->nd; i++)
        if ((rc = mpii_type_new_handle(t->types[i], &datatypes[i])) !=
            MPI_SUCCESS) {
            while (i-- > 0)
                if (!own_handle(t->types[i]))
                    PMPI_Type_free(&datatypes[i]);
            return TYPE_ERR(rc, fn);
        }
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_set_name = PMPI_Type_set_name
int
PMPI_Type_set_name(MPI_Datatype datatype, const char *name)
{
    MPII_ENTER;
    struct mpii_type *t;

    if (name == NULL)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_set_name");
    if ((t = (struct mpii_type *)(uintptr_t)mpii_type_lookup(datatype)) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_set_name");
    strncpy(t->name, name, sizeof t->name - 1);
    t->name[sizeof t->name - 1] = '\0';
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_name = PMPI_Type_get_name
int
PMPI_Type_get_name(MPI_Datatype datatype, char *name, int *resultlen)
{
    MPII_ENTER;
    const struct mpii_type *t;

    if (name == NULL || resultlen == NULL)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Type_get_name");
    if ((t = mpii_type_lookup(datatype)) == NULL)
        return TYPE_ERR(MPI_ERR_TYPE, "MPI_Type_get_name");
    memcpy(name, t->name, sizeof t->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_address = PMPI_Get_address
int
PMPI_Get_address(const void *location, MPI_Aint *address)
{
    MPII_ENTER;
    if (address == NULL)
        return TYPE_ERR(MPI_ERR_ARG, "MPI_Get_address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

#pragma weak MPI_Address = PMPI_Address
int
PMPI_Address(void *location, MPI_Aint *address)
{
    MPII_ENTER;
    return PMPI_Get_address(location, address);
}

#pragma weak MPI_Aint_add = PMPI_Aint_add
MPI_Aint
PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    MPII_ENTER;
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

#pragma weak MPI_Aint_diff = PMPI_Aint_diff
MPI_Aint
PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    MPII_ENTER;
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* The runs of bytes of one element (one-sided operations describe a
 * target datatype to the target with them). */
size_t
mpii_type_nblocks(const struct mpii_type *t)
{
    return t->nblocks;
}

void
mpii_type_block(const struct mpii_type *t, size_t i, MPI_Aint *off,
                size_t *len)
{
    *off = t->blk[i].off;
    *len = t->blk[i].len;
}
