/* otf2_host_events.c - one host thread's records -> OTF2 events on its
 * CPU_THREAD location.
 *
 * Regions are kept on a stack (host_events.h), shared with the host OpenMP
 * states of the same thread (otf2_omp_events.c): an end closes its own
 * begin and, first, any region opened inside it whose end never came (marked
 * incomplete). Regions still open at the end of the stream close at the end
 * of the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "common/trace_vocab.h"
#include "journal/data_op.h"
#include "writer/host_events.h"

typedef tr_open_region open_region;
typedef tr_host_ctx host_ctx;

static void attr_u64(host_ctx *c, enum tr_attr a, uint64_t v) { tr_defs_attr(c->al, a, v); }

int tr_host_push(tr_host_ctx *c, tr_open_region o)
{
    if (c->depth == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        open_region *s = realloc(c->stack, cap * sizeof *s);
        if (!s)
            return -1;
        c->stack = s;
        c->cap = cap;
    }
    c->stack[c->depth++] = o;
    return 0;
}

void tr_host_leave(tr_host_ctx *c, const tr_open_region *o, uint64_t t, int incomplete)
{
    if (!c->ew)
        return; /* a pass that writes nothing */
    if (o->rma_win >= 0)
        OTF2_EvtWriter_RmaOpCompleteBlocking(c->ew, 0, t, (OTF2_RmaWinRef)o->rma_win, o->id);
    if (incomplete) {
        int own = tr_omp_runtime_region(c, o);
        attr_u64(c, TR_ATTR_INCOMPLETE, own ? 2 : 1);
        if (own)
            c->w->runtime_open++;
        else
            c->w->m.incomplete++;
    }
    OTF2_EvtWriter_Leave(c->ew, c->al, t, o->region);
}

void tr_host_pop(tr_host_ctx *c, uint64_t t, int incomplete)
{
    if (!c->depth)
        return;
    /* Work and wait are decided by what is open: count before it changes. */
    tr_omp_account(c, t);
    c->depth--;
    tr_host_leave(c, &c->stack[c->depth], t, incomplete);
}

size_t tr_host_find(const tr_host_ctx *c, uint8_t type, uint8_t kind, uint64_t id)
{
    for (size_t i = c->depth; i > 0; i--) {
        const open_region *o = &c->stack[i - 1];
        if (o->type == type && o->kind == kind && o->id == id)
            return i;
    }
    return 0;
}

int tr_host_close(tr_host_ctx *c, uint8_t type, uint8_t kind, uint64_t id, uint64_t t)
{
    size_t i = tr_host_find(c, type, kind, id);
    if (i == 0)
        return 0;
    while (c->depth > i)
        tr_host_pop(c, t, 1);
    tr_host_pop(c, t, 0);
    return 1;
}

/* Closes the innermost region (type, id); returns 0 when it was not open. */
static int close_region(host_ctx *c, uint8_t type, uint64_t id, uint64_t t)
{
    return tr_host_close(c, type, 0, id, t);
}

/* The window of device number @device, -1 when it is not one of this journal's. */
static int32_t rma_window(tr_writer *w, int device)
{
    tr_device *d = tr_model_device(&w->m, device);
    return d ? (int32_t)tr_rma_window(w->win_base, (size_t)(d - w->m.devices)) : -1;
}

/* Rank of the device stream in its window's communicator: it is last. */
static uint32_t rma_remote(tr_writer *w) { return (uint32_t)w->m.data.nstreams; }

static void link_events_after(host_ctx *c, uint64_t op_id, uint64_t t);

