/* summary_finish.c - after the summary's events: what is still open
 * is closed, ticks become ns and the counts move into the report, ordered. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

static int tr_cmp_rstat(const void *a, const void *b)
{
    const struct tr_region_stat *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->exclusive_ns != y->exclusive_ns)
        return x->exclusive_ns > y->exclusive_ns ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->canonical, y->canonical);
}

static int tr_cmp_mpit_type(const void *a, const void *b)
{
    return strcmp(((const struct tr_mpit_type_stat *)a)->type, ((const struct tr_mpit_type_stat *)b)->type);
}

static int tr_cmp_mpit_source(const void *a, const void *b)
{
    return strcmp(((const struct tr_mpit_source_stat *)a)->name, ((const struct tr_mpit_source_stat *)b)->name);
}

static int tr_cmp_link_name(const void *a, const void *b)
{
    return strcmp(((const struct tr_kernel_count *)a)->name, ((const struct tr_kernel_count *)b)->name);
}

/* After the events: close what is still open, turn ticks into ns and move
 * the counts into *OUT, ordered for the report. */
int tr_finish(struct tr_state *st)
{
    struct tr_summary *out = st->out;
    uint64_t res = st->timer_resolution;
    struct tr_loc *locs = st->locations.v;
    uint64_t *drop_metric = st->mpit.n ? calloc(st->mpit.n, sizeof *drop_metric) : NULL;
    if (st->mpit.n && !drop_metric)
        return -1;
    for (size_t i = 0; i < st->locations.n; i++) {
        while (locs[i].depth)
            tr_close_top(st, &locs[i], locs[i].last_ts);
        if (locs[i].mpit_source)
            drop_metric[locs[i].mpit_source - 1] += locs[i].drop_metric;
    }
    /* A source's drops: the drop regions' counts, or the metric's running
     * totals when they say more (a region without its count). */
    struct tr_mpit_source_stat *src = st->mpit.v;
    for (size_t i = 0; i < st->mpit.n; i++)
        if (drop_metric[i] > src[i].dropped)
            src[i].dropped = drop_metric[i];
    free(drop_metric);

    const struct tr_rstat *rs = st->rstats.v;
    const struct tr_rgroup *groups = st->rgroups.v;
    if (st->rstats.n) {
        out->regions = calloc(st->rstats.n, sizeof *out->regions);
        if (!out->regions)
            return -1;
    }
    for (size_t i = 0; i < st->rstats.n; i++) {
        struct tr_region_stat *o = &out->regions[out->n_regions];
        o->name = strdup(groups[rs[i].group].name);
        o->canonical = strdup(groups[rs[i].group].canon);
        out->n_regions++;
        if (!o->name || !o->canonical)
            return -1;
        o->kind = rs[i].kind;
        o->count = rs[i].count;
        o->inclusive_ns = tr_ticks_to_ns(rs[i].incl_ticks, res);
        o->exclusive_ns = tr_ticks_to_ns(rs[i].excl_ticks, res);
    }
    if (out->n_regions > 1)
        qsort(out->regions, out->n_regions, sizeof *out->regions, tr_cmp_rstat);

    struct tr_dev *devs = st->devs.v;
    if (st->devs.n > 1)
        qsort(devs, st->devs.n, sizeof *devs, tr_cmp_id64);
    if (st->devs.n) {
        out->device_stats = calloc(st->devs.n, sizeof *out->device_stats);
        if (!out->device_stats)
            return -1;
    }
    for (size_t i = 0; i < st->devs.n; i++) {
        devs[i].s.to_device.time_ns = tr_ticks_to_ns(devs[i].s.to_device.time_ns, res);
        devs[i].s.from_device.time_ns = tr_ticks_to_ns(devs[i].s.from_device.time_ns, res);
        out->device_stats[i] = devs[i].s;
        devs[i].s.name = NULL; /* moved */
    }
    out->n_device_stats = st->devs.n;
    tr_advice_finish(out, res);
    st->devs.n = 0;

    for (size_t i = 0; i < st->mpit.n; i++) {
        if (src[i].n_types > 1)
            qsort(src[i].types, src[i].n_types, sizeof *src[i].types, tr_cmp_mpit_type);
    }
    if (st->mpit.n > 1)
        qsort(src, st->mpit.n, sizeof *src, tr_cmp_mpit_source);
    out->mpit_by_source = st->mpit.v;
    out->n_mpit_by_source = st->mpit.n;
    st->mpit = (struct otr_vec){0};

    if (out->n_link_maps > 1)
        qsort(out->link_maps, out->n_link_maps, sizeof *out->link_maps, tr_cmp_link_name);
    if (out->n_stale_by_variable > 1)
        qsort(out->stale_by_variable, out->n_stale_by_variable, sizeof *out->stale_by_variable, tr_cmp_link_name);
    return tr_finish_omp(st);
}
