/*
 * keyval.c: keyvals and attribute lists, for every kind of object that
 * carries attributes.  A keyval is a slot of a small table (handle 0x100 +
 * slot) with the kind of object it serves (communicator or datatype) and
 * its copy and delete callbacks; an object carries a list of (keyval,
 * value).  A keyval of one kind is MPI_ERR_KEYVAL on an object of
 * another; a freed keyval lives on while attributes still use it.  The
 * MPI calls are attr.c's (communicators, and windows through them) and
 * type_attr.c's (datatypes).
 */
#include <stdlib.h>

#include "mpii.h"

#define KEYVAL_BASE 0x100
#define KEYVAL_MAX 4096

struct keyval {
    struct mpii_keyval_fns fns;
    void *extra;
    int refs;  /* the handle and every attribute using it */
    int freed; /* the free_keyval call came */
};

struct mpii_attr {
    int key;
    void *val;
    struct mpii_attr *next;
};

static struct keyval *keyvals[KEYVAL_MAX];

static struct keyval *
keyval_any(int key)
{
    if (key < KEYVAL_BASE || key >= KEYVAL_BASE + KEYVAL_MAX)
        return NULL;
    return keyvals[key - KEYVAL_BASE];
}

/* The keyval key if it serves objects of this kind. */
static struct keyval *
keyval_get(enum mpii_attr_kind kind, int key)
{
    struct keyval *k = keyval_any(key);

    return k != NULL && k->fns.kind == kind ? k : NULL;
}

static void
keyval_unref(int key)
{
    struct keyval *k = keyval_any(key);

    if (k != NULL && --k->refs == 0) {
        keyvals[key - KEYVAL_BASE] = NULL;
        free(k);
    }
}

int
mpii_keyval_new(const struct mpii_keyval_fns *fns, void *extra, int *keyval)
{
    struct keyval *k;
    int i;

    if (keyval == NULL)
        return MPI_ERR_ARG;
    for (i = 0; i < KEYVAL_MAX && keyvals[i] != NULL; i++)
        ;
    if (i == KEYVAL_MAX || (k = calloc(1, sizeof *k)) == NULL)
        return MPI_ERR_NO_MEM;
    k->fns = *fns;
    k->extra = extra;
    k->refs = 1;
    keyvals[i] = k;
    *keyval = KEYVAL_BASE + i;
    return MPI_SUCCESS;
}

int
mpii_keyval_free(enum mpii_attr_kind kind, int *keyval)
{
    struct keyval *k;

    if (keyval == NULL || (k = keyval_get(kind, *keyval)) == NULL || k->freed)
        return MPI_ERR_KEYVAL;
    k->freed = 1;
    keyval_unref(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* --- attribute lists, any kind of object ------------------------------ */

/* Run a's delete callback (on object obj, a handle of the keyval's kind). */
static int
attr_delete_cb(int obj, struct mpii_attr *a)
{
    struct keyval *k = keyval_any(a->key);

    if (k == NULL)
        return MPI_SUCCESS;
    if (k->fns.kind == MPII_ATTR_TYPE)
        return k->fns.type_del != NULL
                   ? k->fns.type_del(obj, a->key, a->val, k->extra)
                   : MPI_SUCCESS;
    return k->fns.comm_del != NULL
               ? k->fns.comm_del(obj, a->key, a->val, k->extra)
               : MPI_SUCCESS;
}

int
mpii_attrs_set(enum mpii_attr_kind kind, int obj, struct mpii_attr **list,
               int key, void *val)
{
    struct keyval *k;
    struct mpii_attr *a;
    int rc;

    if ((k = keyval_get(kind, key)) == NULL || k->freed)
        return MPI_ERR_KEYVAL;
    for (a = *list; a != NULL; a = a->next)
        if (a->key == key) {
            if ((rc = attr_delete_cb(obj, a)) != MPI_SUCCESS)
                return rc;
            a->val = val;
            return MPI_SUCCESS;
        }
    if ((a = malloc(sizeof *a)) == NULL)
        return MPI_ERR_NO_MEM;
    a->key = key;
    a->val = val;
    a->next = *list;
    *list = a;
    k->refs++;
    return MPI_SUCCESS;
}

int
mpii_attrs_get(enum mpii_attr_kind kind, struct mpii_attr *list, int key,
               void *val, int *flag)
{
    *flag = 0;
    if (keyval_get(kind, key) == NULL)
        return MPI_ERR_KEYVAL;
    for (; list != NULL; list = list->next)
        if (list->key == key) {
            *(void **)val = list->val;
            *flag = 1;
            break;
        }
    return MPI_SUCCESS;
}

int
mpii_attrs_delete(enum mpii_attr_kind kind, int obj, struct mpii_attr **list,
                  int key)
{
    struct mpii_attr **pa, *a;
    int rc;

    if (keyval_get(kind, key) == NULL)
        return MPI_ERR_KEYVAL;
    for (pa = list; (a = *pa) != NULL; pa = &a->next)
        if (a->key == key) {
            if ((rc = attr_delete_cb(obj, a)) != MPI_SUCCESS)
                return rc;
            *pa = a->next;
            keyval_unref(key);
            free(a);
            return MPI_SUCCESS;
        }
    return MPI_SUCCESS; /* not set: nothing to delete */
}

int
mpii_attrs_copy(int from_obj, const struct mpii_attr *from,
                struct mpii_attr **to)
{
    const struct mpii_attr *a;
    struct mpii_attr *na, **tail = to;
    struct keyval *k;
    void *out;
    int flag, rc;

    while (*tail != NULL)
        tail = &(*tail)->next;
    for (a = from; a != NULL; a = a->next) {
        if ((k = keyval_any(a->key)) == NULL)
            continue;
        flag = 0;
        out = NULL;
        if (k->fns.kind == MPII_ATTR_TYPE)
            rc = k->fns.type_copy == NULL
                     ? MPI_SUCCESS
                     : k->fns.type_copy(from_obj, a->key, k->extra, a->val,
                                        &out, &flag);
        else
            rc = k->fns.comm_copy == NULL
                     ? MPI_SUCCESS
                     : k->fns.comm_copy(from_obj, a->key, k->extra, a->val,
                                        &out, &flag);
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
mpii_attrs_delete_all(int obj, struct mpii_attr **list)
{
    struct mpii_attr *a;
    int rc;

    while ((a = *list) != NULL) {
        if ((rc = attr_delete_cb(obj, a)) != MPI_SUCCESS)
            return rc;
        *list = a->next;
        keyval_unref(a->key);
        free(a);
    }
    return MPI_SUCCESS;
}

void
mpii_attrs_drop(struct mpii_attr **list)
{
    struct mpii_attr *a;

    while ((a = *list) != NULL) {
        *list = a->next;
        keyval_unref(a->key);
        free(a);
    }
}

void
mpii_keyval_fini(void)
{
    for (int i = 0; i < KEYVAL_MAX; i++) {
        free(keyvals[i]);
        keyvals[i] = NULL;
    }
}
