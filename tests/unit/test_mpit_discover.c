/* test_mpit_discover.c - MPI_T discovery against the MPI in the process.
 * Run as an MPI program (it links libmpich itself; tracer never does):
 * prints the status, the library, and every source and event type found, so
 * a driver can compare them with what the MPI (or a test double) offers.
 * tracer's own MPI declarations (mpi_abi.h) stand in for mpi.h, as in
 * libtracer.so. */
#include <stdio.h>
#include <string.h>

#include "mpit/mpit_catalogue.h"

int MPI_Init(int *argc, char ***argv);
int MPI_Finalize(void);

int main(int argc, char **argv)
{
    tr_mpit_api api;
    char lib[256];
    enum tr_mpit_status st = tr_mpit_resolve(&api, lib, sizeof lib);
    static const char *const names[] = {"no-mpi", "other-mpi", "no-events", "ready"};
    printf("status %s\n", names[st]);
    if (st != TR_MPIT_READY)
        return 0;
    printf("family %s handles %d\n", tr_mpi.name, tr_mpi.handle_size);
    int provided;
    if (api.init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        printf("MPI_T_init_thread failed\n");
        return 1;
    }
    tr_mpit_catalogue cat = {0};
    int before = tr_mpit_discover(&api, &cat);
    MPI_Init(&argc, &argv);
    /* Discovery again after MPI_Init adds only what is new. */
    int after = tr_mpit_discover(&api, &cat);
    int again = tr_mpit_discover(&api, &cat);
    printf("added before-init %d after-init %d again %d\n", before, after, again);
    printf("sources %d types %d\n", cat.nsources, cat.ntypes);
    for (int i = 0; i < cat.nsources; i++)
        printf("source %s ordered=%d tps=%lld max=%lld adhoc=%d\n", cat.sources[i].name, cat.sources[i].ordered,
               cat.sources[i].ticks_per_second, cat.sources[i].max_ticks, cat.sources[i].adhoc_timestamps);
    for (int i = 0; i < cat.ntypes; i++) {
        const tr_mpit_event_type *t = &cat.types[i];
        printf("event %s verbosity=%s bind=%s elements=%d:", t->name, tr_mpit_verbosity_name(t->verbosity),
               tr_mpit_bind_name(t->bind), t->nelements);
        for (int e = 0; e < t->nelements; e++)
            printf(" %s@%lld/%d", t->elements[e].type_name, t->elements[e].displacement, t->elements[e].size);
        printf("\n");
    }
    tr_mpit_catalogue_free(&cat);
    MPI_Finalize();
    api.finalize();
    return 0;
}
