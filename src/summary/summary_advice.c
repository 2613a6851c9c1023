/* summary_advice.c - the report's data mapping advice (issue 37): the data
 * ops the writer flagged (attribute "advice", src/model/advice.h says what
 * each category means), grouped by category, construct and variable, with
 * the time they took, which is what removing them saves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

static const char UNUSED_ALLOCATION[] = "unused_allocation";

int tr_advice_enter(struct tr_state *st, struct tr_loc *l, struct tr_frame *f, OTF2_AttributeList *attrs)
{
    const char *category = tr_attr_str(st, attrs, st->attr_advice);
    if (!category)
        return 0;
    f->advice = category;
    f->advice_var = tr_attr_str(st, attrs, st->attr_variable);
    if (!tr_attr_u64(attrs, st->attr_bytes, &f->advice_bytes))
        f->advice_bytes = 0;
    /* An allocation's delete names the device address it frees. */
    if (!tr_attr_u64(attrs, f->r->cls == TR_R_DELETE ? st->attr_src_addr : st->attr_dst_addr, &f->advice_addr))
        f->advice_addr = 0;
    /* A job's archive: the rank, from the process's location group. */
    f->advice_rank = -1;
    const struct tr_group *pg = tr_find(&st->groups, sizeof *pg, l->group);
    const char *gname = pg ? tr_str(st, pg->name) : NULL;
    int rank;
    if (gname && sscanf(gname, "rank %d", &rank) == 1 && rank >= 0)
        f->advice_rank = rank;
    /* The construct the op belongs to is the region it is inside. */
    if (l->depth) {
        const struct tr_rgroup *g = &((const struct tr_rgroup *)st->rgroups.v)[l->stack[l->depth - 1].r->group];
        f->advice_source = g->name && g->name[0] ? g->name : g->canon;
    }
    return 0;
}

static int same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static char *copy(const char *s)
{
    return s ? strdup(s) : NULL;
}

int tr_advice_close(struct tr_state *st, const struct tr_frame *f, uint64_t incl)
{
    struct tr_summary *out = st->out;
    int unused_alloc = !strcmp(f->advice, UNUSED_ALLOCATION);
    if (unused_alloc && f->r->cls == TR_R_DELETE) {
        /* Its allocation's group gets its time. */
        struct tr_advice_alloc *open = st->advice_open.v;
        for (size_t i = st->advice_open.n; i-- > 0;)
            if (open[i].addr == f->advice_addr) {
                out->advice[open[i].group].time_ns += incl;
                open[i] = open[--st->advice_open.n];
                break;
            }
        return 0;
    }
    size_t k = 0;
    while (k < out->n_advice &&
           !(out->advice[k].rank == f->advice_rank && same(out->advice[k].category, f->advice) &&
             same(out->advice[k].source, f->advice_source) && same(out->advice[k].variable, f->advice_var)))
        k++;
    if (k == out->n_advice) {
        struct tr_advice_group *v = realloc(out->advice, (k + 1) * sizeof *v);
        if (!v)
            return -1;
        out->advice = v;
        v[k] = (struct tr_advice_group){.category = copy(f->advice), .source = copy(f->advice_source),
                                        .variable = copy(f->advice_var), .rank = f->advice_rank};
        out->n_advice++;
        if (!v[k].category || (f->advice_source && !v[k].source) || (f->advice_var && !v[k].variable))
            return -1;
    }
    struct tr_advice_group *g = &out->advice[k];
    g->count++;
    g->bytes += f->advice_bytes;
    g->time_ns += incl; /* ticks until tr_advice_finish */
    if (unused_alloc && f->advice_addr) {
        struct tr_advice_alloc *a = otr_vec_push(&st->advice_open, sizeof *a);
        if (!a)
            return -1;
        *a = (struct tr_advice_alloc){f->advice_addr, k};
    }
    return 0;
}

static int by_time(const void *x, const void *y)
{
    const struct tr_advice_group *a = x, *b = y;
    if (a->time_ns != b->time_ns)
        return a->time_ns > b->time_ns ? -1 : 1;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    int c = strcmp(a->category, b->category);
    return c ? c : strcmp(a->source ? a->source : "", b->source ? b->source : "");
}

void tr_advice_finish(struct tr_summary *out, uint64_t timer_resolution)
{
    for (size_t i = 0; i < out->n_advice; i++)
        out->advice[i].time_ns = tr_ticks_to_ns(out->advice[i].time_ns, timer_resolution);
    if (out->n_advice > 1)
        qsort(out->advice, out->n_advice, sizeof *out->advice, by_time);
}

void tr_advice_free(struct tr_summary *out)
{
    for (size_t i = 0; i < out->n_advice; i++) {
        free(out->advice[i].category);
        free(out->advice[i].source);
        free(out->advice[i].variable);
    }
    free(out->advice);
    out->advice = NULL;
    out->n_advice = 0;
}
