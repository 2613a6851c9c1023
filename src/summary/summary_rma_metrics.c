/* summary_rma_metrics.c - the summary's RMA and Metric events: RmaPut and
 * RmaGet are transfers to and from a device (docs/trace-model.md), metric
 * samples give a device's peak memory, an MPI_T source's drop total and a
 * host thread's OMP work and wait. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

/* RmaPut is a transfer to the device, RmaGet one from it (trace model).
 * The open transfer region takes bytes and device from it when its own
 * attributes did not say. */
static OTF2_CallbackCode tr_count_transfer(struct tr_state *st, OTF2_LocationRef loc, OTF2_TimeStamp t,
                                           struct tr_count_bytes *cb, OTF2_RmaWinRef win, uint64_t bytes)
{
    struct tr_loc *l = tr_saw_time(st, loc, t);
    cb->count++;
    cb->bytes += bytes;
    if (!l || !l->depth || l->stack[l->depth - 1].r->xfer == TR_XFER_NONE)
        return OTF2_CALLBACK_SUCCESS;
    struct tr_frame *f = &l->stack[l->depth - 1];
    if (!f->has_bytes) {
        f->bytes = bytes;
        f->has_bytes = true;
    }
    if (!f->dev) {
        const struct tr_rma_win *w = tr_find(&st->wins, sizeof *w, win);
        int64_t d = w ? tr_device_number(tr_str(st, w->name), TRV_DEVICE_MEMORY_SUFFIX) : -1;
        if (d >= 0 && !(f->dev = tr_dev_slot(st, l->group, d))) {
            st->oom = true;
            return OTF2_CALLBACK_INTERRUPT;
        }
    }
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode tr_evt_put(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *attrs, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching)
{
    (void)attrs, (void)remote, (void)matching;
    struct tr_state *st = user;
    return tr_count_transfer(st, loc, t, &st->out->transfers_to_device, win, bytes);
}

OTF2_CallbackCode tr_evt_get(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *attrs, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching)
{
    (void)attrs, (void)remote, (void)matching;
    struct tr_state *st = user;
    return tr_count_transfer(st, loc, t, &st->out->transfers_from_device, win, bytes);
}

static bool tr_metric_u64(OTF2_Type type, OTF2_MetricValue v, uint64_t *out)
{
    switch (type) {
    case OTF2_TYPE_UINT64: *out = v.unsigned_int; return true;
    case OTF2_TYPE_INT64: *out = v.signed_int < 0 ? 0 : (uint64_t)v.signed_int; return true;
    case OTF2_TYPE_DOUBLE: *out = v.floating_point > 0 ? (uint64_t)v.floating_point : 0; return true;
    default: return false;
    }
}

/* device_memory_in_use on a device stream: its device's peak; "MPI_T
 * dropped events" on an MPI_T source: the source's running drop total. */
OTF2_CallbackCode tr_evt_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                       OTF2_AttributeList *attrs, OTF2_MetricRef metric, uint8_t n,
                                       const OTF2_Type *types, const OTF2_MetricValue *values)
{
    (void)attrs;
    struct tr_state *st = user;
    struct tr_loc *l = tr_saw_time(st, loc, t);
    const struct tr_metric *m = tr_find(&st->metrics, sizeof *m, metric);
    if (m && m->class != m->id)
        m = tr_find(&st->metrics, sizeof *m, m->class);
    if (!l || !m)
        return OTF2_CALLBACK_SUCCESS;
    uint64_t v;
    if (l->dev && m->mem_index >= 0 && m->mem_index < n && tr_metric_u64(types[m->mem_index], values[m->mem_index], &v)) {
        struct tr_device_stat *d = &((struct tr_dev *)st->devs.v)[l->dev - 1].s;
        if (!d->has_memory || v > d->peak_memory)
            d->peak_memory = v;
        d->has_memory = true;
    }
    if (l->mpit_source && m->drop_index >= 0 && m->drop_index < n &&
        tr_metric_u64(types[m->drop_index], values[m->drop_index], &v) && v > l->drop_metric)
        l->drop_metric = v;
    /* OMP work / OMP wait: running totals, the last value counts. */
    if (l->kind == TR_LOC_HOST && m->work_index >= 0 && m->work_index < n &&
        tr_metric_u64(types[m->work_index], values[m->work_index], &v)) {
        l->work_metric = v;
        l->has_work_metric = true;
        st->omp_nonzero_metric |= v > 0;
    }
    if (l->kind == TR_LOC_HOST && m->wait_index >= 0 && m->wait_index < n &&
        tr_metric_u64(types[m->wait_index], values[m->wait_index], &v)) {
        l->wait_metric = v;
        l->has_wait_metric = true;
        st->omp_nonzero_metric |= v > 0;
    }
    return OTF2_CALLBACK_SUCCESS;
}
