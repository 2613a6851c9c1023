/* device_model.c - see device_model.h. */
#include "model/device_model.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "journal/data_op.h"
#include "model/pass_context.h"

/* What the model keeps of a target construct's begin. */
typedef struct tr_target_info {
    int dev;
    uint64_t codeptr;
} tr_target_info;

int tr_device_model_init(tr_device_model *dm, size_t nstreams)
{
    memset(dm, 0, sizeof *dm);
    dm->open_submits = calloc(nstreams ? nstreams : 1, sizeof *dm->open_submits);
    dm->open_kernels = calloc(nstreams ? nstreams : 1, sizeof *dm->open_kernels);
    return dm->open_submits && dm->open_kernels ? 0 : -1;
}

int tr_device_model_index(const tr_pass_ctx *p, int num)
{
    const tr_model *m = p->m;
    if (num < 0)
        return -1;
    /* Records name the same one or two devices over and over. */
    tr_device_model *dm = p->dev;
    if (dm->last_index < m->ndevices && m->devices[dm->last_index].num == num)
        return (int)dm->last_index;
    for (size_t i = 0; i < m->ndevices; i++)
        if (m->devices[i].num == num) {
            dm->last_index = i;
            return (int)i;
        }
    return -1;
}

/* ---- a lane's events, written ------------------------------------------ */

static void item_attributes(tr_mattrs *e, int device, const tr_record *r, const tr_journal_data *jd)
{
    switch (r->type) {
    case TR_REC_SUBMIT:
        tr_mattrs_add(e, TR_ATTR_DEVICE, (uint64_t)(int64_t)device);
        tr_mattrs_add(e, TR_ATTR_HOST_OP_ID, r->id);
        tr_mattrs_add(e, TR_ATTR_TARGET_ID, r->u[0]);
        tr_mattrs_add(e, TR_ATTR_TEAMS, r->aux);
        break;
    case TR_REC_DEVICE_INIT:
        tr_mattrs_add(e, TR_ATTR_DEVICE, (uint64_t)(int64_t)r->dev);
        if (tr_journal_text(jd, r->u[0]))
            tr_mattrs_text(e, TR_ATTR_DEVICE_TYPE, tr_journal_text(jd, r->u[0]));
        break;
    case TR_REC_DEVICE_LOAD:
        tr_mattrs_add(e, TR_ATTR_MODULE_ID, r->id);
        if (tr_journal_text(jd, r->u[0]))
            tr_mattrs_text(e, TR_ATTR_FILE, tr_journal_text(jd, r->u[0]));
        tr_mattrs_add(e, TR_ATTR_HOST_ADDR, r->u[1]);
        tr_mattrs_add(e, TR_ATTR_BYTES, r->u[2]);
        tr_mattrs_add(e, TR_ATTR_DEVICE_ADDR, r->u[3]);
        break;
    case TR_REC_DEVICE_UNLOAD:
        tr_mattrs_add(e, TR_ATTR_MODULE_ID, r->id);
        break;
    default:
        tr_mattrs_add(e, TR_ATTR_DEVICE, (uint64_t)(int64_t)r->dev);
        break;
    }
}

