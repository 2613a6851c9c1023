/* model_scan.c - the model's one pass over a journal's records, given to
 * it by the loader (tr_journal_load_visiting) one at a time, stream by
 * stream: the records are never all in memory.
 *
 * What the pass settles as it goes: the run's first and last stamp, the
 * host's device number and the devices, the target constructs, the host
 * OpenMP model, and the data op ends the host writer will not find near
 * their begins. What needs every stream before it can be settled (device
 * lanes, device memory, link mappings, MPI_T clock fits) it keeps copies
 * of, in m->kept, for tr_model_build: the records of those few types, not
 * the stream. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#include "journal/data_op.h"
#include "model/device_pass.h"

void tr_model_begin(tr_model *m, tr_journal_data *jd)
{
    memset(m, 0, sizeof *m);
    m->jd = jd;
    m->t_min = UINT64_MAX;
    m->host_device = -2;
    m->scan.stream = SIZE_MAX;
    m->scan.last_device = -1;
}

static int grow(void **p, size_t *cap, size_t n, size_t size) { return tr_grow(p, cap, n, size, 16); }

/* The per-stream arrays, sized by the loader's stream layout (known before
 * the first record). */
static int start(tr_model *m)
{
    size_t n = m->jd->data.nstreams ? m->jd->data.nstreams : 1;
    m->kept.streams = calloc(n, sizeof *m->kept.streams);
    m->kept.nstreams = m->jd->data.nstreams;
    m->scan.kept_cap = calloc(n, sizeof *m->scan.kept_cap);
    m->far = calloc(n, sizeof *m->far);
    m->device_records = calloc(n, 1);
    if (!m->kept.streams || !m->scan.kept_cap || !m->far || !m->device_records)
        return -1;
    for (uint32_t i = 0; i < m->jd->nvariables; i++)
        m->scan.any_link |= m->jd->variables[i].ref_ptr != 0;
    return tr_omp_model_begin(m->jd, m->jd->data.nstreams, &m->omp);
}

static void note_device(tr_model_scan *sc, int num)
{
    /* Records name the same one or two devices over and over. */
    if (num < 0 || num == sc->last_device)
        return;
    sc->last_device = num;
    for (size_t i = 0; i < sc->ndevices; i++)
        if (sc->devices[i] == num)
            return;
    if (!grow((void **)&sc->devices, &sc->capdevices, sc->ndevices, sizeof *sc->devices))
        sc->devices[sc->ndevices++] = num;
}

static void note_host_and_devices(tr_model *m, const tr_record *r)
{
    switch (r->type) {
    case TR_REC_DEVICE_INIT:
    case TR_REC_DEVICE_LOAD:
    case TR_REC_TARGET:
    case TR_REC_SUBMIT:
        note_device(&m->scan, r->dev);
        break;
    case TR_REC_DATA_OP:
        note_device(&m->scan, r->dev);
        note_device(&m->scan, r->dev2);
        /* The first data op that says which side is the host, in stream order. */
        if (m->host_device == -2) {
            if (tr_optype_is_to_device(r->sub) || tr_optype_is_alloc(r->sub))
                m->host_device = r->dev;
            else if (tr_optype_is_from_device(r->sub))
                m->host_device = r->dev2;
        }
        break;
    default:
        break;
    }
}

/* The records tr_model_build reads again. An MPI_T event's continuation
 * records are kept only right behind it, as they were recorded, so that the
 * MPI_T model sees the same runs in the copies as in the stream. */
static int wanted(tr_model *m, const tr_record *r)
{
    switch (r->type) {
    case TR_REC_MPIT:
    case TR_REC_MPIT_DROP:
        return 1;
    case TR_REC_MPIT_MORE:
        return m->scan.prev_kept_mpit;
    case TR_REC_DATA_OP:
        /* Link mappings read ends only. */
        return m->scan.any_link && r->phase != TR_PHASE_BEGIN &&
               (tr_optype_is_alloc(r->sub) || tr_optype_is_delete(r->sub) ||
                (tr_optype_is_to_device(r->sub) && r->u[3] == 8));
    default:
        return 0;
    }
}

