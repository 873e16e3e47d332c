/*
 * type_attr.c: attributes on datatypes (MPI 3.1 6.7.4): Type_create_keyval,
 * Type_free_keyval, Type_set_attr, Type_get_attr, Type_delete_attr and the
 * predefined callbacks.  The keyvals and lists are attr.c's (the same
 * table as communicators', of kind MPII_ATTR_TYPE); a datatype carries its
 * list (struct mpii_type, datatype.h), builtin types too.  Type_dup runs
 * the copy callbacks, Type_free and Type_delete_attr the delete
 * callbacks.  Everything here is local: replicas make the same calls and
 * get the same keyvals.
 */
#include "datatype.h"

#define FN_ERR(rc, fn) mpii_err(MPI_COMM_WORLD, rc, fn)

int
p2p_type_null_copy_fn(MPI_Datatype t, int key, void *extra, void *in, void *out,
                      int *flag)
{
    (void)t, (void)key, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

int
p2p_type_dup_fn(MPI_Datatype t, int key, void *extra, void *in, void *out,
                int *flag)
{
    (void)t, (void)key, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int
p2p_type_null_delete_fn(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)val, (void)extra;
    return MPI_SUCCESS;
}

/* Any live type, builtin or derived, committed or not. */
static struct mpii_type *
type_of(MPI_Datatype dt)
{
    return (struct mpii_type *)(uintptr_t)mpii_type_lookup(dt);
}

int
mpii_type_attr_copy(const struct mpii_type *old, struct mpii_type *new)
{
    return mpii_attrs_copy(old->handle, old->attrs, &new->attrs);
}

int
mpii_type_attr_free(struct mpii_type *t)
{
    return mpii_attrs_delete_all(t->handle, &t->attrs);
}

#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
int
PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy,
                        MPI_Type_delete_attr_function *del, int *keyval,
                        void *extra)
{
    MPII_ENTER;
    struct mpii_keyval_fns f = {
        .kind = MPII_ATTR_TYPE, .type_copy = copy, .type_del = del};
    int rc;

    MPII_CHECK_INIT("MPI_Type_create_keyval");
    rc = mpii_keyval_new(&f, extra, keyval);
    return rc == MPI_SUCCESS ? rc : FN_ERR(rc, "MPI_Type_create_keyval");
}

#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
int
PMPI_Type_free_keyval(int *keyval)
{
    MPII_ENTER;
    int rc;

    MPII_CHECK_INIT("MPI_Type_free_keyval");
    rc = mpii_keyval_free(MPII_ATTR_TYPE, keyval);
    return rc == MPI_SUCCESS ? rc : FN_ERR(rc, "MPI_Type_free_keyval");
}

#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
int
PMPI_Type_set_attr(MPI_Datatype dt, int key, void *val)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_set_attr";
    struct mpii_type *t;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((t = type_of(dt)) == NULL)
        return FN_ERR(MPI_ERR_TYPE, fn);
    rc = mpii_attrs_set(MPII_ATTR_TYPE, dt, &t->attrs, key, val);
    return rc == MPI_SUCCESS ? rc : FN_ERR(rc, fn);
}

#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
int
PMPI_Type_get_attr(MPI_Datatype dt, int key, void *val, int *flag)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_get_attr";
    struct mpii_type *t;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((t = type_of(dt)) == NULL)
        return FN_ERR(MPI_ERR_TYPE, fn);
    if (val == NULL || flag == NULL)
        return FN_ERR(MPI_ERR_ARG, fn);
    rc = mpii_attrs_get(MPII_ATTR_TYPE, t->attrs, key, val, flag);
    return rc == MPI_SUCCESS ? rc : FN_ERR(rc, fn);
}

#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr
int
PMPI_Type_delete_attr(MPI_Datatype dt, int key)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Type_delete_attr";
    struct mpii_type *t;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((t = type_of(dt)) == NULL)
        return FN_ERR(MPI_ERR_TYPE, fn);
    rc = mpii_attrs_delete(MPII_ATTR_TYPE, dt, &t->attrs, key);
    return rc == MPI_SUCCESS ? rc : FN_ERR(rc, fn);
}
