/* mpi_world.c - see mpi_world.h. */
#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#include "job/mpi_world.h"

#include <dlfcn.h>
#include <string.h>

int tr_mpi_world_resolve(tr_mpi_world *w)
{
    memset(w, 0, sizeof *w);
    *(void **)&w->comm_rank = dlsym(RTLD_DEFAULT, "PMPI_Comm_rank");
    *(void **)&w->comm_size = dlsym(RTLD_DEFAULT, "PMPI_Comm_size");
    *(void **)&w->send = dlsym(RTLD_DEFAULT, "PMPI_Send");
    *(void **)&w->recv = dlsym(RTLD_DEFAULT, "PMPI_Recv");
    *(void **)&w->bcast = dlsym(RTLD_DEFAULT, "PMPI_Bcast");
    *(void **)&w->barrier = dlsym(RTLD_DEFAULT, "PMPI_Barrier");
    *(void **)&w->allgather = dlsym(RTLD_DEFAULT, "PMPI_Allgather");
    return w->comm_rank && w->comm_size && w->send && w->recv && w->bcast && w->barrier && w->allgather ? 0 : -1;
}
