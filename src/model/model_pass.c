/* model_pass.c - the model's one pass (model.h): every host thread's
 * cursor, merged in time order by a binary heap (ties: the lower stream
 * first), each record given to the models that need it: the OpenMP model
 * and the device numbers first (what a thread's states and a transfer's
 * window ask of them must include this record), then the thread's own
 * location, then the devices' side. */
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "journal/data_op.h"
#include "model/device_model.h"
#include "model/host_slots.h"
#include "model/host_thread.h"
#include "model/omp_model.h"
#include "model/omp_states.h"
#include "model/pass_context.h"

/* The pass: what its parts reach (ctx), and what it drives. */
typedef struct tr_pass {
    tr_pass_ctx ctx;
    tr_model *m;
    tr_host *hosts;          /* per stream */
    struct heap_entry {
        uint64_t time;       /* of the stream's next record */
        size_t stream;
    } *heap;                 /* streams with records left, earliest next record first */
    size_t nheap;
    tr_device_model dev;
    tr_omp_model omp;
    size_t *kept_cap;        /* per stream, of m->mpit_kept */
    uint8_t *prev_kept_mpit; /* per stream: its record before was an MPI_T record kept */
} tr_pass;

/* ---- MPI_T copies ------------------------------------------------------- */

/* An MPI_T event's continuation records are kept only right behind it, as
 * they were recorded, so that the MPI_T model sees the same runs in the
 * copies as in the stream. */
static int keep_mpit(tr_pass *p, size_t s, const tr_record *r)
{
    int kept = r->type == TR_REC_MPIT || r->type == TR_REC_MPIT_DROP ||
               (r->type == TR_REC_MPIT_MORE && p->prev_kept_mpit[s]);
    p->prev_kept_mpit[s] = kept && (r->type == TR_REC_MPIT || r->type == TR_REC_MPIT_MORE);
    if (!kept)
        return 0;
    tr_stream *k = &p->m->mpit_kept.streams[s];
    if (tr_grow((void **)&k->rec, &p->kept_cap[s], k->n, sizeof *k->rec, 16))
        return -1;
    k->rec[k->n++] = *r;
    p->m->mpit_kept.records++;
    return 0;
}

/* ---- declare target link ------------------------------------------------ */

static int link_wanted(const tr_record *r)
{
    return r->type == TR_REC_DATA_OP && r->phase != TR_PHASE_BEGIN &&
           (tr_optype_is_alloc(r->sub) || tr_optype_is_delete(r->sub) ||
            (tr_optype_is_to_device(r->sub) && r->u[3] == 8));
}

/* Whether the run may have hashed transfers (TRACER_HASH, as its journal
 * records the configuration; a journal from before TRACER_HASH has none):
 * then the hash records are read before the pass. */
static int run_hashed(const tr_journal_data *jd)
{
    static const char key[] = "TRACER_HASH=";
    for (uint32_t i = 0; i < jd->nconfig; i++) {
        const char *c = jd->config[i];
        if (c && !strncmp(c, key, sizeof key - 1)) {
            const char *v = c + sizeof key - 1;
            return !(v[0] == '0' && (!v[1] || v[1] == ' '));
        }
    }
    return 0;
}

/* What needs the whole run, read before the pass: whether a link
 * mapping's reference pointer is ever written (a journal that names link
 * variables has its data op ends read into the link model), the content
 * hash of each transfer, which a copy from the device gets only at the end
 * of its construct (ompt_callbacks.c), and the data mapping advice, which
 * an op's events carry though what decides it may come much later. */
static int data_prepass(tr_model *m)
{
    const tr_journal_data *jd = m->jd;
    int links = 0, hashes = run_hashed(jd);
    for (uint32_t i = 0; i < jd->nvariables; i++)
        links |= jd->variables[i].ref_ptr != 0;
    if (!links && !hashes)
        return 0;
    tr_collected ops = {.streams = calloc(m->nstreams ? m->nstreams : 1, sizeof *ops.streams),
                        .nstreams = m->nstreams};
    if (!ops.streams)
        return -1;
    int rc = 0;
    for (size_t s = 0; s < m->nstreams && !rc; s++) {
        if (jd->data.streams[s].chunked == TR_STREAM_NO_CHUNKS)
            continue;
        tr_stream_cursor *c = tr_journal_stream_open(jd, &jd->data.streams[s]);
        if (!c) {
            rc = -1;
            break;
        }
        size_t cap = 0;
        tr_stream *st = &ops.streams[s];
        for (const tr_record *r; !rc && (r = tr_stream_cursor_next(c));) {
            if (r->type == TR_REC_DATA_HASH) {
                if (r->id && tr_u64map_put(&m->hashes, r->id, r->u[0]))
                    rc = -1;
                continue;
            }
            if (hashes && tr_advice_model_add(&m->advice, r))
                rc = -1;
            if (!links || !link_wanted(r))
                continue;
            if (tr_grow((void **)&st->rec, &cap, st->n, sizeof *st->rec, 16))
                rc = -1;
            else
                st->rec[st->n++] = *r;
        }
        tr_stream_cursor_close(c);
    }
    if (!rc && links)
        rc = tr_link_model_build(jd, &ops, &m->links);
    if (!rc && hashes)
        rc = tr_advice_model_finish(&m->advice, &m->hashes);
    tr_collected_free(&ops);
    return rc;
}