static void write_lane_event(void *ctx, uint64_t loc, const tr_lane_event *le)
{
    tr_pass_ctx *p = ctx;
    tr_mev e = {.loc = loc, .time = le->time, .region = le->region};
    tr_mattrs a;
    a.n = 0;
    switch (le->kind) {
    case TR_LANE_ENTER:
        item_attributes(&a, (int)(int64_t)le->value, &le->rec, p->m->jd);
        e.kind = TR_MEV_ENTER;
        tr_pass_emit(p, tr_mev_with(&e, &a));
        break;
    case TR_LANE_LEAVE:
        if (le->incomplete)
            tr_mattrs_add(&a, TR_ATTR_INCOMPLETE, 1);
        e.kind = TR_MEV_LEAVE;
        tr_pass_emit(p, tr_mev_with(&e, &a));
        break;
    case TR_LANE_POINT:
        item_attributes(&a, (int)(int64_t)le->value, &le->rec, p->m->jd);
        e.kind = TR_MEV_ENTER;
        tr_pass_emit(p, tr_mev_with(&e, &a));
        /* A kernel that began at the very end of a killed run is zero
         * length, and still one whose end never came. */
        a.n = 0;
        if (le->incomplete)
            tr_mattrs_add(&a, TR_ATTR_INCOMPLETE, 1);
        e.kind = TR_MEV_LEAVE;
        tr_pass_emit(p, tr_mev_with(&e, &a));
        break;
    case TR_LANE_METRIC:
        e.kind = TR_MEV_METRIC;
        e.metric = TR_METRIC_DEVICE_MEMORY;
        e.value = le->value;
        tr_pass_emit(p, &e);
        break;
    }
}

static int hold(tr_pass_ctx *p, size_t di, uint32_t lane, const tr_lane_event *e)
{
    return tr_lane_hold(&p->dev->st[di].lanes[lane], e, write_lane_event, p);
}

/* ---- devices and lanes -------------------------------------------------- */

/* A lane more for device @di, its location the next one. */
static int lane_new(tr_pass_ctx *p, size_t di)
{
    tr_model *m = p->m;
    tr_device *d = &m->devices[di];
    tr_device_state *st = &p->dev->st[di];
    uint64_t *lanes = realloc(d->lanes, (d->nlanes + 1) * sizeof *lanes);
    if (!lanes)
        return -1;
    d->lanes = lanes;
    tr_lane_events *le = realloc(st->lanes, (d->nlanes + 1) * sizeof *le);
    if (!le)
        return -1;
    st->lanes = le;
    st->nlanes = d->nlanes + 1;
    uint64_t loc = m->nlocations++;
    d->lanes[d->nlanes] = loc;
    st->lanes[d->nlanes] = (tr_lane_events){.loc = loc};
    st->lane_end[d->nlanes] = 0;
    d->nlanes++;
    return 0;
}

/* Device @num, seen now: its first lane, whose first event opens its
 * memory window. */
static int device_new(tr_pass_ctx *p, int num)
{
    tr_model *m = p->m;
    tr_device_model *dm = p->dev;
    if (tr_grow((void **)&m->devices, &m->capdevices, m->ndevices, sizeof *m->devices, 8))
        return -1;
    if (tr_grow((void **)&dm->st, &dm->capst, m->ndevices, sizeof *dm->st, 8))
        return -1;
    size_t di = m->ndevices++;
    m->devices[di] = (tr_device){.num = num};
    memset(&dm->st[di], 0, sizeof dm->st[di]);
    dm->nst = m->ndevices;
    if (lane_new(p, di))
        return -1;
    tr_mev e = {.kind = TR_MEV_WIN_CREATE, .loc = m->devices[di].lanes[0], .time = m->t_min,
                .window = (uint32_t)di};
    tr_pass_emit(p, &e);
    return 0;
}

/* Device number @num is named: a device from now on unless it is the
 * host's. A number named only where the host's may be (a target
 * construct's device) waits until the host's is known (@sure: the record
 * speaks of a device's own work). */
static __attribute__((noinline)) int want_slow(tr_pass_ctx *p, int num, int sure)
{
    tr_model *m = p->m;
    tr_device_model *dm = p->dev;
    if (num < 0 || num == m->host_device || tr_device_model_index(p, num) >= 0) {
        if ((unsigned)num < 64 && (num == m->host_device || tr_device_model_index(p, num) >= 0))
            dm->decided |= 1ull << num;
        return 0;
    }
    if (sure || m->host_device != -2)
        return device_new(p, num);
    for (size_t i = 0; i < dm->npending; i++)
        if (dm->pending[i] == num)
            return 0;
    if (tr_grow((void **)&dm->pending, &dm->cappending, dm->npending, sizeof *dm->pending, 8))
        return -1;
    dm->pending[dm->npending++] = num;
    return 0;
}

