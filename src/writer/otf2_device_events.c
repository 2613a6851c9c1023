/* otf2_device_events.c - kernels, device events and the memory metric on a
 * device's stream locations, written as the device pass (model/device_pass.h)
 * finds them.
 *
 * Every lane of every device has its writer open during the pass (the lane
 * counts come from the model's own pass, so each location's id is known
 * before its first chunk is flushed). A lane's events go out in the order
 * (time, Leave < point < Metric < Enter, index); the pass yields items and
 * metric points in time order, but a kernel's Leave only later, so each lane
 * holds back the events at or after the time of the next one: its open
 * kernel's Leave and what happened at the current instant. */
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "model/device_pass.h"
#include "writer/writer_internal.h"

enum { EV_LEAVE, EV_POINT, EV_METRIC, EV_ENTER };

typedef struct lane_event {
    uint64_t time;
    int kind;
    uint64_t index;   /* the device's item (or metric) number, in start order */
    uint32_t region;
    uint8_t incomplete;
    uint64_t value;   /* EV_METRIC */
    tr_record rec;    /* EV_ENTER, EV_POINT: the item's begin record */
} lane_event;

typedef struct lane {
    OTF2_EvtWriter *ew;
    lane_event *held; /* sorted */
    size_t nheld, capheld;
} lane;

typedef struct dev_lanes {
    lane *lanes;
    uint64_t items, metrics; /* numbered as they come */
} dev_lanes;

typedef struct device_events {
    tr_writer *w;
    OTF2_AttributeList *al;
    dev_lanes *dev;
} device_events;

static int before(const lane_event *x, const lane_event *y)
{
    if (x->time != y->time)
        return x->time < y->time;
    if (x->kind != y->kind)
        return x->kind < y->kind;
    return x->index < y->index;
}

static void attr_string(tr_writer *w, OTF2_AttributeList *al, enum tr_attr a, const char *s)
{
    OTF2_AttributeValue val;
    val.stringRef = tr_defs_string(w, s);
    OTF2_AttributeList_AddAttribute(al, (OTF2_AttributeRef)a, OTF2_TYPE_STRING, val);
}

