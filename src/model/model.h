/* model.h - the model layer: one journal's records -> what they say, as
 * events per location (model_event.h), ready to be written in any format.
 *
 * One pass reads every host thread's records once, merged in time order
 * (ties: the lower stream first), and each record is taken by every part
 * of the model that needs it, in the same step:
 * - the host threads' regions: target constructs, data operations, user
 *   regions and marks, MPI calls, drop-mode gaps, declare-target-link
 *   mappings (host_thread.c), and the host OpenMP states with their
 *   repairs (omp_states.c: a worker's team ends when its encountering
 *   thread's implicit task does; that thread's stream says when, and in
 *   time order it has said so before the worker needs it);
 * - the devices: kernels on stream lanes (several overlapping kernels go to
 *   extra lanes), device events, the memory in use, what each delete freed
 *   (device_model.c);
 * - copies of the MPI_T events, whose sources are clock domains of their
 *   own: they are fitted and written after the pass (mpit_model.h).
 * What lies ahead is looked for where it must be: a data op's or a
 * kernel's end in its own stream's lookahead (stream_cursor.h), farther
 * with a second cursor from there when the lookahead does not reach it.
 * Declare-target-link mappings need the whole run (whether a reference
 * pointer is ever written), so a journal that names link variables has its
 * data ops read once before the pass (link_model.h); no other journal is
 * decoded twice.
 *
 * Locations, numbered in the order the pass needs them: host threads first
 * (their number is known from the journal's index), then each device's
 * stream lanes as the pass finds the device and needs a lane, then the
 * MPI_T sources with events.
 *
 * Memory: one cursor per host thread (its lookahead and one chunk), the
 * regions open on each thread, the target constructs, kernels and
 * allocations open at once; the MPI_T events, the parallel regions and the
 * explicit tasks (their models need every one). Nothing else grows with the
 * run.
 *
 * Includes no OTF2 header: the OTF2 layer (src/writer/) turns the events
 * into OTF2, and this layer never calls it. */
#ifndef TR_MODEL_MODEL_H
#define TR_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "journal/journal_load.h"
#include "model/advice_model.h"
#include "model/link_model.h"
#include "model/model_event.h"
#include "model/mpit_model.h"
#include "model/omp_model.h"

typedef struct tr_device {
    int num;                 /* OpenMP device number */
    uint32_t nlanes;         /* stream lanes its kernels needed */
    uint64_t *lanes;         /* the location of each, in the order they were needed */
    const char *type;        /* from device_initialize, or NULL */
} tr_device;

typedef struct tr_model {
    tr_journal_data *jd;     /* the run, as its journal tells it (owned) */
    size_t nstreams;         /* host threads; locations below nstreams are theirs */
    size_t nhost;            /* host locations used: 0 .. nhost - 1, a thread at a time each (host_slots.h) */
    uint64_t nlocations;     /* so far: host threads, device lanes, then MPI_T sources */
    uint64_t records;        /* read by the pass */
    uint64_t t_min, t_max;   /* ns: the first and last event */
    int host_device;         /* OpenMP number of the host, -2 when unknown */
    tr_device *devices;      /* in the order the pass found them */
    size_t ndevices, capdevices;
    int omp_mode;            /* enum tr_omp_mode */
    uint8_t *has_omp;        /* per stream: it holds host OpenMP records */
    int omp_any;             /* some stream does */

    uint64_t stray_ends;     /* ends whose begin was never seen */
    uint64_t incomplete;     /* regions that never ended (the program's) */
    uint64_t runtime_open;   /* regions of the OpenMP runtime's own team open at the end */
    uint64_t lost;           /* events dropped in drop mode */
    uint64_t target_maps;
    tr_link_model links;     /* declare-target-link mappings */
    tr_u64map hashes;        /* host_op_id of a transfer -> XXH3 of its host bytes (TRACER_HASH) */
    tr_advice_model advice;  /* data mapping advice: the category of each flagged data op */
    tr_mpit_model mpit;      /* MPI_T events, one stream per source (after the pass) */
    tr_collected mpit_kept;  /* per stream, the MPI_T records the pass copied (mpit points into them) */
} tr_model;

/* Reads @journal's metadata and index (no record). Returns 0; 1 when it
 * holds no event beyond an OpenMP program's bookkeeping (its initial
 * thread and task: alone they say nothing the program did; m->jd is then
 * loaded, nothing else); -1 with @err. */
int tr_model_open(tr_model *m, const char *journal, char *err, size_t errlen);

/* The pass: every event to @sink (model_event.h), location by location in
 * time order; then the MPI_T model (its events are the caller's to write,
 * from m->mpit, at the locations it numbers after the lanes). Afterwards
 * t_min, t_max, the devices and their lanes, the statistics and
 * jd's stream counts are final. Returns 0, or -1 (out of memory, the
 * journal unreadable, or the sink stopped it). Once per model. */
int tr_model_run(tr_model *m, tr_model_sink sink);

/* The device of OpenMP number @num, or NULL. */
tr_device *tr_model_device(const tr_model *m, int num);
/* The location of MPI_T source locations' first one (after the pass). */
uint64_t tr_model_mpit_first(const tr_model *m);
/* Frees everything, the journal's data included. */
void tr_model_free(tr_model *m);

#endif