static inline int want(tr_pass_ctx *p, int num, int sure)
{
    /* Almost every record names a number already decided. */
    if ((unsigned)num < 64 && (p->dev->decided >> num & 1))
        return 0;
    return num < 0 ? 0 : want_slow(p, num, sure);
}

/* The numbers that waited: every one but the host's, in the order seen. */
static int settle_pending(tr_pass_ctx *p)
{
    tr_device_model *dm = p->dev;
    int rc = 0;
    for (size_t i = 0; i < dm->npending && !rc; i++)
        rc = want(p, dm->pending[i], 1);
    dm->npending = 0;
    return rc;
}

int tr_device_model_note(tr_pass_ctx *p, const tr_record *r)
{
    tr_model *m = p->m;
    switch (r->type) {
    case TR_REC_DEVICE_INIT:
    case TR_REC_DEVICE_LOAD:
    case TR_REC_SUBMIT:
        return want(p, r->dev, 1);
    case TR_REC_TARGET:
        return want(p, r->dev, 0);
    case TR_REC_DATA_OP:
        /* The first data op that says which side is the host. */
        if (m->host_device == -2) {
            if (tr_optype_is_to_device(r->sub) || tr_optype_is_alloc(r->sub))
                m->host_device = r->dev;
            else if (tr_optype_is_from_device(r->sub))
                m->host_device = r->dev2;
            if (m->host_device != -2 && settle_pending(p))
                return -1;
        }
        return want(p, r->dev, 0) || want(p, r->dev2, 0) ? -1 : 0;
    default:
        return 0;
    }
}

/* ---- target constructs -------------------------------------------------- */

/* A target construct is known from its begin to its end (its kernels are
 * submitted in between); an index that ended is reused. */
static int target_begin(tr_device_model *dm, const tr_record *r)
{
    uint64_t i;
    if (tr_u64map_get(&dm->target_index, r->id, &i)) {
        dm->targets[i] = (tr_target_info){r->dev, r->u[0]}; /* an id seen again: the newest wins */
        return 0;
    }
    if (dm->nfree)
        i = dm->free_targets[--dm->nfree];
    else if (tr_grow((void **)&dm->targets, &dm->captargets, dm->ntargets, sizeof *dm->targets, 64))
        return -1;
    else
        i = dm->ntargets++;
    dm->targets[i] = (tr_target_info){r->dev, r->u[0]};
    return tr_u64map_put(&dm->target_index, r->id, i);
}

static int target_end(tr_device_model *dm, const tr_record *r)
{
    uint64_t i;
    if (!tr_u64map_del(&dm->target_index, r->id, &i))
        return 0;
    if (tr_grow((void **)&dm->free_targets, &dm->capfree, dm->nfree, sizeof *dm->free_targets, 64))
        return -1;
    dm->free_targets[dm->nfree++] = (uint32_t)i;
    return 0;
}

static const tr_target_info *target_of(const tr_device_model *dm, uint64_t target_id)
{
    uint64_t i;
    return target_id && tr_u64map_get(&dm->target_index, target_id, &i) ? &dm->targets[i] : 0;
}

/* ---- kernels ------------------------------------------------------------ */

/* Lane 0 takes zero-length items (they nest inside anything) without
 * holding it; others take the first lane free at their start (an @end of
 * UINT64_MAX: not known yet, the lane is held until it is). */
static int place(tr_pass_ctx *p, size_t di, uint64_t start, uint64_t end, uint32_t *lane)
{
    tr_device_state *st = &p->dev->st[di];
    tr_device *d = &p->m->devices[di];
    *lane = 0;
    if (start == end)
        return 0;
    uint32_t l = 0;
    while (l < d->nlanes && st->lane_end[l] > start)
        l++;
    if (l == d->nlanes) {
        if (d->nlanes == TR_DEVICE_MAX_LANES)
            l = d->nlanes - 1; /* pathological; the last lane may then nest badly */
        else if (lane_new(p, di))
            return -1;
    }
    st->lane_end[l] = end;
    *lane = l;
    return 0;
}

