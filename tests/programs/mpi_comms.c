/* mpi_comms.c - an MPI program that makes and frees communicators through
 * every kind of call tracer wraps, then exits with status 3. Built with
 * another MPI family than tracer's (Open MPI, whose handles are pointers) it
 * shows that tracer's wrappers forward those handles untouched. Prints one
 * line per rank that depends on every call having worked. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, split, cart, sub;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(dup, rank % 2, rank, &split);
    int dims[1] = {size}, periods[1] = {0}, remain[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, remain, &sub);
    int ssize, subsize, sum = 0;
    MPI_Comm_size(split, &ssize);
    MPI_Comm_size(sub, &subsize);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    MPI_Comm_free(&sub);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    printf("rank %d of %d: split %d, sub %d, sum %d, freed %d\n", rank, size, ssize, subsize, sum,
           dup == MPI_COMM_NULL);
    MPI_Finalize();
    return 3;
}
