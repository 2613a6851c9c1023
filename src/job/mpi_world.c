/* mpi_world.c - see mpi_world.h. */
#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#include "job/mpi_world.h"

#include <dlfcn.h>
#include <string.h>

#define FIND(field, name) (*(void **)&w->field = dlsym(RTLD_DEFAULT, name)) != 0

int tr_mpi_world_resolve(tr_mpi_world *w)
{
    memset(w, 0, sizeof *w);
    int ok = 1;
    ok &= FIND(comm_rank, "PMPI_Comm_rank");
    ok &= FIND(comm_size, "PMPI_Comm_size");
    ok &= FIND(send, "PMPI_Send");
    ok &= FIND(recv, "PMPI_Recv");
    ok &= FIND(bcast, "PMPI_Bcast");
    ok &= FIND(barrier, "PMPI_Barrier");
    ok &= FIND(allgather, "PMPI_Allgather");
    ok &= FIND(gather, "PMPI_Gather");
    ok &= FIND(gatherv, "PMPI_Gatherv");
    ok &= FIND(scatter, "PMPI_Scatter");
    ok &= FIND(scatterv, "PMPI_Scatterv");
    ok &= FIND(allreduce, "PMPI_Allreduce");
    ok &= FIND(exscan, "PMPI_Exscan");
    ok &= FIND(comm_dup, "PMPI_Comm_dup");
    ok &= FIND(comm_split, "PMPI_Comm_split");
    ok &= FIND(comm_free, "PMPI_Comm_free");
    return ok ? 0 : -1;
}
