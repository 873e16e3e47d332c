/*
 * f90_types: the parameterised Fortran 90 types (MPI_Type_create_f90_*)
 * and the sized Fortran types of 16 bytes (MPI_REAL16, MPI_COMPLEX8/16/32,
 * MPI_INTEGER16) and of half precision (MPI_REAL2, MPI_COMPLEX4).  Envelopes and contents as MPI 3.1 17.2.5 gives them,
 * the same handle for the same arguments, no freeing, messages and
 * derived types of them, and reductions in their own precision.
 */
#include <complex.h>
#include <float.h>
#include <stdint.h>

#include "mpitest.h"

/* A (p, r) that some real kind holds, with the size of that kind. */
static const struct {
    int p, r, size;
} reals[] = {
    {3, 10, 4},
    {3, MPI_UNDEFINED, 4},
    {MPI_UNDEFINED, 10, 4},
    {7, 30, 8},
    {7, MPI_UNDEFINED, 8},
    {MPI_UNDEFINED, 30, 4},
    {MPI_UNDEFINED, 38, 8},
    {15, 307, 8},
    {MPI_UNDEFINED, 308, 16},
    {18, MPI_UNDEFINED, 16},
};

/* The envelope and contents of an F90 type. */
static void
check_f90(MPI_Datatype t, int combiner, int p, int r, int size, const char *what)
{
    int ni = -1, na = -1, nd = -1, comb = -1, ints[2] = {-1, -1}, sz = -1;
    MPI_Aint a;
    MPI_Datatype d;

    MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == combiner, "%s(%d, %d): combiner %d", what, p, r, comb);
    CHECK(na == 0 && nd == 0, "%s(%d, %d): %d addresses, %d types", what, p,
          r, na, nd);
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        CHECK(ni == 1, "%s(%d): %d integers", what, r, ni);
        MPI_OK(MPI_Type_get_contents(t, 1, 0, 0, ints, &a, &d));
        CHECK(ints[0] == r, "%s(%d): contents %d", what, r, ints[0]);
    } else {
        CHECK(ni == 2, "%s(%d, %d): %d integers", what, p, r, ni);
        MPI_OK(MPI_Type_get_contents(t, 2, 0, 0, ints, &a, &d));
        CHECK(ints[0] == p && ints[1] == r, "%s(%d, %d): contents %d %d",
              what, p, r, ints[0], ints[1]);
    }
    MPI_OK(MPI_Type_size(t, &sz));
    CHECK(sz == size, "%s(%d, %d): size %d, want %d", what, p, r, sz, size);
}

/* A message of count elements of t, whatever their bytes, to the next
 * rank and from the previous one, arrives intact. */