enum { END_FAR = 0, END_FOUND, END_ZERO, END_NEVER };

/* Where the kernel begun by @r ends: the first SUBMIT record with its
 * host_op_id after it, in the stream's lookahead: an END (its time), or
 * another BEGIN (the id was reused: zero length); with neither before the
 * stream ends, it never ended; past the lookahead, END_FAR. */
static int submit_end(tr_pass_ctx *p, size_t stream, const tr_record *r, uint64_t *end)
{
    tr_stream_cursor *cur = tr_pass_cursor(p, stream);
    for (size_t k = 0; k < TR_CURSOR_LOOKAHEAD; k++) {
        const tr_record *e = cur ? tr_stream_cursor_peek(cur, k) : 0;
        if (!e)
            return END_NEVER;
        if (e->type == TR_REC_SUBMIT && e->id == r->id && e->phase != TR_PHASE_POINT) {
            *end = e->time;
            return e->phase == TR_PHASE_END ? END_FOUND : END_ZERO;
        }
    }
    return END_FAR;
}

static int kernel_end(tr_pass_ctx *p, uint64_t k, uint64_t time, int incomplete)
{
    tr_device_model *dm = p->dev;
    const tr_open_kernel *ok = &dm->kernels[k];
    tr_device_state *st = &dm->st[ok->device];
    st->lane_end[ok->lane] = time;
    tr_lane_event *enter;
    int rc = 0;
    if (time == ok->start && (enter = tr_lane_held_enter(&st->lanes[ok->lane], ok->index))) {
        /* Zero length after all (it began at the very end of a killed
         * run): a point, its Enter still held; it never ended. */
        enter->kind = TR_LANE_POINT;
        enter->incomplete = (uint8_t)incomplete;
        st->lane_end[ok->lane] = 0;
    } else {
        tr_lane_event leave = {.time = time, .kind = TR_LANE_LEAVE, .index = ok->index, .region = ok->region,
                               .incomplete = (uint8_t)incomplete};
        rc = hold(p, ok->device, ok->lane, &leave);
    }
    if (rc ||
        tr_grow((void **)&dm->free_kernels, &dm->capfree_kernels, dm->nfree_kernels, sizeof *dm->free_kernels, 16))
        return -1;
    dm->free_kernels[dm->nfree_kernels++] = (uint32_t)k;
    return 0;
}

static int kernel_open(tr_pass_ctx *p, size_t stream, uint64_t id, tr_open_kernel ok)
{
    tr_device_model *dm = p->dev;
    uint64_t k;
    if (dm->nfree_kernels)
        k = dm->free_kernels[--dm->nfree_kernels];
    else if (tr_grow((void **)&dm->kernels, &dm->capkernels, dm->nkernels, sizeof *dm->kernels, 16))
        return -1;
    else
        k = dm->nkernels++;
    dm->kernels[k] = ok;
    return tr_u64map_put(&dm->open_kernels[stream], id, k);
}

