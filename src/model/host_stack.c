/* host_stack.c - see host_stack.h. */
#include "model/host_stack.h"

#include <stdlib.h>

/* ---- events ------------------------------------------------------------- */

uint32_t tr_host_loc(tr_host *h, uint64_t t)
{
    if (h->loc == TR_HOST_NO_SLOT) {
        h->loc = tr_host_slots_take(&h->p->slots, t);
        h->tid_due = 1;
        if (h->loc >= h->p->m->nhost)
            h->p->m->nhost = h->loc + 1u;
    }
    if (t > h->emit_time)
        h->emit_time = t;
    return h->loc;
}

void tr_host_attr(tr_host *h, enum tr_attr a, uint64_t v)
{
    /* A code address after an unload arrives as its span's key. */
    if (a == TR_ATTR_CODEPTR)
        v = tr_journal_code_address(h->p->m->jd, v);
    if (h->emits)
        tr_mattrs_add(&h->attrs, a, v);
}

void tr_host_text(tr_host *h, enum tr_attr a, const char *s)
{
    if (h->emits)
        tr_mattrs_text(&h->attrs, a, s);
}

/* A thread's first Enter on its location carries its OS tid. */
static void add_tid_if_due(tr_host *h, tr_mattrs *a)
{
    if (!h->tid_due)
        return;
    const tr_journal_data *jd = h->p->m->jd;
    if (h->stream < jd->data.nstreams)
        tr_mattrs_add(a, TR_ATTR_THREAD, (uint32_t)jd->data.streams[h->stream].tid);
    h->tid_due = 0;
}

/* The waiting attributes go with this event. */
static void emit_with_attrs(tr_host *h, uint8_t kind, uint64_t t, uint64_t region)
{
    if (!h->emits)
        return;
    tr_mev e = {.kind = kind, .loc = tr_host_loc(h, t), .time = t, .region = region};
    if (kind == TR_MEV_ENTER)
        add_tid_if_due(h, &h->attrs);
    tr_pass_emit(h->p, tr_mev_with(&e, &h->attrs));
    h->attrs.n = 0;
}

void tr_host_enter(tr_host *h, uint64_t t, uint64_t region) { emit_with_attrs(h, TR_MEV_ENTER, t, region); }

void tr_host_emit(tr_host *h, tr_mev *e, uint64_t t)
{
    if (!h->emits)
        return;
    e->loc = tr_host_loc(h, t);
    e->time = t;
    if (e->kind == TR_MEV_ENTER && h->tid_due) {
        tr_mattrs a = {.n = 0};
        for (uint32_t i = 0; i < e->nattrs && i < TR_MEV_MAX_ATTRS; i++)
            a.a[a.n++] = e->attrs[i];
        add_tid_if_due(h, &a);
        tr_mev_with(e, &a);
        tr_pass_emit(h->p, e);
        return;
    }
    tr_pass_emit(h->p, e);
}

void tr_host_metric(tr_host *h, uint64_t t, uint32_t metric, uint64_t value)
{
    tr_mev e = {.kind = TR_MEV_METRIC, .metric = metric, .value = value};
    tr_host_emit(h, &e, t);
}

/* ---- the region stack --------------------------------------------------- */

int tr_host_push(tr_host *h, tr_open_region o)
{
    if (h->depth == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 32;
        tr_open_region *s = realloc(h->stack, cap * sizeof *s);
        if (!s) {
            h->p->failed = 1;
            return -1;
        }
        h->stack = s;
        h->cap = cap;
    }
    h->stack[h->depth++] = o;
    h->omp_open += o.type == TR_REC_OMP;
    return 0;
}

void tr_host_leave(tr_host *h, const tr_open_region *o, uint64_t t, int incomplete)
{
    if (!h->emits)
        return; /* a stack that writes nothing */
    if (o->window >= 0) {
        tr_mev e = {.kind = TR_MEV_RMA_COMPLETE, .window = (uint32_t)o->window, .matching = o->id};
        tr_host_emit(h, &e, t);
    }
    if (incomplete) {
        tr_host_attr(h, TR_ATTR_INCOMPLETE, o->runtime ? 2 : 1);
        if (o->runtime)
            h->p->m->runtime_open++;
        else
            h->p->m->incomplete++;
    }
    emit_with_attrs(h, TR_MEV_LEAVE, t, o->region);
}

void tr_host_pop(tr_host *h, uint64_t t, int incomplete)
{
    if (!h->depth)
        return;
    /* Work and wait are decided by what is open: count before it changes. */
    tr_host_account(h, t);
    h->depth--;
    h->omp_open -= h->stack[h->depth].type == TR_REC_OMP;
    tr_host_leave(h, &h->stack[h->depth], t, incomplete);
}

size_t tr_host_find(const tr_host *h, uint8_t type, uint8_t kind, uint64_t id)
{
    for (size_t i = h->depth; i > 0; i--) {
        const tr_open_region *o = &h->stack[i - 1];
        if (o->type == type && o->kind == kind && o->id == id)
            return i;
    }
    return 0;
}

int tr_host_close(tr_host *h, uint8_t type, uint8_t kind, uint64_t id, uint64_t t)
{
    size_t i = tr_host_find(h, type, kind, id);
    if (i == 0)
        return 0;
    while (h->depth > i)
        tr_host_pop(h, t, 1);
    tr_host_pop(h, t, 0);
    return 1;
}


void tr_host_account(tr_host *h, uint64_t t)
{
    tr_omp_thread *th = &h->omp;
    if (t <= th->acc_time)
        return;
    for (size_t i = h->depth; i > 0; i--) {
        uint8_t cls = h->stack[i - 1].cls;
        if (cls == TR_CLASS_WAIT) {
            th->wait += t - th->acc_time;
            break;
        }
        if (cls == TR_CLASS_WORK) {
            th->work += t - th->acc_time;
            break;
        }
    }
    th->acc_time = t;
}

void tr_host_stack_free(tr_host *h)
{
    free(h->stack);
    h->stack = 0;
    h->depth = h->cap = 0;
}
