/*
 * groups: groups and intra-communicators.
 *  - Comm_group, Group_size/rank, incl/excl (with orders), range_incl/excl,
 *    union/intersection/difference, translate_ranks, compare, free;
 *  - Comm_create (the even ranks, reversed), Comm_create_group (the odd
 *    ranks only, the others do not call), Comm_dup_with_info,
 *    Comm_split_type(MPI_COMM_TYPE_SHARED); each new communicator works
 *    (an Allreduce of world ranks);
 *  - names; keyvals and attributes: set/get/delete, copy callbacks on
 *    dup (MPI_COMM_DUP_FN, a counting one, MPI_COMM_NULL_COPY_FN),
 *    delete callbacks on delete, on free and on MPI_COMM_SELF at
 *    finalize; the predefined attributes.
 */
#include "mpitest.h"

static int copies, deletes;

static int
count_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)key;
    CHECK(extra == &copies, "extra state");
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int
count_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

/* At finalize, on MPI_COMM_SELF: the last thing to check. */
static int
self_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)key, (void)val, (void)extra;
    if (comm == MPI_COMM_SELF && t_rank == 0) {
        printf("ok groups-finalize\n");
        fflush(stdout);
    }
    return MPI_SUCCESS;
}

/* Sum of world ranks over comm equals want. */
static void
check_comm(MPI_Comm comm, int want_size, long want_sum, const char *what)
{
    int size, wr = t_rank, sum = -1;

    MPI_OK(MPI_Comm_size(comm, &size));
    CHECK(size == want_size, "%s: size %d, want %d", what, size, want_size);
    MPI_OK(MPI_Allreduce(&wr, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == want_sum, "%s: sum %d, want %ld", what, sum, want_sum);
}

static void
t_groups(void)
{
    MPI_Group world, even, odd, rev, u, in, diff, rg, re, g;
    int n = t_size, *ranks = t_malloc(sizeof(int) * (size_t)n), k = 0, r, size,
        res, t[4], t2[4];
    int ranges[1][3];

    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_size(world, &size));
    CHECK(size == n, "world group size %d", size);
    MPI_OK(MPI_Group_rank(world, &r));
    CHECK(r == t_rank, "world group rank %d", r);
    for (int i = 0; i < n; i += 2)
        ranks[k++] = i;
    MPI_OK(MPI_Group_incl(world, k, ranks, &even));
    MPI_OK(MPI_Group_excl(world, k, ranks, &odd));
    MPI_OK(MPI_Group_size(odd, &size));
    CHECK(size == n - k, "odd size %d", size);
    MPI_OK(MPI_Group_rank(even, &r));
    CHECK(r == (t_rank % 2 ? MPI_UNDEFINED : t_rank / 2), "even rank %d", r);
    /* Range forms: even ranks as a triplet. */
    ranges[0][0] = 0;
    ranges[0][1] = n - 1;
    ranges[0][2] = 2;
    MPI_OK(MPI_Group_range_incl(world, 1, ranges, &rg));
    MPI_OK(MPI_Group_compare(rg, even, &res));
    CHECK(res == MPI_IDENT, "range_incl compare %d", res);
    MPI_OK(MPI_Group_range_excl(world, 1, ranges, &re));
    MPI_OK(MPI_Group_compare(re, odd, &res));
    CHECK(res == MPI_IDENT, "range_excl compare %d", res);
    /* Reversed world: similar, not identical. */
    for (int i = 0; i < n; i++)
        ranks[i] = n - 1 - i;
    MPI_OK(MPI_Group_incl(world, n, ranks, &rev));
    MPI_OK(MPI_Group_compare(rev, world, &res));
    CHECK(res == (n == 1 ? MPI_IDENT : MPI_SIMILAR), "reversed compare %d",
          res);
    MPI_OK(MPI_Group_rank(rev, &r));
    CHECK(r == n - 1 - t_rank, "reversed rank %d", r);
    /* Set operations. */
    MPI_OK(MPI_Group_union(odd, even, &u));
    MPI_OK(MPI_Group_compare(u, world, &res));
    /* odd then even: the world's members in another order (n > 2). */
    CHECK(res == (n <= 2 && n != 2 ? MPI_IDENT : MPI_SIMILAR) ||
              (n == 2 && res == MPI_SIMILAR),
          "union compare %d", res);
    MPI_OK(MPI_Group_intersection(world, even, &in));
    MPI_OK(MPI_Group_compare(in, even, &res));
    CHECK(res == MPI_IDENT, "intersection compare %d", res);
    MPI_OK(MPI_Group_difference(world, even, &diff));
    MPI_OK(MPI_Group_compare(diff, odd, &res));
    CHECK(res == MPI_IDENT, "difference compare %d", res);
    MPI_OK(MPI_Group_intersection(even, odd, &g));
    MPI_OK(MPI_Group_size(g, &size));
    CHECK(size == 0, "even and odd intersect in %d", size);
    CHECK(g == MPI_GROUP_EMPTY, "empty intersection is not MPI_GROUP_EMPTY");
    MPI_OK(MPI_Group_compare(even, odd, &res));
    CHECK(res == MPI_UNEQUAL, "even/odd compare %d", res);
    /* Translate: world ranks 0..3 in the reversed group. */
    for (int i = 0; i < 4; i++)
        t[i] = i < n ? i : MPI_PROC_NULL;
    MPI_OK(MPI_Group_translate_ranks(world, 4, t, rev, t2));
    for (int i = 0; i < 4; i++)
        CHECK(t2[i] == (i < n ? n - 1 - i : MPI_PROC_NULL), "translate %d: %d",
              i, t2[i]);
    MPI_OK(MPI_Group_translate_ranks(world, 1, t, odd, t2));
    CHECK(t2[0] == MPI_UNDEFINED, "rank 0 in odd: %d", t2[0]);

    /* Comm_create on the even ranks, reversed: rank order follows. */
    {
        MPI_Group erev;
        MPI_Comm c;
        int m = 0, cr;

        for (int i = (n - 1) / 2 * 2; i >= 0; i -= 2)
            ranks[m++] = i;
        MPI_OK(MPI_Group_incl(world, m, ranks, &erev));
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, erev, &c));
        if (t_rank % 2 == 0) {
            long sum = 0;

            CHECK(c != MPI_COMM_NULL, "even rank has no communicator");
            for (int i = 0; i < n; i += 2)
                sum += i;
            MPI_OK(MPI_Comm_rank(c, &cr));
            CHECK(cr == ((n - 1) / 2 * 2 - t_rank) / 2, "create rank %d", cr);
            check_comm(c, m, sum, "Comm_create");
            MPI_OK(MPI_Comm_free(&c));
        } else {
            CHECK(c == MPI_COMM_NULL, "odd rank got a communicator");
        }
        MPI_OK(MPI_Group_free(&erev));
    }
    /* Comm_create with disjoint groups (MPI 3.1 6.4.2): each rank gives
     * the group of its own parity and gets a communicator over it. */
    {
        MPI_Comm c;
        int cr, cs;
        long sum = 0;

        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, t_rank % 2 ? odd : even, &c));
        CHECK(c != MPI_COMM_NULL, "disjoint groups: no communicator");
        MPI_OK(MPI_Comm_rank(c, &cr));
        MPI_OK(MPI_Comm_size(c, &cs));
        CHECK(cr == t_rank / 2 && cs == (n + 1 - t_rank % 2) / 2,
              "disjoint groups: rank %d of %d", cr, cs);
        for (int i = t_rank % 2; i < n; i += 2)
            sum += i;
        check_comm(c, cs, sum, "Comm_create, disjoint groups");
        MPI_OK(MPI_Comm_free(&c));
    }
    /* Comm_create_group: only the odd ranks call. */
    if (t_rank % 2 == 1) {
        MPI_Comm c;
        long sum = 0;

        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, odd, 7, &c));
        for (int i = 1; i < n; i += 2)
            sum += i;
        CHECK(c != MPI_COMM_NULL, "no communicator from create_group");
        check_comm(c, n / 2, sum, "Comm_create_group");
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_Group_free(&g);
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Group_free(&even));
    MPI_OK(MPI_Group_free(&odd));
    MPI_OK(MPI_Group_free(&rev));
    MPI_OK(MPI_Group_free(&u));
    MPI_OK(MPI_Group_free(&in));
    MPI_OK(MPI_Group_free(&diff));
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&re));
    CHECK(re == MPI_GROUP_NULL, "freed group not null");
    free(ranks);
}