static void write_data_op(host_ctx *c, const tr_record *r, const tr_record *end)
{
    tr_writer *w = c->w;
    uint32_t region = tr_defs_region_data_op(w, r->sub);
    uint64_t bytes = end ? end->u[3] : r->u[3];
    /* A delete reports neither its size nor the host address: its alloc does. */
    tr_delete_answer freed = {0};
    if (tr_optype_is_delete(r->sub))
        freed = tr_delete_info_answer(&w->m.deletes, r->id,
                                      tr_local_allocs_ask(&c->allocs, r->phase == TR_PHASE_POINT ? r : end));
    if (!bytes && freed.has_bytes)
        bytes = freed.bytes;
    if (!tr_defs_data_op_named(r->sub))
        attr_u64(c, TR_ATTR_OPTYPE, r->sub);
    attr_u64(c, TR_ATTR_TARGET_ID, r->u[0]);
    attr_u64(c, TR_ATTR_HOST_OP_ID, r->id);
    attr_u64(c, TR_ATTR_SRC_ADDR, r->u[1]);
    attr_u64(c, TR_ATTR_SRC_DEVICE, (uint64_t)(int64_t)r->dev);
    attr_u64(c, TR_ATTR_DST_ADDR, end ? end->u[2] : r->u[2]);
    attr_u64(c, TR_ATTR_DST_DEVICE, (uint64_t)(int64_t)(end ? end->dev2 : r->dev2));
    attr_u64(c, TR_ATTR_BYTES, bytes);
    if (end && end->u[0])
        attr_u64(c, TR_ATTR_CODEPTR, end->u[0]);
    /* The host side of the op, named when it is a global variable. */
    uint64_t host = freed.has_host ? freed.host : tr_data_op_host_addr(r);
    const tr_jvariable *var = host ? tr_journal_variable_at(w->m.jd, host) : 0;
    if (var)
        tr_defs_attr_string(w, c->al, TR_ATTR_VARIABLE, var->name);
    OTF2_EvtWriter_Enter(c->ew, c->al, r->time, region);

    open_region o = {.type = TR_REC_DATA_OP, .id = r->id, .region = region, .rma_win = -1};
    if (tr_optype_is_to_device(r->sub) && (o.rma_win = rma_window(w, r->dev2)) >= 0)
        OTF2_EvtWriter_RmaPut(c->ew, 0, r->time, (OTF2_RmaWinRef)o.rma_win, rma_remote(w), bytes, r->id);
    else if (tr_optype_is_from_device(r->sub) && (o.rma_win = rma_window(w, r->dev)) >= 0)
        OTF2_EvtWriter_RmaGet(c->ew, 0, r->time, (OTF2_RmaWinRef)o.rma_win, rma_remote(w), bytes, r->id);
    else
        o.rma_win = -1;

    if (r->phase == TR_PHASE_POINT) {
        tr_host_leave(c, &o, r->time, 0);
        link_events_after(c, r->id, r->time);
    } else {
        tr_host_push(c, o);
    }
}

static void link_event(host_ctx *c, const tr_link_map *m, const char *what, uint64_t t, int incomplete)
{
    tr_writer *w = c->w;
    uint32_t region = tr_defs_region_link(w, what);
    tr_defs_attr_string(w, c->al, TR_ATTR_VARIABLE, m->var->name);
    tr_defs_attr(c->al, TR_ATTR_HOST_ADDR, m->host);
    tr_defs_attr(c->al, TR_ATTR_DEVICE_ADDR, m->storage);
    tr_defs_attr(c->al, TR_ATTR_BYTES, m->bytes);
    tr_defs_attr(c->al, TR_ATTR_DEVICE, (uint64_t)(int64_t)m->device);
    tr_defs_attr(c->al, TR_ATTR_REF_PTR, m->ref_ptr);
    tr_defs_attr(c->al, TR_ATTR_REF_PTR_WRITTEN, m->ref_written);
    tr_defs_attr(c->al, TR_ATTR_PARTIAL, m->partial);
    if (incomplete)
        tr_defs_attr(c->al, TR_ATTR_INCOMPLETE, 1);
    OTF2_EvtWriter_Enter(c->ew, c->al, t, region);
    OTF2_EvtWriter_Leave(c->ew, 0, t, region);
    if (!strcmp(what, TRV_REGION_LINK_MAP) && m->stale) {
        region = tr_defs_region_link(w, TRV_REGION_STALE_LINK);
        tr_defs_attr_string(w, c->al, TR_ATTR_VARIABLE, m->var->name);
        tr_defs_attr(c->al, TR_ATTR_DEVICE, (uint64_t)(int64_t)m->device);
        tr_defs_attr(c->al, TR_ATTR_DEVICE_ADDR, m->storage);
        tr_defs_attr(c->al, TR_ATTR_REF_VALUE, m->ref_value_before);
        OTF2_EvtWriter_Enter(c->ew, c->al, t, region);
        OTF2_EvtWriter_Leave(c->ew, 0, t, region);
    }
}

