/* convert_events.c - tracer convert's reader, the events: each OTF2 event
 * callback turns its event into sink calls (what becomes what:
 * convert_read.c), in timestamp order.
 *
 * The ordering invariant. The sink needs timestamps that never decrease
 * over all its calls; OTF2's global reader delivers events in timestamp
 * order. Deciding "instant or slice" and "flow or not" for an Enter needs
 * the next event of its location, so an Enter is held back, one per
 * location, until that event comes. A held Enter never waits longer than
 * its own timestamp: the moment an event with a later timestamp arrives
 * (from any location), no Leave at the Enter's time can follow any more,
 * and every held Enter is released as a slice *before* that event is
 * processed. Hence:
 *   every held Enter has timestamp == now (the latest timestamp seen), and
 *   everything already handed to the sink has timestamp <= now,
 * so the output is in order, and holding back costs one Enter (with its
 * attributes) per location: no queue, whatever the event count. tracer
 * writes a transfer's RmaPut/RmaGet right after its Enter, at the same
 * timestamp, so the RMA op always finds its Enter still held and the flow
 * is known before the host slice begins. (Holding a location's events
 * from a data-op Enter until its Leave would instead force every other
 * location's events meanwhile into a queue, unbounded while a long
 * transfer or an op left open lasts.) A writer whose per-location
 * times go backwards (or a clock correction that makes them) would break
 * the order, so a timestamp below now is raised to now and counted.
 *
 * Everything here works on the tables convert_defs.c filled
 * (convert_internal.h); what it adds grows with the open slices and
 * transfers, the counters and the devices, never with the events. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "convert_internal.h"
#include "convert_utf8.h"

/* Counter keys: what a counter is per. */
enum { TC_CK_METRIC = 1, TC_CK_MPIT = 2 };

/* ---- time and order ------------------------------------------------------------ */

static uint64_t tc_ns(struct tc_state *st, OTF2_TimeStamp t)
{
    if (!st->have_clock) {
        /* No ClockProperties: take ticks as ns from the first event. */
        st->offset = t;
        st->have_clock = true;
    }
    if (t < st->offset)
        return 0;
    uint64_t d = t - st->offset;
    if (st->resolution == 0 || st->resolution == 1000000000u)
        return d;
    return (uint64_t)((unsigned __int128)d * 1000000000u / st->resolution);
}

static int tc_push_slice(struct tc_state *st, struct tc_loc *l, uint32_t region)
{
    if (otr_reserve((void **)&l->stack, &l->stack_cap, l->depth + 1, sizeof *l->stack) != 0) {
        st->oom = true;
        return -1;
    }
    l->stack[l->depth++] = region;
    return 0;
}

static const char *tc_category(const struct tc_loc *l, const struct tc_region *r)
{
    return l->kind == TC_TRACK_MPIT ? "mpit" : r->category;
}

/* The held Enter of @l becomes a slice; @flow_out: a flow starts there. */
static int tc_release(struct tc_state *st, struct tc_loc *l, uint64_t flow_out)
{
    l->held = false;
    const struct tc_region *r = tc_region_at(st, l->held_region);
    uint32_t track = (uint32_t)(l - (struct tc_loc *)st->locs.v);
    if (tc_push_slice(st, l, l->held_region) != 0)
        return -1;
    if (st->sink->slice_begin(st->sink, track, l->held_ts, r->name, tc_category(l, r), l->held_args,
                              l->held_nargs, flow_out, 0) != 0)
        return tc_sink_fail(st);
    st->stats->slices++;
    return 0;
}

/* Time moved on: no held Enter can become an instant any more. */
int tc_release_all(struct tc_state *st)
{
    for (uint32_t i = 0; i < st->nheld; i++) {
        struct tc_loc *l = tc_loc_at(st, st->held_list[i]);
        l->listed = false;
        if (l->held && tc_release(st, l, 0) != 0)
            return -1;
    }
    st->nheld = 0;
    return 0;
}

/* Every event starts here: its time in ns, in order (see the invariant at
 * the top), and @l's held Enter released unless @keep_held (the caller
 * decides what it becomes). */
