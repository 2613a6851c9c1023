/* host_thread.c - see host_thread.h. Regions still open at the end of the
 * stream close at the end of the run. */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "journal/data_op.h"
#include "model/device_model.h"
#include "model/host_thread.h"
#include "model/omp_states.h"

/* Closes the innermost region (type, id); returns 0 when it was not open. */
static int close_region(tr_host *h, uint8_t type, uint64_t id, uint64_t t)
{
    return tr_host_close(h, type, 0, id, t);
}

/* ---- records ------------------------------------------------------------ */

static void link_events_after(tr_host *h, uint64_t op_id, uint64_t t);

/* A transfer's RMA event: its device's window, the device stream's rank in
 * that window's comm (it is first, before the host threads). */
static void rma(tr_host *h, uint8_t kind, uint32_t window, uint64_t bytes, uint64_t id, uint64_t t)
{
    tr_mev e = {.kind = kind, .window = window, .remote = 0, .bytes = bytes, .matching = id};
    tr_host_emit(h, &e, t);
}

/* The XXH3 hash of the host bytes transfer @r moved, when the run took it
 * (TRACER_HASH): a copy to the device of at most 8 bytes carries its value
 * in its end record (ompt_callbacks.c), whose hash is computed here. */
static int content_hash(const tr_model *m, const tr_record *r, const tr_record *end, uint64_t *hash)
{
    if (tr_optype_is_to_device(r->sub) && end && (end->aux & TR_DATA_OP_VALUE) && end->u[3] <= 8) {
        *hash = XXH3_64bits(&end->u[1], end->u[3]);
        return 1;
    }
    return (tr_optype_is_to_device(r->sub) || tr_optype_is_from_device(r->sub)) && r->id &&
           tr_u64map_get(&m->hashes, r->id, hash);
}

static void data_op(tr_host *h, const tr_record *r, const tr_record *end)
{
    tr_pass_ctx *p = h->p;
    uint64_t region = tr_region_key_make(KEY_DATA_OP, r->sub);
    uint64_t bytes = end ? end->u[3] : r->u[3];
    /* A delete reports neither its size nor the host address: its alloc does. */
    tr_delete_answer freed = {0};
    if (tr_optype_is_delete(r->sub))
        freed = tr_device_model_freed(p, r->phase == TR_PHASE_POINT ? r : end);
    if (!bytes && freed.has_bytes)
        bytes = freed.bytes;
    if (!tr_data_op_named(r->sub))
        tr_host_attr(h, TR_ATTR_OPTYPE, r->sub);
    tr_host_attr(h, TR_ATTR_TARGET_ID, r->u[0]);
    tr_host_attr(h, TR_ATTR_HOST_OP_ID, r->id);
    tr_host_attr(h, TR_ATTR_SRC_ADDR, r->u[1]);
    tr_host_attr(h, TR_ATTR_SRC_DEVICE, (uint64_t)(int64_t)r->dev);
    tr_host_attr(h, TR_ATTR_DST_ADDR, end ? end->u[2] : r->u[2]);
    tr_host_attr(h, TR_ATTR_DST_DEVICE, (uint64_t)(int64_t)(end ? end->dev2 : r->dev2));
    tr_host_attr(h, TR_ATTR_BYTES, bytes);
    if (end && end->u[0])
        tr_host_attr(h, TR_ATTR_CODEPTR, end->u[0]);
    uint64_t hash;
    if (content_hash(p->m, r, end, &hash))
        tr_host_attr(h, TR_ATTR_CONTENT_HASH, hash);
    int advice = tr_advice_model_category(&p->m->advice, r->id);
    if (advice)
        tr_host_text(h, TR_ATTR_ADVICE, tr_advice_name(advice));
    /* The host side of the op, named when it is a global variable. */
    uint64_t host = freed.has_host ? freed.host : tr_data_op_host_addr(r);
    const tr_jvariable *var = host ? tr_journal_variable_at(p->m->jd, host, r->time) : 0;
    if (var)
        tr_host_text(h, TR_ATTR_VARIABLE, var->name);
    tr_host_enter(h, r->time, region);

    tr_open_region o = {.type = TR_REC_DATA_OP, .id = r->id, .region = region, .window = -1};
    if (tr_optype_is_to_device(r->sub) && (o.window = tr_device_model_index(p, r->dev2)) >= 0)
        rma(h, TR_MEV_RMA_PUT, (uint32_t)o.window, bytes, r->id, r->time);
    else if (tr_optype_is_from_device(r->sub) && (o.window = tr_device_model_index(p, r->dev)) >= 0)
        rma(h, TR_MEV_RMA_GET, (uint32_t)o.window, bytes, r->id, r->time);
    else
        o.window = -1;

    if (r->phase == TR_PHASE_POINT) {
        tr_host_leave(h, &o, r->time, 0);
        link_events_after(h, r->id, r->time);
    } else {
        tr_host_push(h, o);
    }
}

