/*
 * attr.c: attributes on communicators.  A keyval is a slot of a small
 * table (handle 0x100 + slot) with its copy and delete callbacks; a
 * communicator carries a list of (keyval, value).  Comm_dup runs the copy
 * callbacks, Comm_free and Comm_delete_attr the delete callbacks, and
 * MPI_Finalize deletes MPI_COMM_SELF's attributes first, as the standard
 * asks.  A freed keyval lives on while attributes still use it.  The
 * predefined attributes (MPI_TAG_UB ...) are answered by Comm_get_attr
 * and cannot be set.  Also the MPI-1 names (Keyval_create, Attr_put ...).
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define KEYVAL_BASE 0x100
#define KEYVAL_MAX 4096

struct keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int refs;  /* the handle and every attribute using it */
    int freed; /* MPI_Comm_free_keyval called */
};

struct mpii_attr {
    int key;
    void *val;
    struct mpii_attr *next;
};

static struct keyval *keyvals[KEYVAL_MAX];

static struct keyval *
keyval_get(int key)
{
    if (key < KEYVAL_BASE || key >= KEYVAL_BASE + KEYVAL_MAX)
        return NULL;
    return keyvals[key - KEYVAL_BASE];
}

static void
keyval_unref(int key)
{
    struct keyval *k = keyval_get(key);

    if (k != NULL && --k->refs == 0) {
        keyvals[key - KEYVAL_BASE] = NULL;
        free(k);
    }
}

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

