/* mpi_world.h - the few MPI calls tracer itself makes in a job (rank, size,
 * point-to-point for clock offsets and the reduction tree, the collectives
 * OTF2 asks for when every rank writes its part of the one archive, and
 * tracer's own communicator), found at run time
 * under their PMPI_ names, so they bypass every tool's wrappers (tracer's
 * own included). Only used once the process's MPI is known to be a family
 * tracer knows (mpit/mpi_abi.h), and only inside MPI_Init and MPI_Finalize, where no
 * application message can be in flight on MPI_COMM_WORLD. */
#ifndef TR_JOB_MPI_WORLD_H
#define TR_JOB_MPI_WORLD_H

#include "mpit/mpi_abi.h"

typedef struct tr_mpi_world {
    int (*comm_rank)(MPI_Comm, int *);
    int (*comm_size)(MPI_Comm, int *);
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
    int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
    int (*bcast)(void *, int, MPI_Datatype, int, MPI_Comm);
    int (*barrier)(MPI_Comm);
    int (*allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
    int (*gather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
    int (*gatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *, MPI_Datatype, int,
                   MPI_Comm);
    int (*scatter)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
    int (*scatterv)(const void *, const int *, const int *, MPI_Datatype, void *, int, MPI_Datatype, int,
                    MPI_Comm);
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*exscan)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*comm_dup)(MPI_Comm, MPI_Comm *);
    int (*comm_split)(MPI_Comm, int, int, MPI_Comm *);
    int (*comm_free)(MPI_Comm *);
} tr_mpi_world;

/* Tag of tracer's own messages on MPI_COMM_WORLD ("tr"). */
#define TR_MPI_TAG 0x7472

/* Fills @w; returns 0, or -1 when any function is missing. */
int tr_mpi_world_resolve(tr_mpi_world *w);

#endif