static void link_event(tr_host *h, const tr_link_map *lm, int what, uint64_t t, int incomplete)
{
    tr_host_text(h, TR_ATTR_VARIABLE, lm->var->name);
    tr_host_attr(h, TR_ATTR_HOST_ADDR, lm->host);
    tr_host_attr(h, TR_ATTR_DEVICE_ADDR, lm->storage);
    tr_host_attr(h, TR_ATTR_BYTES, lm->bytes);
    tr_host_attr(h, TR_ATTR_DEVICE, (uint64_t)(int64_t)lm->device);
    tr_host_attr(h, TR_ATTR_REF_PTR, lm->ref_ptr);
    tr_host_attr(h, TR_ATTR_REF_PTR_WRITTEN, lm->ref_written);
    tr_host_attr(h, TR_ATTR_PARTIAL, lm->partial);
    if (incomplete)
        tr_host_attr(h, TR_ATTR_INCOMPLETE, 1);
    uint64_t region = tr_region_key_make(KEY_LINK, (uint64_t)what);
    tr_host_enter(h, t, region);
    tr_mev leave = {.kind = TR_MEV_LEAVE, .region = region};
    tr_host_emit(h, &leave, t);
    if (what == TR_LINK_MAP && lm->stale) {
        region = tr_region_key_make(KEY_LINK, TR_LINK_STALE);
        tr_host_text(h, TR_ATTR_VARIABLE, lm->var->name);
        tr_host_attr(h, TR_ATTR_DEVICE, (uint64_t)(int64_t)lm->device);
        tr_host_attr(h, TR_ATTR_DEVICE_ADDR, lm->storage);
        tr_host_attr(h, TR_ATTR_REF_VALUE, lm->ref_value_before);
        tr_host_enter(h, t, region);
        leave.region = region;
        tr_host_emit(h, &leave, t);
    }
}

/* Link events follow the alloc or delete that made them, at its end. */
static void link_events_after(tr_host *h, uint64_t op_id, uint64_t t)
{
    const tr_link_model *lm = &h->p->m->links;
    uint64_t k;
    if (!op_id || !lm->n)
        return;
    if (tr_u64map_get(&lm->by_alloc_op, op_id, &k))
        link_event(h, &lm->maps[k], TR_LINK_MAP, t, 0);
    if (tr_u64map_get(&lm->by_delete_op, op_id, &k))
        link_event(h, &lm->maps[k], TR_LINK_UNMAP, t, 0);
}

static void target(tr_host *h, const tr_record *r)
{
    uint64_t region = tr_region_key_make(KEY_TARGET, r->u[0] << 5 | (r->sub & 31));
    tr_host_attr(h, TR_ATTR_DEVICE, (uint64_t)(int64_t)r->dev);
    tr_host_attr(h, TR_ATTR_TARGET_ID, r->id);
    tr_host_attr(h, TR_ATTR_CODEPTR, r->u[0]);
    tr_host_enter(h, r->time, region);
    tr_open_region o = {.type = TR_REC_TARGET, .id = r->id, .region = region, .window = -1};
    if (r->phase == TR_PHASE_POINT)
        tr_host_leave(h, &o, r->time, 0);
    else
        tr_host_push(h, o);
}

/* A region with no attributes that a begin opens and an end closes. */
static void begin_end(tr_host *h, const tr_record *r, uint64_t region)
{
    if (r->phase == TR_PHASE_BEGIN) {
        tr_mev e = {.kind = TR_MEV_ENTER, .region = region};
        tr_host_emit(h, &e, r->time);
        tr_host_push(h, (tr_open_region){.type = r->type, .id = r->id, .region = region, .window = -1});
    } else if (!close_region(h, r->type, r->id, r->time)) {
        h->p->m->stray_ends++;
    }
}

static void mark(tr_host *h, const tr_record *r)
{
    uint64_t region = tr_region_key_make(KEY_MARK, (uint32_t)r->id);
    tr_host_attr(h, TR_ATTR_VALUE, r->u[0]);
    tr_host_enter(h, r->time, region);
    tr_mev leave = {.kind = TR_MEV_LEAVE, .region = region};
    tr_host_emit(h, &leave, r->time);
}

