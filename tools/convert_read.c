/* convert_read.c - tracer convert: an OTF2 archive (tracer's or another
 * writer's) becomes the calls of a tc_sink (convert_sink.h), in one pass
 * over the events in time order.
 *
 * What becomes what:
 * - A PROCESS location group is a process; a group it created (a device,
 *   ACCELERATOR) belongs to it. A group created by no process is a process
 *   of its own.
 * - Every location is a track, in definition order (track id = position of
 *   its Location definition); "MPI_T source ..." locations are MPI_T tracks.
 * - Enter/Leave are slices; the Enter's attributes are the args (a Leave's,
 *   such as tracer's `incomplete`, have no place in the sink interface). An
 *   ARTIFICIAL region entered and left at one timestamp with no other
 *   converted event (Enter, Leave, RMA, Metric, MeasurementOnOff) of its
 *   location in between (tracer's MPI_T events, link maps, marks, device
 *   events) is an instant; any other region is a slice, even of no length.
 * - A transfer: an Enter directly followed on its location by an RmaPut or
 *   RmaGet whose window leads to a device (RmaWin -> Comm -> Group ->
 *   location of an ACCELERATOR group, docs/trace-model.md "RMA windows") is
 *   a flow from that slice to a slice on the device's "transfers" track,
 *   from the RMA op until its RmaOpComplete* (or the end of the host slice).
 *   Other RMA patterns give no flow.
 * - Metric events are counter values, one counter per (member, location);
 *   numeric MPI_T elements of an instant on an MPI_T track are counters too.
 * - MeasurementOnOff (tracer: events dropped) is an instant.
 *
 * Counting rule for tests: B/E slices = regions that are not instants
 * (above) + one device slice per flow; instants = zero-length ARTIFICIAL
 * regions + MeasurementOnOff events. Slices still open at the end are closed at the
 * last timestamp.
 *
 * The pass goes through the locations in runs of at most 64 (--locations),
 * a process with its devices together (convert_runs.c), each run in time
 * order, so its memory does not grow with the number of locations.
 *
 * The reader's files (convert_internal.h has what they share):
 *   convert_read.c    this: the pass, failure messages, tc_convert()
 *   convert_defs.c    definitions, processes and tracks
 *   convert_runs.c    which locations are read together, opening them
 *   convert_events.c  the event callbacks, and the ordering invariant that
 *                     lets an Enter wait for its location's next event
 *                     without a queue
 * on the OTF2 reading layer src/otf2read/ (opening the archive with OTF2's
 * errors captured, reading with these callbacks), shared with the summary. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <otf2/otf2.h>

#include "convert_internal.h"

/* Events per OTF2_Reader_ReadGlobalEvents call: how often progress is looked at. */
#define TC_BATCH 65536
#define TC_PROGRESS_NS 500000000ull

/* ---- failure messages ------------------------------------------------------------- */

/* The one-line reason in @err. Running out of memory or a failed sink is
 * the cause of whatever OTF2 then reported, so it is named first. */
static void tc_fail(const struct tc_state *st, OTF2_ErrorCode code, const char *what, char *err, size_t errlen)
{
    if (st->oom)
        snprintf(err, errlen, "out of memory");
    else if (st->sink_failed)
        snprintf(err, errlen, "cannot write the output%s%s", st->sink_errno ? ": " : "",
                 st->sink_errno ? strerror(st->sink_errno) : "");
    else
        otr_fail(&st->ar, code, what, err, errlen);
}

/* ---- the pass ---------------------------------------------------------------------------------- */

static uint64_t tc_mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void tc_progress(const struct tc_state *st, uint64_t done)
{
    uint64_t total = st->total_events;
    /* The Location definitions' event counts are the total; a writer that
     * left them 0 gets a count without a percentage. */
    if (total)
        fprintf(stderr, "\rtracer: convert: %3u%% (%llu events)",
                (unsigned)(done >= total ? 100 : done * 100 / total), (unsigned long long)done);
    else
        fprintf(stderr, "\rtracer: convert: %llu events", (unsigned long long)done);
    fflush(stderr);
}

/* After the last event: what is held or open ends at the last timestamp. */
static int tc_finish(struct tc_state *st)
{
    if (tc_release_all(st) != 0)
        return -1;
    if (st->latest > st->now)
        st->now = st->latest;
    while (st->xfers.n)
        if (tc_xfer_end(st, st->xfers.n - 1, st->now) != 0)
            return -1;
    for (size_t i = 0; i < st->locs.n; i++)
        if (tc_unwind(st, tc_loc_at(st, i), 0, st->now) != 0)
            return -1;
    return 0;
}

/* After each batch of events: the count, and progress now and then. */
static void tc_after_batch(void *user, uint64_t n)
{
    struct tc_state *st = user;
    st->stats->events += n;
    if (st->progress && tc_mono_ns() - st->progress_last >= TC_PROGRESS_NS) {
        tc_progress(st, st->stats->events);
        st->progress_last = tc_mono_ns();
    }
}

