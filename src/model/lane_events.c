/* lane_events.c - see lane_events.h. */
#include "model/lane_events.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static int before(const tr_lane_event *x, const tr_lane_event *y)
{
    if (x->time != y->time)
        return x->time < y->time;
    if (x->kind != y->kind)
        return x->kind < y->kind;
    return x->index < y->index;
}

void tr_lane_release(tr_lane_events *l, uint64_t t, tr_lane_write_fn write, void *ctx)
{
    size_t k = 0;
    while (k < l->n && l->held[k].time < t)
        write(ctx, l->loc, &l->held[k++]);
    if (k && k < l->n)
        memmove(l->held, l->held + k, (l->n - k) * sizeof *l->held);
    l->n -= k;
}

int tr_lane_hold(tr_lane_events *l, const tr_lane_event *e, tr_lane_write_fn write, void *ctx)
{
    if (e->kind != TR_LANE_LEAVE)
        tr_lane_release(l, e->time, write, ctx);
    if (tr_grow((void **)&l->held, &l->cap, l->n, sizeof *l->held, 4))
        return -1;
    size_t at = l->n;
    while (at > 0 && before(e, &l->held[at - 1]))
        at--;
    if (at < l->n)
        memmove(l->held + at + 1, l->held + at, (l->n - at) * sizeof *l->held);
    l->held[at] = *e;
    l->n++;
    return 0;
}

tr_lane_event *tr_lane_held_enter(tr_lane_events *l, uint64_t index)
{
    for (size_t k = 0; k < l->n; k++)
        if (l->held[k].kind == TR_LANE_ENTER && l->held[k].index == index)
            return &l->held[k];
    return 0;
}

void tr_lane_free(tr_lane_events *l)
{
    free(l->held);
    l->held = 0;
    l->n = l->cap = 0;
}
