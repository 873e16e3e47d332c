/*
 * errclass.c: error classes, codes and strings a program adds
 * (Add_error_class, Add_error_code, Add_error_string), calling a
 * communicator's error handler on demand (Comm_call_errhandler), and
 * the deprecated MPI-1 names of the error handler calls (Errhandler_
 * create/set/get).  errh.c asks here for the class and string of a code
 * it does not know.
 *
 * Added codes follow MPI_ERR_LASTCODE: code MPI_ERR_LASTCODE + 1 + i is
 * entry i of one table, and a class is a code that is its own class.
 * Everything is local to the process: ranks (and replicas) that add
 * the same classes in the same order get the same numbers, as the
 * standard expects of a program that wants them to agree.
 */
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define ERRCLASS_MAX 4096 /* added classes and codes, together */

struct errcode {
    int cls;
    char text[MPI_MAX_ERROR_STRING];
};

static struct errcode *codes;
static int ncodes, capcodes;

/* The entry of an added code, or NULL. */
static struct errcode *
code_get(int code)
{
    long i = (long)code - (long)MPI_ERR_LASTCODE - 1;

    return i >= 0 && i < ncodes ? &codes[i] : NULL;
}

static int
code_add(int cls, int *code)
{
    if (ncodes == ERRCLASS_MAX)
        return MPI_ERR_NO_MEM;
    if (ncodes == capcodes) {
        int ncap = capcodes ? capcodes * 2 : 16;
        struct errcode *n = realloc(codes, (size_t)ncap * sizeof *n);

        if (n == NULL)
            return MPI_ERR_NO_MEM;
        codes = n;
        capcodes = ncap;
    }
    *code = MPI_ERR_LASTCODE + 1 + ncodes;
    codes[ncodes].cls = cls < 0 ? *code : cls;
    codes[ncodes].text[0] = '\0';
    ncodes++;
    return MPI_SUCCESS;
}

int
mpii_errclass_of(int code)
{
    const struct errcode *e = code_get(code);

    return e != NULL ? e->cls : -1;
}

const char *
mpii_errclass_text(int code)
{
    const struct errcode *e = code_get(code);

    return e != NULL ? e->text : NULL;
}

int
mpii_errclass_last(void)
{
    return MPI_ERR_LASTCODE + ncodes;
}

void
mpii_errclass_fini(void)
{
    free(codes);
    codes = NULL;
    ncodes = capcodes = 0;
}

#pragma weak MPI_Add_error_class = PMPI_Add_error_class
int
PMPI_Add_error_class(int *errorclass)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Add_error_class";
    int rc;

    MPII_CHECK_INIT(fn);
    if (errorclass == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    rc = code_add(-1, errorclass);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

#pragma weak MPI_Add_error_code = PMPI_Add_error_code
int
PMPI_Add_error_code(int errorclass, int *errorcode)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Add_error_code";
    const struct errcode *e = code_get(errorclass);
    int rc;

    MPII_CHECK_INIT(fn);
    if (errorcode == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    /* A class: predefined (a code below LASTCODE with a class of its
     * own) or added as a class. */
    if (e != NULL ? e->cls != errorclass
                  : PMPI_Error_class(errorclass, &rc) != MPI_SUCCESS ||
                        rc != errorclass)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    rc = code_add(errorclass, errorcode);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

#pragma weak MPI_Add_error_string = PMPI_Add_error_string
int
PMPI_Add_error_string(int errorcode, const char *string)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Add_error_string";
    struct errcode *e = code_get(errorcode);

    MPII_CHECK_INIT(fn);
    /* Only added codes: the predefined strings stay. */
    if (e == NULL || string == NULL ||
        strnlen(string, MPI_MAX_ERROR_STRING) >= MPI_MAX_ERROR_STRING)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    memcpy(e->text, string, strlen(string) + 1);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
int
PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_call_errhandler";

    MPII_CHECK_INIT(fn);
    if (mpii_comm_get(comm) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    /* The handler runs (or the job ends); the call itself succeeded. */
    (void)mpii_err(comm, errorcode, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Errhandler_create = PMPI_Errhandler_create
int
PMPI_Errhandler_create(MPI_Handler_function *function,
                       MPI_Errhandler *errhandler)
{
    MPII_ENTER;
    return PMPI_Comm_create_errhandler(function, errhandler);
}

#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set
int
PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    MPII_ENTER;
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

#pragma weak MPI_Errhandler_get = PMPI_Errhandler_get
int
PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    MPII_ENTER;
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