static int tc_event(struct tc_state *st, struct tc_loc *l, OTF2_TimeStamp t, bool keep_held, uint64_t *ts)
{
    uint64_t ns = tc_ns(st, t);
    if (ns < st->now) {
        st->clamped++;
        ns = st->now;
    } else if (ns > st->now) {
        if (tc_release_all(st) != 0)
            return -1;
        st->now = ns;
    }
    *ts = ns;
    if (l && l->held && !keep_held)
        return tc_release(st, l, 0);
    return 0;
}

int tc_next_run(struct tc_state *st)
{
    if (st->now > st->latest)
        st->latest = st->now;
    st->now = 0;
    /* Another run's threads may have had transfers open on these tracks
     * at the times this run goes through again. */
    for (size_t i = 0; i < st->devices.n; i++) {
        struct tc_device *d = otr_vec_at(&st->devices, sizeof *d, i);
        d->reuse_from = d->ntracks;
    }
    if (st->sink->next_run && st->sink->next_run(st->sink) != 0)
        return tc_sink_fail(st);
    return 0;
}

static struct tc_loc *tc_loc_of(struct tc_state *st, OTF2_LocationRef id)
{
    return TC_FIND(st, locs, tc_loc, id);
}

/* ---- attributes -> args ------------------------------------------------------------ */

static void tc_arg_value(const struct tc_state *st, tc_arg *a, OTF2_Type type, OTF2_AttributeValue v)
{
    const void *def;
    a->type = TC_ARG_UINT;
    switch (type) {
    case OTF2_TYPE_UINT8: a->v.u = v.uint8; break;
    case OTF2_TYPE_UINT16: a->v.u = v.uint16; break;
    case OTF2_TYPE_UINT32: a->v.u = v.uint32; break;
    case OTF2_TYPE_UINT64: a->v.u = v.uint64; break;
    case OTF2_TYPE_INT8: a->type = TC_ARG_INT, a->v.i = v.int8; break;
    case OTF2_TYPE_INT16: a->type = TC_ARG_INT, a->v.i = v.int16; break;
    case OTF2_TYPE_INT32: a->type = TC_ARG_INT, a->v.i = v.int32; break;
    case OTF2_TYPE_INT64: a->type = TC_ARG_INT, a->v.i = v.int64; break;
    case OTF2_TYPE_FLOAT: a->type = TC_ARG_DOUBLE, a->v.d = v.float32; break;
    case OTF2_TYPE_DOUBLE: a->type = TC_ARG_DOUBLE, a->v.d = v.float64; break;
    case OTF2_TYPE_STRING:
        a->type = TC_ARG_STRING;
        a->v.s = tc_str_or(st, v.stringRef, "?");
        break;
    /* References to things with names are shown by name. */
    case OTF2_TYPE_LOCATION:
        def = TC_FIND(st, locs, tc_loc, v.locationRef);
        if (def) {
            a->type = TC_ARG_STRING;
            a->v.s = ((const struct tc_loc *)def)->name;
        } else {
            a->v.u = v.locationRef;
        }
        break;
    case OTF2_TYPE_REGION:
        def = TC_FIND(st, regions, tc_region, v.regionRef);
        if (def) {
            a->type = TC_ARG_STRING;
            a->v.s = ((const struct tc_region *)def)->name;
        } else {
            a->v.u = v.regionRef;
        }
        break;
    case OTF2_TYPE_LOCATION_GROUP:
        def = TC_FIND(st, lgroups, tc_lgroup, v.locationGroupRef);
        if (def) {
            a->type = TC_ARG_STRING;
            a->v.s = ((const struct tc_lgroup *)def)->name;
        } else {
            a->v.u = v.locationGroupRef;
        }
        break;
    /* Other references: their id, all 32-bit in OTF2 3. */
    default: a->v.u = v.uint32; break;
    }
}

/* The attributes of an event as args, into *@buf. Returns how many, or -1
 * when out of memory. */