/* --- keyvals -------------------------------------------------------- */

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
int
PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy,
                        MPI_Comm_delete_attr_function *del, int *keyval,
                        void *extra)
{
    static const char fn[] = "MPI_Comm_create_keyval";
    struct keyval *k;
    int i;

    if (keyval == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    for (i = 0; i < KEYVAL_MAX && keyvals[i] != NULL; i++)
        ;
    if (i == KEYVAL_MAX || (k = calloc(1, sizeof *k)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
    k->copy = copy;
    k->del = del;
    k->extra = extra;
    k->refs = 1;
    keyvals[i] = k;
    *keyval = KEYVAL_BASE + i;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
int
PMPI_Comm_free_keyval(int *keyval)
{
    struct keyval *k;

    if (keyval == NULL || (k = keyval_get(*keyval)) == NULL || k->freed)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_KEYVAL,
                        "MPI_Comm_free_keyval");
    k->freed = 1;
    keyval_unref(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* --- attributes ----------------------------------------------------- */

static int
predefined(int key)
{
    return key == MPI_TAG_UB || key == MPI_HOST || key == MPI_IO ||
           key == MPI_WTIME_IS_GLOBAL || key == MPI_UNIVERSE_SIZE ||
           key == MPI_APPNUM || key == MPI_LASTUSEDCODE;
}

/* Run a's delete callback (on comm c). */
static int
attr_delete_cb(struct mpii_comm *c, struct mpii_attr *a)
{
    struct keyval *k = keyval_get(a->key);

    if (k == NULL || k->del == NULL)
        return MPI_SUCCESS;
    return k->del(c->handle, a->key, a->val, k->extra);
}

#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
int
PMPI_Comm_set_attr(MPI_Comm comm, int key, void *val)
{
    static const char fn[] = "MPI_Comm_set_attr";
    struct mpii_comm *c;
    struct mpii_attr *a;
    struct keyval *k;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if ((k = keyval_get(key)) == NULL || k->freed)
        return mpii_err(comm, predefined(key) ? MPI_ERR_ARG : MPI_ERR_KEYVAL,
                        fn);
    for (a = c->attrs; a != NULL; a = a->next)
        if (a->key == key) {
            if ((rc = attr_delete_cb(c, a)) != MPI_SUCCESS)
                return mpii_err(comm, rc, fn);
            a->val = val;
            return MPI_SUCCESS;
        }
    if ((a = malloc(sizeof *a)) == NULL)
        return mpii_err(comm, MPI_ERR_NO_MEM, fn);
    a->key = key;
    a->val = val;
    a->next = c->attrs;
    c->attrs = a;
    k->refs++;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int
PMPI_Comm_get_attr(MPI_Comm comm, int key, void *val, int *flag)
{
    static const char fn[] = "MPI_Comm_get_attr";
    static int tag_ub = MPI_TAG_UB_VALUE, host = MPI_PROC_NULL,
               io = MPI_ANY_SOURCE, wtime_global = 0, universe, appnum = 0,
               lastcode = MPI_ERR_LASTCODE;
    struct mpii_comm *c, *w;
    struct mpii_attr *a;

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
    *flag = 0;
    if (keyval_get(key) == NULL)
        return mpii_err(comm, MPI_ERR_KEYVAL, fn);
    for (a = c->attrs; a != NULL; a = a->next)
        if (a->key == key) {
            *(void **)val = a->val;
            *flag = 1;
            break;
        }
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
int
PMPI_Comm_delete_attr(MPI_Comm comm, int key)
{
    static const char fn[] = "MPI_Comm_delete_attr";
    struct mpii_comm *c;
    struct mpii_attr **pa, *a;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((c = mpii_comm_get(comm)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (keyval_get(key) == NULL)
        return mpii_err(comm, MPI_ERR_KEYVAL, fn);
    for (pa = &c->attrs; (a = *pa) != NULL; pa = &a->next)
        if (a->key == key) {
            if ((rc = attr_delete_cb(c, a)) != MPI_SUCCESS)
                return mpii_err(comm, rc, fn);
            *pa = a->next;
            keyval_unref(key);
            free(a);
            return MPI_SUCCESS;
        }
    return MPI_SUCCESS; /* not set: nothing to delete */
}

int
mpii_attr_copy(struct mpii_comm *from, struct mpii_comm *to)
{
    struct mpii_attr *a, *na, **tail = &to->attrs;
    struct keyval *k;
    void *out;
    int flag, rc;

    for (a = from->attrs; a != NULL; a = a->next) {
        k = keyval_get(a->key);
        if (k == NULL || k->copy == NULL)
            continue;
        flag = 0;
        out = NULL;
        rc = k->copy(from->handle, a->key, k->extra, a->val, &out, &flag);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!flag)
            continue;
        if ((na = malloc(sizeof *na)) == NULL)
            return MPI_ERR_NO_MEM;
        na->key = a->key;
        na->val = out;
        na->next = NULL;
        *tail = na;
        tail = &na->next;
        k->refs++;
    }
    return MPI_SUCCESS;
}

int
mpii_attr_delete_all(struct mpii_comm *c)
{
    struct mpii_attr *a;
    int rc;

    while ((a = c->attrs) != NULL) {
        if ((rc = attr_delete_cb(c, a)) != MPI_SUCCESS)
            return rc;
        c->attrs = a->next;
        keyval_unref(a->key);
        free(a);
    }
    return MPI_SUCCESS;
}

void
mpii_attr_drop(struct mpii_comm *c)
{
    struct mpii_attr *a;

    while ((a = c->attrs) != NULL) {
        c->attrs = a->next;
        keyval_unref(a->key);
        free(a);
    }
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
    int i;

    for (i = 0; i < KEYVAL_MAX; i++) {
        free(keyvals[i]);
        keyvals[i] = NULL;
    }
}

/* --- the MPI-1 names ------------------------------------------------ */

#pragma weak MPI_Keyval_create = PMPI_Keyval_create
int
PMPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del,
                   int *keyval, void *extra)
{
    return PMPI_Comm_create_keyval(copy, del, keyval, extra);
}

#pragma weak MPI_Keyval_free = PMPI_Keyval_free
int
PMPI_Keyval_free(int *keyval)
{
    return PMPI_Comm_free_keyval(keyval);
}

#pragma weak MPI_Attr_put = PMPI_Attr_put
int
PMPI_Attr_put(MPI_Comm comm, int key, void *val)
{
    return PMPI_Comm_set_attr(comm, key, val);
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int
PMPI_Attr_get(MPI_Comm comm, int key, void *val, int *flag)
{
    return PMPI_Comm_get_attr(comm, key, val, flag);
}

#pragma weak MPI_Attr_delete = PMPI_Attr_delete
int
PMPI_Attr_delete(MPI_Comm comm, int key)
{
    return PMPI_Comm_delete_attr(comm, key);
}
