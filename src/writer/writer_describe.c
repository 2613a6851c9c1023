/* writer_describe.c - a journal's part of an archive, described by value
 * (rank_desc.h) once its events are written: what the global definitions
 * and the properties need of it, and nothing that points into it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "writer/writer_internal.h"

static char *dup_or_null(const char *s, int *oom)
{
    if (!s)
        return 0;
    char *d = strdup(s);
    if (!d)
        *oom = 1;
    return d;
}

static void describe_process(const tr_journal_data *jd, int32_t rank, int with_config, tr_rank_desc *d, int *oom)
{
    d->rank = rank;
    d->pid = jd->pid;
    d->hostname = dup_or_null(jd->hostname, oom);
    d->ended = (uint8_t)jd->ended;
    d->crashed = (uint8_t)jd->crashed;
    d->crash_signal = jd->crash_signal;
    d->truncated = (uint8_t)jd->stats.truncated;
    d->skipped_bytes = jd->stats.skipped_bytes;
    d->bad_frames = jd->stats.bad_frames;
    memcpy(d->small_count, jd->end.small_count, sizeof d->small_count);
    memcpy(d->small_bytes, jd->end.small_bytes, sizeof d->small_bytes);
    if (with_config && jd->nconfig) {
        d->config = calloc(jd->nconfig, sizeof *d->config);
        if (!d->config) {
            *oom = 1;
            return;
        }
        d->nconfig = jd->nconfig;
        for (uint32_t i = 0; i < jd->nconfig; i++)
            d->config[i] = dup_or_null(jd->config[i], oom);
    }
}

int tr_describe_empty(const tr_journal_data *jd, int32_t rank, int with_config, tr_rank_desc *d)
{
    int oom = 0;
    memset(d, 0, sizeof *d);
    d->empty = 1;
    describe_process(jd, rank, with_config, d, &oom);
    if (oom)
        tr_rank_desc_free(d);
    return oom ? -1 : 0;
}

/* Bound registrations name communicators by handle: WORLD is the job's,
 * SELF counts once, the others once per handle, in registration order. */
static void describe_comms(const tr_jmpit *m, tr_rank_desc *d, int *oom)
{
    d->comms = calloc(m->nregs ? m->nregs : 1, sizeof *d->comms);
    if (!d->comms) {
        *oom = 1;
        return;
    }
    int self_done = 0;
    for (uint32_t i = 0; i < m->nregs; i++) {
        const tr_jmpit_reg *r = &m->regs[i];
        if (!r->bound || !strcmp(r->object_name, "MPI_COMM_WORLD"))
            continue;
        int self = !strcmp(r->object_name, "MPI_COMM_SELF");
        if (self) {
            if (!self_done)
                d->comms[d->ncomms++] = (tr_desc_comm){r->object, 1};
            self_done = 1;
            continue;
        }
        int seen = 0;
        for (uint32_t k = 0; k < d->ncomms && !seen; k++)
            seen = !d->comms[k].self && d->comms[k].handle == r->object;
        if (!seen)
            d->comms[d->ncomms++] = (tr_desc_comm){r->object, 0};
    }
}

typedef struct prop_sink {
    tr_rank_desc *d;
    int oom;
} prop_sink;

static void put_prop(void *ctx, const char *name, const char *value)
{
    prop_sink *sink = ctx;
    tr_rank_desc *d = sink->d;
    if (sink->oom)
        return;
    tr_desc_prop *p = realloc(d->props, (d->nprops + 1) * sizeof *p);
    if (p) {
        d->props = p;
        p[d->nprops].name = strdup(name);
        p[d->nprops].value = strdup(value);
        if (p[d->nprops].name && p[d->nprops].value) {
            d->nprops++;
            return;
        }
        free(p[d->nprops].name);
        free(p[d->nprops].value);
    }
    sink->oom = 1;
}

int tr_describe(const tr_writer *w, int with_config, tr_rank_desc *d)
{
    int oom = 0;
    memset(d, 0, sizeof *d);
    describe_process(w->m.jd, w->rank, with_config, d, &oom);
    d->loc_base = w->loc_base;
    d->group_base = w->group_base;
    d->win_base = w->win_base;
    d->nlocations = w->nlocations;
    d->nhost = (uint32_t)w->m.nhost;
    d->omp_metrics = (uint8_t)(w->m.omp_any != 0);
    d->events = calloc(w->nlocations ? w->nlocations : 1, sizeof *d->events);
    d->devices = calloc(w->m.ndevices ? w->m.ndevices : 1, sizeof *d->devices);
    d->mpit = calloc(w->m.mpit.nlocs ? w->m.mpit.nlocs : 1, sizeof *d->mpit);
    if (!d->events || !d->devices || !d->mpit)
        oom = 1;
    for (uint64_t l = 0; !oom && l < w->nlocations; l++) {
        d->events[l] = w->events[l];
        d->events_total += w->events[l];
    }
    for (size_t k = 0; !oom && k < w->m.ndevices; k++) {
        const tr_device *dev = &w->m.devices[k];
        uint64_t *lanes = malloc((dev->nlanes ? dev->nlanes : 1) * sizeof *lanes);
        if (!lanes) {
            oom = 1;
            break;
        }
        memcpy(lanes, dev->lanes, dev->nlanes * sizeof *lanes);
        d->devices[d->ndevices++] = (tr_desc_device){dev->num, dev->nlanes, lanes};
    }
    char buf[300];
    for (uint32_t i = 0; !oom && i < w->m.mpit.nlocs; i++) {
        const tr_mpit_loc *l = &w->m.mpit.locs[i];
        if (!l->has_location)
            continue;
        snprintf(buf, sizeof buf, TRV_MPIT_SOURCE_PREFIX "%.200s", l->src ? l->src->name : "(unknown)");
        d->mpit[d->nmpit].location = l->location;
        d->mpit[d->nmpit++].name = dup_or_null(buf, &oom);
    }
    if (!oom)
        describe_comms(&w->m.jd->mpit, d, &oom);
    d->t_min = tr_job_clock_correct(w, w->m.t_min);
    d->t_max = tr_job_clock_correct(w, w->m.t_max);
    d->realtime_shift = w->m.jd->realtime_offset - (int64_t)(d->t_min - w->m.t_min);
    prop_sink sink = {d, 0};
    if (!oom)
        tr_mpit_properties(w, TRV_PROP_MPIT_PREFIX, put_prop, &sink);
    oom |= sink.oom;
    d->records = w->m.records;
    d->lost = w->m.lost;
    if (oom)
        tr_rank_desc_free(d);
    return oom ? -1 : 0;
}
