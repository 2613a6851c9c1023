/* model.c - the analysis pass: what the records say across threads.
 *
 * Devices, the host's device number, the target constructs by id, the device
 * memory in use over time, and every kernel placed on a stream lane. Kernels
 * submitted concurrently to one device by different host threads overlap in
 * time; OTF2 needs properly nested regions per location, so overlapping
 * kernels go to extra lanes ("device d stream k"). */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#include "common/hugepage.h"
#include "common/sort.h"
#include "journal/data_op.h"

static int grow(void **p, size_t *cap, size_t n, size_t size) { return tr_grow(p, cap, n, size, 16); }

static int by_num(const void *a, const void *b)
{
    const tr_device *x = a, *y = b;
    return (x->num > y->num) - (x->num < y->num);
}

tr_device *tr_model_device(tr_model *m, int num)
{
    for (size_t i = 0; i < m->ndevices; i++)
        if (m->devices[i].num == num)
            return &m->devices[i];
    return 0;
}

const tr_target_info *tr_model_target(tr_model *m, uint64_t target_id)
{
    uint64_t i;
    if (!target_id || !tr_u64map_get(&m->targets, target_id, &i))
        return 0;
    return &m->target_rec[i];
}

static int add_item(tr_device *d, tr_dev_item it)
{
    if (grow((void **)&d->items, &d->capitems, d->nitems, sizeof *d->items))
        return -1;
    d->items[d->nitems++] = it;
    return 0;
}

static int add_metric(tr_device *d, uint64_t time, uint64_t value)
{
    if (grow((void **)&d->metrics, &d->capmetrics, d->nmetrics, sizeof *d->metrics))
        return -1;
    d->metrics[d->nmetrics++] = (tr_dev_metric){time, value};
    return 0;
}

/* The devices the pass saw, but the host, by number. */
static int settle_devices(tr_model *m)
{
    const tr_model_scan *sc = &m->scan;
    m->devices = calloc(sc->ndevices ? sc->ndevices : 1, sizeof *m->devices);
    if (!m->devices)
        return -1;
    for (size_t i = 0; i < sc->ndevices; i++)
        if (sc->devices[i] != m->host_device)
            m->devices[m->ndevices++] = (tr_device){.num = sc->devices[i]};
    if (m->ndevices)
        qsort(m->devices, m->ndevices, sizeof *m->devices, by_num);
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const tr_record *x = *(const tr_record *const *)a, *y = *(const tr_record *const *)b;
    return (x->time > y->time) - (x->time < y->time);
}

/* Allocations and deletes may come from different threads, so the memory in
 * use is computed over all of them in time order. A delete reports 0 bytes;
 * its size is the size of the alloc that produced its address. */
static int account_memory(tr_model *m)
{
    size_t n = 0, cap = 0;
    const tr_record **ops = 0;
    for (size_t s = 0; s < m->kept.nstreams; s++) {
        const tr_stream *st = &m->kept.streams[s];
        for (size_t i = 0; i < st->n; i++) {
            const tr_record *r = &st->rec[i];
            if (r->type != TR_REC_DATA_OP || r->phase == TR_PHASE_BEGIN)
                continue;
            if (!tr_optype_is_alloc(r->sub) && !tr_optype_is_delete(r->sub))
                continue;
            if (grow((void **)&ops, &cap, n, sizeof *ops)) {
                free(ops);
                return -1;
            }
            ops[n++] = r;
        }
    }
    if (n)
        tr_sort(ops, n, sizeof *ops, by_time);
    size_t deletes = 0;
    for (size_t i = 0; i < n; i++)
        deletes += tr_optype_is_delete(ops[i]->sub);
    if (tr_u64map_reserve(&m->delete_bytes, deletes) || tr_u64map_reserve(&m->delete_host, deletes)) {
        free(ops);
        return -1;
    }
    tr_u64map *live = calloc(m->ndevices ? m->ndevices : 1, sizeof *live);
    tr_u64map *live_host = calloc(m->ndevices ? m->ndevices : 1, sizeof *live_host);
    uint64_t *in_use = calloc(m->ndevices ? m->ndevices : 1, sizeof *in_use);
    if (!live || !in_use || !live_host) {
        free(ops);
        free(live_host);
        free(live);
        free(in_use);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const tr_record *r = ops[i];
        int alloc = tr_optype_is_alloc(r->sub);
        tr_device *d = tr_model_device(m, alloc ? r->dev2 : r->dev);
        if (!d)
            continue;
        size_t di = (size_t)(d - m->devices);
        uint64_t addr = alloc ? r->u[2] : r->u[1], bytes = 0;
        if (!addr)
            continue;
        if (alloc) {
            tr_u64map_put(&live[di], addr, r->u[3]);
            /* A delete reports only the device address: remember whose it was. */
            if (r->u[1])
                tr_u64map_put(&live_host[di], addr, r->u[1]);
            in_use[di] += r->u[3];
        } else if (tr_u64map_del(&live[di], addr, &bytes)) {
            in_use[di] -= bytes;
            tr_u64map_put(&m->delete_bytes, r->id ? r->id : (uint64_t)-1, bytes);
            uint64_t host;
            if (tr_u64map_del(&live_host[di], addr, &host))
                tr_u64map_put(&m->delete_host, r->id ? r->id : (uint64_t)-1, host);
        }
        add_metric(d, r->time, in_use[di]);
    }
    for (size_t i = 0; i < m->ndevices; i++) {
        tr_u64map_free(&live[i]);
        tr_u64map_free(&live_host[i]);
    }
    free(live_host);
    free(live);
    free(in_use);
    free(ops);
    return 0;
}