static void
ring(MPI_Datatype t, int count, const char *what)
{
    int size, next = (t_rank + 1) % t_size,
              prev = (t_rank + t_size - 1) % t_size;
    unsigned char out[256], in[256];

    MPI_OK(MPI_Type_size(t, &size));
    CHECK_FATAL(size * count <= (int)sizeof out, "%s too large", what);
    for (int i = 0; i < size * count; i++)
        out[i] = (unsigned char)(t_rank * 31 + i);
    memset(in, 0, sizeof in);
    MPI_OK(MPI_Sendrecv(out, count, t, next, 7, in, count, t, prev, 7,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < size * count; i++)
        if (in[i] != (unsigned char)(prev * 31 + i)) {
            CHECK(0, "%s: byte %d is %d", what, i, in[i]);
            break;
        }
}

static void
t_create(void)
{
    MPI_Datatype t, again, con, got;
    int rc, ni, na, nd, comb, sz;

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        int p = reals[i].p, r = reals[i].r;

        MPI_OK(MPI_Type_create_f90_real(p, r, &t));
        check_f90(t, MPI_COMBINER_F90_REAL, p, r, reals[i].size, "real");
        MPI_OK(MPI_Type_create_f90_real(p, r, &again));
        CHECK(again == t, "real(%d, %d) twice: two handles", p, r);
        ring(t, 3, "f90 real");
        MPI_OK(MPI_Type_create_f90_complex(p, r, &t));
        check_f90(t, MPI_COMBINER_F90_COMPLEX, p, r, 2 * reals[i].size,
                  "complex");
        ring(t, 2, "f90 complex");
    }
    /* SELECTED_INT_KIND: 10^r fits. */
    static const struct {
        int r, size;
    } ints[] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8},
                {18, 8}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        MPI_OK(MPI_Type_create_f90_integer(ints[i].r, &t));
        check_f90(t, MPI_COMBINER_F90_INTEGER, 0, ints[i].r, ints[i].size,
                  "integer");
        ring(t, 5, "f90 integer");
    }

    /* Nothing holds 40 digits, and p or r must be given. */
    rc = MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t);
    CHECK(rc != MPI_SUCCESS, "real(40, undefined) succeeded");
    rc = MPI_Type_create_f90_real(MPI_UNDEFINED, 5000, &t);
    CHECK(rc != MPI_SUCCESS, "real(undefined, 5000) succeeded");
    rc = MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t);
    CHECK(rc != MPI_SUCCESS, "real(undefined, undefined) succeeded");
    rc = MPI_Type_create_f90_integer(40, &t);
    CHECK(rc != MPI_SUCCESS, "integer(40) succeeded");

    /* Predefined: not to be freed, and a type built from one gives the
     * same handle back in its contents. */
    MPI_OK(MPI_Type_create_f90_real(7, 30, &t));
    again = t;
    rc = MPI_Type_free(&again);
    CHECK(rc != MPI_SUCCESS, "freeing an f90 type succeeded");
    MPI_OK(MPI_Type_create_f90_real(7, 30, &again));
    CHECK(again == t, "after a refused free, a new handle");
    MPI_OK(MPI_Type_contiguous(4, t, &con));
    MPI_OK(MPI_Type_commit(&con));
    MPI_OK(MPI_Type_get_envelope(con, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_CONTIGUOUS && nd == 1, "contiguous: %d %d",
          comb, nd);
    MPI_OK(MPI_Type_get_contents(con, 1, 0, 1, &ni, NULL, &got));
    CHECK(got == t, "contents of a contiguous of an f90 type");
    MPI_OK(MPI_Type_size(con, &sz));
    CHECK(sz == 32, "contiguous of 4 real(7, 30): %d bytes", sz);
    ring(con, 2, "contiguous of f90 reals");
    MPI_OK(MPI_Type_free(&con));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Reductions on the F90 types reduce as their kind. */
static void
t_reduce(void)
{
    MPI_Datatype r8, c8, i8;
    double d = 0.25 * (t_rank + 1), ds;
    double _Complex z = 1 + t_rank * I, zs, zw = 1;
    int64_t n = (int64_t)1 << 40, ns;

    MPI_OK(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &r8));
    MPI_OK(MPI_Type_create_f90_complex(15, MPI_UNDEFINED, &c8));
    MPI_OK(MPI_Type_create_f90_integer(15, &i8));
    MPI_OK(MPI_Allreduce(&d, &ds, 1, r8, MPI_SUM, MPI_COMM_WORLD));
    CHECK(ds == 0.125 * t_size * (t_size + 1), "f90 real sum %g", ds);
    MPI_OK(MPI_Allreduce(&z, &zs, 1, c8, MPI_PROD, MPI_COMM_WORLD));
    for (int k = 0; k < t_size; k++)
        zw *= 1 + k * I;
    CHECK(creal(zs) == creal(zw) && cimag(zs) == cimag(zw),
          "f90 complex product %g%+gi, want %g%+gi", creal(zs), cimag(zs),
          creal(zw), cimag(zw));
    MPI_OK(MPI_Allreduce(&n, &ns, 1, i8, MPI_SUM, MPI_COMM_WORLD));
    CHECK(ns == n * t_size, "f90 integer sum %lld", (long long)ns);
}

/* binary128, as C spells it here: __float128 on x86-64, long double on
 * arm64. */
#if defined(P2PMPI) && defined(__SIZEOF_INT128__)
#if defined(__SIZEOF_FLOAT128__)
typedef __float128 quad;
#define HAVE_QUAD 1
#elif defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 113
typedef long double quad;
#define HAVE_QUAD 1
#endif
#endif

#ifdef HAVE_QUAD
/* The 16-byte kinds, in their own precision: binary128 and 128-bit
 * integers (gfortran's REAL(16), INTEGER(16)); Open MPI's REAL16 on
 * x86-64 is not binary128, so only ours is checked. */