/* Link events follow the alloc or delete that made them, at its end. */
static void link_events_after(host_ctx *c, uint64_t op_id, uint64_t t)
{
    uint64_t k;
    if (!op_id || !c->w->m.links.n)
        return;
    if (tr_u64map_get(&c->w->m.links.by_alloc_op, op_id, &k))
        link_event(c, &c->w->m.links.maps[k], TRV_REGION_LINK_MAP, t, 0);
    if (tr_u64map_get(&c->w->m.links.by_delete_op, op_id, &k))
        link_event(c, &c->w->m.links.maps[k], "link unmap", t, 0);
}

static void write_target(host_ctx *c, const tr_record *r)
{
    uint32_t region = tr_defs_region_target(c->w, r->sub, r->u[0]);
    attr_u64(c, TR_ATTR_DEVICE, (uint64_t)(int64_t)r->dev);
    attr_u64(c, TR_ATTR_TARGET_ID, r->id);
    attr_u64(c, TR_ATTR_CODEPTR, r->u[0]);
    OTF2_EvtWriter_Enter(c->ew, c->al, r->time, region);
    open_region o = {.type = TR_REC_TARGET, .id = r->id, .region = region, .rma_win = -1};
    if (r->phase == TR_PHASE_POINT)
        tr_host_leave(c, &o, r->time, 0);
    else
        tr_host_push(c, o);
}

static void write_program_begin(tr_writer *w, OTF2_EvtWriter *ew)
{
    char buf[8192];
    size_t n = w->m.jd->cmdline ? w->m.jd->cmdline_len : 0;
    if (n > sizeof buf - 1)
        n = sizeof buf - 1;
    if (n)
        memcpy(buf, w->m.jd->cmdline, n);
    buf[n] = 0;
    OTF2_StringRef args[64];
    uint32_t nargs = 0;
    OTF2_StringRef name = tr_defs_string(w, n ? buf : "unknown");
    for (size_t i = strlen(buf) + 1; i < n && nargs < 64; i += strlen(buf + i) + 1)
        args[nargs++] = tr_defs_string(w, buf + i);
    OTF2_EvtWriter_ProgramBegin(ew, 0, w->m.t_min, name, nargs, args);
}

static int local_allocs_init(tr_local_allocs *la, tr_model *m)
{
    int *nums = tr_model_device_numbers(m);
    int rc = nums ? tr_local_allocs_init(la, nums, m->ndevices) : -1;
    free(nums);
    return rc;
}

