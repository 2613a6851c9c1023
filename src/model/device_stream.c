/* device_stream.c - see device_stream.h. */
#include "model/device_stream.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "journal/data_op.h"

int tr_device_stream_init(tr_device_stream *ds, tr_model *m, const tr_model_labels *labels, tr_dev_sink sink)
{
    memset(ds, 0, sizeof *ds);
    ds->m = m;
    ds->labels = labels;
    ds->sink = sink;
    ds->dev = calloc(m->ndevices ? m->ndevices : 1, sizeof *ds->dev);
    ds->open_submits = calloc(m->data.nstreams ? m->data.nstreams : 1, sizeof *ds->open_submits);
    if (!ds->dev || !ds->open_submits)
        return -1;
    int *nums = tr_model_device_numbers(m);
    int rc = nums ? tr_local_allocs_init(&ds->live, nums, m->ndevices) : -1;
    if (!rc && sink.model_pass) {
        ds->local = calloc(m->data.nstreams ? m->data.nstreams : 1, sizeof *ds->local);
        rc = ds->local ? 0 : -1;
        for (size_t s = 0; !rc && s < m->data.nstreams; s++)
            rc = tr_local_allocs_init(&ds->local[s], nums, m->ndevices);
    }
    free(nums);
    if (rc)
        return -1;
    for (size_t i = 0; i < m->ndevices; i++)
        ds->dev[i].nlanes = 1;
    return 0;
}

static tr_device *device_at(tr_device_stream *ds, int num, size_t *index)
{
    tr_device *d = tr_model_device(ds->m, num);
    if (d)
        *index = (size_t)(d - ds->m->devices);
    return d;
}

/* A target construct is known from its begin to its end (its kernels are
 * submitted in between); an index that ended is reused. */
static int target_begin(tr_device_stream *ds, const tr_record *r)
{
    uint64_t i;
    if (tr_u64map_get(&ds->target_index, r->id, &i)) {
        ds->targets[i] = (tr_target_info){r->dev, r->u[0]}; /* an id seen again: the newest wins */
        return 0;
    }
    if (ds->nfree)
        i = ds->free_targets[--ds->nfree];
    else if (tr_grow((void **)&ds->targets, &ds->captargets, ds->ntargets, sizeof *ds->targets, 64))
        return -1;
    else
        i = ds->ntargets++;
    ds->targets[i] = (tr_target_info){r->dev, r->u[0]};
    return tr_u64map_put(&ds->target_index, r->id, i);
}

static int target_end(tr_device_stream *ds, const tr_record *r)
{
    uint64_t i;
    if (!tr_u64map_del(&ds->target_index, r->id, &i))
        return 0;
    if (tr_grow((void **)&ds->free_targets, &ds->capfree, ds->nfree, sizeof *ds->free_targets, 64))
        return -1;
    ds->free_targets[ds->nfree++] = (uint32_t)i;
    return 0;
}

static const tr_target_info *target_of(const tr_device_stream *ds, uint64_t target_id)
{
    uint64_t i;
    return target_id && tr_u64map_get(&ds->target_index, target_id, &i) ? &ds->targets[i] : 0;
}

/* Lane 0 takes zero-length items (they nest inside anything) without
 * holding it; others take the first lane free at their start. */
static uint32_t place(tr_device_state *st, uint64_t start, uint64_t end)
{
    if (start == end)
        return 0;
    uint32_t l = 0;
    while (l < st->nlanes && st->lane_end[l] > start)
        l++;
    if (l == st->nlanes) {
        if (st->nlanes == TR_DEVICE_MAX_LANES)
            l = st->nlanes - 1; /* pathological; the last lane may then nest badly */
        else
            st->lane_end[st->nlanes++] = 0;
    }
    st->lane_end[l] = end;
    return l;
}

/* Where the kernel begun at @pos ends: in the cursor's lookahead, or where
 * the model's pass saw it (TR_MODEL_SUBMIT_END_NEAR). */
static uint64_t submit_end(tr_device_stream *ds, size_t stream, uint64_t pos, const tr_record *r,
                           tr_stream_cursor *cur)
{
    for (size_t k = 0; k < TR_MODEL_SUBMIT_END_NEAR; k++) {
        const tr_record *e = tr_stream_cursor_peek(cur, k);
        if (!e)
            return TR_SUBMIT_NEVER_ENDED;
        if (e->type == TR_REC_SUBMIT && e->id == r->id && e->phase != TR_PHASE_POINT)
            return e->phase == TR_PHASE_END ? e->time : TR_SUBMIT_ZERO_LENGTH;
    }
    return tr_model_far_submit_end(ds->m, stream, pos);
}