static int64_t tc_read_args(struct tc_state *st, OTF2_AttributeList *list, tc_arg **buf, uint32_t *cap)
{
    uint32_t n = list ? OTF2_AttributeList_GetNumberOfElements(list) : 0;
    if (otr_reserve((void **)buf, cap, n, sizeof **buf) != 0) {
        st->oom = true;
        return -1;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        OTF2_AttributeRef ref;
        OTF2_Type type;
        OTF2_AttributeValue v;
        if (OTF2_AttributeList_GetAttributeByIndex(list, i, &ref, &type, &v) != OTF2_SUCCESS)
            continue;
        const struct tc_attr *a = TC_FIND(st, attrs, tc_attr, ref);
        tc_arg *arg = &(*buf)[k++];
        arg->name = a ? a->name : "attribute";
        tc_arg_value(st, arg, type, v);
    }
    return k;
}

/* ---- counters ---------------------------------------------------------------------------- */

/* The id of the counter @k, announcing it to the sink the first time. */
static int tc_counter_id(struct tc_state *st, struct tc_key k, uint32_t process, const char *name, const char *unit,
                      uint32_t *id)
{
    const uint32_t *have = tc_map_find(&st->counters, k);
    if (have) {
        *id = *have;
        return 0;
    }
    if (tc_map_put(&st->counters, k, st->ncounters) != 0) {
        st->oom = true;
        return -1;
    }
    tc_counter c = { st->ncounters, process, name, unit };
    if (st->sink->add_counter(st->sink, &c) != 0)
        return tc_sink_fail(st);
    *id = st->ncounters++;
    return 0;
}

static int tc_counter_value(struct tc_state *st, uint32_t id, uint64_t ts, double v)
{
    if (st->sink->counter(st->sink, id, ts, v) != 0)
        return tc_sink_fail(st);
    st->stats->counters++;
    return 0;
}

/* The numeric elements of an MPI_T event: every numeric attribute but
 * tracer's own bookkeeping (mpit_source_tick, mpit_callback_time, ...,
 * docs/trace-model.md), one counter per (process, event type, element).
 * Elements are named "<type name>[i]", so that is the counter's name. */
static int tc_mpit_counters(struct tc_state *st, const struct tc_loc *l, uint32_t region, uint64_t ts,
                            const tc_arg *args, uint32_t nargs)
{
    const char *ename = tc_region_at(st, region)->name;
    size_t elen = strlen(ename);
    for (uint32_t i = 0; i < nargs; i++) {
        const tc_arg *a = &args[i];
        if (a->type == TC_ARG_STRING || strncmp(a->name, "mpit_", 5) == 0)
            continue;
        /* Attribute names are unique strings of the definitions: the
         * pointer identifies the element. */
        struct tc_key k = { (uint64_t)TC_CK_MPIT << 32 | l->process, region, (uintptr_t)a->name };
        const uint32_t *have = tc_map_find(&st->counters, k);
        uint32_t id = have ? *have : TC_NONE;
        if (!have) {
            char name[512];
            if (strncmp(a->name, ename, elen) == 0)
                snprintf(name, sizeof name, "%s", a->name);
            else
                snprintf(name, sizeof name, "%s.%s", ename, a->name);
            tc_utf8_trim(name);
            if (tc_counter_id(st, k, l->process, name, "", &id) != 0)
                return -1;
        }
        double v = a->type == TC_ARG_INT ? (double)a->v.i : a->type == TC_ARG_UINT ? (double)a->v.u : a->v.d;
        if (tc_counter_value(st, id, ts, v) != 0)
            return -1;
    }
    return 0;
}

/* "device 0" of group "rank 1 device 0" in process "rank 1": the process
 * is already the track's parent. */
static const char *tc_strip_process(const struct tc_state *st, const char *name, uint32_t process)
{
    const char *p = process < st->nprocs ? st->procs[process].name : NULL;
    size_t n = p ? strlen(p) : 0;
    if (p && n && strncmp(name, p, n) == 0 && name[n] == ' ' && name[n + 1])
        return name + n + 1;
    return name;
}

