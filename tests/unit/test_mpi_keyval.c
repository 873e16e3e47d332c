/*
 * Keyvals and attribute lists (mpjrun/mpi/keyval.c), alone: set, get,
 * replace, delete, copy and delete-all with counting callbacks of both
 * kinds, a keyval of one kind refused on the other, a freed keyval that
 * lives while attributes use it, and a failing callback that stops the
 * operation.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mpii.h"
#include "test.h"

static int copies, deletes, last_obj, fail_delete;
static size_t last_val;

static int
comm_copy(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    (void)key;
    copies++;
    last_obj = c;
    *(void **)out = (void *)((size_t)in + (size_t)extra);
    *flag = 1;
    return MPI_SUCCESS;
}

static int
comm_del(MPI_Comm c, int key, void *val, void *extra)
{
    (void)key, (void)extra;
    deletes++;
    last_obj = c;
    last_val = (size_t)val;
    return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int
type_copy(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)key, (void)extra, (void)out, (void)in;
    copies++;
    *flag = 0; /* not copied */
    return MPI_SUCCESS;
}

static int
type_del(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)key, (void)extra;
    deletes++;
    last_obj = t;
    last_val = (size_t)val;
    return MPI_SUCCESS;
}

static void
reset(void)
{
    copies = deletes = last_obj = fail_delete = 0;
    last_val = 0;
}

static int
comm_key(void)
{
    struct mpii_keyval_fns f = {
        .kind = MPII_ATTR_COMM, .comm_copy = comm_copy, .comm_del = comm_del};
    int key = -1;

    CHECK_EQ_INT(mpii_keyval_new(&f, (void *)10, &key), MPI_SUCCESS);
    return key;
}

static void
t_set_get_replace_delete(void)
{
    struct mpii_attr *list = NULL;
    void *v = NULL;
    int key = comm_key(), flag = -1;

    reset();
    CHECK_EQ_INT(mpii_attrs_get(MPII_ATTR_COMM, list, key, &v, &flag),
                 MPI_SUCCESS);
    CHECK_EQ_INT(flag, 0);
    CHECK_EQ_INT(mpii_attrs_set(MPII_ATTR_COMM, 7, &list, key, (void *)1),
                 MPI_SUCCESS);
    CHECK_EQ_INT(mpii_attrs_get(MPII_ATTR_COMM, list, key, &v, &flag),
                 MPI_SUCCESS);
    CHECK_EQ_INT(flag, 1);
    CHECK_EQ_INT((size_t)v, 1);
    /* Replacing runs the delete callback on the old value. */
    CHECK_EQ_INT(mpii_attrs_set(MPII_ATTR_COMM, 7, &list, key, (void *)2),
                 MPI_SUCCESS);
    CHECK_EQ_INT(deletes, 1);
    CHECK_EQ_INT(last_val, 1);
    CHECK_EQ_INT(last_obj, 7);
    CHECK_EQ_INT(mpii_attrs_delete(MPII_ATTR_COMM, 7, &list, key), MPI_SUCCESS);
    CHECK_EQ_INT(deletes, 2);
    CHECK_EQ_INT(last_val, 2);
    CHECK(list == NULL);
    CHECK_EQ_INT(mpii_keyval_free(MPII_ATTR_COMM, &key), MPI_SUCCESS);
    CHECK_EQ_INT(key, MPI_KEYVAL_INVALID);
}

