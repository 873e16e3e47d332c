/*
 * pack.c: MPI_Pack and MPI_Unpack (the native packed form: the data
 * bytes in type-map order), the "external32" form (the same, each basic
 * element big-endian), and MPI_Get_elements, which walks the type
 * signature.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

#define ERR(comm, rc, fn) mpii_err(comm, rc, fn)

/* Bytes for incount elements, or -1 if it does not fit an int. */
static int
packed_size(int incount, const struct mpii_type *t, size_t *out)
{
    if (incount < 0 || __builtin_mul_overflow((size_t)incount, t->size, out))
        return -1;
    return 0;
}

#pragma weak MPI_Pack_size = PMPI_Pack_size
int
PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Pack_size";
    const struct mpii_type *t;
    size_t n;

    if (size == NULL)
        return ERR(comm, MPI_ERR_ARG, fn);
    if ((t = mpii_type_get(datatype)) == NULL)
        return ERR(comm, MPI_ERR_TYPE, fn);
    if (packed_size(incount, t, &n) < 0 || n > INT_MAX)
        return ERR(comm, MPI_ERR_COUNT, fn);
    *size = (int)n;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack = PMPI_Pack
int
PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
          int outsize, int *position, MPI_Comm comm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Pack";
    const struct mpii_type *t;
    size_t n;

    if (position == NULL || *position < 0 || outsize < 0)
        return ERR(comm, MPI_ERR_ARG, fn);
    if ((t = mpii_type_get(datatype)) == NULL)
        return ERR(comm, MPI_ERR_TYPE, fn);
    if (packed_size(incount, t, &n) < 0)
        return ERR(comm, MPI_ERR_COUNT, fn);
    if (n > (size_t)(outsize - *position) || *position > outsize)
        return ERR(comm, MPI_ERR_TRUNCATE, fn);
    if (n > 0 && outbuf == NULL)
        return ERR(comm, MPI_ERR_BUFFER, fn);
    mpii_pack(inbuf, incount, t, (char *)outbuf + *position);
    *position += (int)n;
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpack = PMPI_Unpack
int
PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf,
            int outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Unpack";
    const struct mpii_type *t;
    size_t n;

    if (position == NULL || *position < 0 || insize < 0)
        return ERR(comm, MPI_ERR_ARG, fn);
    if ((t = mpii_type_get(datatype)) == NULL)
        return ERR(comm, MPI_ERR_TYPE, fn);
    if (packed_size(outcount, t, &n) < 0)
        return ERR(comm, MPI_ERR_COUNT, fn);
    if (*position > insize || n > (size_t)(insize - *position))
        return ERR(comm, MPI_ERR_TRUNCATE, fn);
    if (n > 0 && inbuf == NULL)
        return ERR(comm, MPI_ERR_BUFFER, fn);
    mpii_unpack((const char *)inbuf + *position, n, outbuf, outcount, t);
    *position += (int)n;
    return MPI_SUCCESS;
}

/* --- external32 ---------------------------------------------------- */

static int
is_external32(const char *datarep)
{
    return datarep != NULL && strcmp(datarep, "external32") == 0;
}

/* The n bytes at p in reverse order, in place. */
static void
reverse(unsigned char *p, size_t n)
{
    unsigned char tmp;

    for (size_t j = 0; j < n / 2; j++) {
        tmp = p[j];
        p[j] = p[n - 1 - j];
        p[n - 1 - j] = tmp;
    }
}

/* An x87 extended value in its 16-byte slot at p, made the big-endian
 * binary128 external32 has for a long double (out), or back (!out).
 * Widening is exact; narrowing rounds what an x87 value cannot hold. */
static void
x87_external(unsigned char *p, int out)
{
#ifdef MPII_HAVE_X87_EXTERNAL
    long double v;
    __float128 q;

    if (out) {
        memcpy(&v, p, sizeof v);
        q = (__float128)v;
        memcpy(p, &q, sizeof q);
        reverse(p, sizeof q);
        return;
    }
    reverse(p, sizeof q);
    memcpy(&q, p, sizeof q);
    v = (long double)q;
    memset(p, 0, sizeof v); /* the slot's padding: zeros, not noise */
    memcpy(p, &v, 10);
#else
    (void)p;
    (void)out;
#endif
}