static void tc_metric_name(const struct tc_state *st, const struct tc_member *m, const struct tc_loc *l,
                           const struct tc_metric *inst, char *buf, size_t len)
{
    const struct tc_lgroup *g = l->group_pos == TC_NONE
                                    ? NULL
                                    : otr_vec_at(&st->lgroups, sizeof *g, l->group_pos);
    if (inst) {
        const char *scope = NULL;
        const void *d;
        switch (inst->scope_type) {
        case OTF2_SCOPE_LOCATION:
            d = TC_FIND(st, locs, tc_loc, inst->scope);
            scope = d ? ((const struct tc_loc *)d)->name : NULL;
            break;
        case OTF2_SCOPE_LOCATION_GROUP:
            d = TC_FIND(st, lgroups, tc_lgroup, inst->scope);
            scope = d ? ((const struct tc_lgroup *)d)->name : NULL;
            break;
        default: break;
        }
        if (scope)
            snprintf(buf, len, "%s (%s)", m->name, scope);
        else
            snprintf(buf, len, "%s (%s scope %llu)", m->name, l->name, (unsigned long long)inst->scope);
    } else if (strcmp(m->name, "device_memory_in_use") == 0 && g
               && g->type == OTF2_LOCATION_GROUP_TYPE_ACCELERATOR) {
        /* tracer's metric on a device stream (docs/trace-model.md) */
        snprintf(buf, len, "%s memory in use", tc_strip_process(st, g->name, l->process));
    } else if (strncmp(l->name, "MPI_T source ", 13) == 0) {
        snprintf(buf, len, "%s (%s)", m->name, l->name + 13);
    } else {
        snprintf(buf, len, "%s (%s)", m->name, l->name);
    }
    tc_utf8_trim(buf);
}

/* ---- transfers -------------------------------------------------------------------------- */

/* The device that @remote of window @win is, or TC_NONE: the window's
 * comm, its COMM_GROUP (member i = rank i of the comm, as an index into
 * the paradigm's COMM_LOCATIONS group), the location, its group. Only a
 * location of an ACCELERATOR group (or an ACCELERATOR_STREAM) is a device. */
static uint32_t tc_device_of(struct tc_state *st, uint64_t win, uint32_t remote)
{
    const struct tc_win *w = TC_FIND(st, wins, tc_win, win);
    const struct tc_comm *c = w ? TC_FIND(st, comms, tc_comm, w->comm) : NULL;
    const struct tc_cgroup *g = c ? TC_FIND(st, cgroups, tc_cgroup, c->group) : NULL;
    if (!g || remote >= g->n)
        return TC_NONE;
    uint64_t locid;
    if (g->type == OTF2_GROUP_TYPE_COMM_GROUP) {
        uint32_t all = (unsigned)g->paradigm < 32 ? st->comm_locations[g->paradigm] : TC_NONE;
        if (all == TC_NONE)
            return TC_NONE;
        const struct tc_cgroup *cl = otr_vec_at(&st->cgroups, sizeof *cl, all);
        if (g->members[remote] >= cl->n)
            return TC_NONE;
        locid = cl->members[g->members[remote]];
    } else if (g->type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
        locid = g->members[remote];
    } else {
        return TC_NONE;
    }
    const struct tc_loc *l = tc_loc_of(st, locid);
    if (!l)
        return TC_NONE;
    const struct tc_lgroup *lg = l->group_pos == TC_NONE
                                     ? NULL
                                     : otr_vec_at(&st->lgroups, sizeof *lg, l->group_pos);
    uint64_t key;
    const char *label;
    if (lg && lg->type == OTF2_LOCATION_GROUP_TYPE_ACCELERATOR) {
        key = l->group_pos;
        label = tc_strip_process(st, lg->name, l->process);
    } else if (l->type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM) {
        key = (uint64_t)1 << 32 | (uint32_t)(l - (struct tc_loc *)st->locs.v);
        label = l->name;
    } else {
        return TC_NONE;
    }
    for (size_t i = 0; i < st->devices.n; i++)
        if (((struct tc_device *)otr_vec_at(&st->devices, sizeof(struct tc_device), i))->key == key)
            return (uint32_t)i;
    char *copy = strdup(label);
    struct tc_device *d = copy ? otr_vec_push(&st->devices, sizeof *d) : NULL;
    if (!d) {
        free(copy);
        st->oom = true;
        return TC_NONE;
    }
    d->key = key;
    d->process = l->process;
    d->label = copy;
    return (uint32_t)(st->devices.n - 1);
}

/* A free transfer track of device @dev: the first without an open slice,
 * or a new one ("device 0 transfers 2", ...) when all are busy. */
