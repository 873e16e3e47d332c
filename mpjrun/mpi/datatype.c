/*
 * datatype.c: MPI datatypes.  A type is a flattened list of (byte offset,
 * byte length) blocks relative to an element's origin, in type-map order,
 * with adjacent blocks merged; pack and unpack are loops over it.  The
 * builtin types are a constant table; derived types (contiguous, vector,
 * indexed) live behind handles of handles.c, which carry a generation,
 * so that a freed or forged handle is detected rather than followed.
 *
 * Derived handle: 0x4c000000 | generation << 16 | (0x1000 + slot).
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "mpii.h"

/* A run of bytes of one element, relative to the element's origin. */
struct mpii_blk {
    MPI_Aint off;
    size_t len;
};

struct mpii_type {
    MPI_Datatype handle;
    int committed;
    size_t size;     /* bytes of data in one element */
    MPI_Aint lb;     /* lowest lower bound of the blocks */
    MPI_Aint extent; /* ub - lb */
    size_t nblocks;
    struct mpii_blk *blk;
    MPI_Datatype basic; /* the one builtin type it is made of, or NULL */
    size_t per_elem;    /* how many of basic one element holds */
};

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

#define DT_KIND 0x4c000000u

/* A builtin type of one C type. */
#define BUILTIN(h, T)                                                          \
    [(h)-DT_KIND] = {                                                          \
        .handle = (h),                                                         \
        .committed = 1,                                                        \
        .size = sizeof(T),                                                     \
        .lb = 0,                                                               \
        .extent = sizeof(T),                                                   \
        .nblocks = 1,                                                          \
        .blk = (struct mpii_blk[]){{0, sizeof(T)}},                            \
        .basic = (h),                                                          \
        .per_elem = 1,                                                         \
    }

/* A pair type: value then int, one block when C leaves no hole. */
#define PAIR_VSIZE(S) sizeof(((S *)0)->v)
#define PAIR_ADJ(S) (offsetof(S, i) == PAIR_VSIZE(S))
#define PAIR(h, S)                                                             \
    [(h)-DT_KIND] = {                                                          \
        .handle = (h),                                                         \
        .committed = 1,                                                        \
        .size = PAIR_VSIZE(S) + sizeof(int),                                   \
        .lb = 0,                                                               \
        .extent = sizeof(S),                                                   \
        .nblocks = PAIR_ADJ(S) ? 1 : 2,                                        \
        .blk =                                                                 \
            (struct mpii_blk[]){{0, PAIR_ADJ(S) ? PAIR_VSIZE(S) + sizeof(int)  \
                                                : PAIR_VSIZE(S)},              \
                                {offsetof(S, i), sizeof(int)}},                \
        .basic = (h),                                                          \
        .per_elem = 1,                                                         \
    }

static const struct mpii_type builtin[P2P_DT_BUILTIN_MAX + 1] = {
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
    BUILTIN(MPI_LONG_DOUBLE, long double),
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
    PAIR(MPI_LONG_DOUBLE_INT, struct long_double_int),
    BUILTIN(MPI_C_FLOAT_COMPLEX, float _Complex),
    BUILTIN(MPI_C_DOUBLE_COMPLEX, double _Complex),
};

/* The derived types (handles.c). */
static struct mpii_handles derived = {.kind = DT_KIND};

/* The derived type behind a handle, live or not yet committed. */
static struct mpii_type *
derived_lookup(MPI_Datatype h)
{
    return mpii_handle_get(&derived, (uint32_t)h);
}

