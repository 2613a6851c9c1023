/* convert_runs.c - which locations tracer convert reads together.
 *
 * OTF2's global reader merges the locations it reads by time, and each
 * open location holds a chunk of its event file (4 MiB in tracer's
 * archives, 16 MiB in OTF2's default), so reading every location at once
 * costs memory in proportion to the locations: gigabytes for a job of
 * many ranks, or a process with thousands of threads alive together.
 * The reader goes through the archive in runs of at most --locations
 * (OTR_OPEN_MAX, 64) locations instead, each run in time order:
 *   - a process stays in one run with its devices and MPI_T sources (its
 *     threads' transfers flow to its devices' tracks);
 *   - a run takes whole processes, in definition order, while they fit;
 *   - a process with more locations than a run holds is split in
 *     definition order (its transfers then never share a device's
 *     transfer track across runs: convert_events.c, tc_next_run).
 * The sink starts a new sequence for each run (tc_sink.next_run): times
 * never go back within a run. An archive of at most that many locations
 * is one run.
 *
 * Before the sink hears of anything, every location's files are opened
 * once and closed unread, so that a missing event file or lost local
 * definitions are found while nothing is written yet. */
#include <stdint.h>
#include <stdlib.h>

#include <otf2/otf2.h>

#include "convert_internal.h"

/* Locations in reading order (by process, then definition order) and the
 * runs' ends. Returns 0, or -1 when out of memory. */
static int tc_plan_runs(struct tc_state *st)
{
    size_t n = st->locs.n;
    uint32_t *first = calloc((size_t)st->nprocs + 1, sizeof *first);
    st->run_ids = malloc(n * sizeof *st->run_ids);
    st->run_pos = malloc(n * sizeof *st->run_pos);
    st->run_ends = malloc(n * sizeof *st->run_ends);
    if (!first || !st->run_ids || !st->run_pos || !st->run_ends) {
        free(first);
        return -1;
    }
    /* A counting sort by process keeps definition order within each. */
    for (size_t i = 0; i < n; i++)
        first[tc_loc_at(st, (uint32_t)i)->process + 1]++;
    for (uint32_t p = 0; p < st->nprocs; p++)
        first[p + 1] += first[p];
    for (size_t i = 0; i < n; i++) {
        const struct tc_loc *l = tc_loc_at(st, (uint32_t)i);
        uint32_t at = first[l->process]++;
        st->run_ids[at] = l->id;
        st->run_pos[at] = (uint32_t)i;
    }
    /* first[p] is now where process p ends. */
    st->nruns = 0;
    uint32_t start = 0, at = 0;
    for (uint32_t p = 0; p < st->nprocs; p++) {
        uint32_t end = first[p];
        if (end - start > st->at_once && at > start) {
            st->run_ends[st->nruns++] = at; /* the process does not fit beside the run's others */
            start = at;
        }
        while (end - start > st->at_once) {
            start += st->at_once; /* a process larger than a run, split */
            st->run_ends[st->nruns++] = start;
        }
        at = end;
    }
    if (at > start || st->nruns == 0)
        st->run_ends[st->nruns++] = at;
    free(first);
    return 0;
}

static size_t tc_run_from(const struct tc_state *st, uint32_t r)
{
    return r ? st->run_ends[r - 1] : 0;
}

OTF2_ErrorCode tc_runs_open(struct tc_state *st)
{
    if (tc_plan_runs(st) != 0) {
        st->oom = true;
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    }
    OTF2_ErrorCode rc = otr_groups_begin(&st->ar, &st->groups, st->run_ids, st->locs.n, sizeof *st->run_ids);
    st->groups_open = true;
    if (rc == OTF2_SUCCESS && st->nruns > 1)
        rc = otr_groups_check(&st->ar, &st->groups, 0, st->locs.n);
    /* The first run opens for reading. */
    if (rc == OTF2_SUCCESS)
        rc = otr_groups_open(&st->ar, &st->groups, 0, st->run_ends[0]);
    size_t missing = otr_groups_missing(&st->groups);
    st->missing_defs = missing == SIZE_MAX ? TC_NONE : st->run_pos[missing];
    if (rc == OTF2_SUCCESS && st->missing_defs != TC_NONE)
        rc = OTF2_ERROR_FILE_CAN_NOT_OPEN;
    return rc;
}

OTF2_ErrorCode tc_run_open(struct tc_state *st, uint32_t r)
{
    return otr_groups_open(&st->ar, &st->groups, tc_run_from(st, r), st->run_ends[r]);
}

void tc_runs_close(struct tc_state *st)
{
    if (st->groups_open)
        otr_groups_end(&st->ar, &st->groups);
    st->groups_open = false;
}
