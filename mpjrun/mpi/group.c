/*
 * group.c: process groups.  A group is an ordered list of world ranks
 * behind a checked handle (handles.c, kind 0x48: MPI_GROUP_EMPTY is the
 * kind alone and never a slot).  Every call is local and deterministic,
 * so replicas of a rank compute the same groups.
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define GROUP_KIND 0x48000000u

struct mpii_group {
    int size;
    int *world; /* world rank of each member, in group order */
};

static struct mpii_handles groups = {.kind = GROUP_KIND};
static const struct mpii_group empty = {0, NULL};

#define ERR(rc, fn) mpii_err(MPI_COMM_WORLD, rc, fn)

static const struct mpii_group *
group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &empty;
    return mpii_handle_get(&groups, (uint32_t)h);
}

static void
group_destroy(void *p)
{
    struct mpii_group *g = p;

    if (g == NULL)
        return;
    free(g->world);
    free(g);
}

void
mpii_group_fini(void)
{
    mpii_handles_fini(&groups, group_destroy);
}

/* A new group of n members (world ranks copied from w, or left for the
 * caller when w is NULL); n == 0 gives MPI_GROUP_EMPTY. */
static int
group_new(int n, const int *w, MPI_Group *out, struct mpii_group **gp)
{
    struct mpii_group *g;
    uint32_t h;
    int rc;

    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        if (gp != NULL)
            *gp = NULL;
        return MPI_SUCCESS;
    }
    if ((g = calloc(1, sizeof *g)) == NULL ||
        (g->world = malloc((size_t)n * sizeof *g->world)) == NULL) {
        free(g);
        return MPI_ERR_NO_MEM;
    }
    g->size = n;
    if (w != NULL)
        memcpy(g->world, w, (size_t)n * sizeof *w);
    if ((rc = mpii_handle_put(&groups, g, &h)) != MPI_SUCCESS) {
        group_destroy(g);
        return rc;
    }
    *out = (MPI_Group)h;
    if (gp != NULL)
        *gp = g;
    return MPI_SUCCESS;
}

int
mpii_group_of(int n, const int *world, MPI_Group *out)
{
    return group_new(n, world, out, NULL);
}

/* The members of a group: size and world ranks; -1 for a bad handle. */
int
mpii_group_members(MPI_Group h, const int **world)
{
    const struct mpii_group *g = group_get(h);

    if (g == NULL)
        return -1;
    *world = g->world;
    return g->size;
}

