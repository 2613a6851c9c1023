/* summary_read.c - count what a tracer OTF2 archive holds (summary.h):
 * the pass over the archive, through the OTF2 reading layer (src/otf2read/).
 *
 * Classification uses only canonical region names, region-independent RMA
 * events and the attributes named in docs/trace-model.md, never display
 * names, so that source locations in display names cannot change counts.
 *
 * Events come through OTF2's global event reader, OTR_OPEN_MAX locations
 * at a time (each group interleaved in time): what the summary counts is
 * per location, so the order across groups does not matter, and the
 * memory does not grow with the number of locations. The jobs of the pass are split over the files that
 * summary_internal.h lists. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary/summary_internal.h"

static void tr_fail(const struct tr_state *st, OTF2_ErrorCode code, const char *what,
                    char *err, size_t errlen)
{
    if (st->oom)
        snprintf(err, errlen, "out of memory");
    else
        otr_fail(&st->ar, code, what, err, errlen);
}

static int tr_read(struct tr_state *st, char *err, size_t errlen)
{
    OTF2_ErrorCode rc;
    if ((rc = otr_read_global_defs(&st->ar, tr_def_callbacks, st, &st->oom)) != OTF2_SUCCESS) {
        tr_fail(st, rc, "cannot read definitions", err, errlen);
        return -1;
    }
    if (tr_resolve_defs(st) != 0) {
        st->oom = true;
        tr_fail(st, rc, "", err, errlen);
        return -1;
    }
    if (st->locations.n > 0) {
        /* The summary counts what is there: a location whose local
         * definitions alone are gone (`missing`) is no error here. */
        const char *stage;
        rc = otr_read_events_by_group(&st->ar, st->locations.v, st->locations.n, sizeof(struct tr_loc),
                                      tr_evt_callbacks, st, &st->oom, &stage);
        if (rc != OTF2_SUCCESS || st->oom) {
            tr_fail(st, rc, stage, err, errlen);
            return -1;
        }
    }
    tr_read_group_properties(st, st->out);
    if (tr_read_properties(st->ar.rd, st->out) != 0 || tr_finish(st) != 0) {
        st->oom = true;
        tr_fail(st, rc, "", err, errlen);
        return -1;
    }
    /* traceLength is the writer's own latest - earliest over every record;
     * fall back to the events we saw when it is missing. */
    uint64_t span = st->trace_length;
    if (span == 0 && st->any_event)
        span = st->last_ts - st->first_ts;
    st->out->duration_ns = tr_ticks_to_ns(span, st->timer_resolution);
    return 0;
}

static void tr_mpit_sources_free(struct tr_mpit_source_stat *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < s[i].n_types; k++)
            free(s[i].types[k].type);
        free(s[i].types);
        free(s[i].name);
    }
    free(s);
}

static void tr_state_free(struct tr_state *st)
{
    struct tr_string *strings = st->strings.v;
    for (size_t i = 0; i < st->strings.n; i++)
        free(strings[i].s);
    free(st->strings.v);
    free(st->regions.v);
    free(st->rgroups.v);
    free(st->rstats.v);
    free(st->attrs.v);
    free(st->advice_open.v);
    struct tr_loc *locs = st->locations.v;
    for (size_t i = 0; i < st->locations.n; i++) {
        free(locs[i].stack);
        free(locs[i].ompstats);
    }
    free(st->locations.v);
    free(st->ompstats.v);
    free(st->groups.v);
    free(st->gprops.v);
    free(st->wins.v);
    free(st->members.v);
    struct tr_metric *metrics = st->metrics.v;
    for (size_t i = 0; i < st->metrics.n; i++)
        free(metrics[i].members);
    free(st->metrics.v);
    struct tr_dev *devs = st->devs.v;
    for (size_t i = 0; i < st->devs.n; i++)
        free(devs[i].s.name);
    free(st->devs.v);
    tr_mpit_sources_free(st->mpit.v, st->mpit.n);
}

static void tr_counts_free(struct tr_kernel_count *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

void tr_summary_free(struct tr_summary *s)
{
    tr_counts_free(s->link_maps, s->n_link_maps);
    tr_advice_free(s);
    tr_counts_free(s->stale_by_variable, s->n_stale_by_variable);
    tr_counts_free(s->kernels, s->n_kernels);
    for (size_t i = 0; i < s->n_regions; i++) {
        free(s->regions[i].name);
        free(s->regions[i].canonical);
    }
    free(s->regions);
    for (size_t i = 0; i < s->n_device_stats; i++)
        free(s->device_stats[i].name);
    free(s->device_stats);
    tr_mpit_sources_free(s->mpit_by_source, s->n_mpit_by_source);
    for (size_t i = 0; i < s->n_config; i++) {
        free(s->config[i].name);
        free(s->config[i].value);
    }
    free(s->config);
    for (size_t i = 0; i < s->n_omp_threads; i++) {
        free(s->omp_threads[i].location);
        free(s->omp_threads[i].process);
    }
    free(s->omp_threads);
    for (size_t i = 0; i < s->n_omp_parallel; i++) {
        free(s->omp_parallel[i].name);
        free(s->omp_parallel[i].threads);
    }
    free(s->omp_parallel);
    free(s->trace_path);
    memset(s, 0, sizeof *s);
}

int tr_summary_collect(const char *path, struct tr_summary *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *anchor = otr_anchor(path, OTR_ANCHOR_REALPATH, err, errlen);
    if (!anchor)
        return -1;

    struct tr_state st = {
        .out = out,
        .attr_bytes = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_incomplete = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_variable = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_advice = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_src_addr = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_dst_addr = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_src_device = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_dst_device = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_mpit_dropped = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_lost = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_mpit_event_type = OTF2_UNDEFINED_ATTRIBUTE,
    };
    int ret = -1;
    if (otr_open(&st.ar, anchor, err, errlen) == 0) {
        ret = tr_read(&st, err, errlen);
        otr_close(&st.ar);
    }
    tr_state_free(&st);

    if (ret != 0) {
        free(anchor);
        tr_summary_free(out);
        return -1;
    }
    out->trace_path = anchor;
    return 0;
}
