/*
 * An application-like benchmark: a 2-D Jacobi stencil on an N x N grid
 * split by rows, halo rows exchanged with the neighbours every step, the
 * residual summed with MPI_Allreduce every 10 steps.  Standard MPI only.
 * Prints "stencil_s <seconds>" (rank 0) and the final residual, which must
 * not depend on the number of ranks or replicas.
 *   mpi_stencil [N] [STEPS]      (default 1024 200)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    int steps = argc > 2 ? atoi(argv[2]) : 200;
    int rank, size, rows, first, i, j, s, up, down;
    double *a, *b, *t, res = 0, sum, t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rows = n / size + (rank < n % size);
    first = rank * (n / size) + (rank < n % size ? rank : n % size);
    a = calloc((size_t)(rows + 2) * n, sizeof *a);
    b = calloc((size_t)(rows + 2) * n, sizeof *b);
    if (a == NULL || b == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (i = 1; i <= rows; i++)
        for (j = 0; j < n; j++)
            a[i * n + j] = (double)((first + i - 1) * 31 + j) / n;
    up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (s = 0; s < steps; s++) {
        MPI_Sendrecv(&a[1 * n], n, MPI_DOUBLE, up, 0, &a[(rows + 1) * n], n,
                     MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&a[rows * n], n, MPI_DOUBLE, down, 1, &a[0], n,
                     MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum = 0;
        for (i = 1; i <= rows; i++)
            for (j = 1; j < n - 1; j++) {
                b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                                       a[i * n + j - 1] + a[i * n + j + 1]);
                sum += (b[i * n + j] - a[i * n + j]) *
                       (b[i * n + j] - a[i * n + j]);
            }
        t = a;
        a = b;
        b = t;
        if (s % 10 == 9)
            MPI_Allreduce(&sum, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    t0 = MPI_Wtime() - t0;
    if (rank == 0)
        printf("stencil_s %.3f residual %.6e\n", t0, res);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
