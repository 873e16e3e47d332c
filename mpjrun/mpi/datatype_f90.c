/*
 * datatype_f90.c: the parameterised Fortran 90 types (MPI 3.1 17.2.5),
 * MPI_Type_create_f90_integer, _real and _complex.  Each names the sized
 * type of the kind that SELECTED_INT_KIND(r) or SELECTED_REAL_KIND(p, r)
 * gives under gfortran on x86-64: INTEGER(1, 2, 4, 8, 16), REAL(4, 8,
 * 10, 16), where REAL(10) is C's x87 long double and REAL(16) binary128.
 *
 * The handle is a type of its own, a copy of the sized type whose
 * envelope says MPI_COMBINER_F90_* and whose contents are p and r as the
 * caller gave them (MPI_UNDEFINED included).  The standard counts it as
 * predefined: it is made once per (combiner, p, r), the same handle comes
 * back for the same arguments, and MPI_Type_free refuses it.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

/* A kind: the largest precision and exponent range it holds, and its
 * MPI type as a real and as a complex.  In SELECTED_REAL_KIND's order:
 * the first that holds both wins. */
struct real_kind {
    int p, r;
    MPI_Datatype real, complex;
};

static const struct real_kind real_kinds[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX8},
    {15, 307, MPI_REAL8, MPI_COMPLEX16},
#if LDBL_MANT_DIG == 64
    {18, 4931, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},
#endif
#ifdef MPII_HAVE_REAL16
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
#endif
};

/* SELECTED_INT_KIND(r): the first that holds 10^r. */
static const struct {
    int r;
    MPI_Datatype type;
} int_kinds[] = {
    {2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4},
    {18, MPI_INTEGER8},
#ifdef MPII_HAVE_INTEGER16
    {38, MPI_INTEGER16},
#endif
};

/* The types made so far, kept until the process ends. */
struct f90_type {
    int combiner, p, r;
    MPI_Datatype handle;
};
static struct f90_type *made;
static size_t nmade, capmade;

/* A copy of the named type base, with the envelope of combiner and the
 * contents ints[0..ni). */
static int
f90_new(MPI_Datatype base, int combiner, int ni, const int *ints,
        MPI_Datatype *newtype)
{
    const struct mpii_type *old = mpii_type_get(base);
    struct mpii_build b;
    int rc;

    if ((rc = mpii_build_start(&b, old)) != MPI_SUCCESS)
        return rc;
    rc = mpii_build_block_at(&b, 0, 1);
    mpii_build_bounds(&b, old->lb, old->extent);
    if (rc == MPI_SUCCESS)
        rc = mpii_build_contents(&b, combiner, ni, ints, 0, NULL, 0, NULL);
    if (rc == MPI_SUCCESS) {
        b.t->committed = 1;
        b.t->predefined = 1;
        strcpy(b.t->name, old->name);
        rc = mpii_build_finish(&b, newtype);
    }
    if (rc != MPI_SUCCESS)
        mpii_build_abort(&b);
    return rc;
}

/* The type of (combiner, p, r), made on first use. */
static int
f90_get(MPI_Datatype base, int combiner, int p, int r, MPI_Datatype *newtype)
{
    struct f90_type *m;
    int ints[2], ni = 0, rc;
    size_t i;

    for (i = 0; i < nmade; i++)
        if (made[i].combiner == combiner && made[i].p == p && made[i].r == r) {
            *newtype = made[i].handle;
            return MPI_SUCCESS;
        }
    if (nmade == capmade) {
        size_t cap = capmade == 0 ? 8 : 2 * capmade;

        if ((m = realloc(made, cap * sizeof *m)) == NULL)
            return MPI_ERR_NO_MEM;
        made = m;
        capmade = cap;
    }
    if (combiner != MPI_COMBINER_F90_INTEGER)
        ints[ni++] = p;
    ints[ni++] = r;
    if ((rc = f90_new(base, combiner, ni, ints, newtype)) != MPI_SUCCESS)
        return rc;
    made[nmade++] = (struct f90_type){combiner, p, r, *newtype};
    return MPI_SUCCESS;
}

/* Either of p and r may be MPI_UNDEFINED (no demand), not both. */
static int
f90_real(int p, int r, int complex, MPI_Datatype *newtype, const char *fn)
{
    int wp = p == MPI_UNDEFINED ? 0 : p, wr = r == MPI_UNDEFINED ? 0 : r;
    size_t i;
    int rc;

    if (newtype == NULL || (p == MPI_UNDEFINED && r == MPI_UNDEFINED))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    for (i = 0; i < sizeof real_kinds / sizeof real_kinds[0]; i++)
        if (wp <= real_kinds[i].p && wr <= real_kinds[i].r)
            break;
    if (i == sizeof real_kinds / sizeof real_kinds[0])
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    rc = f90_get(complex ? real_kinds[i].complex : real_kinds[i].real,
                 complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p,
                 r, newtype);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real
int
PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    MPII_ENTER;
    MPII_CHECK_INIT("MPI_Type_create_f90_real");
    return f90_real(p, r, 0, newtype, "MPI_Type_create_f90_real");
}

#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex
int
PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    MPII_ENTER;
    MPII_CHECK_INIT("MPI_Type_create_f90_complex");
    return f90_real(p, r, 1, newtype, "MPI_Type_create_f90_complex");
}

/* As SELECTED_INT_KIND, any r up to 2 (MPI_UNDEFINED among them) gives
 * the 1-byte kind. */
#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer
int
PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_create_f90_integer";
    size_t i;
    int rc;

    MPII_CHECK_INIT(fn);
    if (newtype == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    for (i = 0; i < sizeof int_kinds / sizeof int_kinds[0]; i++)
        if (r <= int_kinds[i].r)
            break;
    if (i == sizeof int_kinds / sizeof int_kinds[0])
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    rc = f90_get(int_kinds[i].type, MPI_COMBINER_F90_INTEGER, 0, r, newtype);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}