static int device_of_submit(tr_model *m, const tr_record *r)
{
    if (r->dev >= 0 && r->dev != m->host_device)
        return r->dev;
    const tr_target_info *t = tr_model_target(m, r->u[0]);
    return t ? t->dev : -1;
}

static int collect_device_items(tr_model *m, const tr_model_labels *labels)
{
    for (size_t s = 0; s < m->kept.nstreams; s++) {
        const tr_stream *st = &m->kept.streams[s];
        tr_u64map open = {0}; /* host_op_id -> device index << 32 | item index */
        for (size_t i = 0; i < st->n; i++) {
            const tr_record *r = &st->rec[i];
            tr_device *d;
            uint64_t v;
            switch (r->type) {
            case TR_REC_SUBMIT:
                if (r->phase == TR_PHASE_END) {
                    if (r->id && tr_u64map_del(&open, r->id, &v))
                        m->devices[v >> 32].items[(uint32_t)v].end = r->time;
                    else
                        m->stray_ends++;
                    break;
                }
                d = tr_model_device(m, device_of_submit(m, r));
                if (!d)
                    break;
                const tr_target_info *t = tr_model_target(m, r->u[0]);
                tr_dev_item it = {.start = r->time, .end = r->time, .rec = r,
                                  .is_point = r->phase == TR_PHASE_POINT,
                                  .region = labels->kernel(labels->ctx, t ? t->codeptr : r->u[1])};
                if (add_item(d, it))
                    break;
                if (r->phase == TR_PHASE_BEGIN && r->id)
                    tr_u64map_put(&open, r->id, (uint64_t)(d - m->devices) << 32 | (d->nitems - 1));
                break;
            case TR_REC_DEVICE_INIT:
            case TR_REC_DEVICE_FINI:
            case TR_REC_DEVICE_LOAD:
            case TR_REC_DEVICE_UNLOAD:
                d = tr_model_device(m, r->dev);
                if (!d)
                    break;
                if (r->type == TR_REC_DEVICE_INIT && tr_journal_text(m->jd, r->u[0]))
                    d->type = tr_journal_text(m->jd, r->u[0]);
                add_item(d, (tr_dev_item){.start = r->time, .end = r->time, .rec = r, .is_point = 1,
                                          .region = labels->device_event(labels->ctx, r->type)});
                break;
            default:
                break;
            }
        }
        /* A kernel whose end never came lasts until the end of the run. */
        for (size_t k = 0; k < open.cap; k++) {
            uint64_t id, v;
            if (!tr_u64map_at(&open, k, &id, &v))
                continue;
            tr_dev_item *it = &m->devices[v >> 32].items[(uint32_t)v];
            it->end = m->t_max;
            it->incomplete = 1;
            m->incomplete++;
        }
        tr_u64map_free(&open);
    }
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const tr_dev_item *x = a, *y = b;
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return (x->rec > y->rec) - (x->rec < y->rec);
}