/* Position of world rank w in g, or MPI_UNDEFINED. */
static int
group_find(const struct mpii_group *g, int w)
{
    int i;

    for (i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return i;
    return MPI_UNDEFINED;
}

#pragma weak MPI_Comm_group = PMPI_Comm_group
int
PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    MPII_ENTER;
    struct mpii_comm *c;
    int rc;

    MPII_CHECK_INIT("MPI_Comm_group");
    if ((c = mpii_comm_get(comm)) == NULL)
        return ERR(MPI_ERR_COMM, "MPI_Comm_group");
    if (group == NULL)
        return mpii_err(comm, MPI_ERR_ARG, "MPI_Comm_group");
    if ((rc = c->inter ? group_new(c->lsize, c->lworld, group, NULL)
                       : group_new(c->size, c->world, group, NULL)) !=
        MPI_SUCCESS)
        return mpii_err(comm, rc, "MPI_Comm_group");
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_size = PMPI_Group_size
int
PMPI_Group_size(MPI_Group group, int *size)
{
    MPII_ENTER;
    const struct mpii_group *g;

    if ((g = group_get(group)) == NULL)
        return ERR(MPI_ERR_GROUP, "MPI_Group_size");
    if (size == NULL)
        return ERR(MPI_ERR_ARG, "MPI_Group_size");
    *size = g->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_rank = PMPI_Group_rank
int
PMPI_Group_rank(MPI_Group group, int *rank)
{
    MPII_ENTER;
    const struct mpii_group *g;
    struct mpii_comm *w = mpii_comm_get(MPI_COMM_WORLD);

    if ((g = group_get(group)) == NULL)
        return ERR(MPI_ERR_GROUP, "MPI_Group_rank");
    if (rank == NULL || w == NULL)
        return ERR(MPI_ERR_ARG, "MPI_Group_rank");
    *rank = group_find(g, w->rank);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
int
PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                           MPI_Group group2, int ranks2[])
{
    MPII_ENTER;
    static const char fn[] = "MPI_Group_translate_ranks";
    const struct mpii_group *a, *b;
    int i;

    if ((a = group_get(group1)) == NULL || (b = group_get(group2)) == NULL)
        return ERR(MPI_ERR_GROUP, fn);
    if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
        return ERR(MPI_ERR_ARG, fn);
    for (i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL &&
            (ranks1[i] < 0 || ranks1[i] >= a->size))
            return ERR(MPI_ERR_RANK, fn);
    for (i = 0; i < n; i++)
        ranks2[i] = ranks1[i] == MPI_PROC_NULL
                        ? MPI_PROC_NULL
                        : group_find(b, a->world[ranks1[i]]);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_compare = PMPI_Group_compare
int
PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    MPII_ENTER;
    const struct mpii_group *a, *b;
    int i, same_order = 1;

    if ((a = group_get(group1)) == NULL || (b = group_get(group2)) == NULL)
        return ERR(MPI_ERR_GROUP, "MPI_Group_compare");
    if (result == NULL)
        return ERR(MPI_ERR_ARG, "MPI_Group_compare");
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    for (i = 0; i < a->size; i++) {
        if (a->world[i] != b->world[i])
            same_order = 0;
        if (group_find(b, a->world[i]) == MPI_UNDEFINED) {
            *result = MPI_UNEQUAL;
            return MPI_SUCCESS;
        }
    }
    *result = same_order ? MPI_IDENT : MPI_SIMILAR;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_free = PMPI_Group_free
int
PMPI_Group_free(MPI_Group *group)
{
    MPII_ENTER;
    struct mpii_group *g;

    if (group == NULL)
        return ERR(MPI_ERR_ARG, "MPI_Group_free");
    /* Freeing MPI_GROUP_EMPTY is allowed (it is what other calls return
     * for an empty result); it stays valid. */
    if (*group == MPI_GROUP_EMPTY) {
        *group = MPI_GROUP_NULL;
        return MPI_SUCCESS;
    }
    if ((g = mpii_handle_take(&groups, (uint32_t)*group)) == NULL)
        return ERR(MPI_ERR_GROUP, "MPI_Group_free");
    group_destroy(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

/* incl: the listed ranks in that order (each at most once). */
#pragma weak MPI_Group_incl = PMPI_Group_incl
int
PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *out)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Group_incl";
    const struct mpii_group *g;
    struct mpii_group *ng;
    char *seen;
    int i, rc;

    if ((g = group_get(group)) == NULL)
        return ERR(MPI_ERR_GROUP, fn);
    if (out == NULL || n < 0 || n > g->size || (n > 0 && ranks == NULL))
        return ERR(MPI_ERR_ARG, fn);
    if ((seen = calloc((size_t)g->size + 1, 1)) == NULL)
        return ERR(MPI_ERR_NO_MEM, fn);
    for (i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || seen[ranks[i]]) {
            free(seen);
            return ERR(MPI_ERR_RANK, fn);
        }
        seen[ranks[i]] = 1;
    }
    free(seen);
    if ((rc = group_new(n, NULL, out, &ng)) != MPI_SUCCESS)
        return ERR(rc, fn);
    for (i = 0; i < n; i++)
        ng->world[i] = g->world[ranks[i]];
    return MPI_SUCCESS;
}

/* excl: every rank but the listed ones, in group order. */
#pragma weak MPI_Group_excl = PMPI_Group_excl
int
PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *out)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Group_excl";
    const struct mpii_group *g;
    struct mpii_group *ng;
    char *drop;
    int i, k = 0, rc;

    if ((g = group_get(group)) == NULL)
        return ERR(MPI_ERR_GROUP, fn);
    if (out == NULL || n < 0 || n > g->size || (n > 0 && ranks == NULL))
        return ERR(MPI_ERR_ARG, fn);
    if ((drop = calloc((size_t)g->size + 1, 1)) == NULL)
        return ERR(MPI_ERR_NO_MEM, fn);
    for (i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || drop[ranks[i]]) {
            free(drop);
            return ERR(MPI_ERR_RANK, fn);
        }
        drop[ranks[i]] = 1;
    }
    if ((rc = group_new(g->size - n, NULL, out, &ng)) != MPI_SUCCESS) {
        free(drop);
        return ERR(rc, fn);
    }
    for (i = 0; i < g->size && ng != NULL; i++)
        if (!drop[i])
            ng->world[k++] = g->world[i];
    free(drop);
    return MPI_SUCCESS;
}