/* ---- the merge ---------------------------------------------------------- */

static uint64_t next_time(const tr_pass *p, size_t s)
{
    const tr_record *r = tr_stream_cursor_peek(p->ctx.cur[s], 0);
    return r ? r->time : UINT64_MAX;
}

static int before(const struct heap_entry *a, const struct heap_entry *b)
{
    return a->time < b->time || (a->time == b->time && a->stream < b->stream);
}

static void sift_down(tr_pass *p, size_t i)
{
    struct heap_entry *h = p->heap;
    size_t n = p->nheap;
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        if (l < n && before(&h[l], &h[best]))
            best = l;
        if (l + 1 < n && before(&h[l + 1], &h[best]))
            best = l + 1;
        if (best == i)
            return;
        struct heap_entry t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

/* ---- host locations ------------------------------------------------------ */

/* Whether thread @s, its stream read, will write nothing more: then its
 * location can take another thread's events, which all come later. What
 * the end of the run still writes on a thread (regions closed there, a
 * loss open until the end, mappings never undone, the program's end on
 * thread 0, an OpenMP thread's states and metrics) keeps its location. */
static int ended_quiet(const tr_pass *p, size_t s)
{
    const tr_model *m = p->m;
    const tr_host *h = &p->hosts[s];
    if (s == 0 || m->has_omp[s] || h->depth || h->final_gap || h->attrs.n)
        return 0;
    const tr_journal_data *jd = m->jd;
    for (uint32_t i = 0; i < jd->nlosses; i++)
        if (jd->losses[i].location == jd->data.streams[s].index && jd->losses[i].count)
            return 0;
    for (uint32_t k = 0; k < m->links.n; k++)
        if (m->links.maps[k].stream == s && !m->links.maps[k].unmap_op)
            return 0;
    return 1;
}

/* Thread @s's stream is read: a thread that ended quietly gives its
 * location back (host_slots.h). */
static void host_retire(tr_pass *p, size_t s)
{
    tr_host *h = &p->hosts[s];
    if (h->loc == TR_HOST_NO_SLOT || !ended_quiet(p, s))
        return;
    tr_host_slots_give(&p->ctx.slots, h->loc, h->emit_time);
    h->loc = TR_HOST_NO_SLOT;
}

/* Stream @s is read: what it read joins the journal's statistics. */
static void stream_done(tr_pass *p, size_t s)
{
    tr_stream_cursor_stats cs;
    tr_stream_cursor_stats_get(p->ctx.cur[s], &cs);
    tr_journal_stream_done(p->m->jd, s, &cs);
    tr_stream_cursor_close(p->ctx.cur[s]);
    p->ctx.cur[s] = 0;
}

static void record(tr_pass *p, size_t s, const tr_record *r)
{
    tr_model *m = p->m;
    tr_host *h = &p->hosts[s];
    if (r->time < m->t_min)
        m->t_min = r->time;
    if (r->time > m->t_max)
        m->t_max = r->time;
    if (r->type == TR_REC_TARGET_MAP)
        m->target_maps++;
    if (r->type == TR_REC_OMP && !m->has_omp[s]) {
        m->has_omp[s] = 1;
        m->omp_any = 1;
        if (tr_omp_host_init(h))
            p->ctx.failed = 1;
    }
    if (tr_omp_model_visit(&p->omp, s, r) || tr_device_model_note(&p->ctx, r) || keep_mpit(p, s, r))
        p->ctx.failed = 1;
    tr_host_record(h, r);
    if (tr_device_model_record(&p->ctx, s, r))
        p->ctx.failed = 1;
    h->last_time = r->time;
    m->records++;
}

static int pass_init(tr_pass *p, tr_model *m, tr_model_sink sink)
{
    p->ctx = (tr_pass_ctx){.m = m, .sink = sink, .dev = &p->dev, .omp = &p->omp};
    size_t n = m->nstreams ? m->nstreams : 1;
    p->ctx.cur = calloc(n, sizeof *p->ctx.cur);
    p->hosts = calloc(n, sizeof *p->hosts);
    p->heap = calloc(n, sizeof *p->heap);
    p->kept_cap = calloc(n, sizeof *p->kept_cap);
    p->prev_kept_mpit = calloc(n, 1);
    m->mpit_kept.streams = calloc(n, sizeof *m->mpit_kept.streams);
    m->mpit_kept.nstreams = m->nstreams;
    if (!p->ctx.cur || !p->hosts || !p->heap || !p->kept_cap || !p->prev_kept_mpit || !m->mpit_kept.streams ||
        tr_host_slots_init(&p->ctx.slots, m->nstreams) || tr_device_model_init(&p->dev, m->nstreams))
        return -1;
    const tr_journal_data *jd = m->jd;
    for (size_t s = 0; s < m->nstreams; s++) {
        tr_host *h = &p->hosts[s];
        *h = (tr_host){.p = &p->ctx, .stream = s, .loc = TR_HOST_NO_SLOT, .emits = 1};
        if (jd->data.streams[s].chunked == TR_STREAM_NO_CHUNKS)
            continue;
        p->ctx.cur[s] = tr_journal_stream_open(jd, &jd->data.streams[s]);
        if (!p->ctx.cur[s])
            return -1;
        if (tr_stream_cursor_peek(p->ctx.cur[s], 0))
            p->heap[p->nheap++] = (struct heap_entry){next_time(p, s), s};
        else
            stream_done(p, s);
    }
    for (size_t i = p->nheap / 2; i-- > 0;)
        sift_down(p, i);
    return 0;
}

static void pass_free(tr_pass *p)
{
    for (size_t s = 0; p->hosts && s < p->m->nstreams; s++)
        tr_host_free(&p->hosts[s]);
    for (size_t s = 0; p->ctx.cur && s < p->m->nstreams; s++)
        tr_stream_cursor_close(p->ctx.cur[s]);
    free(p->ctx.cur);
    free(p->hosts);
    free(p->heap);
    free(p->kept_cap);
    free(p->prev_kept_mpit);
    tr_device_model_free(&p->dev, p->m->nstreams);
    tr_omp_model_free(&p->omp);
    tr_host_slots_free(&p->ctx.slots);
}

/* After the last record: the run's end is known (its last event, its END
 * frame, its MPI_T events), and what is open closes there. */
static int pass_finish(tr_pass *p)
{
    tr_model *m = p->m;
    tr_journal_streams_done(m->jd);
    if (m->jd->end_ns > m->t_max)
        m->t_max = m->jd->end_ns;
    if (tr_mpit_model_build(&m->mpit, m->jd, &m->mpit_kept, m->nlocations, &m->t_min, &m->t_max))
        return -1;
    m->nlocations += m->mpit.nlocated;
    if (m->t_min > m->t_max)
        m->t_min = m->t_max;
    if (tr_device_model_finish(&p->ctx))
        return -1;
    for (size_t s = 0; s < m->nstreams && !p->ctx.failed; s++)
        tr_host_finish(&p->hosts[s]);
    /* Threads that ended quietly wrote nothing here: each host location is
     * done once every thread that had it is. */
    tr_model_sink *k = &p->ctx.sink;
    for (size_t l = 0; l < m->nhost && !p->ctx.failed; l++)
        if (k->location_done && k->location_done(k->ctx, l))
            p->ctx.failed = 1;
    return p->ctx.failed ? -1 : 0;
}

int tr_model_run(tr_model *m, tr_model_sink sink)
{
    tr_pass p;
    memset(&p, 0, sizeof p);
    p.m = m;
    int rc = data_prepass(m) || pass_init(&p, m, sink) ? -1 : 0;
    if (!rc && p.nheap) {
        /* The program began at the first event of the run. */
        m->t_min = p.heap[0].time;
        tr_mev e = {.kind = TR_MEV_PROGRAM_BEGIN};
        if (m->nstreams)
            tr_host_emit(&p.hosts[0], &e, m->t_min);
    }
    while (!rc && p.nheap && !p.ctx.failed) {
        size_t s = p.heap[0].stream;
        const tr_record *r = tr_stream_cursor_next(p.ctx.cur[s]);
        record(&p, s, r);
        const tr_record *next = tr_stream_cursor_peek(p.ctx.cur[s], 0);
        if (next) {
            p.heap[0].time = next->time;
            /* Most records are followed by one of their own stream. */
            if (p.nheap > 1)
                sift_down(&p, 0);
        } else {
            stream_done(&p, s);
            host_retire(&p, s);
            p.heap[0] = p.heap[--p.nheap];
            sift_down(&p, 0);
        }
    }
    if (!rc && !p.ctx.failed)
        rc = pass_finish(&p);
    if (p.ctx.failed)
        rc = -1;
    pass_free(&p);
    return rc;
}
