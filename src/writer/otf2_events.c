/* otf2_events.c - the model's events (model_event.h) as OTF2 events. Each
 * is resolved here, on the model's thread (regions and strings are the
 * archive's definitions: otf2_regions.c, otf2_defs.c; attributes keep the
 * order the model gave them), into an OTF2 event with every id known
 * (otf2_wire.h); then either written here, on its location's event writer
 * (opened with its first event, closed when the model says the location
 * is done), or handed to the thread that writes that location
 * (otf2_workers.h). */
#include <stdlib.h>
#include <string.h>

#include "writer/otf2_workers.h"
#include "writer/writer_internal.h"

/* The largest resolved event: every attribute, and ProgramBegin's
 * arguments. */
#define MAX_ARGS 64
#define WIRE_MAX (sizeof(tr_wire_ev) + TR_MEV_MAX_ATTRS * sizeof(tr_wire_attr) + MAX_ARGS * sizeof(uint32_t))

/* Room in w->writers and w->events for location @loc. */
static int room(tr_writer *w, uint64_t loc)
{
    if (loc >= w->capwriters) {
        uint64_t cap = w->capwriters ? w->capwriters : 16;
        while (cap <= loc)
            cap *= 2;
        OTF2_EvtWriter **g = realloc(w->writers, cap * sizeof *g);
        uint64_t *e = realloc(w->events, cap * sizeof *e);
        if (g)
            w->writers = g;
        if (e)
            w->events = e;
        if (!g || !e)
            return -1;
        memset(g + w->capwriters, 0, (cap - w->capwriters) * sizeof *g);
        memset(e + w->capwriters, 0, (cap - w->capwriters) * sizeof *e);
        w->capwriters = cap;
    }
    return 0;
}

static OTF2_EvtWriter *writer_of(tr_writer *w, uint64_t loc)
{
    if (loc < w->capwriters && w->writers[loc])
        return w->writers[loc];
    if (room(w, loc))
        return 0;
    if (!w->writers[loc])
        w->writers[loc] = OTF2_Archive_GetEvtWriter(w->ar, w->loc_base + loc);
    return w->writers[loc];
}

static int close_writer(tr_writer *w, uint64_t loc)
{
    if (loc >= w->capwriters || !w->writers[loc])
        return 0;
    OTF2_EvtWriter_GetNumberOfEvents(w->writers[loc], &w->events[loc]);
    int rc = OTF2_Archive_CloseEvtWriter(w->ar, w->writers[loc]) == OTF2_SUCCESS ? 0 : -1;
    w->writers[loc] = 0;
    return rc;
}

/* An attribute's value in its OTF2 type. */
static void resolve_attr(tr_writer *w, const tr_mattr *m, tr_wire_attr *a)
{
    static OTF2_Type types[TR_ATTR_COUNT];
    if (!types[0])
        for (int i = 0; i < TR_ATTR_COUNT; i++)
            types[i] = tr_defs_attr_type((enum tr_attr)i);
    a->id = m->id;
    a->v.uint64 = 0;
    if (m->id >= TR_ATTR_COUNT || tr_attr_is_text((int)m->id)) {
        a->type = OTF2_TYPE_STRING;
        a->v.stringRef = tr_defs_string(w, m->s);
        return;
    }
    a->type = types[m->id];
    switch (a->type) {
    case OTF2_TYPE_INT32: a->v.int32 = (int32_t)m->v; break;
    case OTF2_TYPE_UINT32: a->v.uint32 = (uint32_t)m->v; break;
    case OTF2_TYPE_UINT8: a->v.uint8 = (uint8_t)m->v; break;
    default: a->v.uint64 = m->v; break;
    }
}

/* ProgramBegin's name and arguments, from the command line. */
static uint32_t program_args(tr_writer *w, uint64_t *name, uint32_t *args)
{
    char buf[8192];
    const tr_journal_data *jd = w->m.jd;
    size_t n = jd->cmdline ? jd->cmdline_len : 0;
    if (n > sizeof buf - 1)
        n = sizeof buf - 1;
    if (n)
        memcpy(buf, jd->cmdline, n);
    buf[n] = 0;
    uint32_t nargs = 0;
    *name = tr_defs_string(w, n ? buf : "unknown");
    for (size_t i = strlen(buf) + 1; i < n && nargs < MAX_ARGS; i += strlen(buf + i) + 1)
        args[nargs++] = tr_defs_string(w, buf + i);
    return nargs;
}

