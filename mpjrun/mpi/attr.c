/*
 * attr.c: attributes on communicators (the keyvals and lists are
 * keyval.c's).  Comm_dup runs the copy callbacks, Comm_free and
 * Comm_delete_attr the delete callbacks, and MPI_Finalize deletes
 * MPI_COMM_SELF's attributes first, as the standard asks.  The predefined
 * attributes (MPI_TAG_UB ...) are answered by Comm_get_attr and cannot be
 * set.  Also the MPI-1 names (Keyval_create, Attr_put ...).
 */
#include "mpii.h"

/* --- predefined callbacks ------------------------------------------- */

int
p2p_comm_null_copy_fn(MPI_Comm comm, int key, void *extra, void *in, void *out,
                      int *flag)
{
    (void)comm, (void)key, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

int
p2p_comm_dup_fn(MPI_Comm comm, int key, void *extra, void *in, void *out,
                int *flag)
{
    (void)comm, (void)key, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int
p2p_comm_null_delete_fn(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    return MPI_SUCCESS;
}

/* --- communicator keyvals and attributes ---------------------------- */

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
int
PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy,
                        MPI_Comm_delete_attr_function *del, int *keyval,
                        void *extra)
{
    MPII_ENTER;
    struct mpii_keyval_fns f = {
        .kind = MPII_ATTR_COMM, .comm_copy = copy, .comm_del = del};
    int rc = mpii_keyval_new(&f, extra, keyval);

    return rc == MPI_SUCCESS
               ? rc
               : mpii_err(MPI_COMM_WORLD, rc, "MPI_Comm_create_keyval");
}

#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
int
PMPI_Comm_free_keyval(int *keyval)
{
    MPII_ENTER;
    int rc = mpii_keyval_free(MPII_ATTR_COMM, keyval);

    return rc == MPI_SUCCESS
               ? rc
               : mpii_err(MPI_COMM_WORLD, rc, "MPI_Comm_free_keyval");
}

static int
predefined(int key)
{
    return key == MPI_TAG_UB || key == MPI_HOST || key == MPI_IO ||
           key == MPI_WTIME_IS_GLOBAL || key == MPI_UNIVERSE_SIZE ||
           key == MPI_APPNUM || key == MPI_LASTUSEDCODE;
}

#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
int
PMPI_Comm_set_attr(MPI_Comm comm, int key, void *val)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_set_attr";
    struct mpii_comm *c;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (predefined(key))
        return mpii_err(comm, MPI_ERR_ARG, fn);
    rc = mpii_attrs_set(MPII_ATTR_COMM, comm, &c->attrs, key, val);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int
PMPI_Comm_get_attr(MPI_Comm comm, int key, void *val, int *flag)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_get_attr";
    static int tag_ub = MPI_TAG_UB_VALUE, host = MPI_PROC_NULL,
               io = MPI_ANY_SOURCE, wtime_global = 0, universe, appnum = 0,
               lastcode = MPI_ERR_LASTCODE;
    struct mpii_comm *c, *w;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (val == NULL || flag == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    *flag = 1;
    switch (key) {
    case MPI_TAG_UB:
        *(int **)val = &tag_ub;
        return MPI_SUCCESS;
    case MPI_HOST:
        *(int **)val = &host;
        return MPI_SUCCESS;
    case MPI_IO:
        *(int **)val = &io;
        return MPI_SUCCESS;
    case MPI_WTIME_IS_GLOBAL:
        *(int **)val = &wtime_global;
        return MPI_SUCCESS;
    case MPI_UNIVERSE_SIZE:
        w = mpii_comm_get(MPI_COMM_WORLD);
        universe = w != NULL ? w->size : 1;
        *(int **)val = &universe;
        return MPI_SUCCESS;
    case MPI_APPNUM:
        *(int **)val = &appnum;
        return MPI_SUCCESS;
    case MPI_LASTUSEDCODE:
        lastcode = mpii_errclass_last();
        *(int **)val = &lastcode;
        return MPI_SUCCESS;
    }
    if ((rc = mpii_attrs_get(MPII_ATTR_COMM, c->attrs, key, val, flag)) !=
        MPI_SUCCESS)
        return mpii_err(comm, rc, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
int
PMPI_Comm_delete_attr(MPI_Comm comm, int key)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_delete_attr";
    struct mpii_comm *c;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    rc = mpii_attrs_delete(MPII_ATTR_COMM, comm, &c->attrs, key);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}

int
mpii_attr_copy(struct mpii_comm *from, struct mpii_comm *to)
{
    return mpii_attrs_copy(from->handle, from->attrs, &to->attrs);
}

int
mpii_attr_delete_all(struct mpii_comm *c)
{
    return mpii_attrs_delete_all(c->handle, &c->attrs);
}

void
mpii_attr_drop(struct mpii_comm *c)
{
    mpii_attrs_drop(&c->attrs);
}

int
mpii_attr_finalize(void)
{
    struct mpii_comm *s = mpii_comm_get(MPI_COMM_SELF);

    return s != NULL ? mpii_attr_delete_all(s) : MPI_SUCCESS;
}

void
mpii_attr_fini(void)
{
    mpii_keyval_fini();
}

/* --- the MPI-1 names ------------------------------------------------ */

#pragma weak MPI_Keyval_create = PMPI_Keyval_create
int
PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del,
                   int *keyval, void *extra)
{
    MPII_ENTER;
    return PMPI_Comm_create_keyval(copy, del, keyval, extra);
}

#pragma weak MPI_Keyval_free = PMPI_Keyval_free
int
PMPI_Keyval_free(int *keyval)
{
    MPII_ENTER;
    return PMPI_Comm_free_keyval(keyval);
}

#pragma weak MPI_Attr_put = PMPI_Attr_put
int
PMPI_Attr_put(MPI_Comm comm, int key, void *val)
{
    MPII_ENTER;
    return PMPI_Comm_set_attr(comm, key, val);
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int
PMPI_Attr_get(MPI_Comm comm, int key, void *val, int *flag)
{
    MPII_ENTER;
    return PMPI_Comm_get_attr(comm, key, val, flag);
}

#pragma weak MPI_Attr_delete = PMPI_Attr_delete
int
PMPI_Attr_delete(MPI_Comm comm, int key)
{
    MPII_ENTER;
    return PMPI_Comm_delete_attr(comm, key);
}
