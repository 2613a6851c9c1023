/* clock_offset.h - each rank's CLOCK_MONOTONIC against rank 0's.
 *
 * Trace timestamps are CLOCK_MONOTONIC ns of the rank's own node; nodes'
 * clocks differ. Rank 0 answers a ping of every other rank in turn with
 * its own clock; a rank keeps the exchange with the smallest round trip
 * (the least queueing), and takes rank 0's time as the midpoint of it.
 * Done at MPI_Init and at MPI_Finalize, so readers can interpolate drift. */
#ifndef TR_JOB_CLOCK_OFFSET_H
#define TR_JOB_CLOCK_OFFSET_H

#include "job/mpi_world.h"
#include "journal/journal_format.h"

/* Collective over MPI_COMM_WORLD. Fills @out (rank 0: offset 0, rtt 0).
 * Returns 0, or -1 when an MPI call failed (@out then says nothing). */
int tr_clock_offset_measure(const tr_mpi_world *w, int rank, int size, uint32_t when,
                            tr_journal_clock_offset *out);

#endif
