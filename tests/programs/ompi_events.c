/* ompi_events.c - ground truth for test_ompi_events.py: an MPI + OpenMP
 * offload program built against Open MPI 6 (the first Open MPI with MPI_T
 * events), run under its mpirun with tracer preloaded. Every rank r:
 *   MPI_Init (Open MPI raises ompi.mpi.initialization);
 *   MPI_Comm_dup(MPI_COMM_WORLD) -> dup       (communicator_created)
 *   MPI_Comm_set_name(dup, "tracer-dup-<r>") (communicator_name_set, bound
 *                                              to dup)
 *   MPI_Comm_split(dup, r % 2, r) -> split    (communicator_created)
 *   one target region: map(tofrom: x[0:N(r)]), N(r) = 256 (r + 1) doubles
 *   MPI_Allreduce(SUM) of the rank on split
 *   MPI_Comm_free(split), MPI_Comm_free(dup) (2 communicator_freed)
 *   MPI_Finalize                              (ompi.mpi.finalization)
 * and prints one line: its rank, the world size, split's size, the sum, and
 * the handles of dup and split as the program sees them (the driver finds
 * them in the events' payloads). Exits 0. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#define N(r) (256 * ((r) + 1))

int main(int argc, char **argv)
{
    int rank, size;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 98;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    char name[64];
    snprintf(name, sizeof name, "tracer-dup-%d", rank);
    MPI_Comm_set_name(dup, name);
    MPI_Comm_split(dup, rank % 2, rank, &split);
    static double x[256 * 64];
    int n = N(rank);
#pragma omp target map(tofrom : x[0 : n])
    for (int i = 0; i < n; i++)
        x[i] = i + 1;
    int ssize, sum = 0;
    MPI_Comm_size(split, &ssize);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, split);
    uintptr_t hdup = (uintptr_t)dup, hsplit = (uintptr_t)split;
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    printf("rank %d of %d: split %d, sum %d, x[n-1] %.0f, dup 0x%llx, split 0x%llx\n", rank, size, ssize, sum,
           x[n - 1], (unsigned long long)hdup, (unsigned long long)hsplit);
    MPI_Finalize();
    return 0;
}