int tr_events_write_host(tr_writer *w, OTF2_Archive *ar, size_t stream, uint64_t *nevents)
{
    const tr_stream *st = &w->m.data.streams[stream];
    host_ctx c = {.w = w, .ew = OTF2_Archive_GetEvtWriter(ar, tr_host_location(w, stream)),
                  .al = OTF2_AttributeList_New(), .stream = stream};
    /* A stream without records (a loss alone) has no cursor. */
    tr_stream_cursor *cur = st->n ? tr_journal_stream_open(w->m.jd, st) : 0;
    if (!c.ew || !c.al || (st->n && !cur) || tr_omp_host_init(&c) ||
        local_allocs_init(&c.allocs, &w->m)) {
        if (c.al)
            OTF2_AttributeList_Delete(c.al);
        tr_stream_cursor_close(cur);
        tr_omp_host_free(&c);
        tr_local_allocs_free(&c.allocs);
        return -1;
    }
    int omp = w->m.omp.has_omp[stream], oom = 0;

    if (stream == 0)
        write_program_begin(w, c.ew);
    uint64_t i = 0;
    for (const tr_record *r; cur && (r = tr_stream_cursor_next(cur)); i++) {
        if (omp)
            tr_omp_host_before(&c, r);
        switch (r->type) {
        case TR_REC_TARGET:
            if (r->phase == TR_PHASE_END) {
                if (!close_region(&c, TR_REC_TARGET, r->id, r->time))
                    w->m.stray_ends++;
            } else {
                write_target(&c, r);
            }
            break;
        case TR_REC_DATA_OP:
            if (r->phase == TR_PHASE_END) {
                if (!close_region(&c, TR_REC_DATA_OP, r->id, r->time))
                    w->m.stray_ends++;
                else
                    link_events_after(&c, r->id, r->time);
            } else {
                /* The Enter carries what only the end reports (the address an
                 * alloc produced). */
                write_data_op(&c, r, tr_model_data_op_end(&w->m, cur, stream, i, r));
            }
            break;
        case TR_REC_USER_REGION: {
            uint32_t region = tr_defs_region_user(w, (uint32_t)r->id, 0);
            if (r->phase == TR_PHASE_BEGIN) {
                OTF2_EvtWriter_Enter(c.ew, 0, r->time, region);
                tr_host_push(&c, (open_region){.type = TR_REC_USER_REGION, .id = r->id, .region = region,
                                               .rma_win = -1});
            } else if (!close_region(&c, TR_REC_USER_REGION, r->id, r->time)) {
                w->m.stray_ends++;
            }
            break;
        }
        case TR_REC_USER_MARK: {
            uint32_t region = tr_defs_region_user(w, (uint32_t)r->id, 1);
            attr_u64(&c, TR_ATTR_VALUE, r->u[0]);
            OTF2_EvtWriter_Enter(c.ew, c.al, r->time, region);
            OTF2_EvtWriter_Leave(c.ew, 0, r->time, region);
            break;
        }
        case TR_REC_MPI_CALL: {
            uint32_t region = tr_defs_region_mpi_call(w, r->id);
            if (r->phase == TR_PHASE_BEGIN) {
                OTF2_EvtWriter_Enter(c.ew, 0, r->time, region);
                tr_host_push(&c, (open_region){.type = TR_REC_MPI_CALL, .id = r->id, .region = region, .rma_win = -1});
            } else if (!close_region(&c, TR_REC_MPI_CALL, r->id, r->time)) {
                w->m.stray_ends++;
            }
            break;
        }
        case TR_REC_LOSS:
            /* Drop mode: the measurement was off from the first to the last
             * dropped event; the gap says how many were lost. Chunks missing
             * from the journal (u3, see record.h): off from the event before
             * them to the event after them, without `lost` (not known). */
            if (!r->u[3])
                tr_defs_attr(c.al, TR_ATTR_LOST, r->u[0]);
            OTF2_EvtWriter_MeasurementOnOff(c.ew, r->u[3] ? 0 : c.al, r->u[1], OTF2_MEASUREMENT_OFF);
            OTF2_EvtWriter_MeasurementOnOff(c.ew, 0, r->time, OTF2_MEASUREMENT_ON);
            w->lost += r->u[0];
            break;
        case TR_REC_OMP:
            tr_omp_host_record(&c, r);
            break;
        default:
            break; /* device events and kernels live on device locations */
        }
        if (omp)
            tr_omp_host_after(&c, r);
        if (tr_local_allocs_apply(&c.allocs, r, 0))
            oom = 1;
    }
    /* A drop-mode loss still open at the end, at its first dropped event (not
     * before the last record): before anything written at the end (an idle
     * state closed, a mapping undone), whose later stamp OTF2 would make it
     * refuse the loss. */
    for (uint32_t i = 0; i < w->m.jd->nlosses; i++) {
        const tr_jloss *l = &w->m.jd->losses[i];
        if (l->location != st->index || !l->count)
            continue;
        tr_defs_attr(c.al, TR_ATTR_LOST, l->count);
        OTF2_EvtWriter_MeasurementOnOff(c.ew, c.al, l->first, OTF2_MEASUREMENT_OFF);
        w->lost += l->count;
        if (!c.final_gap || l->first < c.final_gap)
            c.final_gap = l->first;
    }
    if (omp)
        tr_omp_host_finish(&c);
    /* Mappings the run never undid end with it, marked. */
    for (uint32_t k = 0; k < w->m.links.n; k++)
        if (!w->m.links.maps[k].unmap_op && w->m.links.maps[k].stream == stream)
            link_event(&c, &w->m.links.maps[k], "link unmap", w->m.t_max, 1);
    while (c.depth)
        tr_host_pop(&c, w->m.t_max, 1);
    if (omp)
        tr_omp_host_final_metrics(&c);
    if (stream == 0)
        OTF2_EvtWriter_ProgramEnd(c.ew, 0, w->m.t_max,
                                  w->m.jd->end.has_status ? w->m.jd->end.status : OTF2_UNDEFINED_INT64);

    tr_stream_cursor_close(cur);
    tr_omp_host_free(&c);
    tr_local_allocs_free(&c.allocs);
    free(c.stack);
    OTF2_EvtWriter_GetNumberOfEvents(c.ew, nevents);
    OTF2_AttributeList_Delete(c.al);
    int closed = OTF2_Archive_CloseEvtWriter(ar, c.ew) == OTF2_SUCCESS;
    return closed && !oom ? 0 : -1;
}
