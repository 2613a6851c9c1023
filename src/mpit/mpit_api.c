#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#include "mpit/mpit_api.h"

#include <dlfcn.h>
#include <string.h>

#define RESOLVE(field, name)                                                                                          \
    do {                                                                                                              \
        *(void **)&api->field = dlsym(RTLD_DEFAULT, name);                                                            \
        if (!api->field)                                                                                              \
            return TR_MPIT_NO_EVENTS;                                                                                 \
    } while (0)

enum tr_mpit_status tr_mpit_resolve(tr_mpit_api *api, char *library, int library_len)
{
    memset(api, 0, sizeof *api);
    int (*get_version)(char *, int *) = (int (*)(char *, int *))dlsym(RTLD_DEFAULT, "MPI_Get_library_version");
    if (!get_version)
        return TR_MPIT_NO_MPI;
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (get_version(text, &len) != MPI_SUCCESS)
        return TR_MPIT_NO_MPI;
    text[len < (int)sizeof text ? len : (int)sizeof text - 1] = 0;
    if (library && library_len > 0) {
        strncpy(library, text, (size_t)library_len - 1);
        library[library_len - 1] = 0;
    }
    /* Handles differ between families (MPICH: integers, Open MPI:
     * pointers): only a family tracer has the table of is safe to touch.
     * MPICH built for the MPI 5.0 standard ABI (libmpi_abi.so) names itself
     * MPICH but has that ABI's handles, which tracer has no table for. */
    Dl_info where;
    if (dladdr(*(void **)&get_version, &where) && where.dli_fname && strstr(where.dli_fname, "libmpi_abi"))
        return TR_MPIT_OTHER_MPI;
    if (tr_mpi_abi_select(text) == TR_MPI_UNKNOWN)
        return TR_MPIT_OTHER_MPI;
    RESOLVE(init_thread, "MPI_T_init_thread");
    RESOLVE(finalize, "MPI_T_finalize");
    RESOLVE(source_get_num, "MPI_T_source_get_num");
    RESOLVE(source_get_info, "MPI_T_source_get_info");
    RESOLVE(source_get_timestamp, "MPI_T_source_get_timestamp");
    RESOLVE(event_get_num, "MPI_T_event_get_num");
    RESOLVE(event_get_info, "MPI_T_event_get_info");
    RESOLVE(event_handle_alloc, "MPI_T_event_handle_alloc");
    RESOLVE(event_handle_free, "MPI_T_event_handle_free");
    RESOLVE(event_register_callback, "MPI_T_event_register_callback");
    RESOLVE(event_set_dropped_handler, "MPI_T_event_set_dropped_handler");
    RESOLVE(event_read, "MPI_T_event_read");
    RESOLVE(event_get_timestamp, "MPI_T_event_get_timestamp");
    RESOLVE(event_get_source, "MPI_T_event_get_source");
    *(void **)&api->event_copy = dlsym(RTLD_DEFAULT, "MPI_T_event_copy");
    return TR_MPIT_READY;
}
