/* mpit_api.h - the MPI_T event functions, resolved at run time.
 *
 * tracer never links an MPI library: in a process that has one, the
 * functions are found with dlsym; in one that has none, nothing here does
 * anything. tracer is compiled against MPICH's mpi.h, whose handles are
 * integers; Open MPI's are pointers. tr_mpit_resolve() checks
 * MPI_Get_library_version first and refuses any other MPI, so a mismatched
 * build leaves MPI alone rather than crash it. */
#ifndef TR_MPIT_API_H
#define TR_MPIT_API_H

#include <mpi.h>

typedef struct tr_mpit_api {
    int (*init_thread)(int, int *);
    int (*finalize)(void);
    int (*source_get_num)(int *);
    int (*source_get_info)(int, char *, int *, char *, int *, MPI_T_source_order *, MPI_Count *, MPI_Count *,
                           MPI_Info *);
    int (*source_get_timestamp)(int, MPI_Count *);
    int (*event_get_num)(int *);
    int (*event_get_info)(int, char *, int *, int *, MPI_Datatype *, MPI_Aint *, int *, MPI_T_enum *, MPI_Info *,
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
    TR_MPIT_OTHER_MPI,     /* an MPI other than the one tracer was built for */
    TR_MPIT_NO_EVENTS,     /* MPI without the MPI_T events interface */
    TR_MPIT_READY,
};

/* The MPI family tracer's mpi.h belongs to, and the text its
 * MPI_Get_library_version starts with or contains. */
#if defined(OMPI_MAJOR_VERSION)
#define TR_MPI_FAMILY "Open MPI"
#else
#define TR_MPI_FAMILY "MPICH"
#endif

/* Resolves every function; @library receives MPI_Get_library_version's text
 * (may be NULL). Callable before MPI_Init. */
enum tr_mpit_status tr_mpit_resolve(tr_mpit_api *api, char *library, int library_len);

#endif