static void
t_sixteen(void)
{
    /* Sums of these are exact in binary128 in any order; in a double
     * the tiny part would be lost. */
    quad tiny = (quad)1 / ((quad)(1ULL << 40) * (1ULL << 40)),
         x = 1 + tiny * (t_rank + 1), xs, want;
    struct {
        quad re, im;
    } z = {1, (quad)t_rank}, zs, zw = {1, 0}, k;
    __int128 big = (__int128)1 << 100, bs;
    MPI_Datatype q;
    int size;

    MPI_OK(MPI_Type_size(MPI_REAL16, &size));
    CHECK(size == 16, "MPI_REAL16: %d bytes", size);
    MPI_OK(MPI_Type_size(MPI_COMPLEX32, &size));
    CHECK(size == 32, "MPI_COMPLEX32: %d bytes", size);
    MPI_OK(MPI_Type_size(MPI_INTEGER16, &size));
    CHECK(size == 16, "MPI_INTEGER16: %d bytes", size);

    MPI_OK(MPI_Allreduce(&x, &xs, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
    want = t_size + tiny * t_size * (t_size + 1) / 2;
    CHECK(xs == want && xs != (quad)(double)xs,
          "REAL16 sum not in quad precision");
    MPI_OK(MPI_Allreduce(&x, &xs, 1, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD));
    CHECK(xs == 1 + tiny * t_size, "REAL16 max");

    MPI_OK(MPI_Allreduce(&z, &zs, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD));
    for (int r = 0; r < t_size; r++) {
        k.re = zw.re - zw.im * r;
        k.im = zw.re * r + zw.im;
        zw = k;
    }
    CHECK(zs.re == zw.re && zs.im == zw.im, "COMPLEX32 product %g%+gi",
          (double)zs.re, (double)zs.im);

    MPI_OK(MPI_Allreduce(&big, &bs, 1, MPI_INTEGER16, MPI_SUM,
                         MPI_COMM_WORLD));
    CHECK(bs == big * t_size, "INTEGER16 sum, high part %lld",
          (long long)(bs >> 64));
    MPI_OK(MPI_Allreduce(&big, &bs, 1, MPI_INTEGER16, MPI_BXOR,
                         MPI_COMM_WORLD));
    CHECK(bs == (t_size % 2 ? big : 0), "INTEGER16 bxor");

    /* external32 writes binary128 big-endian: 1.0 is 3fff 0000 ... */
    {
        quad one = 1;
        unsigned char ext[16];
        MPI_Aint pos = 0;

        MPI_OK(MPI_Pack_external("external32", &one, 1, MPI_REAL16, ext,
                                 sizeof ext, &pos));
        CHECK(pos == 16 && ext[0] == 0x3f && ext[1] == 0xff && ext[2] == 0 &&
                  ext[15] == 0,
              "REAL16 in external32: %02x%02x ... %02x", ext[0], ext[1],
              ext[15]);
    }

    /* Fortran's kinds of 33 digits and 38 are these. */
    MPI_OK(MPI_Type_create_f90_real(33, MPI_UNDEFINED, &q));
    MPI_OK(MPI_Allreduce(&x, &xs, 1, q, MPI_SUM, MPI_COMM_WORLD));
    CHECK(xs == want, "real(33) sum not in quad precision");
    MPI_OK(MPI_Type_create_f90_integer(38, &q));
    MPI_OK(MPI_Allreduce(&big, &bs, 1, q, MPI_SUM, MPI_COMM_WORLD));
    CHECK(bs == big * t_size, "integer(38) sum");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 16, &q));
    CHECK(q == MPI_REAL16, "match_size(real, 16) is not MPI_REAL16");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 32, &q));
    CHECK(q == MPI_COMPLEX32, "match_size(complex, 32)");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &q));
    CHECK(q == MPI_INTEGER16, "match_size(integer, 16)");
}
#endif

#ifdef P2PMPI
/* Half precision, IEEE binary16, as 16 bits (C has no type of it that
 * every compiler takes); Open MPI 4.1 has no MPI_REAL2 where gfortran
 * has no REAL(2), so only ours is checked. */