static void item_attributes(tr_writer *w, OTF2_AttributeList *al, const tr_device *d, const tr_record *r)
{
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

static void write_event(device_events *de, size_t device, lane *l, const lane_event *e)
{
    tr_writer *w = de->w;
    const tr_device *d = &w->m.devices[device];
    OTF2_AttributeList *al = de->al;
    switch (e->kind) {
    case EV_ENTER:
        item_attributes(w, al, d, &e->rec);
        OTF2_EvtWriter_Enter(l->ew, al, e->time, e->region);
        break;
    case EV_LEAVE:
        if (e->incomplete)
            tr_defs_attr(al, TR_ATTR_INCOMPLETE, 1);
        OTF2_EvtWriter_Leave(l->ew, al, e->time, e->region);
        break;
    case EV_POINT:
        item_attributes(w, al, d, &e->rec);
        OTF2_EvtWriter_Enter(l->ew, al, e->time, e->region);
        /* A kernel that began at the very end of a killed run is zero
         * length, and still one whose end never came. */
        if (e->incomplete)
            tr_defs_attr(al, TR_ATTR_INCOMPLETE, 1);
        OTF2_EvtWriter_Leave(l->ew, al, e->time, e->region);
        break;
    case EV_METRIC: {
        OTF2_Type type = OTF2_TYPE_UINT64;
        OTF2_MetricValue v = {.unsigned_int = e->value};
        OTF2_EvtWriter_Metric(l->ew, 0, e->time, 0, 1, &type, &v);
        break;
    }
    }
}

/* Writes what the lane holds from before @t (every held event: UINT64_MAX). */
static void release(device_events *de, size_t device, lane *l, uint64_t t)
{
    size_t k = 0;
    while (k < l->nheld && l->held[k].time < t)
        write_event(de, device, l, &l->held[k++]);
    if (k && k < l->nheld)
        memmove(l->held, l->held + k, (l->nheld - k) * sizeof *l->held);
    l->nheld -= k;
}

/* @e joins its lane. An event of the pass's present (not a Leave, which is
 * held from its Enter on) first lets out what is older: nothing before it
 * will come any more. */
static int hold(device_events *de, size_t device, uint32_t lane_no, const lane_event *e)
{
    lane *l = &de->dev[device].lanes[lane_no];
    if (e->kind != EV_LEAVE)
        release(de, device, l, e->time);
    if (tr_grow((void **)&l->held, &l->capheld, l->nheld, sizeof *l->held, 4))
        return -1;
    size_t at = l->nheld;
    while (at > 0 && before(e, &l->held[at - 1]))
        at--;
    if (at < l->nheld)
        memmove(l->held + at + 1, l->held + at, (l->nheld - at) * sizeof *l->held);
    l->held[at] = *e;
    l->nheld++;
    return 0;
}

static int on_item(void *ctx, size_t device, uint32_t lane_no, const tr_record *rec, uint64_t end, uint32_t region,
                   int incomplete)
{
    device_events *de = ctx;
    dev_lanes *dl = &de->dev[device];
    uint64_t index = dl->items++;
    int point = rec->type != TR_REC_SUBMIT || rec->phase == TR_PHASE_POINT || end == rec->time;
    lane_event e = {.time = rec->time, .kind = point ? EV_POINT : EV_ENTER, .index = index, .region = region,
                    .incomplete = (uint8_t)(point && incomplete), .rec = *rec};
    if (hold(de, device, lane_no, &e))
        return -1;
    if (point)
        return 0;
    lane_event leave = {.time = end, .kind = EV_LEAVE, .index = index, .region = region,
                        .incomplete = (uint8_t)incomplete};
    return hold(de, device, lane_no, &leave);
}

static int on_metric(void *ctx, size_t device, uint64_t time, uint64_t value)
{
    device_events *de = ctx;
    lane_event e = {.time = time, .kind = EV_METRIC, .index = de->dev[device].metrics++, .value = value};
    return hold(de, device, 0, &e);
}

int tr_events_write_devices(tr_writer *w, OTF2_Archive *ar)
{
    tr_model *m = &w->m;
    if (!m->ndevices)
        return 0;
    device_events de = {.w = w, .al = OTF2_AttributeList_New(), .dev = calloc(m->ndevices, sizeof *de.dev)};
    int rc = de.al && de.dev ? 0 : -1;
    for (size_t d = 0; !rc && d < m->ndevices; d++) {
        de.dev[d].lanes = calloc(m->devices[d].nlanes, sizeof *de.dev[d].lanes);
        if (!de.dev[d].lanes) {
            rc = -1;
            break;
        }
        for (uint32_t l = 0; !rc && l < m->devices[d].nlanes; l++) {
            de.dev[d].lanes[l].ew = OTF2_Archive_GetEvtWriter(ar, w->loc_base + m->devices[d].first_location + l);
            rc = de.dev[d].lanes[l].ew ? 0 : -1;
        }
        if (!rc)
            OTF2_EvtWriter_RmaWinCreate(de.dev[d].lanes[0].ew, 0, m->t_min,
                                        (OTF2_RmaWinRef)tr_rma_window(w->win_base, d));
    }
    const tr_model_labels labels = tr_unit_labels(w);
    const tr_dev_sink sink = {.item = on_item, .metric = on_metric, .ctx = &de};
    if (!rc)
        rc = tr_device_pass(m, &labels, sink);
    for (size_t d = 0; de.dev && d < m->ndevices; d++) {
        for (uint32_t l = 0; de.dev[d].lanes && l < m->devices[d].nlanes; l++) {
            lane *ln = &de.dev[d].lanes[l];
            if (!ln->ew)
                continue;
            release(&de, d, ln, UINT64_MAX);
            if (l == 0)
                OTF2_EvtWriter_RmaWinDestroy(ln->ew, 0, m->t_max, (OTF2_RmaWinRef)tr_rma_window(w->win_base, d));
            OTF2_EvtWriter_GetNumberOfEvents(ln->ew, &w->events[m->devices[d].first_location + l]);
            if (OTF2_Archive_CloseEvtWriter(ar, ln->ew) != OTF2_SUCCESS)
                rc = -1;
            free(ln->held);
        }
        free(de.dev[d].lanes);
    }
    free(de.dev);
    if (de.al)
        OTF2_AttributeList_Delete(de.al);
    return rc;
}
