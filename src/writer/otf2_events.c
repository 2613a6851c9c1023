/* otf2_events.c - the model's events (model_event.h) as OTF2 events, each
 * on its location's event writer, opened when its first event comes and
 * closed when the model says the location is done. Regions and strings are
 * the archive's definitions (otf2_regions.c, otf2_defs.c); attributes keep
 * the order the model gave them. */
#include <stdlib.h>
#include <string.h>

#include "writer/writer_internal.h"

static OTF2_EvtWriter *writer_of(tr_writer *w, uint64_t loc)
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
            return 0;
        memset(g + w->capwriters, 0, (cap - w->capwriters) * sizeof *g);
        memset(e + w->capwriters, 0, (cap - w->capwriters) * sizeof *e);
        w->capwriters = cap;
    }
    if (!w->writers[loc])
        w->writers[loc] = OTF2_Archive_GetEvtWriter(w->ar, w->loc_base + loc);
    return w->writers[loc];
}

static void attributes(tr_writer *w, const tr_mev *e)
{
    for (uint32_t i = 0; i < e->nattrs; i++) {
        const tr_mattr *a = &e->attrs[i];
        if (tr_attr_is_text((int)a->id))
            tr_defs_attr_string(w, w->al, (enum tr_attr)a->id, a->s);
        else
            tr_defs_attr(w->al, (enum tr_attr)a->id, a->v);
    }
}

static void program_begin(tr_writer *w, OTF2_EvtWriter *ew, uint64_t t)
{
    char buf[8192];
    const tr_journal_data *jd = w->m.jd;
    size_t n = jd->cmdline ? jd->cmdline_len : 0;
    if (n > sizeof buf - 1)
        n = sizeof buf - 1;
    if (n)
        memcpy(buf, jd->cmdline, n);
    buf[n] = 0;
    OTF2_StringRef args[64];
    uint32_t nargs = 0;
    OTF2_StringRef name = tr_defs_string(w, n ? buf : "unknown");
    for (size_t i = strlen(buf) + 1; i < n && nargs < 64; i += strlen(buf + i) + 1)
        args[nargs++] = tr_defs_string(w, buf + i);
    OTF2_EvtWriter_ProgramBegin(ew, 0, t, name, nargs, args);
}

static int event(void *ctx, const tr_mev *e)
{
    tr_writer *w = ctx;
    OTF2_EvtWriter *ew = writer_of(w, e->loc);
    if (!ew)
        return -1;
    OTF2_AttributeList *al = e->nattrs ? w->al : 0;
    if (al)
        attributes(w, e);
    OTF2_Type type = OTF2_TYPE_UINT64;
    OTF2_MetricValue mv = {.unsigned_int = e->value};
    switch (e->kind) {
    case TR_MEV_ENTER:
        OTF2_EvtWriter_Enter(ew, al, e->time, tr_writer_region(w, e->region));
        break;
    case TR_MEV_LEAVE:
        OTF2_EvtWriter_Leave(ew, al, e->time, tr_writer_region(w, e->region));
        break;
    case TR_MEV_METRIC:
        OTF2_EvtWriter_Metric(ew, al, e->time, e->metric, 1, &type, &mv);
        break;
    case TR_MEV_RMA_PUT:
        OTF2_EvtWriter_RmaPut(ew, al, e->time, tr_rma_window(w->win_base, e->window), e->remote, e->bytes,
                              e->matching);
        break;
    case TR_MEV_RMA_GET:
        OTF2_EvtWriter_RmaGet(ew, al, e->time, tr_rma_window(w->win_base, e->window), e->remote, e->bytes,
                              e->matching);
        break;
    case TR_MEV_RMA_COMPLETE:
        OTF2_EvtWriter_RmaOpCompleteBlocking(ew, al, e->time, tr_rma_window(w->win_base, e->window), e->matching);
        break;
    case TR_MEV_FORK:
        OTF2_EvtWriter_ThreadFork(ew, al, e->time, OTF2_PARADIGM_OPENMP, (uint32_t)e->value);
        break;
    case TR_MEV_JOIN:
        OTF2_EvtWriter_ThreadJoin(ew, al, e->time, OTF2_PARADIGM_OPENMP);
        break;
    case TR_MEV_MEASURE_OFF:
        OTF2_EvtWriter_MeasurementOnOff(ew, al, e->time, OTF2_MEASUREMENT_OFF);
        break;
    case TR_MEV_MEASURE_ON:
        OTF2_EvtWriter_MeasurementOnOff(ew, al, e->time, OTF2_MEASUREMENT_ON);
        break;
    case TR_MEV_PROGRAM_BEGIN:
        program_begin(w, ew, e->time);
        break;
    case TR_MEV_PROGRAM_END:
        OTF2_EvtWriter_ProgramEnd(ew, al, e->time, (int64_t)e->value);
        break;
    case TR_MEV_WIN_CREATE:
        OTF2_EvtWriter_RmaWinCreate(ew, al, e->time, tr_rma_window(w->win_base, e->window));
        break;
    case TR_MEV_WIN_DESTROY:
        OTF2_EvtWriter_RmaWinDestroy(ew, al, e->time, tr_rma_window(w->win_base, e->window));
        break;
    default:
        break;
    }
    return 0;
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

static int location_done(void *ctx, uint64_t loc)
{
    tr_writer *w = ctx;
    /* A location the model made has its file, even without an event. */
    return writer_of(w, loc) ? close_writer(w, loc) : -1;
}

tr_model_sink tr_otf2_sink(tr_writer *w)
{
    return (tr_model_sink){.event = event, .location_done = location_done, .ctx = w};
}

void tr_otf2_sink_close(tr_writer *w)
{
    for (uint64_t l = 0; l < w->capwriters; l++)
        close_writer(w, l);
}
