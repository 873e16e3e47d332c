/*
 * What datatype.c, datatype_create.c and pack.c share: the body of a
 * datatype and the builder of derived types.  The rest of the library uses
 * the contracts of mpii.h.
 */
#ifndef P2PMPI_DATATYPE_H
#define P2PMPI_DATATYPE_H

#include <stddef.h>
#include <stdint.h>

#include "mpii.h"

/* A run of bytes of one element, relative to the element's origin. */
struct mpii_blk {
    MPI_Aint off;
    size_t len;
};

/* The type signature, in packed order: n basic elements of esize bytes
 * each, byte-swapped in units of unit bytes for external32 (a complex is
 * one element of two units).  A unit of MPII_UNIT_X87 is a 16-byte one
 * holding an x87 extended value (C's long double on x86-64), which
 * external32 writes as the IEEE binary128 of the same value. */
struct mpii_sig {
    uint32_t esize, unit;
    size_t n;
};
#define MPII_UNIT_X87 10u
/* The unit of C's long double parts. */
#if defined(__SIZEOF_FLOAT128__) && defined(__LDBL_MANT_DIG__) &&             \
    __LDBL_MANT_DIG__ == 64 && __SIZEOF_LONG_DOUBLE__ == 16
#define MPII_LDOUBLE_UNIT MPII_UNIT_X87
#define MPII_HAVE_X87_EXTERNAL 1
#else
#define MPII_LDOUBLE_UNIT sizeof(long double)
#endif

struct mpii_type {
    MPI_Datatype handle;
    int committed;
    int refs;        /* derived: handles, pending requests, parents */
    size_t size;     /* bytes of data in one element */
    MPI_Aint lb;     /* lower bound (type map or explicit) */
    MPI_Aint extent; /* ub - lb */
    size_t align;    /* the strictest alignment of its basic types (a
                      * struct's extent is rounded up to it) */
    int predefined;  /* derived, but predefined for the standard (the
                      * Fortran 90 types): never freed */
    int sticky;      /* bounds set explicitly (resized, subarray, darray)
                      * here or in a type it is made of: no such rounding */
    size_t nblocks;
    struct mpii_blk *blk;
    MPI_Datatype basic; /* the one builtin type it is made of, or NULL */
    size_t per_elem;    /* how many of basic one element holds */
    size_t nsig;
    struct mpii_sig *sig;
    /* Type_get_envelope / Type_get_contents */
    int combiner;
    int ni, na, nd;
    int *ints;
    MPI_Aint *aints;
    const struct mpii_type **types; /* each holds a reference */
    char name[MPI_MAX_OBJECT_NAME];
    struct mpii_attr *attrs; /* type_attr.c */
};

#define DT_KIND 0x4c000000u

/* A derived type being built from blocks of old types. */
struct mpii_build {
    const struct mpii_type *old;
    struct mpii_type *t;
    size_t cap, sigcap; /* of t->blk, t->sig */
    int bounded;        /* a block has set lb and ub */
    int mixed;          /* made of more than one builtin type */
    MPI_Aint ub;
};

int mpii_build_start(struct mpii_build *, const struct mpii_type *old);
/* Blocks of blocklen consecutive elements of b->old (which may change
 * between blocks, for structs) at disp old extents, or at byte offset
 * off. */
int mpii_build_block(struct mpii_build *, long long disp, int blocklen);
int mpii_build_block_at(struct mpii_build *, MPI_Aint off, long long blocklen);
/* Record what Type_get_contents gives back. */
int mpii_build_contents(struct mpii_build *, int combiner, int ni,
                        const int *ints, int na, const MPI_Aint *aints, int nd,
                        const MPI_Datatype *types);
/* Bounds set explicitly (resized, subarray, darray). */
void mpii_build_bounds(struct mpii_build *, MPI_Aint lb, MPI_Aint extent);
/* A struct's extent rounded up to its members' strictest alignment, as
 * C pads a struct (MPI 3.1 4.1.6, "epsilon"), unless a member's bounds
 * were set explicitly. */
void mpii_build_pad(struct mpii_build *);
/* Give the type a handle (then owned by the table), or abort. */
int mpii_build_finish(struct mpii_build *, MPI_Datatype *newtype);
void mpii_build_abort(struct mpii_build *);

/* A new handle for a live derived type (Type_get_contents); builtin
 * types are their own handle. */
int mpii_type_new_handle(const struct mpii_type *, MPI_Datatype *);
/* Non-zero for a builtin (named) type. */
int mpii_type_builtin(const struct mpii_type *);

/* type_attr.c: Type_dup copies the attributes of old to new through
 * their copy callbacks; Type_free of the handle that made a type deletes
 * them through their delete callbacks (MPI error codes). */
int mpii_type_attr_copy(const struct mpii_type *old, struct mpii_type *new);
int mpii_type_attr_free(struct mpii_type *);

#endif