static int submit(tr_device_stream *ds, size_t stream, uint64_t pos, const tr_record *r, tr_stream_cursor *cur)
{
    tr_model *m = ds->m;
    if (r->phase == TR_PHASE_END) {
        if ((!r->id || !tr_u64map_del(&ds->open_submits[stream], r->id, 0)) && ds->sink.model_pass)
            m->stray_ends++;
        return 0;
    }
    const tr_target_info *t = target_of(ds, r->u[0]);
    int num = r->dev >= 0 && r->dev != m->host_device ? r->dev : t ? t->dev : -1;
    size_t di;
    if (!device_at(ds, num, &di))
        return 0;
    uint64_t end = r->time;
    int incomplete = 0;
    if (r->phase == TR_PHASE_BEGIN && r->id) {
        uint64_t e = submit_end(ds, stream, pos, r, cur);
        if (e == TR_SUBMIT_NEVER_ENDED) {
            /* A kernel whose end never came lasts until the end of the run. */
            end = m->t_max;
            incomplete = 1;
            m->incomplete += ds->sink.model_pass != 0;
        } else if (e != TR_SUBMIT_ZERO_LENGTH) {
            end = e;
        }
        if (tr_u64map_put(&ds->open_submits[stream], r->id, 1))
            return -1;
    }
    uint32_t region = ds->labels->kernel(ds->labels->ctx, t ? t->codeptr : r->u[1]);
    uint32_t lane = r->phase == TR_PHASE_POINT ? 0 : place(&ds->dev[di], r->time, end);
    return ds->sink.item(ds->sink.ctx, di, lane, r, end, region, incomplete);
}

static int device_event(tr_device_stream *ds, const tr_record *r)
{
    size_t di;
    tr_device *d = device_at(ds, r->dev, &di);
    if (!d)
        return 0;
    if (r->type == TR_REC_DEVICE_INIT && tr_journal_text(ds->m->jd, r->u[0]))
        d->type = tr_journal_text(ds->m->jd, r->u[0]);
    uint32_t region = ds->labels->device_event(ds->labels->ctx, r->type);
    return ds->sink.item(ds->sink.ctx, di, 0, r, r->time, region, 0);
}

/* Allocations and deletes may come from different threads, so the memory in
 * use is counted over all of them in time order. A delete reports 0 bytes;
 * its size is the size of the alloc that produced its address. */
static int memory(tr_device_stream *ds, const tr_record *r)
{
    int alloc = tr_optype_is_alloc(r->sub);
    size_t di;
    if (!device_at(ds, alloc ? r->dev2 : r->dev, &di) || !(alloc ? r->u[2] : r->u[1]))
        return 0; /* what tr_local_allocs_apply skips too */
    tr_delete_answer freed;
    if (tr_local_allocs_apply(&ds->live, r, &freed))
        return -1;
    tr_device_state *st = &ds->dev[di];
    if (alloc) {
        st->in_use += r->u[3];
    } else {
        if (freed.has_bytes)
            st->in_use -= freed.bytes;
        if (ds->sink.model_pass && tr_delete_info_end(&ds->m->deletes, r->id, freed))
            return -1;
    }
    return ds->sink.metric(ds->sink.ctx, di, r->time, st->in_use);
}

/* The model's pass asks each delete's thread, at its begin, what it frees
 * (the host writer will ask the same there), and the device memory, at its
 * end, in time order: delete_info.h keeps where the two differ. */
static int data_op(tr_device_stream *ds, size_t stream, uint64_t pos, const tr_record *r, tr_stream_cursor *cur)
{
    int alloc = tr_optype_is_alloc(r->sub), del = tr_optype_is_delete(r->sub);
    if (!alloc && !del)
        return 0;
    tr_model *m = ds->m;
    if (ds->sink.model_pass && del && r->phase != TR_PHASE_END && r->id) {
        const tr_record *end = r->phase == TR_PHASE_POINT ? r : tr_model_data_op_end(m, cur, stream, pos, r);
        if (tr_delete_info_begin(&m->deletes, r->id, tr_local_allocs_ask(&ds->local[stream], end)))
            return -1;
    }
    if (r->phase == TR_PHASE_BEGIN)
        return 0;
    if (memory(ds, r))
        return -1;
    return ds->sink.model_pass ? tr_local_allocs_apply(&ds->local[stream], r, 0) : 0;
}

int tr_device_stream_record(tr_device_stream *ds, size_t stream, uint64_t pos, const tr_record *r,
                            tr_stream_cursor *cur)
{
    switch (r->type) {
    case TR_REC_TARGET:
        if (!r->id)
            return 0;
        return r->phase == TR_PHASE_END ? target_end(ds, r) : target_begin(ds, r);
    case TR_REC_SUBMIT:
        return submit(ds, stream, pos, r, cur);
    case TR_REC_DEVICE_INIT:
    case TR_REC_DEVICE_FINI:
    case TR_REC_DEVICE_LOAD:
    case TR_REC_DEVICE_UNLOAD:
        return device_event(ds, r);
    case TR_REC_DATA_OP:
        return data_op(ds, stream, pos, r, cur);
    default:
        return 0;
    }
}

int tr_device_stream_finish(tr_device_stream *ds)
{
    if (ds->sink.model_pass && tr_delete_info_finish(&ds->m->deletes))
        return -1;
    for (size_t i = 0; i < ds->m->ndevices; i++)
        ds->m->devices[i].nlanes = ds->dev[i].nlanes;
    return 0;
}

void tr_device_stream_free(tr_device_stream *ds)
{
    tr_local_allocs_free(&ds->live);
    if (ds->open_submits)
        for (size_t s = 0; s < ds->m->data.nstreams; s++)
            tr_u64map_free(&ds->open_submits[s]);
    if (ds->local)
        for (size_t s = 0; s < ds->m->data.nstreams; s++)
            tr_local_allocs_free(&ds->local[s]);
    free(ds->local);
    free(ds->dev);
    free(ds->open_submits);
    free(ds->targets);
    free(ds->free_targets);
    tr_u64map_free(&ds->target_index);
    memset(ds, 0, sizeof *ds);
}