static int keep(tr_model *m, size_t s, const tr_record *r)
{
    tr_stream *k = &m->kept.streams[s];
    if (grow((void **)&k->rec, &m->scan.kept_cap[s], k->n, sizeof *k->rec))
        return -1;
    k->rec[k->n++] = *r;
    m->kept.records++;
    return 0;
}

static int far_submit(tr_model *m, size_t s, uint64_t begin_pos, uint64_t end)
{
    return tr_u64map_put(&m->far[s].submit_end, begin_pos + 1, end);
}

/* The kernels of the stream just read that never ended, and whose begin lies
 * far enough from its end for the writer not to see that. */
static int end_stream(tr_model *m)
{
    tr_model_scan *sc = &m->scan;
    int rc = 0;
    if (sc->stream != SIZE_MAX && sc->pos)
        for (size_t k = 0; k < sc->open_submits.cap && !rc; k++) {
            uint64_t id, p1;
            if (tr_u64map_at(&sc->open_submits, k, &id, &p1) && sc->pos - 1 - (p1 - 1) >= TR_MODEL_SUBMIT_END_NEAR)
                rc = far_submit(m, sc->stream, p1 - 1, TR_SUBMIT_NEVER_ENDED);
        }
    tr_u64map_free(&sc->open_submits);
    return rc;
}

/* Where each kernel ends (TR_MODEL_SUBMIT_END_NEAR says how): kept only
 * when the writer, looking that far ahead, would not find it. */
static int note_submit(tr_model *m, size_t s, const tr_record *r)
{
    tr_model_scan *sc = &m->scan;
    if (r->type != TR_REC_SUBMIT || !r->id || r->phase == TR_PHASE_POINT)
        return 0;
    uint64_t p1;
    if (tr_u64map_del(&sc->open_submits, r->id, &p1) && sc->pos - (p1 - 1) > TR_MODEL_SUBMIT_END_NEAR &&
        far_submit(m, s, p1 - 1, r->phase == TR_PHASE_END ? r->time : TR_SUBMIT_ZERO_LENGTH))
        return -1;
    if (r->phase == TR_PHASE_BEGIN && tr_u64map_put(&sc->open_submits, r->id, sc->pos + 1))
        return -1;
    return 0;
}

static void new_stream(tr_model *m, size_t s)
{
    tr_model_scan *sc = &m->scan;
    sc->stream = s;
    sc->pos = 0;
    sc->head = sc->count = 0;
    sc->prev_kept_mpit = 0;
    tr_u64map_free(&sc->far_ids);
}

/* Data op begins whose end is not within TR_MODEL_DATA_OP_END_NEAR records
 * become far: their ids are watched, and each later end with one is kept
 * (the last wins, as the writer's lookup always took the last). */
static void expire_pending(tr_model_scan *sc)
{
    while (sc->count && sc->pending[sc->head].pos + TR_MODEL_DATA_OP_END_NEAR < sc->pos) {
        if (!sc->pending[sc->head].found)
            tr_u64map_put(&sc->far_ids, sc->pending[sc->head].id, 1);
        sc->head = (sc->head + 1) % (TR_MODEL_DATA_OP_END_NEAR + 1);
        sc->count--;
    }
}