static void assign_lanes(tr_device *d)
{
    if (d->nitems)
        tr_sort(d->items, d->nitems, sizeof *d->items, by_start);
    uint64_t lane_end[256];
    uint32_t nlanes = 1;
    lane_end[0] = 0;
    for (size_t i = 0; i < d->nitems; i++) {
        tr_dev_item *it = &d->items[i];
        if (it->is_point || it->start == it->end) {
            /* A zero-length event nests inside anything: keep it on lane 0. */
            it->lane = 0;
            continue;
        }
        uint32_t l = 0;
        while (l < nlanes && lane_end[l] > it->start)
            l++;
        if (l == nlanes) {
            if (nlanes == 256)
                l = nlanes - 1; /* pathological; lane 255 may then nest badly */
            else
                lane_end[nlanes++] = 0;
        }
        it->lane = l;
        lane_end[l] = it->end;
    }
    d->nlanes = nlanes;
}

int tr_model_build(tr_model *m, const tr_model_labels *labels)
{
    m->data = m->jd->data;
    memset(&m->jd->data, 0, sizeof m->jd->data);
    if (m->jd->end_ns > m->t_max)
        m->t_max = m->jd->end_ns;
    if (!m->kept.streams) { /* no record at all */
        m->kept.streams = calloc(m->data.nstreams ? m->data.nstreams : 1, sizeof *m->kept.streams);
        m->kept.nstreams = m->data.nstreams;
        if (!m->kept.streams || tr_omp_model_begin(m->jd, m->data.nstreams, &m->omp))
            return -1;
    }
    if (settle_devices(m) || account_memory(m) || collect_device_items(m, labels))
        return -1;
    uint64_t loc = m->data.nstreams;
    for (size_t i = 0; i < m->ndevices; i++) {
        assign_lanes(&m->devices[i]);
        m->devices[i].first_location = loc;
        loc += m->devices[i].nlanes;
    }
    if (tr_link_model_build(m->jd, &m->kept, &m->links) ||
        tr_mpit_model_build(&m->mpit, m->jd, &m->kept, tr_model_mpit_first(m), &m->t_min, &m->t_max))
        return -1;
    return 0;
}

/* MPI_T source locations come after the host threads and device streams. */
uint64_t tr_model_mpit_first(const tr_model *m)
{
    uint64_t loc = m->data.nstreams;
    for (size_t d = 0; d < m->ndevices; d++)
        loc += m->devices[d].nlanes;
    return loc;
}

void tr_model_release_events(tr_model *m)
{
    for (size_t d = 0; d < m->ndevices; d++) {
        free(m->devices[d].items);
        free(m->devices[d].metrics);
        m->devices[d].items = 0;
        m->devices[d].metrics = 0;
        m->devices[d].nitems = m->devices[d].capitems = 0;
        m->devices[d].nmetrics = m->devices[d].capmetrics = 0;
    }
    for (uint32_t i = 0; i < m->mpit.nlocs; i++) {
        free(m->mpit.locs[i].items);
        m->mpit.locs[i].items = 0;
        m->mpit.locs[i].n = m->mpit.locs[i].cap = 0;
    }
    free(m->target_rec);
    m->target_rec = 0;
    if (m->far)
        for (size_t s = 0; s < m->kept.nstreams; s++) {
            tr_u64map_free(&m->far[s].by_id);
            free(m->far[s].ends);
        }
    free(m->far);
    m->far = 0;
    tr_collected_free(&m->kept);
    free(m->scan.kept_cap);
    m->scan.kept_cap = 0;
    tr_u64map_free(&m->scan.far_ids);
    m->ntarget_rec = m->captarget_rec = 0;
    tr_u64map_free(&m->targets);
    tr_u64map_free(&m->delete_bytes);
    tr_u64map_free(&m->delete_host);
    tr_link_model_free(&m->links);
    tr_omp_model_free(&m->omp);
    /* Keep the stream list (its count names the host threads), not the records. */
    for (size_t s = 0; s < m->data.nstreams; s++) {
        free(m->data.streams[s].rec);
        m->data.streams[s].rec = 0;
        m->data.streams[s].n = 0;
    }
}

void tr_model_free(tr_model *m)
{
    tr_model_release_events(m);
    free(m->scan.devices);
    free(m->devices);
    tr_mpit_model_free(&m->mpit);
    tr_collected_free(&m->data);
    if (m->jd) {
        tr_journal_data_free(m->jd);
        free(m->jd);
    }
    memset(m, 0, sizeof *m);
}
