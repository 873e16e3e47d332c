/*
 * mem.c: MPI_Alloc_mem and MPI_Free_mem (MPI 3.1 8.2).  Memory for
 * windows and messages needs nothing special here (every transport reads
 * and writes ordinary memory), so it is the C heap's, aligned for any
 * type; the info hints are checked and otherwise ignored.
 */
#include <stdlib.h>

#include "mpii.h"

#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
int
PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Alloc_mem";
    void *p;

    MPII_CHECK_INIT(fn);
    if (size < 0 || baseptr == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    if (!mpii_info_arg(info))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    /* A zero size still gets a pointer of its own, for Free_mem. */
    if ((p = malloc(size > 0 ? (size_t)size : 1)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

#pragma weak MPI_Free_mem = PMPI_Free_mem
int
PMPI_Free_mem(void *base)
{
    MPII_ENTER;
    MPII_CHECK_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}
