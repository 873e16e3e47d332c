/*
 * type_attr: attributes on datatypes.  A keyval with counting callbacks:
 * Type_set_attr/get_attr/delete_attr on a derived and on a builtin type,
 * replacing a value runs the delete callback, Type_dup runs the copy
 * callback (kept or not as it says), Type_free runs the delete
 * callbacks of what is left, MPI_TYPE_DUP_FN / NULL_COPY_FN /
 * NULL_DELETE_FN behave as named, a freed keyval lives while a type uses
 * it, and a communicator keyval is refused on a type (and the reverse);
 * a copy callback that fails fails Type_dup, which leaves
 * MPI_DATATYPE_NULL (MPICH's attr/attrerrtype; Open MPI 4.1 leaves the
 * handle as it was, so that check is ours only).
 */
#include "mpitest.h"

static int copies, deletes, last_deleted;

static int
copy_cb(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)key;
    copies++;
    /* Even values are copied (plus the extra state), odd ones not. */
    *flag = ((long)(size_t)in % 2) == 0;
    if (*flag)
        *(void **)out = (void *)((size_t)in + (size_t)extra);
    return MPI_SUCCESS;
}

static int
copy_fails(MPI_Datatype t, int key, void *extra, void *in, void *out,
           int *flag)
{
    (void)t, (void)key, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int
delete_cb(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)extra;
    deletes++;
    last_deleted = (int)(size_t)val;
    return MPI_SUCCESS;
}

static void
get(MPI_Datatype t, int key, int want_flag, size_t want)
{
    void *v = NULL;
    int flag = -1;

    MPI_OK(MPI_Type_get_attr(t, key, &v, &flag));
    CHECK(flag == want_flag, "flag %d, want %d", flag, want_flag);
    if (want_flag && flag)
        CHECK((size_t)v == want, "value %zu, want %zu", (size_t)v, want);
}

int
main(int argc, char **argv)
{
    MPI_Datatype vec, dup, dup2, dup3;
    int key, key2, key3, ckey, rc;

    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Type_create_keyval(copy_cb, delete_cb, &key, (void *)100));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN,
                                  &key2, NULL));
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));

    get(vec, key, 0, 0);
    MPI_OK(MPI_Type_set_attr(vec, key, (void *)2));
    get(vec, key, 1, 2);
    MPI_OK(MPI_Type_set_attr(vec, key, (void *)4)); /* replaces: deletes 2 */
    CHECK(deletes == 1 && last_deleted == 2, "deletes %d last %d", deletes,
          last_deleted);
    get(vec, key, 1, 4);
    MPI_OK(MPI_Type_set_attr(vec, key2, (void *)77));

    /* Dup: key's callback adds 100 to even values; key2 is DUP_FN. */
    MPI_OK(MPI_Type_dup(vec, &dup));
    CHECK(copies == 1, "copies %d", copies);
    get(dup, key, 1, 104);
    get(dup, key2, 1, 77);
    get(vec, key, 1, 4); /* the original keeps its own */
    MPI_OK(MPI_Type_set_attr(dup, key, (void *)5));
    CHECK(deletes == 2 && last_deleted == 104, "deletes %d last %d", deletes,
          last_deleted);
    MPI_OK(MPI_Type_dup(dup, &dup2)); /* odd: not copied */
    get(dup2, key, 0, 0);
    get(dup2, key2, 1, 77);

    /* Delete (deleting what is not set is an error to some MPIs, fine
     * to others: not tried). */
    MPI_OK(MPI_Type_delete_attr(dup, key));
    CHECK(deletes == 3 && last_deleted == 5, "deletes %d last %d", deletes,
          last_deleted);
    get(dup, key, 0, 0);

    /* Free runs the delete callback of what is left (types built from
     * vec go first: some MPIs keep vec, attributes and all, until then). */
    MPI_OK(MPI_Type_free(&dup2));
    MPI_OK(MPI_Type_free(&dup));
    MPI_OK(MPI_Type_free(&vec));
    CHECK(deletes == 4 && last_deleted == 4, "deletes %d last %d", deletes,
          last_deleted);
    CHECK(vec == MPI_DATATYPE_NULL, "handle not reset");

    /* A builtin type holds attributes too. */
    MPI_OK(MPI_Type_set_attr(MPI_INT, key, (void *)8));
    get(MPI_INT, key, 1, 8);
    MPI_OK(MPI_Type_dup(MPI_INT, &dup3));
    get(dup3, key, 1, 108);
    MPI_OK(MPI_Type_delete_attr(MPI_INT, key));
    get(MPI_INT, key, 0, 0);

    /* A freed keyval stays usable by the types that hold it. */
    MPI_OK(MPI_Type_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "keyval not reset");
    deletes = 0;
    MPI_OK(MPI_Type_free(&dup3));
    CHECK(deletes == 1 && last_deleted == 108, "deletes %d last %d", deletes,
          last_deleted);

    /* Kinds do not mix. */
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                                  MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
    rc = MPI_Type_set_attr(MPI_DOUBLE, ckey, (void *)1);
    CHECK(rc != MPI_SUCCESS, "a communicator keyval set on a type");
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, key2, (void *)1);
    CHECK(rc != MPI_SUCCESS, "a type keyval set on a communicator");
    MPI_OK(MPI_Comm_free_keyval(&ckey));

    /* A failing copy callback fails the dup. */
    MPI_OK(MPI_Type_create_keyval(copy_fails, MPI_TYPE_NULL_DELETE_FN, &key3,
                                  NULL));
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &vec));
    MPI_OK(MPI_Type_set_attr(vec, key3, (void *)1));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    dup = MPI_INT;
    rc = MPI_Type_dup(vec, &dup);
    CHECK(rc != MPI_SUCCESS, "Type_dup with a failing copy callback");
#ifndef OPEN_MPI
    CHECK(dup == MPI_DATATYPE_NULL, "failed Type_dup left a handle");
#endif
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free_keyval(&key3));

    MPI_OK(MPI_Type_free_keyval(&key2));
    return t_finish("type_attr");
}