static void
t_comms(void)
{
    MPI_Comm d, s;
    char name[MPI_MAX_OBJECT_NAME];
    int len, res, size, sum = 0, key = 0, wr = t_rank, shared_sum;

    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &d));
    MPI_OK(MPI_Comm_compare(d, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT, "dup_with_info compare %d", res);
    check_comm(d, t_size, (long)t_size * (t_size - 1) / 2, "dup_with_info");
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "world name '%s'", name);
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(len == 0, "dup has a name '%s'", name);
    MPI_OK(MPI_Comm_set_name(d, "my comm"));
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(strcmp(name, "my comm") == 0 && len == 7, "name '%s'", name);
    MPI_OK(MPI_Comm_free(&d));

    /* Shared-memory split: members share a node; the split is a partition
     * (sizes add up, each rank in one part). */
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank,
                               MPI_INFO_NULL, &s));
    CHECK(s != MPI_COMM_NULL, "no shared communicator");
    MPI_OK(MPI_Comm_size(s, &size));
    MPI_OK(MPI_Comm_rank(s, &key));
    /* Count each part once: its rank 0 adds its size. */
    sum = key == 0 ? size : 0;
    MPI_OK(
        MPI_Allreduce(&sum, &shared_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(shared_sum == t_size, "shared parts add up to %d", shared_sum);
    MPI_OK(MPI_Allreduce(&wr, &sum, 1, MPI_INT, MPI_MAX, s));
    CHECK(sum >= t_rank, "shared max %d", sum);
    MPI_OK(MPI_Comm_free(&s));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL,
                               &s));
    CHECK(s == MPI_COMM_NULL, "split_type UNDEFINED gave a communicator");
}