static int tc_device_slot(struct tc_state *st, uint32_t dev, uint32_t *slot)
{
    struct tc_device *d = otr_vec_at(&st->devices, sizeof *d, dev);
    for (uint32_t i = d->reuse_from; i < d->ntracks; i++)
        if (!d->tracks[i].busy) {
            *slot = i;
            return 0;
        }
    if (otr_reserve((void **)&d->tracks, &d->cap, d->ntracks + 1, sizeof *d->tracks) != 0) {
        st->oom = true;
        return -1;
    }
    char name[300];
    if (d->ntracks == 0)
        snprintf(name, sizeof name, "%s transfers", d->label);
    else
        snprintf(name, sizeof name, "%s transfers %u", d->label, d->ntracks + 1);
    tc_utf8_trim(name);
    tc_track t = { st->ntracks, d->process, TC_TRACK_OTHER, name };
    if (st->sink->add_track(st->sink, &t) != 0)
        return tc_sink_fail(st);
    d->tracks[d->ntracks] = (struct tc_dtrack){ st->ntracks++, false };
    *slot = d->ntracks++;
    return 0;
}

/* The RMA op of @l's held data-op Enter: the Enter becomes a slice with a
 * flow out, the device a slice with the flow in, open until the op
 * completes. */
static int tc_xfer_begin(struct tc_state *st, struct tc_loc *l, uint32_t dev, uint64_t ts, uint64_t win,
                         uint64_t matching, uint64_t bytes, bool put)
{
    uint64_t flow = ++st->next_flow;
    if (tc_release(st, l, flow) != 0)
        return -1;
    st->stats->flows++;
    uint32_t slot;
    if (tc_device_slot(st, dev, &slot) != 0)
        return -1;
    struct tc_xfer *x = otr_vec_push(&st->xfers, sizeof *x);
    if (!x) {
        st->oom = true;
        return -1;
    }
    struct tc_device *d = otr_vec_at(&st->devices, sizeof *d, dev);
    d->tracks[slot].busy = true;
    *x = (struct tc_xfer){ (uint32_t)(l - (struct tc_loc *)st->locs.v), l->depth, dev, slot, win, matching };
    const struct tc_region *r = tc_region_at(st, l->stack[l->depth - 1]);
    tc_arg args[4] = {
        { .name = "bytes", .type = TC_ARG_UINT, .v.u = bytes },
        { .name = "direction", .type = TC_ARG_STRING, .v.s = put ? "to device" : "from device" },
        { .name = "host", .type = TC_ARG_STRING, .v.s = l->name },
        { .name = "matching_id", .type = TC_ARG_UINT, .v.u = matching },
    };
    if (st->sink->slice_begin(st->sink, d->tracks[slot].track, ts, r->name, tc_category(l, r), args, 4, 0, flow)
        != 0)
        return tc_sink_fail(st);
    st->stats->slices++;
    return 0;
}

int tc_xfer_end(struct tc_state *st, size_t i, uint64_t ts)
{
    struct tc_xfer *x = otr_vec_at(&st->xfers, sizeof *x, i);
    struct tc_device *d = otr_vec_at(&st->devices, sizeof *d, x->device);
    d->tracks[x->slot].busy = false;
    uint32_t track = d->tracks[x->slot].track;
    *x = *(struct tc_xfer *)otr_vec_at(&st->xfers, sizeof *x, --st->xfers.n);
    if (st->sink->slice_end(st->sink, track, ts) != 0)
        return tc_sink_fail(st);
    return 0;
}

/* ---- slices ------------------------------------------------------------------------------- */

/* Ends slices of @l until @depth are left open; a transfer's device slice
 * ends with its host slice at the latest. */
int tc_unwind(struct tc_state *st, struct tc_loc *l, uint32_t depth, uint64_t ts)
{
    uint32_t pos = (uint32_t)(l - (struct tc_loc *)st->locs.v);
    while (l->depth > depth) {
        for (size_t i = 0; i < st->xfers.n;) {
            const struct tc_xfer *x = otr_vec_at(&st->xfers, sizeof *x, i);
            if (x->loc == pos && x->depth >= l->depth) {
                if (tc_xfer_end(st, i, ts) != 0)
                    return -1;
            } else {
                i++;
            }
        }
        l->depth--;
        if (st->sink->slice_end(st->sink, pos, ts) != 0)
            return tc_sink_fail(st);
    }
    return 0;
}

