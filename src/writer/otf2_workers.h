/* otf2_workers.h - threads that write an archive's events while the
 * model's pass goes on: the pass resolves each event to OTF2 ids
 * (otf2_wire.h) and hands it to the thread that owns its location (a
 * location's events all go to one thread, in order, so every location's
 * file is the same whatever the number of threads); each thread opens,
 * fills and closes its locations' event writers. The archive must have
 * pthread locks for what it shares between them (archive.c gives every
 * archive they write; the chunk pool has its own). */
#ifndef TR_WRITER_OTF2_WORKERS_H
#define TR_WRITER_OTF2_WORKERS_H

#include <otf2/otf2.h>
#include <stddef.h>
#include <stdint.h>

#include "writer/otf2_wire.h"

typedef struct tr_workers tr_workers;

/* @n threads (1 or more) writing into @ar, whose location ids are the
 * journal's plus @loc_base. NULL when a thread cannot start or out of
 * memory (the caller then writes alone). */
tr_workers *tr_workers_start(OTF2_Archive *ar, uint64_t loc_base, unsigned n);
/* Room for an event of @bytes (tr_wire_size) for location @loc; its
 * thread writes it after the next tr_workers_publish. */
tr_wire_ev *tr_workers_reserve(tr_workers *ws, uint64_t loc, size_t bytes);
/* What was reserved goes to the threads. */
void tr_workers_publish(tr_workers *ws);
/* Waits for every thread to write what it was given and close what it
 * holds; each location's event count goes to @events[loc] (for loc <
 * @nlocs). Returns 0, or -1 when OTF2 failed to close a writer. Frees
 * @ws. */
int tr_workers_finish(tr_workers *ws, uint64_t *events, uint64_t nlocs);
/* How many writing threads the CPUs allow: those this process may run
 * on, less the model's own; 0 on one CPU. */
unsigned tr_workers_default(void);

#endif
