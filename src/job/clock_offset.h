/* clock_offset.h - each rank's CLOCK_MONOTONIC against rank 0's.
 *
 * Trace timestamps are CLOCK_MONOTONIC ns of the rank's own node; nodes'
 * clocks differ, but the ranks of one node share one (one kernel). So only
 * one rank per node, its leader (the lowest rank with that host name),
 * measures: rank 0 answers the pings of every other leader in turn with its
 * own clock; a leader keeps the exchange with the smallest round trip (the
 * least queueing) and takes rank 0's time as its midpoint. An allgather
 * gives every rank its leader's result (rank 0's node: offset 0). Rank 0
 * thus serves 10 round trips per node, not per rank. Done at MPI_Init and at
 * MPI_Finalize, so readers can interpolate drift. */
#ifndef TR_JOB_CLOCK_OFFSET_H
#define TR_JOB_CLOCK_OFFSET_H

#include "job/mpi_world.h"
#include "journal/journal_format.h"

/* Collective over MPI_COMM_WORLD. Fills @out (rank 0: offset 0, rtt 0).
 * @per_rank: every rank measures (TRACER_CLOCK_OFFSETS=rank), for nodes
 * whose ranks may not share a clock, and to check the measurement itself.
 * Returns 0, or -1 when an MPI call failed (@out then says nothing). */
int tr_clock_offset_measure(const tr_mpi_world *w, int rank, int size, uint32_t when, int per_rank,
                            tr_journal_clock_offset *out);

#endif