static void
t_half(void)
{
    /* 1 + rank/16: sums of these are exact in binary16 in any order
     * (up to 16 ranks: below 32, where its steps are 2^-6 at most). */
    uint16_t x = (uint16_t)(0x3c00 + 64 * t_rank), xs, want;
    uint16_t z[2] = {0x3c00, 0x3c00}, zs[2]; /* 1 + 1i */
    unsigned char ext[2];
    MPI_Aint pos = 0;
    MPI_Datatype q;
    char name[MPI_MAX_OBJECT_NAME];
    int size, len;

    MPI_OK(MPI_Type_size(MPI_REAL2, &size));
    CHECK(size == 2, "MPI_REAL2: %d bytes", size);
    MPI_OK(MPI_Type_size(MPI_COMPLEX4, &size));
    CHECK(size == 4, "MPI_COMPLEX4: %d bytes", size);
    MPI_OK(MPI_Type_get_name(MPI_COMPLEX4, name, &len));
    CHECK(strcmp(name, "MPI_COMPLEX4") == 0, "name %s", name);
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &q));
    CHECK(q == MPI_REAL2, "match_size(real, 2) is not MPI_REAL2");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 4, &q));
    CHECK(q == MPI_COMPLEX4, "match_size(complex, 4)");

    /* Sum: n + (0 + 1 + ... + n-1)/16 = m * 2^k, m normalised to 11
     * bits (1024 to 2047): binary16's exponent is k + 10. */
    MPI_OK(MPI_Allreduce(&x, &xs, 1, MPI_REAL2, MPI_SUM, MPI_COMM_WORLD));
    {
        int m = 16 * t_size + t_size * (t_size - 1) / 2, k = -4;

        for (; m < 1024; m *= 2)
            k--;
        for (; m >= 2048; m /= 2)
            k++;
        want = (uint16_t)(((k + 10 + 15) << 10) | (m - 1024));
    }
    CHECK(xs == want, "REAL2 sum %04x, want %04x", xs, want);
    MPI_OK(MPI_Allreduce(&x, &xs, 1, MPI_REAL2, MPI_MAX, MPI_COMM_WORLD));
    CHECK(xs == 0x3c00 + 64 * (t_size - 1), "REAL2 max %04x", xs);
    MPI_OK(MPI_Allreduce(&x, &xs, 1, MPI_REAL2, MPI_MIN, MPI_COMM_WORLD));
    CHECK(xs == 0x3c00, "REAL2 min %04x", xs);
    /* (1 + i)^n: 1+i, 2i, -2+2i, -4, -4-4i, -8i, 8-8i, 16 */
    MPI_OK(MPI_Allreduce(z, zs, 1, MPI_COMPLEX4, MPI_PROD, MPI_COMM_WORLD));
    {
        static const uint16_t pw[9][2] = {
            {0, 0},           {0x3c00, 0x3c00}, {0x0000, 0x4000},
            {0xc000, 0x4000}, {0xc400, 0x0000}, {0xc400, 0xc400},
            {0x0000, 0xc800}, {0x4800, 0xc800}, {0x4c00, 0x0000}};
        int n = t_size < 9 ? t_size : 0;

        CHECK(n == 0 || ((zs[0] & 0x7fff) == (pw[n][0] & 0x7fff) &&
                         (zs[1] & 0x7fff) == (pw[n][1] & 0x7fff) &&
                         (zs[0] == pw[n][0] || pw[n][0] == 0) &&
                         (zs[1] == pw[n][1] || pw[n][1] == 0)),
              "COMPLEX4 product (1+i)^%d: %04x %04x", n, zs[0], zs[1]);
    }
    /* external32: big-endian, 1.5 is 3e 00. */
    x = 0x3e00;
    MPI_OK(MPI_Pack_external("external32", &x, 1, MPI_REAL2, ext, sizeof ext,
                             &pos));
    CHECK(pos == 2 && ext[0] == 0x3e && ext[1] == 0x00,
          "REAL2 in external32: %02x%02x", ext[0], ext[1]);
}
#endif

/* The complex sizes by name reduce as C's complex types, long double's
 * too. */
static void
t_complex(void)
{
    float _Complex f = 1 + 1 * I, fs;
    double _Complex d = 2 - 1 * I, ds;
    long double _Complex l = 0.5L + (long double)t_rank * I, ls;
    int size;

    MPI_OK(MPI_Type_size(MPI_COMPLEX8, &size));
    CHECK(size == 8, "MPI_COMPLEX8: %d bytes", size);
    MPI_OK(MPI_Type_size(MPI_COMPLEX16, &size));
    CHECK(size == 16, "MPI_COMPLEX16: %d bytes", size);
    MPI_OK(MPI_Allreduce(&f, &fs, 1, MPI_COMPLEX8, MPI_SUM, MPI_COMM_WORLD));
    CHECK(crealf(fs) == t_size && cimagf(fs) == t_size, "COMPLEX8 sum");
    MPI_OK(MPI_Allreduce(&d, &ds, 1, MPI_COMPLEX16, MPI_SUM, MPI_COMM_WORLD));
    CHECK(creal(ds) == 2 * t_size && cimag(ds) == -t_size, "COMPLEX16 sum");
    MPI_OK(MPI_Allreduce(&l, &ls, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM,
                         MPI_COMM_WORLD));
    CHECK(creall(ls) == 0.5L * t_size &&
              cimagl(ls) == (long double)t_size * (t_size - 1) / 2,
          "long double complex sum");
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_create();
    t_reduce();
    t_complex();
#ifdef P2PMPI
    t_half();
#endif
#ifdef HAVE_QUAD
    t_sixteen();
#endif
    return t_finish("f90_types");
}
