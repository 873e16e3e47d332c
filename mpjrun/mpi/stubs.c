/*
 * Calls that common benchmarks link but p2pmpi does not provide: each
 * reports MPI_ERR_UNSUPPORTED_OPERATION through the error handler (so the
 * default handler ends the job with a clear line), never a silent no-op.
 * Also the profiling names (PMPI_) of the calls mpi.h declares.
 */
#include "mpii.h"

#define UNSUPPORTED(fn)                                                       \
    mpii_err(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION, fn)

#pragma weak MPI_Win_create = PMPI_Win_create
int
PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                MPI_Comm comm, MPI_Win *win)
{
    (void)base, (void)size, (void)disp_unit, (void)info, (void)comm;
    if (win != NULL)
        *win = MPI_WIN_NULL;
    return UNSUPPORTED("MPI_Win_create");
}

#pragma weak MPI_Win_free = PMPI_Win_free
int
PMPI_Win_free(MPI_Win *win)
{
    (void)win;
    return UNSUPPORTED("MPI_Win_free");
}

#pragma weak MPI_Win_fence = PMPI_Win_fence
int
PMPI_Win_fence(int assert, MPI_Win win)
{
    (void)assert, (void)win;
    return UNSUPPORTED("MPI_Win_fence");
}

#pragma weak MPI_Put = PMPI_Put
int
PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_type,
         int target_rank, MPI_Aint target_disp, int target_count,
         MPI_Datatype target_type, MPI_Win win)
{
    (void)origin_addr, (void)origin_count, (void)origin_type;
    (void)target_rank, (void)target_disp, (void)target_count;
    (void)target_type, (void)win;
    return UNSUPPORTED("MPI_Put");
}

#pragma weak MPI_Get = PMPI_Get
int
PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_type,
         int target_rank, MPI_Aint target_disp, int target_count,
         MPI_Datatype target_type, MPI_Win win)
{
    (void)origin_addr, (void)origin_count, (void)origin_type;
    (void)target_rank, (void)target_disp, (void)target_count;
    (void)target_type, (void)win;
    return UNSUPPORTED("MPI_Get");
}
