// A C++ MPI program (the C interface from C++, as mpicxx builds it):
// every rank adds its rank through a std::vector, every rank prints the
// sum of the ranks.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <vector>

int
main(int argc, char **argv)
{
    int rank = 0, size = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> all(static_cast<size_t>(size));
    MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::printf("cxx sum %d\n", std::accumulate(all.begin(), all.end(), 0));
    MPI_Finalize();
    return 0;
}