static void
t_attrs(void)
{
    int k1, k2, k3, kself, flag, *v, val = 42;
    void *got;
    MPI_Comm d;

    /* Predefined. */
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "tag_ub %d", flag ? *v : -1);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(!flag || *v == 0 || *v == 1, "wtime_is_global");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    /* Open MPI answers its slot count, which may be fewer than the
     * ranks when oversubscribed. */
    CHECK(!flag || *v >= 1, "universe size %d", flag ? *v : -1);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(!flag || *v == 0, "appnum");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag, "no MPI_HOST");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag, "no MPI_IO");

    /* User keyvals. */
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k1,
                                  NULL));
    MPI_OK(MPI_Comm_create_keyval(count_copy, count_delete, &k2, &copies));
    MPI_OK(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &k3, NULL));
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &got, &flag));
    CHECK(!flag, "unset attribute found");
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k1, &val));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k2, (void *)100));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k3, (void *)200));
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &got, &flag));
    CHECK(flag && got == &val, "get k1");
    /* Replacing a value deletes the old one. */
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k2, (void *)101));
    CHECK(deletes == 1, "deletes after replace %d", deletes);

    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK(copies == 1, "copies %d", copies);
    MPI_OK(MPI_Comm_get_attr(d, k1, &got, &flag));
    CHECK(flag && got == &val, "dup k1");
    MPI_OK(MPI_Comm_get_attr(d, k2, &got, &flag));
    CHECK(flag && got == (void *)102, "dup k2 %p", got);
    MPI_OK(MPI_Comm_get_attr(d, k3, &got, &flag));
    CHECK(!flag, "k3 copied with the null copy function");
    /* Freeing the keyval: attributes keep it alive. */
    MPI_OK(MPI_Comm_free_keyval(&k2));
    CHECK(k2 == MPI_KEYVAL_INVALID, "freed keyval not invalid");
    MPI_OK(MPI_Comm_free(&d)); /* deletes d's k2 */
    CHECK(deletes == 2, "deletes after free %d", deletes);
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k3));
    CHECK(deletes == 3, "deletes after delete_attr %d", deletes);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, k3, &got, &flag));
    CHECK(!flag, "deleted attribute found");
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k1));
    MPI_OK(MPI_Comm_free_keyval(&k1));
    MPI_OK(MPI_Comm_free_keyval(&k3));

    /* MPI-1 names. */
    MPI_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k1, NULL));
    MPI_OK(MPI_Attr_put(MPI_COMM_WORLD, k1, &val));
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, k1, &got, &flag));
    CHECK(flag && got == &val, "Attr_get");
    MPI_OK(MPI_Attr_delete(MPI_COMM_WORLD, k1));
    MPI_OK(MPI_Keyval_free(&k1));

    /* Deleted at finalize, first. */
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &kself,
                                  NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kself, NULL));
    MPI_OK(MPI_Comm_free_keyval(&kself));
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_groups();
    t_comms();
    t_attrs();
    return t_finish("groups");
}