/* count elements of t packed at p, made external32 in place (out) or
 * native again (!out): every unit reversed (the host is little-endian;
 * on a big-endian host that is the identity), long double's converted. */
static void
external32(unsigned char *p, int count, const struct mpii_type *t, int out)
{
    const union {
        uint16_t u;
        unsigned char c[2];
    } probe = {.u = 1};
    size_t k, i, u, step;
    int e;

    for (e = 0; e < count; e++)
        for (k = 0; k < t->nsig; k++) {
            u = t->sig[k].unit;
            step = u == MPII_UNIT_X87 ? 16 : u;
            for (i = 0; i < t->sig[k].n * (t->sig[k].esize / step);
                 i++, p += step) {
                if (u == MPII_UNIT_X87)
                    x87_external(p, out);
                else if (probe.c[0] == 1)
                    reverse(p, u);
            }
        }
}

#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size
int
PMPI_Pack_external_size(const char *datarep, int incount, MPI_Datatype datatype,
                        MPI_Aint *size)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Pack_external_size";
    const struct mpii_type *t;
    size_t n;

    if (!is_external32(datarep) || size == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((t = mpii_type_get(datatype)) == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    if (packed_size(incount, t, &n) < 0)
        return ERR(MPI_COMM_WORLD, MPI_ERR_COUNT, fn);
    *size = (MPI_Aint)n;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_external = PMPI_Pack_external
int
PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                   MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                   MPI_Aint *position)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Pack_external";
    const struct mpii_type *t;
    size_t n;

    if (!is_external32(datarep) || position == NULL || *position < 0 ||
        outsize < 0)
        return ERR(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((t = mpii_type_get(datatype)) == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    if (packed_size(incount, t, &n) < 0)
        return ERR(MPI_COMM_WORLD, MPI_ERR_COUNT, fn);
    if (*position > outsize || n > (size_t)(outsize - *position))
        return ERR(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, fn);
    if (n > 0 && outbuf == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_BUFFER, fn);
    mpii_pack(inbuf, incount, t, (char *)outbuf + *position);
    external32((unsigned char *)outbuf + *position, incount, t, 1);
    *position += (MPI_Aint)n;
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpack_external = PMPI_Unpack_external
int
PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                     MPI_Aint *position, void *outbuf, int outcount,
                     MPI_Datatype datatype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Unpack_external";
    const struct mpii_type *t;
    unsigned char *tmp;
    size_t n;

    if (!is_external32(datarep) || position == NULL || *position < 0 ||
        insize < 0)
        return ERR(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((t = mpii_type_get(datatype)) == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    if (packed_size(outcount, t, &n) < 0)
        return ERR(MPI_COMM_WORLD, MPI_ERR_COUNT, fn);
    if (*position > insize || n > (size_t)(insize - *position))
        return ERR(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, fn);
    if (n == 0)
        return MPI_SUCCESS;
    if (inbuf == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_BUFFER, fn);
    if ((tmp = malloc(n)) == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
    memcpy(tmp, (const char *)inbuf + *position, n);
    external32(tmp, outcount, t, 0);
    mpii_unpack(tmp, n, outbuf, outcount, t);
    free(tmp);
    *position += (MPI_Aint)n;
    return MPI_SUCCESS;
}

/* --- elements ------------------------------------------------------ */

#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
int
PMPI_Get_elements_x(const MPI_Status *st, MPI_Datatype dt, MPI_Count *count)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Get_elements_x";
    const struct mpii_type *t;
    size_t n;
    int whole;

    if (st == NULL || count == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if ((t = mpii_type_get(dt)) == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
    n = mpii_type_elements(t, (size_t)st->p2p_count, &whole);
    *count = whole ? (MPI_Count)n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_elements = PMPI_Get_elements
int
PMPI_Get_elements(const MPI_Status *st, MPI_Datatype dt, int *count)
{
    MPII_ENTER;
    MPI_Count n = 0; /* gcc -O3 cannot see that a success sets it */
    int rc;

    if (count == NULL)
        return ERR(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_elements");
    if ((rc = PMPI_Get_elements_x(st, dt, &n)) != MPI_SUCCESS)
        return rc;
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
