/*
 * dtype: derived datatypes, complete (MPI 3.1 chapter 4).
 *  - struct (resized to the C struct), hvector, hindexed, indexed_block,
 *    hindexed_block between partners; bounds, true bounds, sizes;
 *  - subarray (C and Fortran order) and darray (block, cyclic, none):
 *    packed contents against a hand computation, and every global
 *    element owned by exactly one rank;
 *  - Type_dup, Type_get_envelope/Type_get_contents for every
 *    constructor, names, Get_address and MPI_BOTTOM;
 *  - Get_elements(_x), Pack/Unpack/Pack_size, Pack_external (big-endian
 *    "external32") and back;
 *  - the complex, Fortran and C++ predefined types in a reduction.
 */
#include <complex.h>
#include <stdint.h>

#include "mpitest.h"

struct rec {
    int a;
    double b;
    char c[3];
};

static void
t_struct(void)
{
    int bl[3] = {1, 1, 3}, p = t_partner(), ni, na, nd, comb, ints[4];
    MPI_Aint disp[3] = {offsetof(struct rec, a), offsetof(struct rec, b),
                        offsetof(struct rec, c)},
             lb, ext, addrs[3];
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st, rt, got[3];
    struct rec out[4], in[4];
    int size;

    MPI_OK(MPI_Type_create_struct(3, bl, disp, types, &st));
    MPI_OK(MPI_Type_get_extent(st, &lb, &ext));
    CHECK(lb == 0, "lb %ld", (long)lb);
    MPI_OK(MPI_Type_size(st, &size));
    CHECK(size == (int)(sizeof(int) + sizeof(double) + 3), "size %d", size);
    MPI_OK(MPI_Type_create_resized(st, 0, sizeof(struct rec), &rt));
    MPI_OK(MPI_Type_commit(&rt));
    MPI_OK(MPI_Type_get_extent(rt, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct rec), "ext %ld", (long)ext);
    MPI_OK(MPI_Type_get_true_extent(rt, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)(offsetof(struct rec, c) + 3),
          "true ext %ld", (long)ext);

    memset(out, 0, sizeof out);
    memset(in, 0x5a, sizeof in);
    for (int i = 0; i < 4; i++) {
        out[i].a = t_rank * 100 + i;
        out[i].b = t_rank + i / 4.0;
        memcpy(out[i].c, "xyz", 3);
        out[i].c[2] = (char)('a' + i);
    }
    MPI_OK(MPI_Sendrecv(out, 4, rt, p, 1, in, 4, rt, p, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(in[i].a == p * 100 + i && in[i].b == p + i / 4.0 &&
                  in[i].c[0] == 'x' && in[i].c[2] == 'a' + i,
              "record %d", i);

    /* The envelope and contents of the struct. */
    MPI_OK(MPI_Type_get_envelope(st, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3,
          "struct envelope %d %d %d %d", comb, ni, na, nd);
    MPI_OK(MPI_Type_get_contents(st, 4, 3, 3, ints, addrs, got));
    CHECK(ints[0] == 3 && ints[3] == 3 && addrs[1] == disp[1] &&
              got[0] == MPI_INT && got[1] == MPI_DOUBLE && got[2] == MPI_CHAR,
          "struct contents");
    MPI_OK(MPI_Type_get_envelope(rt, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_RESIZED && ni == 0 && na == 2 && nd == 1,
          "resized envelope");
    MPI_OK(MPI_Type_get_contents(rt, 0, 2, 1, ints, addrs, got));
    CHECK(addrs[0] == 0 && addrs[1] == (MPI_Aint)sizeof(struct rec),
          "resized contents");
    MPI_OK(MPI_Type_get_envelope(got[0], &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT, "inner combiner %d", comb);
    MPI_OK(MPI_Type_free(&got[0]));
    MPI_OK(MPI_Type_free(&st));
    MPI_OK(MPI_Type_free(&rt));
}

/* The h- and block forms against the same layout written out by hand. */
static void
t_hforms(void)
{
    int buf[24], in[24], p = t_partner(), bl[3] = {2, 1, 3}, dsp[3] = {0, 5, 9},
                         size, ni, na, nd, comb;
    MPI_Aint hd[3], ext, lb, addrs[3];
    MPI_Datatype hv, hi, ib, hib, t[4];
    int ints[8];

    for (int i = 0; i < 24; i++)
        buf[i] = t_rank * 1000 + i;
    for (int i = 0; i < 3; i++)
        hd[i] = dsp[i] * (MPI_Aint)sizeof(int);
    MPI_OK(MPI_Type_create_hvector(3, 2, 5 * sizeof(int), MPI_INT, &hv));
    MPI_OK(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &hi));
    MPI_OK(MPI_Type_create_indexed_block(3, 2, dsp, MPI_INT, &ib));
    MPI_OK(MPI_Type_create_hindexed_block(3, 2, hd, MPI_INT, &hib));
    t[0] = hv, t[1] = hi, t[2] = ib, t[3] = hib;
    static const int want[4][6] = {{0, 1, 5, 6, 10, 11},
                                   {0, 1, 5, 9, 10, 11},
                                   {0, 1, 5, 6, 9, 10},
                                   {0, 1, 5, 6, 9, 10}};
    static const int wext[4] = {12, 12, 11, 11};
    for (int k = 0; k < 4; k++) {
        MPI_OK(MPI_Type_commit(&t[k]));
        MPI_OK(MPI_Type_size(t[k], &size));
        CHECK(size == 6 * (int)sizeof(int), "type %d size %d", k, size);
        MPI_OK(MPI_Type_get_extent(t[k], &lb, &ext));
        CHECK(lb == 0 && ext == wext[k] * (MPI_Aint)sizeof(int),
              "type %d extent %ld", k, (long)ext);
        for (int i = 0; i < 24; i++)
            in[i] = -1;
        MPI_OK(MPI_Sendrecv(buf, 1, t[k], p, 2, in, 6, MPI_INT, p, 2,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 6; i++)
            CHECK(in[i] == p * 1000 + want[k][i], "type %d int %d: %d", k, i,
                  in[i]);
    }
    /* Envelopes. */
    MPI_OK(MPI_Type_get_envelope(hv, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_HVECTOR && ni == 2 && na == 1 && nd == 1,
          "hvector envelope");
    MPI_OK(MPI_Type_get_envelope(hi, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_HINDEXED && ni == 4 && na == 3 && nd == 1,
          "hindexed envelope");
    MPI_OK(MPI_Type_get_envelope(ib, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_INDEXED_BLOCK && ni == 5 && na == 0 && nd == 1,
          "indexed_block envelope");
    MPI_OK(MPI_Type_get_contents(ib, 8, 3, 1, ints, addrs, t));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[4] == 9 && t[0] == MPI_INT,
          "indexed_block contents");
    MPI_OK(MPI_Type_get_envelope(hib, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_HINDEXED_BLOCK && ni == 2 && na == 3 && nd == 1,
          "hindexed_block envelope");
    MPI_OK(MPI_Type_free(&hv));
    MPI_OK(MPI_Type_free(&hi));
    MPI_OK(MPI_Type_free(&ib));
    MPI_OK(MPI_Type_free(&hib));
}

/* Nested constructors: contents give the inner type back, dup keeps the
 * layout; the classic ones report their combiners. */
static void
t_envelopes(void)
{
    MPI_Datatype v, c, d, inner, idx;
    int ni, na, nd, comb, ints[8], bl[2] = {1, 2}, ds[2] = {0, 4};
    MPI_Aint a[1], lb, ext, lb2, ext2;
    char name[MPI_MAX_OBJECT_NAME];
    int len;

    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &v));
    MPI_OK(MPI_Type_contiguous(2, v, &c));
    MPI_OK(MPI_Type_get_envelope(c, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_CONTIGUOUS && ni == 1 && nd == 1,
          "contiguous envelope");
    MPI_OK(MPI_Type_get_contents(c, 1, 0, 1, ints, a, &inner));
    CHECK(ints[0] == 2, "contiguous count %d", ints[0]);
    MPI_OK(MPI_Type_get_envelope(inner, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1,
          "vector envelope");
    MPI_OK(MPI_Type_get_contents(inner, 3, 0, 1, ints, a, &d));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && d == MPI_DOUBLE,
          "vector contents");
    MPI_OK(MPI_Type_free(&inner));
    /* The vector freed: the contiguous type still holds it. */
    MPI_OK(MPI_Type_free(&v));
    MPI_OK(MPI_Type_dup(c, &d));
    MPI_OK(MPI_Type_get_envelope(d, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_DUP && ni == 0 && na == 0 && nd == 1,
          "dup envelope");
    MPI_OK(MPI_Type_get_extent(c, &lb, &ext));
    MPI_OK(MPI_Type_get_extent(d, &lb2, &ext2));
    CHECK(lb == lb2 && ext == ext2 && ext == 20 * (MPI_Aint)sizeof(double),
          "dup extent %ld", (long)ext2);
    MPI_OK(MPI_Type_indexed(2, bl, ds, MPI_INT, &idx));
    MPI_OK(MPI_Type_get_envelope(idx, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_INDEXED && ni == 5 && nd == 1,
          "indexed envelope");
    MPI_OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0,
          "named envelope");

    MPI_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0 && len == 10, "name '%s'", name);
    /* A type with two names goes by the first: MPI_C_FLOAT_COMPLEX is a
     * synonym of MPI_C_COMPLEX. */
    MPI_OK(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len));
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0, "name '%s'", name);
    MPI_OK(MPI_Type_set_name(d, "my dup"));
    MPI_OK(MPI_Type_get_name(d, name, &len));
    CHECK(strcmp(name, "my dup") == 0 && len == 6, "name '%s'", name);
    MPI_OK(MPI_Type_get_name(idx, name, &len));
    CHECK(len == 0, "unnamed type '%s'", name);
    MPI_OK(MPI_Type_free(&idx));
    MPI_OK(MPI_Type_free(&c));
    MPI_OK(MPI_Type_free(&d));
}

/* Subarrays of a 6 x 8 array of ints, both orders, through Pack. */
static void
t_subarray(void)
{
    int a[48], out[48], sizes[2] = {6, 8}, sub[2] = {3, 4}, st[2] = {1, 2};
    int pos, n = 0, ni, na, nd, comb;
    MPI_Datatype s;
    MPI_Aint lb, ext;

    for (int i = 0; i < 48; i++)
        a[i] = i;
    MPI_OK(
        MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &s));
    MPI_OK(MPI_Type_commit(&s));
    MPI_OK(MPI_Type_get_extent(s, &lb, &ext));
    CHECK(lb == 0 && ext == 48 * (MPI_Aint)sizeof(int), "subarray extent");
    pos = 0;
    MPI_OK(MPI_Pack(a, 1, s, out, sizeof out, &pos, MPI_COMM_WORLD));
    CHECK(pos == 12 * (int)sizeof(int), "packed %d", pos);
    for (int i = 1; i < 4; i++)
        for (int j = 2; j < 6; j++, n++)
            CHECK(out[n] == i * 8 + j, "C order %d: %d", n, out[n]);
    MPI_OK(MPI_Type_get_envelope(s, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nd == 1,
          "subarray envelope");
    MPI_OK(MPI_Type_free(&s));

    /* Fortran order: sizes are (rows fastest) 6 x 8 column-major. */
    MPI_OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN,
                                    MPI_INT, &s));
    MPI_OK(MPI_Type_commit(&s));
    pos = 0;
    n = 0;
    MPI_OK(MPI_Pack(a, 1, s, out, sizeof out, &pos, MPI_COMM_WORLD));
    for (int j = 2; j < 6; j++)
        for (int i = 1; i < 4; i++, n++)
            CHECK(out[n] == j * 6 + i, "Fortran order %d: %d", n, out[n]);
    MPI_OK(MPI_Type_free(&s));
}

/* A darray over every rank: each global element is in exactly one
 * rank's part, and a 1-D block part is what the formula says. */
static void
t_darray(void)
{
    enum { G0 = 7, G1 = 10 };
    int g[G0 * G1], *part, size, gs[2] = {G0, G1}, ps[2] = {t_size, 1};
    int dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    int darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, *cnt, *all, total = 0, pos;
    int gs1[1] = {G1}, dist1[1] = {MPI_DISTRIBUTE_BLOCK},
        darg1[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps1[1] = {t_size};
    int seen[G0 * G1], *displs, ni, na, nd, comb;
    MPI_Datatype d;

    for (int i = 0; i < G0 * G1; i++)
        g[i] = i;
    MPI_OK(MPI_Type_create_darray(t_size, t_rank, 2, gs, dist, darg, ps,
                                  MPI_ORDER_C, MPI_INT, &d));
    MPI_OK(MPI_Type_commit(&d));
    MPI_OK(MPI_Type_size(d, &size));
    part = t_malloc(sizeof g); /* room for every part below */
    pos = 0;
    MPI_OK(MPI_Pack(g, 1, d, part, size, &pos, MPI_COMM_WORLD));
    size /= (int)sizeof(int);
    /* Cyclic(2) over rows: row i is ours when (i / 2) % size == rank. */
    for (int i = 0, n = 0; i < G0; i++)
        if ((i / 2) % t_size == t_rank)
            for (int j = 0; j < G1; j++, n++)
                CHECK(n < size && part[n] == i * G1 + j, "darray %d", n);
    cnt = t_malloc(sizeof(int) * (size_t)t_size);
    displs = t_malloc(sizeof(int) * (size_t)t_size);
    MPI_OK(MPI_Allgather(&size, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < t_size; r++) {
        displs[r] = total;
        total += cnt[r];
    }
    CHECK(total == G0 * G1, "darray parts total %d", total);
    all = t_malloc(sizeof(int) * (size_t)(total > 0 ? total : 1));
    MPI_OK(MPI_Allgatherv(part, size, MPI_INT, all, cnt, displs, MPI_INT,
                          MPI_COMM_WORLD));
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < total && i < G0 * G1; i++)
        if (all[i] >= 0 && all[i] < G0 * G1)
            seen[all[i]]++;
    for (int i = 0; i < G0 * G1; i++)
        CHECK(seen[i] == 1, "element %d seen %d times", i, seen[i]);
    MPI_OK(MPI_Type_get_envelope(d, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_DARRAY && ni == 12 && nd == 1,
          "darray envelope");
    MPI_OK(MPI_Type_free(&d));

    /* 1-D block: ceil(G1 / size) each, in order. */
    MPI_OK(MPI_Type_create_darray(t_size, t_rank, 1, gs1, dist1, darg1, ps1,
                                  MPI_ORDER_FORTRAN, MPI_INT, &d));
    MPI_OK(MPI_Type_commit(&d));
    MPI_OK(MPI_Type_size(d, &size));
    pos = 0;
    MPI_OK(MPI_Pack(g, 1, d, part, size, &pos, MPI_COMM_WORLD));
    {
        int blk = (G1 + t_size - 1) / t_size, lo = t_rank * blk,
            hi = lo + blk > G1 ? G1 : lo + blk;

        CHECK(size == (hi > lo ? hi - lo : 0) * (int)sizeof(int),
              "block size %d", size);
        for (int i = lo; i < hi; i++)
            CHECK(part[i - lo] == i, "block %d", i);
    }
    MPI_OK(MPI_Type_free(&d));
    free(part);
    free(cnt);
    free(displs);
    free(all);
}

/* Absolute addresses: a struct over two separate variables, sent from
 * MPI_BOTTOM. */
static void
t_bottom(void)
{
    static int x;
    static double y;
    int rx = -1, bl[2] = {1, 1}, p = t_partner();
    double ry = -1;
    MPI_Aint addr[2];
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, abs_out, abs_in;

    x = 10 + t_rank;
    y = 0.5 + t_rank;
    MPI_OK(MPI_Get_address(&x, &addr[0]));
    MPI_OK(MPI_Get_address(&y, &addr[1]));
    MPI_OK(MPI_Type_create_struct(2, bl, addr, ty, &abs_out));
    MPI_OK(MPI_Type_commit(&abs_out));
    MPI_OK(MPI_Get_address(&rx, &addr[0]));
    MPI_OK(MPI_Get_address(&ry, &addr[1]));
    MPI_OK(MPI_Type_create_struct(2, bl, addr, ty, &abs_in));
    MPI_OK(MPI_Type_commit(&abs_in));
    MPI_OK(MPI_Sendrecv(MPI_BOTTOM, 1, abs_out, p, 3, MPI_BOTTOM, 1, abs_in, p,
                        3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(rx == 10 + p && ry == 0.5 + p, "bottom %d %g", rx, ry);
    MPI_OK(MPI_Type_free(&abs_out));
    MPI_OK(MPI_Type_free(&abs_in));
}

/* Elements of a partial receive; Pack and Unpack; external32. */
static void
t_pack(void)
{
    int v[5] = {1, 2, 3, 4, 5}, r[6], p = t_partner(), n, psize, pos;
    MPI_Count nx;
    MPI_Datatype three;
    MPI_Status st;
    char buf[256];
    double d = 2.5, d2 = 0;
    int i2[5];
    unsigned char ext[64];
    MPI_Aint epos = 0, esize;
    int32_t e32 = 0x01020304, e32b = 0;
    double one = 1.0, oneb = 0;

    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &three));
    MPI_OK(MPI_Type_commit(&three));
    MPI_OK(MPI_Sendrecv(v, 5, MPI_INT, p, 4, r, 2, three, p, 4, MPI_COMM_WORLD,
                        &st));
    MPI_OK(MPI_Get_count(&st, three, &n));
    CHECK(n == MPI_UNDEFINED, "count %d", n);
    MPI_OK(MPI_Get_elements(&st, three, &n));
    CHECK(n == 5, "elements %d", n);
    MPI_OK(MPI_Get_elements_x(&st, MPI_INT, &nx));
    CHECK(nx == 5, "elements_x %lld", (long long)nx);
    MPI_OK(MPI_Type_size_x(three, &nx));
    CHECK(nx == 3 * (MPI_Count)sizeof(int), "size_x %lld", (long long)nx);
    MPI_OK(MPI_Type_free(&three));

    MPI_OK(MPI_Pack_size(5, MPI_INT, MPI_COMM_WORLD, &psize));
    CHECK(psize >= 5 * (int)sizeof(int), "pack size %d", psize);
    pos = 0;
    MPI_OK(MPI_Pack(v, 5, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    MPI_OK(MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    /* Through a message as MPI_PACKED. */
    MPI_OK(MPI_Sendrecv_replace(buf, pos, MPI_PACKED, p, 5, p, 5,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    n = pos;
    pos = 0;
    MPI_OK(MPI_Unpack(buf, n, &pos, i2, 5, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Unpack(buf, n, &pos, &d2, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    CHECK(i2[0] == 1 && i2[4] == 5 && d2 == 2.5, "unpacked %d %g", i2[4], d2);
    CHECK(pos == n, "position %d of %d", pos, n);

    MPI_OK(MPI_Pack_external_size("external32", 1, MPI_INT, &esize));
    CHECK(esize == 4, "external32 int size %ld", (long)esize);
    MPI_OK(MPI_Pack_external("external32", &e32, 1, MPI_INT, ext, sizeof ext,
                             &epos));
    MPI_OK(MPI_Pack_external("external32", &one, 1, MPI_DOUBLE, ext, sizeof ext,
                             &epos));
    CHECK(epos == 12, "external32 position %ld", (long)epos);
    CHECK(ext[0] == 1 && ext[1] == 2 && ext[2] == 3 && ext[3] == 4,
          "external32 int %02x%02x%02x%02x", ext[0], ext[1], ext[2], ext[3]);
    CHECK(ext[4] == 0x3f && ext[5] == 0xf0 && ext[11] == 0,
          "external32 double %02x%02x", ext[4], ext[5]);
    epos = 0;
    MPI_OK(
        MPI_Unpack_external("external32", ext, 12, &epos, &e32b, 1, MPI_INT));
    MPI_OK(MPI_Unpack_external("external32", ext, 12, &epos, &oneb, 1,
                               MPI_DOUBLE));
    CHECK(e32b == e32 && oneb == 1.0, "external32 back %x %g", (int)e32b, oneb);
}

#if defined(P2PMPI) && defined(__x86_64__)
/* external32 writes a long double as IEEE binary128 (MPI 3.1 13.5.2:
 * 16 bytes, 15 bits of exponent), big-endian; x86-64's x87 value
 * widens to it exactly and comes back whole, also inside a pair and a
 * complex.  (Open MPI 4.1 writes other bytes and reads back other
 * values, so this is checked on ours only.) */
static void
t_external_long_double(void)
{
    static const unsigned char want[3][16] = {
        {0x3f, 0xff}, /* 1 */
        {0xc0, 0x00, 0x40}, /* -2.5 */
        {0x3f, 0xfd, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x56}, /* 1/3 */
    };
    long double v[3] = {1.0L, -2.5L, 1.0L / 3}, back[3] = {0};
    struct {
        long double v;
        int i;
    } pr = {1.0L / 3, 7}, prb = {0, 0};
    long double _Complex z = -2.5L + (1.0L / 3) * I, zb = 0;
    unsigned char ext[64];
    MPI_Aint pos = 0, size;

    MPI_OK(MPI_Pack_external_size("external32", 3, MPI_LONG_DOUBLE, &size));
    CHECK(size == 48, "external32 long double: %ld bytes", (long)size);
    MPI_OK(MPI_Pack_external("external32", v, 3, MPI_LONG_DOUBLE, ext,
                             sizeof ext, &pos));
    for (int k = 0; k < 3; k++)
        CHECK(memcmp(ext + 16 * k, want[k], 16) == 0,
              "external32 long double %d: %02x%02x %02x%02x ... %02x", k,
              ext[16 * k], ext[16 * k + 1], ext[16 * k + 2], ext[16 * k + 3],
              ext[16 * k + 15]);
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", ext, 48, &pos, back, 3,
                               MPI_LONG_DOUBLE));
    CHECK(back[0] == v[0] && back[1] == v[1] && back[2] == v[2],
          "external32 long double back: %Lg %Lg %Lg", back[0], back[1],
          back[2]);
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", &pr, 1, MPI_LONG_DOUBLE_INT, ext,
                             sizeof ext, &pos));
    CHECK(pos == 20 && memcmp(ext, want[2], 16) == 0 && ext[19] == 7,
          "external32 long double int: %ld bytes", (long)pos);
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", ext, 20, &pos, &prb, 1,
                               MPI_LONG_DOUBLE_INT));
    CHECK(prb.v == pr.v && prb.i == 7, "long double int back");
    pos = 0;
    MPI_OK(MPI_Pack_external("external32", &z, 1, MPI_C_LONG_DOUBLE_COMPLEX,
                             ext, sizeof ext, &pos));
    CHECK(pos == 32 && memcmp(ext, want[1], 16) == 0 &&
              memcmp(ext + 16, want[2], 16) == 0,
          "external32 long double complex");
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", ext, 32, &pos, &zb, 1,
                               MPI_C_LONG_DOUBLE_COMPLEX));
    CHECK(zb == z, "long double complex back");
}
#endif

/* Complex, Fortran and C++ types in a reduction. */
static void
t_predefined(void)
{
    double _Complex z = t_rank + 2.0 * t_rank * I, zs = 0;
    float _Complex f = 1.0f + 1.0f * I, fs = 0;
    int i = t_rank + 1, is = 0, size;
    double dp = 0.5, dps = 0;
    long long want = (long long)t_size * (t_size + 1) / 2;

    MPI_OK(MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM,
                         MPI_COMM_WORLD));
    CHECK(creal(zs) == (t_size - 1) * t_size / 2.0 &&
              cimag(zs) == (double)(t_size - 1) * t_size,
          "complex sum %g %g", creal(zs), cimag(zs));
    MPI_OK(MPI_Allreduce(&f, &fs, 1, MPI_C_FLOAT_COMPLEX, MPI_SUM,
                         MPI_COMM_WORLD));
    CHECK(crealf(fs) == t_size && cimagf(fs) == t_size, "float complex");
    MPI_OK(MPI_Allreduce(&i, &is, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
    CHECK(is == want, "integer sum %d", is);
    MPI_OK(MPI_Allreduce(&dp, &dps, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
                         MPI_COMM_WORLD));
    CHECK(dps == 0.5 * t_size, "double precision sum %g", dps);
    MPI_OK(MPI_Type_size(MPI_CXX_BOOL, &size));
    CHECK(size == 1, "cxx bool size %d", size);
    MPI_OK(MPI_Type_size(MPI_DOUBLE_COMPLEX, &size));
    CHECK(size == 16, "double complex size %d", size);
    MPI_OK(MPI_Type_size(MPI_C_LONG_DOUBLE_COMPLEX, &size));
    CHECK(size == (int)sizeof(long double _Complex), "long double complex");
    MPI_OK(MPI_Type_size(MPI_REAL, &size));
    CHECK(size == 4, "real size %d", size);
}

/* Found by MPICH's test suite: a struct's extent is padded as C pads
 * the struct (MPI 3.1 4.1.6), bounds follow a negative extent, and
 * Type_match_size names the sized types. */
struct ic {
    int i;
    char c;
};

static void
t_padding(void)
{
    int bl[2] = {1, 1}, p = t_partner(), size, rc;
    MPI_Aint d[2] = {offsetof(struct ic, i), offsetof(struct ic, c)}, lb, ext,
             pext;
    MPI_Datatype ty[2] = {MPI_INT, MPI_CHAR}, dt[2] = {MPI_DOUBLE, MPI_INT},
                 st, pair, neg, con, vec, m;
    struct ic out[4], in[4];
    struct {
        double v;
        int i;
    } di;

    MPI_OK(MPI_Type_create_struct(2, bl, d, ty, &st));
    MPI_OK(MPI_Type_commit(&st));
    MPI_OK(MPI_Type_get_extent(st, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct ic),
          "struct {int, char}: extent %ld, sizeof %zu", (long)ext,
          sizeof(struct ic));
    memset(in, 0, sizeof in);
    for (int k = 0; k < 4; k++) {
        out[k].i = t_rank * 10 + k;
        out[k].c = (char)('a' + k);
    }
    MPI_OK(MPI_Sendrecv(out, 4, st, p, 3, in, 4, st, p, 3, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; k++)
        CHECK(in[k].i == p * 10 + k && in[k].c == 'a' + k,
              "array of structs: element %d is {%d, %d}", k, in[k].i,
              in[k].c);
    d[0] = (char *)&di.v - (char *)&di;
    d[1] = (char *)&di.i - (char *)&di;
    MPI_OK(MPI_Type_create_struct(2, bl, d, dt, &pair));
    MPI_OK(MPI_Type_get_extent(pair, &lb, &ext));
    MPI_OK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &pext));
    CHECK(ext == (MPI_Aint)sizeof di && pext == ext,
          "{double, int}: %ld, MPI_DOUBLE_INT %ld, C %zu", (long)ext,
          (long)pext, sizeof di);

    /* An int whose extent runs backwards: lb 6, extent -9. */
    MPI_OK(MPI_Type_create_resized(MPI_INT, 6, -9, &neg));
    MPI_OK(MPI_Type_contiguous(3, neg, &con));
    MPI_OK(MPI_Type_get_extent(con, &lb, &ext));
    CHECK(lb == -12 && ext == 9, "contiguous of negative extents: %ld %ld",
          (long)lb, (long)ext);
    MPI_OK(MPI_Type_vector(3, 4, 5, neg, &vec));
    MPI_OK(MPI_Type_get_extent(vec, &lb, &ext));
    CHECK(lb == -111 && ext == 108, "vector of negative extents: %ld %ld",
          (long)lb, (long)ext);

    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(double), &m));
    MPI_OK(MPI_Type_size(m, &size));
    CHECK(size == sizeof(double), "match_size real %d", size);
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, sizeof(short), &m));
    MPI_OK(MPI_Type_size(m, &size));
    CHECK(size == sizeof(short), "match_size integer %d", size);
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 2 * sizeof(double), &m));
    MPI_OK(MPI_Type_size(m, &size));
    CHECK(size == 2 * sizeof(double), "match_size complex %d", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m);
    CHECK(rc != MPI_SUCCESS, "match_size of a 3-byte integer");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Type_free(&st));
    MPI_OK(MPI_Type_free(&pair));
    MPI_OK(MPI_Type_free(&neg));
    MPI_OK(MPI_Type_free(&con));
    MPI_OK(MPI_Type_free(&vec));
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_struct();
    t_padding();
    t_hforms();
    t_envelopes();
    t_subarray();
    t_darray();
    t_bottom();
    t_pack();
#if defined(P2PMPI) && defined(__x86_64__)
    t_external_long_double();
#endif
    t_predefined();
    return t_finish("dtype");
}
