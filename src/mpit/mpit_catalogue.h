/* mpit_catalogue.h - what the MPI library offers: its MPI_T event sources
 * (clock domains) and event types, discovered at run time (never hard-coded:
 * the catalogue of one MPI version is not that of the next, and documents
 * disagree with themselves). Discovery is repeatable: MPI_T may add sources
 * and types later (Open MPI registers some during MPI_Init), so it is run
 * again and only what is new is added. */
#ifndef TR_MPIT_CATALOGUE_H
#define TR_MPIT_CATALOGUE_H

#include <stdint.h>

#include "mpit/mpit_api.h"

#define TR_MPIT_MAX_ELEMENTS 32

typedef struct tr_mpit_source {
    char name[128], desc[256];
    int ordered;               /* MPI_T_SOURCE_ORDERED */
    long long ticks_per_second, max_ticks;
    int adhoc_timestamps;      /* MPI_T_source_get_timestamp works */
} tr_mpit_source;

/* How tracer reads an element: a known fixed-size type, or raw bytes. */
typedef struct tr_mpit_element {
    MPI_Datatype datatype;
    const char *type_name;     /* "int32_t", "MPI_COUNT", ... or "unknown" */
    int size;                  /* bytes; for unknown types, the room to the next element (<= 32) */
    int is_signed, is_float, known;
    long long displacement;
} tr_mpit_element;

typedef struct tr_mpit_event_type {
    int index;                 /* the MPI_T event index */
    char name[128], desc[256];
    int verbosity, bind, nelements;
    tr_mpit_element elements[TR_MPIT_MAX_ELEMENTS];
    int has_enum;
} tr_mpit_event_type;

typedef struct tr_mpit_catalogue {
    tr_mpit_source *sources;
    int nsources;
    tr_mpit_event_type *types;
    int ntypes;
} tr_mpit_catalogue;

/* Adds to @cat every source and event type not in it yet. Returns the number
 * added, or -1 on a failure (out of memory). Calls only MPI_T functions. */
int tr_mpit_discover(const tr_mpit_api *api, tr_mpit_catalogue *cat);
void tr_mpit_catalogue_free(tr_mpit_catalogue *cat);

/* Name, size, signedness of an MPI datatype handle; 0 when unknown. */
int tr_mpit_datatype(MPI_Datatype dt, const char **name, int *size, int *is_signed, int *is_float);

/* "user basic", "tuner detail", ... for MPI_T_VERBOSITY_*. */
const char *tr_mpit_verbosity_name(int verbosity);
/* "none", "communicator", ... for MPI_T_BIND_*. */
const char *tr_mpit_bind_name(int bind);

#endif