/* @e with every id resolved, into @out (WIRE_MAX bytes). */
static void resolve(tr_writer *w, const tr_mev *e, tr_wire_ev *out)
{
    *out = (tr_wire_ev){.kind = e->kind, .nattrs = e->nattrs, .loc = e->loc, .time = e->time};
    tr_wire_attr *a = tr_wire_attrs(out);
    for (uint32_t i = 0; i < e->nattrs; i++)
        resolve_attr(w, &e->attrs[i], &a[i]);
    switch (e->kind) {
    case TR_MEV_ENTER:
    case TR_MEV_LEAVE:
        out->ref = tr_writer_region(w, e->region);
        break;
    case TR_MEV_METRIC:
        out->ref = e->metric;
        out->a = e->value;
        break;
    case TR_MEV_RMA_PUT:
    case TR_MEV_RMA_GET:
    case TR_MEV_RMA_COMPLETE:
        out->ref = tr_rma_window(w->win_base, e->window);
        out->aux = e->remote;
        out->a = e->bytes;
        out->b = e->matching;
        break;
    case TR_MEV_WIN_CREATE:
    case TR_MEV_WIN_DESTROY:
        out->ref = tr_rma_window(w->win_base, e->window);
        break;
    case TR_MEV_FORK:
        out->aux = (uint32_t)e->value;
        break;
    case TR_MEV_PROGRAM_END:
        out->a = e->value;
        break;
    case TR_MEV_PROGRAM_BEGIN:
        out->aux = program_args(w, &out->a, tr_wire_args(out));
        break;
    default:
        break;
    }
}

static int event(void *ctx, const tr_mev *e)
{
    tr_writer *w = ctx;
    if (w->workers) {
        uint32_t nargs = e->kind == TR_MEV_PROGRAM_BEGIN ? MAX_ARGS : 0;
        tr_wire_ev *out = tr_workers_reserve(w->workers, e->loc, tr_wire_size(e->nattrs, nargs));
        resolve(w, e, out);
        return 0;
    }
    _Alignas(8) unsigned char buf[WIRE_MAX];
    tr_wire_ev *out = (tr_wire_ev *)(void *)buf;
    resolve(w, e, out);
    OTF2_EvtWriter *ew = writer_of(w, e->loc);
    if (!ew)
        return -1;
    tr_wire_write(ew, w->al, out);
    return 0;
}

static int location_done(void *ctx, uint64_t loc)
{
    tr_writer *w = ctx;
    if (w->workers) {
        tr_wire_ev *out = tr_workers_reserve(w->workers, loc, tr_wire_size(0, 0));
        *out = (tr_wire_ev){.kind = TR_WIRE_CLOSE, .loc = loc};
        return 0;
    }
    /* A location the model made has its file, even without an event. */
    return writer_of(w, loc) ? close_writer(w, loc) : -1;
}

tr_model_sink tr_otf2_sink(tr_writer *w)
{
    return (tr_model_sink){.event = event, .location_done = location_done, .ctx = w};
}

int tr_otf2_sink_close(tr_writer *w)
{
    int rc = 0;
    if (w->workers) {
        uint64_t n = w->m.nlocations;
        uint64_t *counts = calloc(n ? n : 1, sizeof *counts);
        rc = tr_workers_finish(w->workers, counts, n);
        w->workers = 0;
        if (!counts || room(w, n ? n - 1 : 0))
            rc = -1;
        for (uint64_t l = 0; counts && l < n && l < w->capwriters; l++)
            w->events[l] = counts[l];
        free(counts);
    }
    for (uint64_t l = 0; l < w->capwriters; l++)
        if (close_writer(w, l))
            rc = -1;
    return rc;
}