/* Free a derived type that has no slot (or whose slot is released). */
static void
type_destroy(struct mpii_type *t)
{
    if (t == NULL)
        return;
    free(t->blk);
    free(t);
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

void
mpii_pack(const void *buf, int count, const struct mpii_type *t, void *out)
{
    const char *src = buf;
    char *dst = out;
    MPI_Aint e;
    size_t k;

    if (count <= 0 || t->size == 0)
        return;
    if (mpii_type_contiguous(t)) {
        memcpy(dst, src + t->lb, (size_t)count * t->size);
        return;
    }
    for (e = 0; e < count; e++, src += t->extent)
        for (k = 0; k < t->nblocks; k++) {
            memcpy(dst, src + t->blk[k].off, t->blk[k].len);
            dst += t->blk[k].len;
        }
}

void
mpii_unpack(const void *in, size_t bytes, void *buf, int count,
            const struct mpii_type *t)
{
    const char *src = in;
    char *dst = buf;
    size_t total, n, k;
    MPI_Aint e;

    if (count <= 0 || t->size == 0)
        return;
    if (!__builtin_mul_overflow((size_t)count, t->size, &total) &&
        total < bytes)
        bytes = total;
    if (mpii_type_contiguous(t)) {
        memcpy(dst + t->lb, src, bytes);
        return;
    }
    for (e = 0; e < count && bytes > 0; e++, dst += t->extent)
        for (k = 0; k < t->nblocks && bytes > 0; k++) {
            n = t->blk[k].len < bytes ? t->blk[k].len : bytes;
            memcpy(dst + t->blk[k].off, src, n);
            src += n;
            bytes -= n;
        }
}

static void
type_destroy_any(void *t)
{
    type_destroy(t);
}

void
mpii_type_fini(void)
{
    mpii_handles_fini(&derived, type_destroy_any);
}

/* --- construction --------------------------------------------------- */

/* A derived type being built from blocks of an old type. */
struct build {
    const struct mpii_type *old;
    struct mpii_type *t;
    size_t cap;  /* of t->blk */
    int bounded; /* a block has set lb and ub */
    MPI_Aint ub;
};

static int
build_start(struct build *b, const struct mpii_type *old)
{
    memset(b, 0, sizeof *b);
    b->old = old;
    if ((b->t = calloc(1, sizeof *b->t)) == NULL)
        return MPI_ERR_NO_MEM;
    b->t->basic = old->basic;
    return MPI_SUCCESS;
}

static void
build_abort(struct build *b)
{
    type_destroy(b->t);
    b->t = NULL;
}

/* Append a run of bytes, merging it with the previous one if adjacent. */
static int
build_append(struct build *b, MPI_Aint off, size_t len)
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

/* Add blocklen consecutive old elements at disp (in old extents).  Sizes
 * and bounds are checked for overflow before any offset is formed. */
static int
build_block(struct build *b, long long disp, int blocklen)
{
    const struct mpii_type *old = b->old;
    struct mpii_type *t = b->t;
    MPI_Aint ext = old->extent, lo, hi, span, at;
    size_t bytes, elems, j, k;
    int rc;

    if (blocklen < 0)
        return MPI_ERR_ARG;
    if (blocklen == 0)
        return MPI_SUCCESS;
    if (__builtin_mul_overflow(disp, ext, &lo) ||
        __builtin_add_overflow(lo, old->lb, &lo) ||
        __builtin_mul_overflow((MPI_Aint)blocklen, ext, &span) ||
        __builtin_add_overflow(lo, span, &hi))
        return MPI_ERR_ARG;
    if (__builtin_mul_overflow((size_t)blocklen, old->size, &bytes) ||
        __builtin_add_overflow(t->size, bytes, &t->size) ||
        __builtin_mul_overflow((size_t)blocklen, old->per_elem, &elems) ||
        __builtin_add_overflow(t->per_elem, elems, &t->per_elem))
        return MPI_ERR_COUNT;
    if (!b->bounded || lo < t->lb)
        t->lb = lo;
    if (!b->bounded || hi > b->ub)
        b->ub = hi;
    b->bounded = 1;

    if (old->size == 0)
        return MPI_SUCCESS;
    if (mpii_type_contiguous(old))
        return build_append(b, lo, bytes);
    /* Element j starts at lo - old->lb + j * ext; old offsets are taken
     * relative to old->lb so that every sum stays within [lo, hi]. */
    for (j = 0; j < (size_t)blocklen; j++) {
        at = lo + (MPI_Aint)j * ext;
        for (k = 0; k < old->nblocks; k++) {
            rc = build_append(b, at + (old->blk[k].off - old->lb),
                              old->blk[k].len);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* Set the bounds, give the type a handle; the type is then owned by the
 * table. */
static int
build_finish(struct build *b, MPI_Datatype *newtype)
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
    if (t->basic == MPI_DATATYPE_NULL)
        t->per_elem = 0;
    if (b->cap > t->nblocks && t->nblocks > 0 &&
        (nb = realloc(t->blk, t->nblocks * sizeof *nb)) != NULL) {
        t->blk = nb;
        b->cap = t->nblocks;
    }
    if ((rc = mpii_handle_put(&derived, t, &h)) != MPI_SUCCESS)
        return rc;
    t->handle = (MPI_Datatype)h;
    *newtype = t->handle;
    b->t = NULL;
    return MPI_SUCCESS;
}

/* --- the MPI calls -------------------------------------------------- */

int
MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous";
    const struct mpii_type *old;
    struct build b;
    int rc;

    if (newtype == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if (count < 0)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn);
    if ((old = mpii_type_lookup(oldtype)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    if ((rc = build_start(&b, old)) != MPI_SUCCESS)
        goto error;
    if ((rc = build_block(&b, 0, count)) != MPI_SUCCESS)
        goto error;
    if ((rc = build_finish(&b, newtype)) != MPI_SUCCESS)
        goto error;
    return MPI_SUCCESS;
error:
    build_abort(&b);
    return mpii_err(MPI_COMM_WORLD, rc, fn);
}

int
MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_vector";
    const struct mpii_type *old;
    struct build b;
    int i, rc;

    if (newtype == NULL || blocklength < 0)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if (count < 0)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn);
    if ((old = mpii_type_lookup(oldtype)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    if ((rc = build_start(&b, old)) != MPI_SUCCESS)
        goto error;
    for (i = 0; i < count; i++)
        if ((rc = build_block(&b, (long long)i * stride, blocklength)) !=
            MPI_SUCCESS)
            goto error;
    if ((rc = build_finish(&b, newtype)) != MPI_SUCCESS)
        goto error;
    return MPI_SUCCESS;
error:
    build_abort(&b);
    return mpii_err(MPI_COMM_WORLD, rc, fn);
}

int
MPI_Type_indexed(int count, const int blocklengths[], const int displacements[],
                 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_indexed";
    const struct mpii_type *old;
    struct build b;
    int i, rc;

    if (newtype == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if (count < 0)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn);
    if (count > 0 && (blocklengths == NULL || displacements == NULL))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((old = mpii_type_lookup(oldtype)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    for (i = 0; i < count; i++)
        if (blocklengths[i] < 0)
            return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((rc = build_start(&b, old)) != MPI_SUCCESS)
        goto error;
    for (i = 0; i < count; i++)
        if ((rc = build_block(&b, displacements[i], blocklengths[i])) !=
            MPI_SUCCESS)
            goto error;
    if ((rc = build_finish(&b, newtype)) != MPI_SUCCESS)
        goto error;
    return MPI_SUCCESS;
error:
    build_abort(&b);
    return mpii_err(MPI_COMM_WORLD, rc, fn);
}

int
MPI_Type_commit(MPI_Datatype *datatype)
{
    static const char fn[] = "MPI_Type_commit";
    struct mpii_type *t;

    if (datatype == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if (mpii_type_lookup(*datatype) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    /* Committing a builtin type is allowed and changes nothing. */
    if ((t = derived_lookup(*datatype)) != NULL)
        t->committed = 1;
    return MPI_SUCCESS;
}

int
MPI_Type_free(MPI_Datatype *datatype)
{
    static const char fn[] = "MPI_Type_free";
    struct mpii_type *t;

    if (datatype == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    /* Builtin types cannot be freed. */
    if ((t = mpii_handle_take(&derived, (uint32_t)*datatype)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    type_destroy(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int
MPI_Type_size(MPI_Datatype datatype, int *size)
{
    static const char fn[] = "MPI_Type_size";
    const struct mpii_type *t;

    if (size == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((t = mpii_type_lookup(datatype)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

int
MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    static const char fn[] = "MPI_Type_get_extent";
    const struct mpii_type *t;

    if (lb == NULL || extent == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((t = mpii_type_lookup(datatype)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}
