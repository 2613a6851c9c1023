/* mpit_api.h - the MPI_T event functions, resolved at run time.
 *
 * tracer never links an MPI library: in a process that has one, the
 * functions are found with dlsym; in one that has none, nothing here does
 * anything. Handles differ between MPI families (mpi_abi.h):
 * tr_mpit_resolve() asks MPI_Get_library_version first, selects the family's
 * table and refuses an MPI tracer does not know, so such an MPI is left
 * alone rather than crashed. */
#ifndef TR_MPIT_API_H
#define TR_MPIT_API_H

#include "mpit/mpi_abi.h"

typedef struct tr_mpit_api {
    int (*init_thread)(int, int *);
    int (*finalize)(void);
    int (*source_get_num)(int *);
    int (*source_get_info)(int, char *, int *, char *, int *, MPI_T_source_order *, MPI_Count *, MPI_Count *,
                           MPI_Info *);
    int (*source_get_timestamp)(int, MPI_Count *);
    int (*event_get_num)(int *);
    /* @datatypes: an array of the family's handles (tr_mpi.handle_size each) */
    int (*event_get_info)(int, char *, int *, int *, void *datatypes, MPI_Aint *, int *, MPI_T_enum *, MPI_Info *,
                          char *, int *, int *);
    int (*event_handle_alloc)(int, void *, MPI_Info, MPI_T_event_registration *);
    int (*event_handle_free)(MPI_T_event_registration, void *, MPI_T_event_free_cb_function);
    int (*event_register_callback)(MPI_T_event_registration, MPI_T_cb_safety, MPI_Info, void *,
                                   MPI_T_event_cb_function);
    int (*event_set_dropped_handler)(MPI_T_event_registration, MPI_T_event_dropped_cb_function);
    int (*event_read)(MPI_T_event_instance, int, void *);
    int (*event_copy)(MPI_T_event_instance, void *); /* optional: NULL when absent */
    int (*event_get_timestamp)(MPI_T_event_instance, MPI_Count *);
    int (*event_get_source)(MPI_T_event_instance, int *);
} tr_mpit_api;

enum tr_mpit_status {
    TR_MPIT_NO_MPI,        /* no MPI library in the process */
    TR_MPIT_OTHER_MPI,     /* an MPI whose handles tracer does not know */
    TR_MPIT_NO_EVENTS,     /* MPI without the MPI_T events interface */
    TR_MPIT_READY,
};

/* Selects the MPI family (mpi_abi.h) and resolves every function; @library
 * receives MPI_Get_library_version's text (may be NULL). Callable before
 * MPI_Init. */
enum tr_mpit_status tr_mpit_resolve(tr_mpit_api *api, char *library, int library_len);

#endif