static int submit(tr_pass_ctx *p, size_t stream, const tr_record *r)
{
    tr_model *m = p->m;
    tr_device_model *dm = p->dev;
    uint64_t k;
    if (r->phase == TR_PHASE_END) {
        if (r->id && tr_u64map_del(&dm->open_kernels[stream], r->id, &k) && kernel_end(p, k, r->time, 0))
            return -1;
        if (!r->id || !tr_u64map_del(&dm->open_submits[stream], r->id, 0))
            m->stray_ends++;
        return 0;
    }
    /* An id begun again before an end beyond the lookahead came: the first
     * kernel ends where the second begins. */
    if (r->phase == TR_PHASE_BEGIN && r->id && tr_u64map_del(&dm->open_kernels[stream], r->id, &k) &&
        kernel_end(p, k, r->time, 0))
        return -1;
    const tr_target_info *t = target_of(dm, r->u[0]);
    int num = r->dev >= 0 && r->dev != m->host_device ? r->dev : t ? t->dev : -1;
    if (want(p, num, 1))
        return -1;
    int di = tr_device_model_index(p, num);
    if (di < 0)
        return 0;
    uint64_t end = r->time;
    int how = END_FOUND;
    if (r->phase == TR_PHASE_BEGIN && r->id) {
        how = submit_end(p, stream, r, &end);
        if (how == END_ZERO)
            end = r->time;
        if (tr_u64map_put(&dm->open_submits[stream], r->id, 1))
            return -1;
    }
    int open = how == END_FAR || how == END_NEVER;
    uint64_t region = tr_region_key_make(KEY_KERNEL, t ? t->codeptr : r->u[1]);
    uint32_t lane = 0;
    if (r->phase != TR_PHASE_POINT && place(p, (size_t)di, r->time, open ? UINT64_MAX : end, &lane))
        return -1;
    tr_device_state *st = &dm->st[di];
    uint64_t index = st->items++;
    int point = r->phase == TR_PHASE_POINT || (!open && end == r->time);
    tr_lane_event e = {.time = r->time, .kind = point ? TR_LANE_POINT : TR_LANE_ENTER, .index = index,
                       .region = region, .value = (uint64_t)(int64_t)m->devices[di].num, .rec = *r};
    if (hold(p, (size_t)di, lane, &e))
        return -1;
    if (point)
        return 0;
    if (open)
        return kernel_open(p, stream, r->id, (tr_open_kernel){(uint32_t)di, lane, index, region, r->time});
    tr_lane_event leave = {.time = end, .kind = TR_LANE_LEAVE, .index = index, .region = region};
    return hold(p, (size_t)di, lane, &leave);
}

static int device_event(tr_pass_ctx *p, const tr_record *r)
{
    tr_model *m = p->m;
    int di = tr_device_model_index(p, r->dev);
    if (di < 0)
        return 0;
    if (r->type == TR_REC_DEVICE_INIT && tr_journal_text(m->jd, r->u[0]))
        m->devices[di].type = tr_journal_text(m->jd, r->u[0]);
    tr_lane_event e = {.time = r->time, .kind = TR_LANE_POINT, .index = p->dev->st[di].items++,
                       .region = tr_region_key_make(KEY_DEVICE_EVENT, r->type),
                       .value = (uint64_t)(int64_t)r->dev, .rec = *r};
    return hold(p, (size_t)di, 0, &e);
}

/* ---- device memory ------------------------------------------------------ */

/* The device and address a data op's end names; 0 when it names none the
 * model knows (the memory in use does not count those). */
static int where(const tr_pass_ctx *p, const tr_record *r, int alloc, int *di, uint64_t *addr)
{
    *di = tr_device_model_index(p, alloc ? r->dev2 : r->dev);
    *addr = alloc ? r->u[2] : r->u[1];
    return *di >= 0 && *addr != 0;
}

tr_delete_answer tr_device_model_freed(const tr_pass_ctx *p, const tr_record *end)
{
    tr_delete_answer a = {0};
    int di;
    uint64_t addr, v;
    if (!end || !where(p, end, 0, &di, &addr))
        return a;
    const tr_device_state *st = &p->dev->st[di];
    if (tr_u64map_get(&st->bytes, addr, &v)) {
        a.has_bytes = 1, a.bytes = v;
        if (tr_u64map_get(&st->host, addr, &v))
            a.has_host = 1, a.host = v;
    }
    return a;
}

/* Allocations and deletes may come from different threads, so the memory in
 * use is counted over all of them in time order. A delete reports 0 bytes;
 * its size is the size of the alloc that produced its address. */
