/* lane_events.h - a device stream lane's events, put in time order.
 *
 * The model's pass finds a lane's items (kernels, device events) and metric
 * points in the order of their start times, but an item's Leave only at
 * its end: so a lane holds back what may still have an event come before
 * it, and lets it out once nothing can. A lane's events go out in the
 * order (time, Leave < point < Metric < Enter, index): an event of the
 * pass's present (anything but a Leave, which is held from its Enter on)
 * first lets out every held event older than itself. Internal to
 * src/model/. */
#ifndef TR_MODEL_LANE_EVENTS_H
#define TR_MODEL_LANE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

enum tr_lane_kind { TR_LANE_LEAVE, TR_LANE_POINT, TR_LANE_METRIC, TR_LANE_ENTER };

typedef struct tr_lane_event {
    uint64_t time;
    uint8_t kind;       /* enum tr_lane_kind */
    uint8_t incomplete; /* LEAVE, POINT: the item never ended */
    uint64_t index;     /* the device's item (or metric) number, in start order */
    uint64_t region;    /* LEAVE, POINT, ENTER */
    uint64_t value;     /* METRIC */
    tr_record rec;      /* ENTER, POINT: the item's begin record */
} tr_lane_event;

/* Writes one event that is in order now. */
typedef void (*tr_lane_write_fn)(void *ctx, uint64_t loc, const tr_lane_event *e);

typedef struct tr_lane_events {
    uint64_t loc;       /* the lane's location */
    tr_lane_event *held; /* sorted */
    size_t n, cap;
} tr_lane_events;

/* @e joins the lane (what it makes old is written first). Returns 0, or -1
 * out of memory. */
int tr_lane_hold(tr_lane_events *l, const tr_lane_event *e, tr_lane_write_fn write, void *ctx);
/* Writes what the lane holds from before @t (everything: UINT64_MAX). */
void tr_lane_release(tr_lane_events *l, uint64_t t, tr_lane_write_fn write, void *ctx);
/* The held Enter of item @index, NULL when it is not held (any more). */
tr_lane_event *tr_lane_held_enter(tr_lane_events *l, uint64_t index);
void tr_lane_free(tr_lane_events *l);

#endif