/* The runs one after the other (convert_runs.c), each in time order. */
static OTF2_ErrorCode tc_read_events(struct tc_state *st)
{
    if (st->progress) {
        st->progress_last = tc_mono_ns();
        tc_progress(st, 0);
    }
    OTF2_ErrorCode rc = OTF2_SUCCESS;
    for (uint32_t r = 0; r < st->nruns && rc == OTF2_SUCCESS; r++) {
        if (r > 0 && (rc = tc_run_open(st, r)) != OTF2_SUCCESS)
            break;
        if (r > 0 && tc_next_run(st) != 0)
            rc = OTF2_ERROR_INTERRUPTED_BY_CALLBACK;
        else
            rc = otr_read_events(&st->ar, tc_set_event_callbacks, st, &st->oom, TC_BATCH, tc_after_batch);
        if (rc == OTF2_SUCCESS && tc_release_all(st) != 0)
            rc = OTF2_ERROR_INTERRUPTED_BY_CALLBACK;
    }
    if (st->progress) {
        tc_progress(st, st->stats->events);
        fputc('\n', stderr);
    }
    return rc;
}

static int tc_read(struct tc_state *st, char *err, size_t errlen)
{
    OTF2_ErrorCode rc;
    if ((rc = otr_read_global_defs(&st->ar, tc_def_callbacks, st, &st->oom)) != OTF2_SUCCESS) {
        tc_fail(st, rc, "cannot read the definitions", err, errlen);
        return -1;
    }
    if (tc_resolve_defs(st) != 0) {
        st->oom = true;
        tc_fail(st, rc, "", err, errlen);
        return -1;
    }
    st->stats->locations = st->locs.n;
    if (st->locs.n > 0 && (rc = tc_runs_open(st)) != OTF2_SUCCESS) {
        if (st->missing_defs != TC_NONE) {
            const struct tc_loc *l = tc_loc_at(st, st->missing_defs);
            snprintf(err, errlen, "the local definitions of location %llu ('%s') are missing, those of others "
                     "are there: its id mappings and clock offsets would be lost",
                     (unsigned long long)l->id, l->name);
        } else {
            tc_fail(st, rc, "cannot open the event files", err, errlen);
        }
        tc_runs_close(st);
        return -1;
    }
    /* The sink learns the layout only once the archive has opened, so a
     * bad archive leaves nothing half-written behind. */
    if (tc_sink_begin(st) != 0) {
        tc_runs_close(st);
        tc_fail(st, rc, "", err, errlen);
        return -1;
    }
    if (st->locs.n > 0) {
        rc = tc_read_events(st);
        tc_runs_close(st);
        if (rc != OTF2_SUCCESS || st->oom || st->sink_failed) {
            tc_fail(st, rc, "cannot read the events (a damaged or cut event file?)", err, errlen);
            return -1;
        }
    }
    if (tc_finish(st) != 0 || st->sink->end(st->sink) != 0) {
        if (!st->sink_failed && !st->oom)
            tc_sink_fail(st);
        tc_fail(st, rc, "", err, errlen);
        return -1;
    }
    return 0;
}

static void tc_state_free(struct tc_state *st)
{
    for (size_t i = 0; i < st->strings.n; i++)
        free(((struct tc_string *)otr_vec_at(&st->strings, sizeof(struct tc_string), i))->s);
    for (size_t i = 0; i < st->locs.n; i++) {
        struct tc_loc *l = tc_loc_at(st, i);
        free(l->stack);
        free(l->held_args);
    }
    for (size_t i = 0; i < st->metrics.n; i++)
        free(((struct tc_metric *)otr_vec_at(&st->metrics, sizeof(struct tc_metric), i))->members);
    for (size_t i = 0; i < st->cgroups.n; i++)
        free(((struct tc_cgroup *)otr_vec_at(&st->cgroups, sizeof(struct tc_cgroup), i))->members);
    for (size_t i = 0; i < st->devices.n; i++) {
        struct tc_device *d = otr_vec_at(&st->devices, sizeof *d, i);
        free(d->label);
        free(d->tracks);
    }
    struct otr_vec *vecs[] = { &st->strings, &st->regions, &st->attrs, &st->lgroups, &st->locs, &st->members,
                              &st->metrics, &st->cgroups, &st->comms, &st->wins, &st->devices, &st->xfers };
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        free(vecs[i]->v);
    struct tc_index *ixs[] = { &st->ix_strings, &st->ix_regions, &st->ix_attrs, &st->ix_lgroups, &st->ix_locs,
                               &st->ix_members, &st->ix_metrics, &st->ix_cgroups, &st->ix_comms, &st->ix_wins };
    for (size_t i = 0; i < sizeof ixs / sizeof ixs[0]; i++)
        free(ixs[i]->e);
    free(st->counters.s);
    free(st->procs);
    free(st->held_list);
    free(st->scratch);
    free(st->run_ids);
    free(st->run_pos);
    free(st->run_ends);
}

int tc_convert(const char *path, tc_sink *sink, int progress, uint32_t at_once, tc_stats *stats, char *err,
               size_t errlen)
{
    memset(stats, 0, sizeof *stats);
    if (errlen)
        err[0] = '\0';
    char *anchor = otr_anchor(path, OTR_ANCHOR_NONEMPTY, err, errlen);
    if (!anchor)
        return -1;
    struct tc_state st = { .sink = sink, .stats = stats, .missing_defs = TC_NONE, .progress = progress != 0,
                           .at_once = at_once ? at_once : OTR_OPEN_MAX };
    int ret = -1;
    if (otr_open(&st.ar, anchor, err, errlen) == 0) {
        ret = tc_read(&st, err, errlen);
        otr_close(&st.ar);
    }
    if (ret == 0 && st.clamped)
        fprintf(stderr, "tracer: convert: %llu events were earlier than an event before them and were moved to its "
                "time (the archive's clocks disagree)\n", (unsigned long long)st.clamped);
    tc_state_free(&st);
    free(anchor);
    return ret;
}
