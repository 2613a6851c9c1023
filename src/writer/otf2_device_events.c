/* otf2_device_events.c - kernels, device events and the memory metric on a
 * device's stream locations. */
#include <stdlib.h>

#include "common/hugepage.h"
#include "common/sort.h"
#include "writer/writer_internal.h"

enum { EV_LEAVE, EV_POINT, EV_METRIC, EV_ENTER };

typedef struct lane_event {
    uint64_t time;
    int kind;
    size_t index; /* item or metric */
} lane_event;

static int by_time_kind(const void *a, const void *b)
{
    const lane_event *x = a, *y = b;
    if (x->time != y->time)
        return (x->time > y->time) - (x->time < y->time);
    if (x->kind != y->kind)
        return x->kind - y->kind;
    return (x->index > y->index) - (x->index < y->index);
}



/* Sorts @(*ev)[0, n) by_time_kind: the lane's items [0, mid) and its metrics
 * [mid, n) are each in that order already (or made so), then merged. */
static int merge_sorted(lane_event **ev, size_t mid, size_t n)
{
    lane_event *a = *ev;
    tr_sort(a, mid, sizeof *a, by_time_kind);
    tr_sort(a + mid, n - mid, sizeof *a, by_time_kind);
    if (mid == 0 || mid == n || by_time_kind(&a[mid - 1], &a[mid]) <= 0)
        return 0;
    lane_event *out = malloc(n * sizeof *out);
    if (!out)
        return -1;
    tr_hugepage_hint(out, n * sizeof *out);
    size_t i = 0, j = mid, k = 0;
    while (i < mid && j < n)
        out[k++] = by_time_kind(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
    while (i < mid)
        out[k++] = a[i++];
    while (j < n)
        out[k++] = a[j++];
    free(a);
    *ev = out;
    return 0;
}

static void attr_string(tr_writer *w, OTF2_AttributeList *al, enum tr_attr a, const char *s)
{
    OTF2_AttributeValue val;
    val.stringRef = tr_defs_string(w, s);
    OTF2_AttributeList_AddAttribute(al, (OTF2_AttributeRef)a, OTF2_TYPE_STRING, val);
}

static void item_attributes(tr_writer *w, OTF2_AttributeList *al, const tr_device *d, const tr_dev_item *it)
{
    const tr_record *r = &it->rec;
    switch (r->type) {
    case TR_REC_SUBMIT:
        tr_defs_attr(al, TR_ATTR_DEVICE, (uint64_t)(int64_t)d->num);
        tr_defs_attr(al, TR_ATTR_HOST_OP_ID, r->id);
        tr_defs_attr(al, TR_ATTR_TARGET_ID, r->u[0]);
        tr_defs_attr(al, TR_ATTR_TEAMS, r->aux);
        break;
    case TR_REC_DEVICE_INIT:
        tr_defs_attr(al, TR_ATTR_DEVICE, (uint64_t)(int64_t)r->dev);
        if (tr_journal_text(w->m.jd, r->u[0]))
            attr_string(w, al, TR_ATTR_DEVICE_TYPE, tr_journal_text(w->m.jd, r->u[0]));
        break;
    case TR_REC_DEVICE_LOAD:
        tr_defs_attr(al, TR_ATTR_MODULE_ID, r->id);
        if (tr_journal_text(w->m.jd, r->u[0]))
            attr_string(w, al, TR_ATTR_FILE, tr_journal_text(w->m.jd, r->u[0]));
        tr_defs_attr(al, TR_ATTR_HOST_ADDR, r->u[1]);
        tr_defs_attr(al, TR_ATTR_BYTES, r->u[2]);
        tr_defs_attr(al, TR_ATTR_DEVICE_ADDR, r->u[3]);
        break;
    case TR_REC_DEVICE_UNLOAD:
        tr_defs_attr(al, TR_ATTR_MODULE_ID, r->id);
        break;
    default:
        tr_defs_attr(al, TR_ATTR_DEVICE, (uint64_t)(int64_t)r->dev);
        break;
    }
}

int tr_events_write_device(tr_writer *w, OTF2_Archive *ar, size_t device, uint32_t lane, uint64_t *nevents)
{
    tr_device *d = &w->m.devices[device];
    OTF2_EvtWriter *ew = OTF2_Archive_GetEvtWriter(ar, w->loc_base + d->first_location + lane);
    OTF2_RmaWinRef win = (OTF2_RmaWinRef)tr_rma_window(w->win_base, device);
    OTF2_AttributeList *al = OTF2_AttributeList_New();
    size_t n = 0, cap = 2 * d->nitems + (lane == 0 ? d->nmetrics : 0) + 1;
    lane_event *ev = malloc(cap * sizeof *ev);
    tr_hugepage_hint(ev, cap * sizeof *ev);
    if (!ew || !al || !ev) {
        free(ev);
        if (al)
            OTF2_AttributeList_Delete(al);
        return -1;
    }
    for (size_t i = 0; i < d->nitems; i++) {
        const tr_dev_item *it = &d->items[i];
        if (it->lane != lane)
            continue;
        if (it->is_point || it->start == it->end) {
            ev[n++] = (lane_event){it->start, EV_POINT, i};
        } else {
            ev[n++] = (lane_event){it->start, EV_ENTER, i};
            ev[n++] = (lane_event){it->end, EV_LEAVE, i};
        }
    }
    size_t nitems = n;
    if (lane == 0)
        for (size_t i = 0; i < d->nmetrics; i++)
            ev[n++] = (lane_event){d->metrics[i].time, EV_METRIC, i};
    if (merge_sorted(&ev, nitems, n)) {
        free(ev);
        OTF2_AttributeList_Delete(al);
        return -1;
    }

    if (lane == 0)
        OTF2_EvtWriter_RmaWinCreate(ew, 0, w->m.t_min, win);
    for (size_t i = 0; i < n; i++) {
        const tr_dev_item *it = ev[i].kind == EV_METRIC ? 0 : &d->items[ev[i].index];
        switch (ev[i].kind) {
        case EV_ENTER:
            item_attributes(w, al, d, it);
            OTF2_EvtWriter_Enter(ew, al, ev[i].time, it->region);
            break;
        case EV_LEAVE:
            if (it->incomplete)
                tr_defs_attr(al, TR_ATTR_INCOMPLETE, 1);
            OTF2_EvtWriter_Leave(ew, al, ev[i].time, it->region);
            break;
        case EV_POINT:
            item_attributes(w, al, d, it);
            OTF2_EvtWriter_Enter(ew, al, ev[i].time, it->region);
            /* A kernel that began at the very end of a killed run is zero
             * length, and still one whose end never came. */
            if (it->incomplete)
                tr_defs_attr(al, TR_ATTR_INCOMPLETE, 1);
            OTF2_EvtWriter_Leave(ew, al, ev[i].time, it->region);
            break;
        case EV_METRIC: {
            OTF2_Type type = OTF2_TYPE_UINT64;
            OTF2_MetricValue v = {.unsigned_int = d->metrics[ev[i].index].value};
            OTF2_EvtWriter_Metric(ew, 0, ev[i].time, 0, 1, &type, &v);
            break;
        }
        }
    }
    if (lane == 0)
        OTF2_EvtWriter_RmaWinDestroy(ew, 0, w->m.t_max, win);
    free(ev);
    OTF2_EvtWriter_GetNumberOfEvents(ew, nevents);
    OTF2_AttributeList_Delete(al);
    return OTF2_Archive_CloseEvtWriter(ar, ew) == OTF2_SUCCESS ? 0 : -1;
}
