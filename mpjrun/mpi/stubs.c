/*
 * Calls that common benchmarks link but p2pmpi does not provide: each
 * reports MPI_ERR_UNSUPPORTED_OPERATION through the error handler (so the
 * default handler ends the job with a clear line), never a silent no-op.
 * (The one-sided calls that were here are real now: win.c, rma.c.)
 */
#include "mpii.h"

#define UNSUPPORTED(fn)                                                       \
    mpii_err(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION, fn)