static int note_data_op_end(tr_model *m, size_t s, const tr_record *r)
{
    tr_model_scan *sc = &m->scan;
    uint64_t v;
    if (tr_u64map_get(&sc->far_ids, r->id, &v)) {
        tr_stream_far_ends *f = &m->far[s];
        uint64_t at;
        if (!tr_u64map_get(&f->by_id, r->id, &at)) {
            if (grow((void **)&f->ends, &f->cap, f->n, sizeof *f->ends) || tr_u64map_put(&f->by_id, r->id, f->n))
                return -1;
            at = f->n++;
        }
        f->ends[at] = (tr_far_end){sc->pos, *r};
    }
    for (size_t i = 0, k = sc->head; i < sc->count; i++, k = (k + 1) % (TR_MODEL_DATA_OP_END_NEAR + 1))
        if (sc->pending[k].id == r->id)
            sc->pending[k].found = 1;
    /* Found begins need no watching: usually the ring is empty again. */
    while (sc->count && sc->pending[sc->head].found) {
        sc->head = (sc->head + 1) % (TR_MODEL_DATA_OP_END_NEAR + 1);
        sc->count--;
    }
    return 0;
}

static int note_data_op(tr_model *m, size_t s, const tr_record *r)
{
    tr_model_scan *sc = &m->scan;
    expire_pending(sc);
    if (r->type != TR_REC_DATA_OP || !r->id)
        return 0;
    if (r->phase == TR_PHASE_END)
        return note_data_op_end(m, s, r);
    size_t k = (sc->head + sc->count) % (TR_MODEL_DATA_OP_END_NEAR + 1);
    sc->pending[k].pos = sc->pos;
    sc->pending[k].id = r->id;
    sc->pending[k].found = 0;
    sc->count++;
    return 0;
}

int tr_model_visit(void *vm, size_t s, const tr_record *r)
{
    tr_model *m = vm;
    if (!m->kept.streams && start(m))
        return -1;
    if (s != m->scan.stream) {
        if (end_stream(m))
            return -1;
        new_stream(m, s);
    }
    if (r->time < m->t_min)
        m->t_min = r->time;
    if (r->time > m->t_max)
        m->t_max = r->time;
    if (r->type != TR_REC_OMP || (r->sub != TR_OMP_THREAD && !(r->sub == TR_OMP_IMPLICIT_TASK && r->id == 0)))
        m->beyond_bookkeeping = 1;
    if (r->type == TR_REC_TARGET_MAP)
        m->target_maps++;
    if (!m->device_records[s])
        m->device_records[s] = tr_device_pass_reads(r);
    note_host_and_devices(m, r);
    int kept = wanted(m, r);
    if (note_submit(m, s, r) || note_data_op(m, s, r) || tr_omp_model_visit(&m->omp, s, r) ||
        (kept && keep(m, s, r)))
        return -1;
    m->scan.prev_kept_mpit = kept && (r->type == TR_REC_MPIT || r->type == TR_REC_MPIT_MORE);
    m->scan.pos++;
    return 0;
}

int tr_model_scan_end(tr_model *m) { return end_stream(m); }

uint64_t tr_model_far_submit_end(const tr_model *m, size_t stream, uint64_t begin_pos)
{
    uint64_t end;
    if (!m->far || stream >= m->data.nstreams || !tr_u64map_get(&m->far[stream].submit_end, begin_pos + 1, &end))
        return TR_SUBMIT_NEVER_ENDED;
    return end;
}

const tr_record *tr_model_data_op_end(const tr_model *m, tr_stream_cursor *cur, size_t stream, uint64_t pos,
                                      const tr_record *r)
{
    uint64_t id = r->id;
    if (!id)
        return 0;
    for (size_t k = 0; k < TR_MODEL_DATA_OP_END_NEAR; k++) {
        const tr_record *e = tr_stream_cursor_peek(cur, k);
        if (!e)
            return 0; /* the stream ends here: no end farther either */
        if (e->type == TR_REC_DATA_OP && e->phase == TR_PHASE_END && e->id == id)
            return e;
    }
    return tr_model_far_end(m, stream, pos, id);
}

const tr_record *tr_model_far_end(const tr_model *m, size_t stream, uint64_t pos, uint64_t id)
{
    uint64_t at;
    if (!m->far || stream >= m->data.nstreams || !tr_u64map_get(&m->far[stream].by_id, id, &at))
        return 0;
    const tr_far_end *e = &m->far[stream].ends[at];
    return e->pos > pos ? &e->rec : 0;
}
