/*
 * own_names: a program may use any name outside MPI_*, PMPI_* and p2p_*
 * for its own functions and variables, even the library's internal
 * ones.  Here conn_send, match_post, req_new, rep_send, dec_start,
 * sec_init, transport_progress and mpii_err are the program's, with
 * other signatures; linking must succeed and the library must keep
 * using its own.
 */
#include <stdio.h>

#include <mpi.h>

static int mine;

int
conn_send(int x)
{
    return mine += x;
}
int
match_post(int x)
{
    return mine += x;
}
int
req_new(int x)
{
    return mine += x;
}
int
rep_send(int x)
{
    return mine += x;
}
int
dec_start(int x)
{
    return mine += x;
}
int
sec_init(int x)
{
    return mine += x;
}
int
transport_progress(int x)
{
    return mine += x;
}
int
mpii_err(int x)
{
    return mine += x;
}
double req_fini = 1.5; /* a variable, where the library has a function */

int
main(int argc, char **argv)
{
    int rank, size, sum = 0, v, ok;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    v = conn_send(1) + match_post(1) + req_new(1) + rep_send(1) + dec_start(1) +
        sec_init(1) + transport_progress(1) + mpii_err(1);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok =
        sum == size * (size - 1) / 2 && mine == 8 && v == 36 && req_fini == 1.5;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (ok && rank == 0)
        printf("ok own_names\n");
    MPI_Finalize();
    return !ok;
}