static int memory(tr_pass_ctx *p, const tr_record *r)
{
    if (r->phase == TR_PHASE_BEGIN)
        return 0;
    int alloc = tr_optype_is_alloc(r->sub);
    if (!alloc && !tr_optype_is_delete(r->sub))
        return 0;
    int di;
    uint64_t addr, v;
    if (!where(p, r, alloc, &di, &addr))
        return 0;
    tr_device_state *st = &p->dev->st[di];
    if (alloc) {
        if (tr_u64map_put(&st->bytes, addr, r->u[3]) || (r->u[1] && tr_u64map_put(&st->host, addr, r->u[1])))
            return -1;
        st->in_use += r->u[3];
    } else if (tr_u64map_del(&st->bytes, addr, &v)) {
        tr_u64map_del(&st->host, addr, 0);
        st->in_use -= v;
    }
    tr_lane_event e = {.time = r->time, .kind = TR_LANE_METRIC, .index = st->metrics++, .value = st->in_use};
    return hold(p, (size_t)di, 0, &e);
}

int tr_device_model_record(tr_pass_ctx *p, size_t stream, const tr_record *r)
{
    switch (r->type) {
    case TR_REC_TARGET:
        if (!r->id)
            return 0;
        return r->phase == TR_PHASE_END ? target_end(p->dev, r) : target_begin(p->dev, r);
    case TR_REC_SUBMIT:
        return submit(p, stream, r);
    case TR_REC_DEVICE_INIT:
    case TR_REC_DEVICE_FINI:
    case TR_REC_DEVICE_LOAD:
    case TR_REC_DEVICE_UNLOAD:
        return device_event(p, r);
    case TR_REC_DATA_OP:
        return memory(p, r);
    default:
        return 0;
    }
}

int tr_device_model_finish(tr_pass_ctx *p)
{
    tr_model *m = p->m;
    tr_device_model *dm = p->dev;
    if (settle_pending(p))
        return -1;
    /* A kernel whose end never came lasts until the end of the run. */
    for (size_t s = 0; s < m->nstreams; s++) {
        tr_u64map *open = &dm->open_kernels[s];
        for (size_t i = 0; i < open->cap; i++) {
            uint64_t id, k;
            if (!tr_u64map_at(open, i, &id, &k))
                continue;
            m->incomplete++;
            if (kernel_end(p, k, m->t_max, 1))
                return -1;
        }
        tr_u64map_free(open);
    }
    for (size_t di = 0; di < m->ndevices; di++) {
        tr_device *d = &m->devices[di];
        for (uint32_t l = 0; l < d->nlanes; l++) {
            tr_lane_release(&dm->st[di].lanes[l], UINT64_MAX, write_lane_event, p);
            if (l == 0) {
                tr_mev e = {.kind = TR_MEV_WIN_DESTROY, .loc = d->lanes[0], .time = m->t_max, .window = (uint32_t)di};
                tr_pass_emit(p, &e);
            }
            if (p->sink.location_done && !p->failed && p->sink.location_done(p->sink.ctx, d->lanes[l]))
                p->failed = 1;
        }
    }
    return p->failed ? -1 : 0;
}

void tr_device_model_free(tr_device_model *dm, size_t nstreams)
{
    for (size_t i = 0; i < dm->nst; i++) {
        tr_device_state *st = &dm->st[i];
        for (uint32_t l = 0; st->lanes && l < st->nlanes; l++)
            tr_lane_free(&st->lanes[l]);
        free(st->lanes);
        tr_u64map_free(&st->bytes);
        tr_u64map_free(&st->host);
    }
    free(dm->st);
    if (dm->open_submits)
        for (size_t s = 0; s < nstreams; s++)
            tr_u64map_free(&dm->open_submits[s]);
    if (dm->open_kernels)
        for (size_t s = 0; s < nstreams; s++)
            tr_u64map_free(&dm->open_kernels[s]);
    free(dm->open_submits);
    free(dm->open_kernels);
    free(dm->kernels);
    free(dm->free_kernels);
    free(dm->targets);
    free(dm->free_targets);
    free(dm->pending);
    tr_u64map_free(&dm->target_index);
    memset(dm, 0, sizeof *dm);
}