/* Drop mode: the measurement was off from the first to the last dropped
 * event; the gap says how many were lost. Chunks missing from the journal
 * (u3, see record.h): off from the event before them to the event after
 * them, without `lost` (not known). */
static void loss(tr_host *h, const tr_record *r)
{
    tr_mev off = {.kind = TR_MEV_MEASURE_OFF};
    tr_mattrs a = {.n = 0};
    if (!r->u[3])
        tr_mattrs_add(&a, TR_ATTR_LOST, r->u[0]);
    tr_host_emit(h, (tr_mev *)tr_mev_with(&off, &a), r->u[1]);
    tr_mev on = {.kind = TR_MEV_MEASURE_ON};
    tr_host_emit(h, &on, r->time);
    h->p->m->lost += r->u[0];
}

void tr_host_record(tr_host *h, const tr_record *r)
{
    tr_pass_ctx *p = h->p;
    int omp = p->m->has_omp[h->stream];
    if (omp)
        tr_omp_host_before(h, r);
    switch (r->type) {
    case TR_REC_TARGET:
        if (r->phase != TR_PHASE_END)
            target(h, r);
        else if (!close_region(h, TR_REC_TARGET, r->id, r->time))
            p->m->stray_ends++;
        break;
    case TR_REC_DATA_OP:
        if (r->phase != TR_PHASE_END) {
            /* The Enter carries what only the end reports (the address an
             * alloc produced). */
            tr_record far;
            data_op(h, r, tr_pass_data_op_end(p, h->stream, r, &far));
        } else if (!close_region(h, TR_REC_DATA_OP, r->id, r->time)) {
            p->m->stray_ends++;
        } else {
            link_events_after(h, r->id, r->time);
        }
        break;
    case TR_REC_USER_REGION:
        begin_end(h, r, tr_region_key_make(KEY_USER, (uint32_t)r->id));
        break;
    case TR_REC_USER_MARK:
        mark(h, r);
        break;
    case TR_REC_MPI_CALL:
        begin_end(h, r, tr_region_key_make(KEY_MPI_CALL, r->id));
        break;
    case TR_REC_LOSS:
        loss(h, r);
        break;
    case TR_REC_OMP:
        tr_omp_host_record(h, r);
        break;
    default:
        break; /* device events and kernels live on device locations */
    }
    if (omp)
        tr_omp_host_after(h, r);
}

/* A drop-mode loss still open at the end, at its first dropped event (not
 * before the last record): before anything written at the end (an idle
 * state closed, a mapping undone), whose later stamp would make it refuse
 * the loss. */
static void final_losses(tr_host *h)
{
    const tr_journal_data *jd = h->p->m->jd;
    const tr_stream *st = &jd->data.streams[h->stream];
    for (uint32_t i = 0; i < jd->nlosses; i++) {
        const tr_jloss *l = &jd->losses[i];
        if (l->location != st->index || !l->count)
            continue;
        tr_mev off = {.kind = TR_MEV_MEASURE_OFF};
        tr_mattrs a = {.n = 0};
        tr_mattrs_add(&a, TR_ATTR_LOST, l->count);
        tr_host_emit(h, (tr_mev *)tr_mev_with(&off, &a), l->first);
        h->p->m->lost += l->count;
        if (!h->final_gap || l->first < h->final_gap)
            h->final_gap = l->first;
    }
}

void tr_host_finish(tr_host *h)
{
    tr_model *m = h->p->m;
    int omp = m->has_omp[h->stream];
    final_losses(h);
    if (omp)
        tr_omp_host_finish(h);
    /* Mappings the run never undid end with it, marked. */
    for (uint32_t k = 0; k < m->links.n; k++)
        if (!m->links.maps[k].unmap_op && m->links.maps[k].stream == h->stream)
            link_event(h, &m->links.maps[k], TR_LINK_UNMAP, m->t_max, 1);
    while (h->depth)
        tr_host_pop(h, m->t_max, 1);
    if (omp)
        tr_omp_host_final_metrics(h);
    if (h->stream == 0) {
        tr_mev e = {.kind = TR_MEV_PROGRAM_END,
                    .value = m->jd->end.has_status ? (uint64_t)(int64_t)m->jd->end.status : (uint64_t)INT64_MIN};
        tr_host_emit(h, &e, m->t_max);
    }
}

void tr_host_free(tr_host *h)
{
    tr_omp_host_free(h);
    tr_host_stack_free(h);
}
