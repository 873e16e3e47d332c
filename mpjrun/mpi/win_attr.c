/*
 * win_attr.c: attributes on windows (MPI 3.1 6.7.3): Win_create_keyval,
 * Win_free_keyval, Win_set_attr, Win_get_attr (the predefined
 * MPI_WIN_BASE, SIZE, DISP_UNIT, CREATE_FLAVOR, MODEL, and the program's
 * own), Win_delete_attr, and the predefined callbacks.
 *
 * A window's attributes live on its private communicator (attr.c does
 * the bookkeeping): a window keyval is a communicator keyval whose
 * delete callback finds the window again and calls the program's with
 * it.  Windows are never duplicated, so copy callbacks are kept only to
 * be given back.
 */
#include <stdlib.h>

#include "rma.h"

/* What a window keyval carries to its communicator keyval's callback. */
struct win_keyval {
    MPI_Win_delete_attr_function *del;
    void *extra;
    struct win_keyval *next;
};

static struct win_keyval *all; /* freed at MPI_Finalize */

int
p2p_win_null_copy_fn(MPI_Win win, int key, void *extra, void *in, void *out,
                     int *flag)
{
    (void)win, (void)key, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

int
p2p_win_dup_fn(MPI_Win win, int key, void *extra, void *in, void *out,
               int *flag)
{
    (void)win, (void)key, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int
p2p_win_null_delete_fn(MPI_Win win, int key, void *val, void *extra)
{
    (void)win, (void)key, (void)val, (void)extra;
    return MPI_SUCCESS;
}

/* The communicator keyval's delete callback: the program's, given the
 * window. */
static int
win_deleted(MPI_Comm comm, int key, void *val, void *extra)
{
    struct win_keyval *k = extra;
    struct mpii_win *w = rma_win_of_comm(comm);

    if (k->del == NULL || w == NULL)
        return MPI_SUCCESS;
    return k->del(w->handle, key, val, k->extra);
}

#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval
int
PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy,
                       MPI_Win_delete_attr_function *del, int *keyval,
                       void *extra)
{
    MPII_ENTER;
    struct win_keyval *k;
    int rc;

    (void)copy;
    MPII_CHECK_INIT("MPI_Win_create_keyval");
    if ((k = calloc(1, sizeof *k)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                        "MPI_Win_create_keyval");
    k->del = del;
    k->extra = extra;
    rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, win_deleted, keyval, k);
    if (rc != MPI_SUCCESS) {
        free(k);
        return rc;
    }
    k->next = all;
    all = k;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval
int
PMPI_Win_free_keyval(int *keyval)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_free_keyval";
    int rc;

    MPII_CHECK_INIT(fn);
    /* A window keyval is a communicator keyval (above); errors are
     * reported under the call the program made. */
    rc = mpii_keyval_free(MPII_ATTR_COMM, keyval);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr
int
PMPI_Win_set_attr(MPI_Win win, int keyval, void *val)
{
    MPII_ENTER;
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, "MPI_Win_set_attr")) != MPI_SUCCESS)
        return rc;
    return PMPI_Comm_set_attr(w->comm, keyval, val);
}

#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr
int
PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    MPII_ENTER;
    struct mpii_win *w;
    int rc;

    if ((rc = rma_win_check(win, &w, "MPI_Win_delete_attr")) != MPI_SUCCESS)
        return rc;
    return PMPI_Comm_delete_attr(w->comm, keyval);
}

#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr
int
PMPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Win_get_attr";
    struct mpii_win *w;
    int rc;
    static MPI_Aint size;
    static int unit, flavor, model = MPI_WIN_UNIFIED;

    if ((rc = rma_win_check(win, &w, fn)) != MPI_SUCCESS)
        return rc;
    if (attribute_val == NULL || flag == NULL)
        return rma_err(w, MPI_ERR_ARG, fn);
    *flag = 1;
    /* The values are pointers, as the standard has them; they stay valid
     * until the next call. */
    switch (keyval) {
    case MPI_WIN_BASE:
        *(void **)attribute_val = w->base;
        return MPI_SUCCESS;
    case MPI_WIN_SIZE:
        size = w->bytes;
        *(MPI_Aint **)attribute_val = &size;
        return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT:
        unit = w->disp_unit;
        *(int **)attribute_val = &unit;
        return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR:
        flavor = w->flavor;
        *(int **)attribute_val = &flavor;
        return MPI_SUCCESS;
    case MPI_WIN_MODEL:
        *(int **)attribute_val = &model;
        return MPI_SUCCESS;
    default:
        return PMPI_Comm_get_attr(w->comm, keyval, attribute_val, flag);
    }
}

void
mpii_win_attr_fini(void)
{
    struct win_keyval *k;

    while ((k = all) != NULL) {
        all = k->next;
        free(k);
    }
}
