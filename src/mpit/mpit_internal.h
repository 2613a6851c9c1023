/* mpit_internal.h - what the MPI_T session (mpit_session.c) shares with the
 * callbacks it registers (mpit_callback.c). */
#ifndef TR_MPIT_INTERNAL_H
#define TR_MPIT_INTERNAL_H

#include <stdint.h>

#include "mpit/mpit_api.h"
#include "mpit/mpit_catalogue.h"

/* 32 elements of at most 32 bytes (4 slots) each. */
#define TR_MPIT_MAX_SLOTS (TR_MPIT_MAX_ELEMENTS * 4)

/* How the callback lays an event type's payload into record slots. Made once
 * per registered type and never freed nor moved: callbacks may run on any
 * thread at any time, while discovery grows the catalogue. */
typedef struct tr_mpit_layout {
    int type_index;
    int nelements, nslots;
    int copy_ok;  /* every element known and the extent small: one MPI_T_event_copy */
    int extent;   /* bytes of the payload up to its last element's end */
    struct {
        int32_t displacement, size, slot;
    } el[TR_MPIT_MAX_ELEMENTS];
} tr_mpit_layout;

/* One registration (the user_data of its callbacks); never freed. */
typedef struct tr_mpit_reg {
    uint32_t id;
    const tr_mpit_layout *layout;
    MPI_T_event_registration handle;
    uint64_t object; /* bound: the communicator */
    int bound, live;
    struct tr_mpit_reg *next;
} tr_mpit_reg;

#define TR_MPIT_COPY_MAX 1024

/* The resolved functions; written once before any registration. */
extern tr_mpit_api tr_mpit_live;

void tr_mpit_on_event(MPI_T_event_instance ev, MPI_T_event_registration handle, MPI_T_cb_safety safety,
                      void *user_data);
void tr_mpit_on_dropped(MPI_Count count, MPI_T_event_registration handle, int source_index,
                        MPI_T_cb_safety safety, void *user_data);
/* Records entry to (@end 0) or return from an interposed MPI call. */
void tr_mpit_record_call(enum tr_mpi_call call, int end, int rc);

#endif
