/* ompi_dialect.c - ground truth for test_mpit_ompi_dialect.py: an MPI
 * program written against Open MPI's ABI, run on the MPI_T provider TEST
 * DOUBLE in its Open MPI dialect (MPIT_DOUBLE_DIALECT=ompi), which
 * translates its pointer handles to the MPICH underneath.
 *
 * It includes no mpi.h: handles are pointers to incomplete structs and the
 * predefined ones are the addresses of Open MPI's ompi_mpi_* objects, as
 * Open MPI's mpi.h declares them (the double defines those objects; the
 * program is linked with it). Every rank r:
 *   MPI_Init                                   (ompi.mpi.initialization)
 *   MPI_Comm_dup(MPI_COMM_WORLD) -> dup        (communicator_created)
 *   MPI_Comm_set_name(dup, "tracer-dup-<r>")   (communicator_name_set,
 *                                               bound to dup)
 *   MPI_Comm_split(dup, r % 2, r) -> split     (communicator_created)
 *   MPI_Allreduce(SUM) of r on split, and of r + 1 on MPI_COMM_WORLD with
 *   MPI_IN_PLACE
 *   MPI_Comm_free(split), MPI_Comm_free(dup)   (2 communicator_freed)
 *   MPI_Finalize                               (ompi.mpi.finalization)
 * and prints one line: its rank, the world size, split's size, both sums,
 * whether the frees set both handles to MPI_COMM_NULL, and the handles of
 * dup, split and MPI_COMM_WORLD as the program sees them. Exits 0, or 90 +
 * the step when an MPI call fails. */
#include <stdint.h>
#include <stdio.h>

/* Open MPI's ABI (its mpi.h, the part used here). */
typedef struct ompi_communicator_t *MPI_Comm;
typedef struct ompi_datatype_t *MPI_Datatype;
typedef struct ompi_op_t *MPI_Op;
extern struct ompi_predefined_communicator_t ompi_mpi_comm_world, ompi_mpi_comm_null;
extern struct ompi_predefined_datatype_t ompi_mpi_int;
extern struct ompi_predefined_op_t ompi_mpi_op_sum;
#define MPI_COMM_WORLD ((MPI_Comm)(void *)&ompi_mpi_comm_world)
#define MPI_COMM_NULL ((MPI_Comm)(void *)&ompi_mpi_comm_null)
#define MPI_INT ((MPI_Datatype)(void *)&ompi_mpi_int)
#define MPI_SUM ((MPI_Op)(void *)&ompi_mpi_op_sum)
#define MPI_IN_PLACE ((void *)1)
#define MPI_SUCCESS 0
int MPI_Init(int *argc, char ***argv);
int MPI_Finalize(void);
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int MPI_Comm_set_name(MPI_Comm comm, const char *name);
int MPI_Comm_free(MPI_Comm *comm);
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

#define STEP(n, call)                                                                                              \
    do {                                                                                                          \
        if ((call) != MPI_SUCCESS)                                                                                \
            return 90 + (n);                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size;
    STEP(0, MPI_Init(&argc, &argv));
    STEP(1, MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    STEP(1, MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm dup, split;
    STEP(2, MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    char name[64];
    snprintf(name, sizeof name, "tracer-dup-%d", rank);
    STEP(3, MPI_Comm_set_name(dup, name));
    STEP(4, MPI_Comm_split(dup, rank % 2, rank, &split));
    int ssize, sum = 0, world_sum = rank + 1;
    STEP(5, MPI_Comm_size(split, &ssize));
    STEP(5, MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, split));
    STEP(5, MPI_Allreduce(MPI_IN_PLACE, &world_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    uintptr_t hdup = (uintptr_t)dup, hsplit = (uintptr_t)split;
    STEP(6, MPI_Comm_free(&split));
    STEP(6, MPI_Comm_free(&dup));
    printf("rank %d of %d: split %d, sum %d, world sum %d, freed %d, dup 0x%llx, split 0x%llx, world 0x%llx\n", rank,
           size, ssize, sum, world_sum, dup == MPI_COMM_NULL && split == MPI_COMM_NULL, (unsigned long long)hdup,
           (unsigned long long)hsplit, (unsigned long long)(uintptr_t)MPI_COMM_WORLD);
    fflush(stdout);
    STEP(7, MPI_Finalize());
    return 0;
}