/* The ranks of n triplets (first, last, stride), in order; -1 on a bad
 * triplet, the count otherwise (list may be NULL to count). */
static int
expand_ranges(const struct mpii_group *g, int n, const int r[][3], int *list,
              char *seen)
{
    int i, k = 0;
    long long v;

    for (i = 0; i < n; i++) {
        int first = r[i][0], last = r[i][1], stride = r[i][2];

        if (stride == 0 || first < 0 || first >= g->size || last < 0 ||
            last >= g->size)
            return -1;
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            continue;
        for (v = first; stride > 0 ? v <= last : v >= last; v += stride) {
            if (seen[v])
                return -1;
            seen[v] = 1;
            if (list != NULL)
                list[k] = (int)v;
            k++;
        }
    }
    return k;
}

static int
range(MPI_Group group, int n, int ranges[][3], MPI_Group *out, int excl,
      const char *fn)
{
    const struct mpii_group *g;
    int *list, k, rc;
    char *seen;

    if ((g = group_get(group)) == NULL)
        return ERR(MPI_ERR_GROUP, fn);
    if (out == NULL || n < 0 || (n > 0 && ranges == NULL))
        return ERR(MPI_ERR_ARG, fn);
    seen = calloc((size_t)g->size + 1, 1);
    list = malloc(((size_t)g->size + 1) * sizeof *list);
    if (seen == NULL || list == NULL) {
        free(seen);
        free(list);
        return ERR(MPI_ERR_NO_MEM, fn);
    }
    if ((k = expand_ranges(g, n, (const int(*)[3])ranges, list, seen)) < 0) {
        free(seen);
        free(list);
        return ERR(MPI_ERR_RANK, fn);
    }
    if (excl) {
        int i;

        for (i = 0, k = 0; i < g->size; i++)
            if (!seen[i])
                list[k++] = i;
    }
    free(seen);
    rc = PMPI_Group_incl(group, k, list, out);
    free(list);
    return rc;
}

#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
int
PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                      MPI_Group *newgroup)
{
    MPII_ENTER;
    return range(group, n, ranges, newgroup, 0, "MPI_Group_range_incl");
}

#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
int
PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                      MPI_Group *newgroup)
{
    MPII_ENTER;
    return range(group, n, ranges, newgroup, 1, "MPI_Group_range_excl");
}

enum setop { UNION, INTERSECTION, DIFFERENCE };

/* union: a's members then b's not in a; intersection: a's members also
 * in b; difference: a's members not in b (each in a's order). */
static int
setop(MPI_Group group1, MPI_Group group2, MPI_Group *out, enum setop op,
      const char *fn)
{
    const struct mpii_group *a, *b;
    int *w, i, k = 0, rc, inb;

    if ((a = group_get(group1)) == NULL || (b = group_get(group2)) == NULL)
        return ERR(MPI_ERR_GROUP, fn);
    if (out == NULL)
        return ERR(MPI_ERR_ARG, fn);
    if ((w = malloc(((size_t)a->size + (size_t)b->size + 1) * sizeof *w)) ==
        NULL)
        return ERR(MPI_ERR_NO_MEM, fn);
    for (i = 0; i < a->size; i++) {
        inb = group_find(b, a->world[i]) != MPI_UNDEFINED;
        if (op == UNION || (op == INTERSECTION) == inb)
            w[k++] = a->world[i];
    }
    if (op == UNION)
        for (i = 0; i < b->size; i++)
            if (group_find(a, b->world[i]) == MPI_UNDEFINED)
                w[k++] = b->world[i];
    rc = group_new(k, w, out, NULL);
    free(w);
    return rc == MPI_SUCCESS ? rc : ERR(rc, fn);
}

#pragma weak MPI_Group_union = PMPI_Group_union
int
PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    MPII_ENTER;
    return setop(group1, group2, newgroup, UNION, "MPI_Group_union");
}

#pragma weak MPI_Group_intersection = PMPI_Group_intersection
int
PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    MPII_ENTER;
    return setop(group1, group2, newgroup, INTERSECTION,
                 "MPI_Group_intersection");
}

#pragma weak MPI_Group_difference = PMPI_Group_difference
int
PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    MPII_ENTER;
    return setop(group1, group2, newgroup, DIFFERENCE, "MPI_Group_difference");
}
