/*
 * comm_tags: the agreements that make communicators never take each
 * other's messages, whatever the context ids (Comm_idup's have bit 30
 * set) and the user's tags.
 *
 * The crafted case (3 or more ranks): the first rounds of p2pmpi's
 * Comm_idup give ids 2^30 | count << (2 + rank bits) | highest world
 * rank << 2, so the idup number 128 >> rank bits of a communicator
 * holding every rank has id 2^30 | 0x200 | last << 2.  Once, a Comm_dup
 * of that communicator agreed with that id as tag, and a
 * Comm_create_group on MPI_COMM_WORLD with tag last << 2 with 2^30 |
 * world's id << 8 | tag, the same, on the same context: rank 0, in the
 * create_group, took the dup's three ints from the last rank (rank 1 in
 * the idup'd communicator, as rank 1 is in the group) and failed.  The
 * last rank's dup is under way before rank 1 starts the create_group.
 * Then: create_groups with tags apart by 256 on overlapping groups;
 * rounds of create_groups on one tag (subsets_one_tag); and
 * Intercomm_merge of intercommunicators made before and after idups,
 * each checked by a reduction on the result.
 */
#include "mpitest.h"

/* A collective check: the sum of world ranks over c is want. */
static void
sum_is(MPI_Comm c, int want, const char *what)
{
    int sum = -1;

    MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == want, "%s: sum %d, want %d", what, sum, want);
}

static int
rank_bits(void)
{
    int b = 0;

    while ((1 << b) < t_size)
        b++;
    return b;
}

/* Comm_create_group on the world beside a Comm_dup of an idup'd
 * communicator whose id equals its old tag. */
static void
crafted(void)
{
    int last = t_size - 1, k = 128 >> rank_bits(), tag = last << 2;
    int go = 0, members[2] = {0, 1};
    MPI_Comm s, d = MPI_COMM_NULL, x, g = MPI_COMM_NULL;
    MPI_Group wg, g01;
    MPI_Request r;

    /* Rank 0 first, the last rank second (its rank 1 there). */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0,
                          t_rank == 0      ? 0
                          : t_rank == last ? 1
                                           : 2 + t_rank,
                          &s));
    for (int i = 0; i <= k; i++) {
        MPI_Comm n;

        MPI_OK(MPI_Comm_idup(s, &n, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (i == k)
            d = n;
        else
            MPI_OK(MPI_Comm_free(&n));
    }
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_incl(wg, 2, members, &g01));
    if (t_rank == last) {
        MPI_OK(MPI_Isend(&go, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Comm_dup(d, &x));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        if (t_rank == 1)
            MPI_OK(MPI_Recv(&go, 1, MPI_INT, last, 77, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        if (t_rank <= 1)
            MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g01, tag, &g));
        MPI_OK(MPI_Comm_dup(d, &x));
    }
    if (g != MPI_COMM_NULL) {
        sum_is(g, 1, "create_group beside a dup");
        MPI_OK(MPI_Comm_free(&g));
    }
    sum_is(x, t_size * (t_size - 1) / 2, "dup of an idup'd communicator");
    MPI_OK(MPI_Comm_free(&x));
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&s));
    MPI_OK(MPI_Group_free(&g01));
    MPI_OK(MPI_Group_free(&wg));
}

/* Rank 0 in two create_groups whose tags are 256 apart; rank 1 in the
 * first only, the last rank in the second only and early. */
static void
tags_apart(void)
{
    int last = t_size - 1, a[2] = {0, 1}, b[2] = {0, last};
    MPI_Group wg, ga, gb;
    MPI_Comm ca = MPI_COMM_NULL, cb = MPI_COMM_NULL;

    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_incl(wg, 2, a, &ga));
    MPI_OK(MPI_Group_incl(wg, 2, b, &gb));
    if (t_rank == 0 || t_rank == 1)
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, ga, 3, &ca));
    if (t_rank == 0 || t_rank == last)
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, gb, 3 + 256, &cb));
    if (ca != MPI_COMM_NULL) {
        sum_is(ca, 1, "create_group tag 3");
        MPI_OK(MPI_Comm_free(&ca));
    }
    if (cb != MPI_COMM_NULL) {
        sum_is(cb, last, "create_group tag 259");
        MPI_OK(MPI_Comm_free(&cb));
    }
    MPI_OK(MPI_Group_free(&ga));
    MPI_OK(MPI_Group_free(&gb));
    MPI_OK(MPI_Group_free(&wg));
}

/* 100 rounds of Comm_create_group on MPI_COMM_WORLD, all on tag 0, each
 * round's members a pseudo-random subset (the same on every rank), as
 * MPICH's comm/comm_group_rand does; only the members call.  A rank not
 * in a round goes on to the next at once, so one round's agreement meets
 * another's messages.  Once, these messages named the sender by its place
 * in its round's group: a leader waiting for its second member took
 * another round's second member's proposal, agreed early, and its
 * members' next receive met a longer list ("message truncated"). */
static void
subsets_one_tag(void)
{
    int *members = t_malloc(sizeof(int) * (size_t)t_size), n, in, sum;
    unsigned x = 12345;
    MPI_Group wg, g;
    MPI_Comm c;

    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int round = 0; round < 100; round++) {
        n = in = sum = 0;
        for (int r = 0; r < t_size; r++) {
            x = x * 1103515245u + 12345u;
            if ((x >> 16) & 1) {
                members[n++] = r;
                sum += r;
                in |= r == t_rank;
            }
        }
        MPI_OK(MPI_Group_incl(wg, n, members, &g));
        if (in) {
            MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &c));
            sum_is(c, sum, "create_group round");
            MPI_OK(MPI_Comm_free(&c));
        }
        MPI_OK(MPI_Group_free(&g));
    }
    MPI_OK(MPI_Group_free(&wg));
    free(members);
}

/* Intercommunicators (even and odd ranks) made plainly and by idup,
 * merged one after the other, low group first. */
static void
merges(void)
{
    MPI_Comm half, ic, icd, m1, m2;
    MPI_Request r;
    int lo = t_rank % 2, want = t_size * (t_size - 1) / 2, rank;

    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, lo, t_rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - lo, 11, &ic));
    for (int i = 0; i < 20; i++) {
        MPI_OK(MPI_Comm_idup(ic, &icd, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (i < 19)
            MPI_OK(MPI_Comm_free(&icd));
    }
    MPI_OK(MPI_Intercomm_merge(icd, lo, &m1));
    MPI_OK(MPI_Intercomm_merge(ic, !lo, &m2));
    sum_is(m1, want, "merge of an idup'd intercommunicator");
    sum_is(m2, want, "merge of the original");
    /* m1: the even ranks first; m2: the odd ones. */
    MPI_OK(MPI_Comm_rank(m1, &rank));
    CHECK(rank == (lo ? (t_size + 1) / 2 + t_rank / 2 : t_rank / 2),
          "merge of the idup: rank %d", rank);
    MPI_OK(MPI_Comm_rank(m2, &rank));
    CHECK(rank == (lo ? t_rank / 2 : t_size / 2 + t_rank / 2),
          "merge of the original: rank %d", rank);
    MPI_OK(MPI_Comm_free(&m1));
    MPI_OK(MPI_Comm_free(&m2));
    MPI_OK(MPI_Comm_free(&icd));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&half));
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (t_size >= 3) {
        crafted();
        tags_apart();
        subsets_one_tag();
    }
    if (t_size >= 2)
        merges();
    return t_finish("comm_tags");
}