/* ---- events -------------------------------------------------------------------------------- */

#define TC_EVENT_PROLOGUE(keep)                                 \
    struct tc_state *st = user;                                 \
    struct tc_loc *l = tc_loc_of(st, loc);                      \
    uint64_t ts;                                                \
    if (tc_event(st, l, t, (keep), &ts) != 0)                   \
        return OTF2_CALLBACK_INTERRUPT;                         \
    (void)ts

static OTF2_CallbackCode tc_evt_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    TC_EVENT_PROLOGUE(false);
    const struct tc_region *r = TC_FIND(st, regions, tc_region, region);
    if (!l || !r)
        return OTF2_CALLBACK_SUCCESS;
    int64_t n = tc_read_args(st, attrs, &l->held_args, &l->held_cap);
    if (n < 0)
        return OTF2_CALLBACK_INTERRUPT;
    if (!l->listed) {
        if (otr_reserve((void **)&st->held_list, &st->held_cap, st->nheld + 1, sizeof *st->held_list) != 0) {
            st->oom = true;
            return OTF2_CALLBACK_INTERRUPT;
        }
        st->held_list[st->nheld++] = (uint32_t)(l - (struct tc_loc *)st->locs.v);
        l->listed = true;
    }
    l->held = true;
    l->held_ts = ts;
    l->held_region = (uint32_t)(r - (struct tc_region *)st->regions.v);
    l->held_nargs = (uint32_t)n;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_evt_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    (void)attrs;
    TC_EVENT_PROLOGUE(true);
    if (!l)
        return OTF2_CALLBACK_SUCCESS;
    const struct tc_region *r = TC_FIND(st, regions, tc_region, region);
    uint32_t rpos = r ? (uint32_t)(r - (struct tc_region *)st->regions.v) : TC_NONE;
    uint32_t track = (uint32_t)(l - (struct tc_loc *)st->locs.v);
    if (l->held && l->held_region == rpos && r->point) {
        /* Held, so still at the Enter's time, nothing in between. */
        l->held = false;
        if (st->sink->instant(st->sink, track, ts, r->name, tc_category(l, r), l->held_args, l->held_nargs) != 0) {
            tc_sink_fail(st);
            return OTF2_CALLBACK_INTERRUPT;
        }
        st->stats->instants++;
        if (l->kind == TC_TRACK_MPIT && tc_mpit_counters(st, l, rpos, ts, l->held_args, l->held_nargs) != 0)
            return OTF2_CALLBACK_INTERRUPT;
        return OTF2_CALLBACK_SUCCESS;
    }
    if (l->held && tc_release(st, l, 0) != 0)
        return OTF2_CALLBACK_INTERRUPT;
    /* The innermost open slice of this region; a Leave of nothing open
     * (a damaged or foreign trace) is dropped so the output stays nested. */
    uint32_t d = l->depth;
    while (d > 0 && l->stack[d - 1] != rpos)
        d--;
    if (d > 0 && tc_unwind(st, l, d - 1, ts) != 0)
        return OTF2_CALLBACK_INTERRUPT;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_evt_rma(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching, bool put)
{
    TC_EVENT_PROLOGUE(true);
    if (!l)
        return OTF2_CALLBACK_SUCCESS;
    uint32_t dev = l->held ? tc_device_of(st, win, remote) : TC_NONE;
    if (st->oom)
        return OTF2_CALLBACK_INTERRUPT;
    int rc = dev != TC_NONE ? tc_xfer_begin(st, l, dev, ts, win, matching, bytes, put)
                            : l->held ? tc_release(st, l, 0) : 0;
    return rc ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_evt_put(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *attrs, OTF2_RmaWinRef win, uint32_t remote,
                                    uint64_t bytes, uint64_t matching)
{
    (void)attrs;
    return tc_evt_rma(loc, t, user, win, remote, bytes, matching, true);
}

static OTF2_CallbackCode tc_evt_get(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *attrs, OTF2_RmaWinRef win, uint32_t remote,
                                    uint64_t bytes, uint64_t matching)
{
    (void)attrs;
    return tc_evt_rma(loc, t, user, win, remote, bytes, matching, false);
}

static OTF2_CallbackCode tc_evt_complete(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                         OTF2_AttributeList *attrs, OTF2_RmaWinRef win, uint64_t matching)
{
    (void)attrs;
    TC_EVENT_PROLOGUE(false);
    uint32_t pos = l ? (uint32_t)(l - (struct tc_loc *)st->locs.v) : TC_NONE;
    for (size_t i = 0; i < st->xfers.n; i++) {
        const struct tc_xfer *x = otr_vec_at(&st->xfers, sizeof *x, i);
        if (x->loc == pos && x->win == win && x->matching == matching)
            return tc_xfer_end(st, i, ts) ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_evt_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                       OTF2_AttributeList *attrs, OTF2_MetricRef metric, uint8_t n,
                                       const OTF2_Type *types, const OTF2_MetricValue *values)
{
    (void)attrs;
    TC_EVENT_PROLOGUE(false);
    const struct tc_metric *m = TC_FIND(st, metrics, tc_metric, metric);
    const struct tc_metric *inst = NULL;
    if (m && m->instance) {
        inst = m;
        m = TC_FIND(st, metrics, tc_metric, inst->klass);
    }
    if (!l || !m || m->instance)
        return OTF2_CALLBACK_SUCCESS;
    for (uint32_t i = 0; i < n && i < m->nmembers; i++) {
        const struct tc_member *mb = TC_FIND(st, members, tc_member, m->members[i]);
        if (!mb)
            continue;
        /* Per member and location, or per member and scope. */
        struct tc_key k = { TC_CK_METRIC, mb->id,
                            inst ? ((uint64_t)1 << 63 | (uint64_t)inst->scope_type << 56) ^ inst->scope
                                 : (uint64_t)(l - (struct tc_loc *)st->locs.v) };
        uint32_t id;
        const uint32_t *have = tc_map_find(&st->counters, k);
        if (have) {
            id = *have;
        } else {
            char name[600];
            tc_metric_name(st, mb, l, inst, name, sizeof name);
            if (tc_counter_id(st, k, l->process, name, mb->unit, &id) != 0)
                return OTF2_CALLBACK_INTERRUPT;
        }
        double v = types[i] == OTF2_TYPE_INT64    ? (double)values[i].signed_int
                   : types[i] == OTF2_TYPE_DOUBLE ? values[i].floating_point
                                                  : (double)values[i].unsigned_int;
        if (tc_counter_value(st, id, ts, v) != 0)
            return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

/* tracer writes MeasurementOnOff for a gap of dropped events (attribute
 * `lost`); a viewer should show where data is missing. */
static OTF2_CallbackCode tc_evt_onoff(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_MeasurementMode mode)
{
    TC_EVENT_PROLOGUE(false);
    if (!l)
        return OTF2_CALLBACK_SUCCESS;
    int64_t n = tc_read_args(st, attrs, &st->scratch, &st->scratch_cap);
    if (n < 0)
        return OTF2_CALLBACK_INTERRUPT;
    const char *name = mode == OTF2_MEASUREMENT_OFF ? "measurement off" : "measurement on";
    uint32_t track = (uint32_t)(l - (struct tc_loc *)st->locs.v);
    if (st->sink->instant(st->sink, track, ts, name, "measurement", st->scratch, (uint32_t)n) != 0) {
        tc_sink_fail(st);
        return OTF2_CALLBACK_INTERRUPT;
    }
    st->stats->instants++;
    return OTF2_CALLBACK_SUCCESS;
}


void tc_set_event_callbacks(OTF2_GlobalEvtReaderCallbacks *cb)
{
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, tc_evt_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, tc_evt_leave);
    OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback(cb, tc_evt_put);
    OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback(cb, tc_evt_get);
    OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(cb, tc_evt_complete);
    OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(cb, tc_evt_complete);
    OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(cb, tc_evt_complete);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cb, tc_evt_metric);
    OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(cb, tc_evt_onoff);
}
