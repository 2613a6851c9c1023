#include "model/link_model.h"

#include <stdlib.h>
#include <string.h>

#include "common/sort.h"

#include "journal/data_op.h"

typedef struct op_ref {
    const tr_record *r;
    uint32_t stream;
} op_ref;

static int by_time(const void *a, const void *b)
{
    const op_ref *x = a, *y = b;
    return (x->r->time > y->r->time) - (x->r->time < y->r->time);
}

/* The last value each (variable, device) reference pointer received. */
typedef struct last_ref {
    const tr_jvariable *var;
    int device;
    uint64_t value, ref_ptr;
} last_ref;

static last_ref *find_ref(last_ref *refs, uint32_t n, const tr_jvariable *var, int device)
{
    for (uint32_t i = 0; i < n; i++)
        if (refs[i].var == var && refs[i].device == device)
            return &refs[i];
    return 0;
}

int tr_link_model_build(const tr_journal_data *jd, const tr_collected *data, tr_link_model *lm)
{
    memset(lm, 0, sizeof *lm);
    int any_link = 0;
    for (uint32_t i = 0; i < jd->nvariables; i++)
        any_link |= jd->variables[i].ref_ptr != 0;
    if (!any_link)
        return 0;
    size_t n = 0, cap = 256;
    op_ref *ops = malloc(cap * sizeof *ops);
    if (!ops)
        return -1;
    for (size_t s = 0; s < data->nstreams; s++) {
        const tr_stream *st = &data->streams[s];
        for (size_t i = 0; i < st->n; i++) {
            const tr_record *r = &st->rec[i];
            if (r->type != TR_REC_DATA_OP || r->phase == TR_PHASE_BEGIN)
                continue;
            if (n == cap) {
                op_ref *o = realloc(ops, 2 * cap * sizeof *o);
                if (!o) {
                    free(ops);
                    return -1;
                }
                ops = o;
                cap *= 2;
            }
            ops[n++] = (op_ref){r, (uint32_t)s};
        }
    }
    tr_sort(ops, n, sizeof *ops, by_time);
    last_ref *refs = 0;
    uint32_t nrefs = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const tr_record *r = ops[i].r;
        if (tr_optype_is_alloc(r->sub)) {
            const tr_jvariable *v = tr_journal_variable_at(jd, r->u[1], r->time);
            if (!v || !v->ref_ptr || !r->u[2])
                continue;
            if (lm->n == lm->cap) {
                uint32_t c = lm->cap ? 2 * lm->cap : 16;
                tr_link_map *m = realloc(lm->maps, c * sizeof *m);
                if (!m) {
                    rc = -1;
                    break;
                }
                lm->maps = m;
                lm->cap = c;
            }
            last_ref *lr = find_ref(refs, nrefs, v, r->dev2);
            lm->maps[lm->n] = (tr_link_map){.var = v, .device = r->dev2, .stream = ops[i].stream,
                                            .host = r->u[1], .storage = r->u[2], .bytes = r->u[3],
                                            .ref_value_before = lr ? lr->value : 0,
                                            .partial = r->u[1] != v->base || r->u[3] != v->size};
            tr_u64map_put(&lm->by_alloc_op, r->id ? r->id : UINT64_MAX - 1, lm->n);
            lm->n++;
        } else if (tr_optype_is_to_device(r->sub) && r->u[3] == 8) {
            /* The newest open mapping on this device whose variable start
             * is the value written: its reference pointer now holds it. For
             * an array section the runtime writes where the whole variable
             * would be (the storage minus the section's offset). */
            for (uint32_t k = lm->n; k-- > 0;) {
                tr_link_map *m = &lm->maps[k];
                if (m->unmap_op || m->device != r->dev2 || m->storage - (m->host - m->var->base) != r->u[1])
                    continue;
                m->ref_written = 1;
                m->ref_ptr = r->u[2];
                last_ref *lr = find_ref(refs, nrefs, m->var, m->device);
                if (!lr) {
                    last_ref *g = realloc(refs, (nrefs + 1) * sizeof *g);
                    if (!g) {
                        rc = -1;
                        break;
                    }
                    refs = g;
                    lr = &refs[nrefs++];
                    *lr = (last_ref){m->var, m->device, 0, 0};
                }
                lr->value = r->u[1];
                lr->ref_ptr = r->u[2];
                break;
            }
        } else if (tr_optype_is_delete(r->sub)) {
            for (uint32_t k = lm->n; k-- > 0;) {
                tr_link_map *m = &lm->maps[k];
                if (m->unmap_op || m->device != r->dev || m->storage != r->u[1])
                    continue;
                m->unmap_op = r->id ? r->id : UINT64_MAX - 2;
                tr_u64map_put(&lm->by_delete_op, m->unmap_op, k);
                break;
            }
        }
    }
    /* Device code reaches the storage through the reference pointer: a
     * mapping that did not write it, and whose storage is not what it last
     * received, leaves device code a stale (or never set) address. */
    for (uint32_t k = 0; k < lm->n; k++) {
        tr_link_map *m = &lm->maps[k];
        m->stale = !m->ref_written && m->ref_value_before != m->storage - (m->host - m->var->base);
        if (!m->ref_ptr) {
            last_ref *lr = find_ref(refs, nrefs, m->var, m->device);
            m->ref_ptr = lr && m->ref_written ? lr->ref_ptr : 0;
        }
    }
    free(refs);
    free(ops);
    return rc;
}

void tr_link_model_free(tr_link_model *lm)
{
    free(lm->maps);
    tr_u64map_free(&lm->by_alloc_op);
    tr_u64map_free(&lm->by_delete_op);
    memset(lm, 0, sizeof *lm);
}