static void
t_kinds_apart(void)
{
    struct mpii_keyval_fns f = {
        .kind = MPII_ATTR_TYPE, .type_copy = type_copy, .type_del = type_del};
    struct mpii_attr *list = NULL;
    int tkey = -1, ckey = comm_key(), flag;
    void *v;

    CHECK_EQ_INT(mpii_keyval_new(&f, NULL, &tkey), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_attrs_set(MPII_ATTR_COMM, 1, &list, tkey, NULL),
                 MPI_ERR_KEYVAL);
    CHECK_EQ_INT(mpii_attrs_set(MPII_ATTR_TYPE, 1, &list, ckey, NULL),
                 MPI_ERR_KEYVAL);
    CHECK_EQ_INT(mpii_attrs_get(MPII_ATTR_TYPE, list, ckey, &v, &flag),
                 MPI_ERR_KEYVAL);
    CHECK_EQ_INT(mpii_keyval_free(MPII_ATTR_COMM, &tkey), MPI_ERR_KEYVAL);
    CHECK_EQ_INT(mpii_keyval_free(MPII_ATTR_TYPE, &tkey), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_keyval_free(MPII_ATTR_TYPE, &tkey), MPI_ERR_KEYVAL);
    CHECK_EQ_INT(mpii_keyval_free(MPII_ATTR_COMM, &ckey), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_attrs_set(MPII_ATTR_COMM, 1, &list, 12345, NULL),
                 MPI_ERR_KEYVAL);
}

static void
t_copy_and_delete_all(void)
{
    struct mpii_keyval_fns f = {
        .kind = MPII_ATTR_TYPE, .type_copy = type_copy, .type_del = type_del};
    struct mpii_attr *a = NULL, *b = NULL;
    int ckey = comm_key(), tkey, flag;
    void *v;

    reset();
    CHECK_EQ_INT(mpii_keyval_new(&f, NULL, &tkey), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_attrs_set(MPII_ATTR_COMM, 3, &a, ckey, (void *)5),
                 MPI_SUCCESS);
    /* Copy with the callback's new value (5 + extra 10). */
    CHECK_EQ_INT(mpii_attrs_copy(3, a, &b), MPI_SUCCESS);
    CHECK_EQ_INT(copies, 1);
    CHECK_EQ_INT(last_obj, 3);
    CHECK_EQ_INT(mpii_attrs_get(MPII_ATTR_COMM, b, ckey, &v, &flag),
                 MPI_SUCCESS);
    CHECK_EQ_INT(flag, 1);
    CHECK_EQ_INT((size_t)v, 15);
    /* A freed keyval lives while attributes use it. */
    CHECK_EQ_INT(mpii_keyval_free(MPII_ATTR_COMM, &ckey), MPI_SUCCESS);
    CHECK_EQ_INT(mpii_attrs_delete_all(4, &b), MPI_SUCCESS);
    CHECK_EQ_INT(deletes, 1);
    CHECK_EQ_INT(last_val, 15);
    CHECK_EQ_INT(last_obj, 4);
    /* A failing delete callback stops and keeps the attribute. */
    fail_delete = 1;
    CHECK_EQ_INT(mpii_attrs_delete_all(3, &a), MPI_ERR_OTHER);
    CHECK(a != NULL);
    fail_delete = 0;
    CHECK_EQ_INT(mpii_attrs_delete_all(3, &a), MPI_SUCCESS);
    CHECK(a == NULL);
    /* A type keyval whose copy callback declines: nothing copied. */
    reset();
    CHECK_EQ_INT(mpii_attrs_set(MPII_ATTR_TYPE, 9, &a, tkey, (void *)8),
                 MPI_SUCCESS);
    CHECK_EQ_INT(mpii_attrs_copy(9, a, &b), MPI_SUCCESS);
    CHECK_EQ_INT(copies, 1);
    CHECK(b == NULL);
    mpii_attrs_drop(&a); /* no callbacks */
    CHECK_EQ_INT(deletes, 0);
    CHECK(a == NULL);
    CHECK_EQ_INT(mpii_keyval_free(MPII_ATTR_TYPE, &tkey), MPI_SUCCESS);
    mpii_keyval_fini();
}

static const struct test_case cases[] = {
    {"set_get_replace_delete", t_set_get_replace_delete},
    {"kinds_apart", t_kinds_apart},
    {"copy_and_delete_all", t_copy_and_delete_all},
};

TEST_MAIN(cases)
