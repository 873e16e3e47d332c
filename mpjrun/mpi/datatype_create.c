/*
 * datatype_create.c: the type constructors (contiguous, vector, indexed
 * and their h-, block and struct forms, resized, dup, subarray, darray).
 * Each lays out blocks through the builder of datatype.c and records its
 * arguments for MPI_Type_get_contents.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

#define ERR(rc, fn) mpii_err(MPI_COMM_WORLD, rc, fn)

/* Common tail: finish the build or abort it and report. */
static int
finish(struct mpii_build *b, int rc, MPI_Datatype *newtype, const char *fn)
{
    if (rc == MPI_SUCCESS)
        rc = mpii_build_finish(b, newtype);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    mpii_build_abort(b);
    return ERR(rc, fn);
}

/* Arguments every constructor checks: the old type, the output, count. */
static int
check(int count, MPI_Datatype oldtype, const MPI_Datatype *newtype,
      const struct mpii_type **old)
{
    if (newtype == NULL)
        return MPI_ERR_ARG;
    if (count < 0)
        return MPI_ERR_COUNT;
    if ((*old = mpii_type_lookup(oldtype)) == NULL)
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
int
PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_contiguous";
    const struct mpii_type *old;
    struct mpii_build b;
    int rc;

    if ((rc = check(count, oldtype, newtype, &old)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if ((rc = mpii_build_start(&b, old)) != MPI_SUCCESS)
        return finish(&b, rc, newtype, fn);
    rc = mpii_build_block(&b, 0, count);
    if (rc == MPI_SUCCESS)
        rc = mpii_build_contents(&b, MPI_COMBINER_CONTIGUOUS, 1, &count, 0,
                                 NULL, 1, &oldtype);
    return finish(&b, rc, newtype, fn);
}

/* vector (stride in old extents) and hvector (in bytes). */
static int
vector(int count, int blocklength, MPI_Aint stride, int bytes,
       MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    const struct mpii_type *old;
    struct mpii_build b;
    MPI_Aint off;
    int i, rc, ints[3];

    if ((rc = check(count, oldtype, newtype, &old)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if (blocklength < 0)
        return ERR(MPI_ERR_ARG, fn);
    if ((rc = mpii_build_start(&b, old)) != MPI_SUCCESS)
        return finish(&b, rc, newtype, fn);
    for (i = 0; i < count && rc == MPI_SUCCESS; i++) {
        if (bytes) {
            if (__builtin_mul_overflow((MPI_Aint)i, stride, &off))
                rc = MPI_ERR_ARG;
            else
                rc = mpii_build_block_at(&b, off, blocklength);
        } else {
            rc = mpii_build_block(&b, (long long)i * stride, blocklength);
        }
    }
    ints[0] = count;
    ints[1] = blocklength;
    ints[2] = (int)stride;
    if (rc == MPI_SUCCESS)
        rc = bytes ? mpii_build_contents(&b, MPI_COMBINER_HVECTOR, 2, ints, 1,
                                         &stride, 1, &oldtype)
                   : mpii_build_contents(&b, MPI_COMBINER_VECTOR, 3, ints, 0,
                                         NULL, 1, &oldtype);
    return finish(&b, rc, newtype, fn);
}

#pragma weak MPI_Type_vector = PMPI_Type_vector
int
PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                 MPI_Datatype *newtype)
{
    MPII_ENTER;
    return vector(count, blocklength, stride, 0, oldtype, newtype,
                  "MPI_Type_vector");
}

#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
int
PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                         MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPII_ENTER;
    return vector(count, blocklength, stride, 1, oldtype, newtype,
                  "MPI_Type_create_hvector");
}

#pragma weak MPI_Type_hvector = PMPI_Type_hvector
int
PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPII_ENTER;
    return vector(count, blocklength, stride, 1, oldtype, newtype,
                  "MPI_Type_hvector");
}

/* The indexed family: per-block lengths (or one length when bl is NULL),
 * displacements in old extents (idisp) or in bytes (adisp). */
static int
indexed(int count, const int *bl, int one, const int *idisp,
        const MPI_Aint *adisp, MPI_Datatype oldtype, MPI_Datatype *newtype,
        int combiner, const char *fn)
{
    const struct mpii_type *old;
    struct mpii_build b;
    int i, rc, ni, *ints = NULL, len;

    if ((rc = check(count, oldtype, newtype, &old)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if (count > 0 &&
        ((bl == NULL && one < 0) || (idisp == NULL && adisp == NULL)))
        return ERR(MPI_ERR_ARG, fn);
    for (i = 0; i < count; i++)
        if ((bl != NULL ? bl[i] : one) < 0)
            return ERR(MPI_ERR_ARG, fn);
    if ((rc = mpii_build_start(&b, old)) != MPI_SUCCESS)
        return finish(&b, rc, newtype, fn);
    for (i = 0; i < count && rc == MPI_SUCCESS; i++) {
        len = bl != NULL ? bl[i] : one;
        rc = idisp != NULL ? mpii_build_block(&b, idisp[i], len)
                           : mpii_build_block_at(&b, adisp[i], len);
    }
    /* count, lengths (or the one length), integer displacements. */
    ni = 1 + (bl != NULL ? count : 1) + (idisp != NULL ? count : 0);
    if (rc == MPI_SUCCESS && (ints = malloc((size_t)ni * sizeof *ints)) == NULL)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        ints[0] = count;
        if (bl != NULL)
            memcpy(ints + 1, bl, (size_t)count * sizeof *ints);
        else
            ints[1] = one;
        if (idisp != NULL)
            memcpy(ints + 1 + (bl != NULL ? count : 1), idisp,
                   (size_t)count * sizeof *ints);
        rc = mpii_build_contents(&b, combiner, ni, ints,
                                 adisp != NULL ? count : 0, adisp, 1, &oldtype);
    }
    free(ints);
    return finish(&b, rc, newtype, fn);
}

#pragma weak MPI_Type_indexed = PMPI_Type_indexed
int
PMPI_Type_indexed(int count, const int blocklengths[],
                  const int displacements[], MPI_Datatype oldtype,
                  MPI_Datatype *newtype)
{
    MPII_ENTER;
    return indexed(count, blocklengths, -1, displacements, NULL, oldtype,
                   newtype, MPI_COMBINER_INDEXED, "MPI_Type_indexed");
}

#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
int
PMPI_Type_create_hindexed(int count, const int blocklengths[],
                          const MPI_Aint displacements[], MPI_Datatype oldtype,
                          MPI_Datatype *newtype)
{
    MPII_ENTER;
    return indexed(count, blocklengths, -1, NULL, displacements, oldtype,
                   newtype, MPI_COMBINER_HINDEXED, "MPI_Type_create_hindexed");
}

#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed
int
PMPI_Type_hindexed(int count, int blocklengths[], MPI_Aint displacements[],
                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPII_ENTER;
    return indexed(count, blocklengths, -1, NULL, displacements, oldtype,
                   newtype, MPI_COMBINER_HINDEXED, "MPI_Type_hindexed");
}

#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
int
PMPI_Type_create_indexed_block(int count, int blocklength,
                               const int displacements[], MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    MPII_ENTER;
    if (blocklength < 0)
        return ERR(MPI_ERR_ARG, "MPI_Type_create_indexed_block");
    return indexed(count, NULL, blocklength, displacements, NULL, oldtype,
                   newtype, MPI_COMBINER_INDEXED_BLOCK,
                   "MPI_Type_create_indexed_block");
}

#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
int
PMPI_Type_create_hindexed_block(int count, int blocklength,
                                const MPI_Aint displacements[],
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPII_ENTER;
    if (blocklength < 0)
        return ERR(MPI_ERR_ARG, "MPI_Type_create_hindexed_block");
    return indexed(count, NULL, blocklength, NULL, displacements, oldtype,
                   newtype, MPI_COMBINER_HINDEXED_BLOCK,
                   "MPI_Type_create_hindexed_block");
}

#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
int
PMPI_Type_create_struct(int count, const int blocklengths[],
                        const MPI_Aint displacements[],
                        const MPI_Datatype types[], MPI_Datatype *newtype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_create_struct";
    const struct mpii_type *old;
    struct mpii_build b;
    int i, rc, *ints = NULL;

    if (newtype == NULL)
        return ERR(MPI_ERR_ARG, fn);
    if (count < 0)
        return ERR(MPI_ERR_COUNT, fn);
    if (count > 0 &&
        (blocklengths == NULL || displacements == NULL || types == NULL))
        return ERR(MPI_ERR_ARG, fn);
    for (i = 0; i < count; i++) {
        if (mpii_type_lookup(types[i]) == NULL)
            return ERR(MPI_ERR_TYPE, fn);
        if (blocklengths[i] < 0)
            return ERR(MPI_ERR_ARG, fn);
    }
    if ((rc = mpii_build_start(&b, NULL)) != MPI_SUCCESS)
        return finish(&b, rc, newtype, fn);
    for (i = 0; i < count && rc == MPI_SUCCESS; i++) {
        old = mpii_type_lookup(types[i]);
        b.old = old;
        rc = mpii_build_block_at(&b, displacements[i], blocklengths[i]);
    }
    if (rc == MPI_SUCCESS)
        mpii_build_pad(&b);
    if (rc == MPI_SUCCESS &&
        (ints = malloc((size_t)(count + 1) * sizeof *ints)) == NULL)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        ints[0] = count;
        if (count > 0)
            memcpy(ints + 1, blocklengths, (size_t)count * sizeof *ints);
        rc = mpii_build_contents(&b, MPI_COMBINER_STRUCT, count + 1, ints,
                                 count, displacements, count, types);
    }
    free(ints);
    return finish(&b, rc, newtype, fn);
}

#pragma weak MPI_Type_struct = PMPI_Type_struct
int
PMPI_Type_struct(int count, int blocklengths[], MPI_Aint displacements[],
                 MPI_Datatype types[], MPI_Datatype *newtype)
{
    MPII_ENTER;
    return PMPI_Type_create_struct(count, blocklengths, displacements, types,
                                   newtype);
}

#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
int
PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                         MPI_Datatype *newtype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_create_resized";
    const struct mpii_type *old;
    struct mpii_build b;
    MPI_Aint a[2] = {lb, extent};
    int rc;

    if ((rc = check(0, oldtype, newtype, &old)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if ((rc = mpii_build_start(&b, old)) != MPI_SUCCESS)
        return finish(&b, rc, newtype, fn);
    /* One old element where it lies (at its own lower bound). */
    rc = mpii_build_block_at(&b, 0, 1);
    mpii_build_bounds(&b, lb, extent);
    if (rc == MPI_SUCCESS)
        rc = mpii_build_contents(&b, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1,
                                 &oldtype);
    return finish(&b, rc, newtype, fn);
}

#pragma weak MPI_Type_dup = PMPI_Type_dup
int
PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_dup";
    const struct mpii_type *old;
    struct mpii_build b;
    int rc;

    if ((rc = check(0, oldtype, newtype, &old)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if ((rc = mpii_build_start(&b, old)) != MPI_SUCCESS)
        return finish(&b, rc, newtype, fn);
    rc = mpii_build_block_at(&b, 0, 1);
    mpii_build_bounds(&b, old->lb, old->extent);
    b.t->sticky = old->sticky; /* the same bounds, however they were set */
    if (rc == MPI_SUCCESS)
        rc = mpii_build_contents(&b, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1,
                                 &oldtype);
    if (rc == MPI_SUCCESS) {
        b.t->committed = old->committed;
        if (old->size == 0 && old->nblocks == 0)
            b.t->basic = old->basic;
        /* A copy callback that fails fails the dup, which then leaves
         * MPI_DATATYPE_NULL, as Comm_dup leaves MPI_COMM_NULL (MPI 3.1
         * 6.7.2; MPICH's attr/attrerrtype).  Other constructors that
         * fail leave the output as it was. */
        if ((rc = mpii_type_attr_copy(old, b.t)) != MPI_SUCCESS)
            *newtype = MPI_DATATYPE_NULL;
    }
    return finish(&b, rc, newtype, fn);
}

/* --- subarray and darray: lists of indices per dimension -------------- */

/* The global indices a process owns in one dimension. */
struct dim {
    int n, *idx;
};

/* Lay out the cartesian product of the dimensions' indices, the last
 * dimension fastest for C order, the first for Fortran order; element
 * (i0, i1, ...) of the global array of sizes[] lies at its row-major (C)
 * or column-major offset. */
static int
lay_out(struct mpii_build *b, int ndims, const int *sizes, const struct dim *d,
        int order)
{
    MPI_Aint *stride, ext = b->old->extent, off;
    int *pos, k, inner, rc = MPI_SUCCESS, run;

    for (k = 0; k < ndims; k++)
        if (d[k].n == 0)
            return MPI_SUCCESS;
    stride = calloc((size_t)ndims, sizeof *stride);
    pos = calloc((size_t)ndims, sizeof *pos);
    if (stride == NULL || pos == NULL) {
        free(stride);
        free(pos);
        return MPI_ERR_NO_MEM;
    }
    /* Element strides: the fastest dimension has stride 1 element. */
    if (order == MPI_ORDER_C) {
        stride[ndims - 1] = ext;
        for (k = ndims - 2; k >= 0; k--)
            stride[k] = stride[k + 1] * sizes[k + 1];
        inner = ndims - 1;
    } else {
        stride[0] = ext;
        for (k = 1; k < ndims; k++)
            stride[k] = stride[k - 1] * sizes[k - 1];
        inner = 0;
    }
    for (;;) {
        off = 0;
        for (k = 0; k < ndims; k++)
            if (k != inner)
                off += (MPI_Aint)d[k].idx[pos[k]] * stride[k];
        /* Runs of consecutive indices along the fastest dimension. */
        for (k = 0; k < d[inner].n && rc == MPI_SUCCESS; k += run) {
            for (run = 1; k + run < d[inner].n &&
                          d[inner].idx[k + run] == d[inner].idx[k] + run;
                 run++)
                ;
            rc = mpii_build_block_at(
                b, off + (MPI_Aint)d[inner].idx[k] * stride[inner], run);
        }
        if (rc != MPI_SUCCESS)
            break;
        /* Next position, the slower dimensions as an odometer. */
        if (order == MPI_ORDER_C) {
            for (k = ndims - 2; k >= 0; k--) {
                if (++pos[k] < d[k].n)
                    break;
                pos[k] = 0;
            }
        } else {
            for (k = 1; k < ndims; k++) {
                if (++pos[k] < d[k].n)
                    break;
                pos[k] = 0;
            }
            if (k == ndims)
                k = -1;
        }
        if (k < 0 || ndims == 1)
            break;
    }
    free(stride);
    free(pos);
    return rc;
}

static void
dims_free(struct dim *d, int ndims)
{
    int k;

    if (d == NULL)
        return;
    for (k = 0; k < ndims; k++)
        free(d[k].idx);
    free(d);
}

/* The whole array's extent: prod(sizes) old extents, lb 0. */
static int
array_extent(int ndims, const int *sizes, MPI_Aint ext, MPI_Aint *out)
{
    MPI_Aint e = ext;
    int k;

    for (k = 0; k < ndims; k++)
        if (__builtin_mul_overflow(e, (MPI_Aint)sizes[k], &e))
            return MPI_ERR_ARG;
    *out = e;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
int
PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                          const int starts[], int order, MPI_Datatype oldtype,
                          MPI_Datatype *newtype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_create_subarray";
    const struct mpii_type *old;
    struct mpii_build b;
    struct dim *d;
    MPI_Aint full;
    int k, i, rc, *ints;

    if ((rc = check(0, oldtype, newtype, &old)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if (ndims <= 0 || sizes == NULL || subsizes == NULL || starts == NULL ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return ERR(MPI_ERR_ARG, fn);
    for (k = 0; k < ndims; k++)
        if (sizes[k] <= 0 || subsizes[k] <= 0 || starts[k] < 0 ||
            subsizes[k] > sizes[k] || starts[k] > sizes[k] - subsizes[k])
            return ERR(MPI_ERR_ARG, fn);
    if ((rc = array_extent(ndims, sizes, old->extent, &full)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if ((d = calloc((size_t)ndims, sizeof *d)) == NULL)
        return ERR(MPI_ERR_NO_MEM, fn);
    for (k = 0; k < ndims; k++) {
        if ((d[k].idx = malloc((size_t)subsizes[k] * sizeof(int))) == NULL) {
            dims_free(d, ndims);
            return ERR(MPI_ERR_NO_MEM, fn);
        }
        d[k].n = subsizes[k];
        for (i = 0; i < subsizes[k]; i++)
            d[k].idx[i] = starts[k] + i;
    }
    if ((rc = mpii_build_start(&b, old)) == MPI_SUCCESS)
        rc = lay_out(&b, ndims, sizes, d, order);
    dims_free(d, ndims);
    if (rc == MPI_SUCCESS)
        mpii_build_bounds(&b, 0, full);
    if (rc == MPI_SUCCESS &&
        (ints = malloc((size_t)(3 * ndims + 2) * sizeof *ints)) != NULL) {
        ints[0] = ndims;
        memcpy(ints + 1, sizes, (size_t)ndims * sizeof *ints);
        memcpy(ints + 1 + ndims, subsizes, (size_t)ndims * sizeof *ints);
        memcpy(ints + 1 + 2 * ndims, starts, (size_t)ndims * sizeof *ints);
        ints[1 + 3 * ndims] = order;
        rc = mpii_build_contents(&b, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints,
                                 0, NULL, 1, &oldtype);
        free(ints);
    } else if (rc == MPI_SUCCESS) {
        rc = MPI_ERR_NO_MEM;
    }
    return finish(&b, rc, newtype, fn);
}

/* The indices of [0, gsize) that process coordinate c of np owns. */
static int
darray_dim(struct dim *d, int gsize, int distrib, int darg, int np, int c)
{
    int i, blk, n = 0;

    if ((d->idx = malloc((size_t)gsize * sizeof(int) + 1)) == NULL)
        return MPI_ERR_NO_MEM;
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        for (i = 0; i < gsize; i++)
            d->idx[n++] = i;
        break;
    case MPI_DISTRIBUTE_BLOCK:
        blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + np - 1) / np : darg;
        if (blk <= 0 || (long long)blk * np < gsize)
            return MPI_ERR_ARG;
        for (i = c * blk; i < gsize && i < (c + 1) * blk; i++)
            d->idx[n++] = i;
        break;
    case MPI_DISTRIBUTE_CYCLIC:
        blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        if (blk <= 0)
            return MPI_ERR_ARG;
        for (i = 0; i < gsize; i++)
            if ((i / blk) % np == c)
                d->idx[n++] = i;
        break;
    default:
        return MPI_ERR_ARG;
    }
    d->n = n;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
int
PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[],
                        const int distribs[], const int dargs[],
                        const int psizes[], int order, MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_create_darray";
    const struct mpii_type *old;
    struct mpii_build b;
    struct dim *d;
    MPI_Aint full;
    long long procs = 1;
    int k, rc, r, c, *ints;

    if ((rc = check(0, oldtype, newtype, &old)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if (ndims <= 0 || size <= 0 || rank < 0 || rank >= size || gsizes == NULL ||
        distribs == NULL || dargs == NULL || psizes == NULL ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return ERR(MPI_ERR_ARG, fn);
    for (k = 0; k < ndims; k++) {
        if (gsizes[k] <= 0 || psizes[k] <= 0 ||
            (distribs[k] == MPI_DISTRIBUTE_NONE && psizes[k] != 1))
            return ERR(MPI_ERR_ARG, fn);
        procs *= psizes[k];
    }
    if (procs != size)
        return ERR(MPI_ERR_ARG, fn);
    if ((rc = array_extent(ndims, gsizes, old->extent, &full)) != MPI_SUCCESS)
        return ERR(rc, fn);
    if ((d = calloc((size_t)ndims, sizeof *d)) == NULL)
        return ERR(MPI_ERR_NO_MEM, fn);
    /* The process grid is row-major whatever the array's order. */
    for (k = ndims - 1, r = rank; k >= 0 && rc == MPI_SUCCESS; k--) {
        c = r % psizes[k];
        r /= psizes[k];
        rc = darray_dim(&d[k], gsizes[k], distribs[k], dargs[k], psizes[k], c);
    }
    if (rc != MPI_SUCCESS) {
        dims_free(d, ndims);
        return ERR(rc, fn);
    }
    if ((rc = mpii_build_start(&b, old)) == MPI_SUCCESS)
        rc = lay_out(&b, ndims, gsizes, d, order);
    dims_free(d, ndims);
    if (rc == MPI_SUCCESS)
        mpii_build_bounds(&b, 0, full);
    if (rc == MPI_SUCCESS &&
        (ints = malloc((size_t)(4 * ndims + 4) * sizeof *ints)) != NULL) {
        ints[0] = size;
        ints[1] = rank;
        ints[2] = ndims;
        memcpy(ints + 3, gsizes, (size_t)ndims * sizeof *ints);
        memcpy(ints + 3 + ndims, distribs, (size_t)ndims * sizeof *ints);
        memcpy(ints + 3 + 2 * ndims, dargs, (size_t)ndims * sizeof *ints);
        memcpy(ints + 3 + 3 * ndims, psizes, (size_t)ndims * sizeof *ints);
        ints[3 + 4 * ndims] = order;
        rc = mpii_build_contents(&b, MPI_COMBINER_DARRAY, 4 * ndims + 4, ints,
                                 0, NULL, 1, &oldtype);
        free(ints);
    } else if (rc == MPI_SUCCESS) {
        rc = MPI_ERR_NO_MEM;
    }
    return finish(&b, rc, newtype, fn);
}
