/* mpit_model.c - see mpit_model.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sort.h"
#include "model/mpit_model.h"

void tr_mpit_model_free(tr_mpit_model *m)
{
    for (uint32_t i = 0; i < m->nlocs; i++)
        free(m->locs[i].items);
    free(m->locs);
    memset(m, 0, sizeof *m);
}

/* The location of source @index; the extra last one takes events of an
 * unknown source. */
static tr_mpit_loc *loc_of(tr_mpit_model *m, const tr_jmpit *cat, uint32_t index)
{
    for (uint32_t i = 0; i < cat->nsources && i < m->nlocs; i++)
        if (m->locs[i].src && m->locs[i].src->index == index)
            return &m->locs[i];
    return &m->locs[m->nlocs - 1];
}

static int add_item(tr_mpit_loc *l, tr_mpit_item it)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        tr_mpit_item *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return -1;
        l->items = p;
        l->cap = cap;
    }
    l->items[l->n++] = it;
    return 0;
}

static int collect(tr_mpit_model *m, const tr_journal_data *jd, const tr_collected *data)
{
    for (size_t s = 0; s < data->nstreams; s++) {
        const tr_stream *st = &data->streams[s];
        for (size_t i = 0; i < st->n; i++) {
            const tr_record *r = &st->rec[i];
            if (r->type != TR_REC_MPIT && r->type != TR_REC_MPIT_DROP)
                continue;
            tr_mpit_item it = {.time = r->time, .callback_ns = r->time, .rec = r};
            if (r->type == TR_REC_MPIT) {
                size_t k = i + 1;
                while (k < st->n && st->rec[k].type == TR_REC_MPIT_MORE && st->rec[k].id == r->id &&
                       st->rec[k].aux == k - i - 1)
                    k++;
                it.nmore = (uint32_t)(k - i - 1);
                it.more = it.nmore ? &st->rec[i + 1] : 0;
            }
            tr_mpit_loc *l = loc_of(m, &jd->mpit, r->sub);
            if (add_item(l, it))
                return -1;
            if (r->type == TR_REC_MPIT)
                l->events++;
            else
                l->dropped += r->u[0];
        }
    }
    return 0;
}

/* --- the clock of one source --------------------------------------------------- */

typedef struct pair {
    long double tick, ns; /* tick unwrapped */
    int64_t raw;
} pair;

static int by_ns(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    return (x->ns > y->ns) - (x->ns < y->ns);
}

/* The wrap period in ticks, 0 when the clock does not wrap in practice. */
static long double period(const tr_jmpit_source *s)
{
    return s->max_ticks > 0 && s->max_ticks < INT64_MAX ? (long double)s->max_ticks + 1 : 0;
}

/* The raw tick plus the whole number of periods that puts it nearest to
 * @expected. */
static long double unwrap(int64_t raw, long double expected, long double per, uint64_t *k_out)
{
    if (per <= 0)
        return (long double)raw;
    long double k = roundl((expected - (long double)raw) / per);
    if (k < 0)
        k = 0;
    if (k_out)
        *k_out = (uint64_t)k;
    return (long double)raw + k * per;
}

static void fit_clock(const tr_journal_data *jd, tr_mpit_loc *l)
{
    const tr_jmpit *cat = &jd->mpit;
    const tr_jmpit_source *s = l->src;
    if (!s || !s->adhoc)
        return;
    pair *p = malloc((cat->nclocks ? cat->nclocks : 1) * sizeof *p);
    if (!p)
        return;
    uint32_t n = 0;
    for (uint32_t i = 0; i < cat->nclocks; i++) {
        const tr_jmpit_clock *c = &cat->clocks[i];
        if (c->source != s->index)
            continue;
        /* The tick was read between the two host reads: the midpoint is
         * the estimate, half the window its uncertainty. */
        p[n++] = (pair){.raw = c->tick, .ns = ((long double)c->host_before + (long double)c->host_after) / 2};
    }
    l->npairs = n;
    if (!n) {
        free(p);
        return;
    }
    tr_sort(p, n, sizeof *p, by_ns);
    long double nominal = s->ticks_per_second > 0 ? 1e9L / (long double)s->ticks_per_second : 1;
    long double per = period(s);
    p[0].tick = (long double)p[0].raw;
    uint64_t k0 = 0, k1 = 0;
    for (uint32_t i = 1; i < n; i++) {
        long double expected = p[i - 1].tick + (p[i].ns - p[i - 1].ns) / nominal;
        p[i].tick = unwrap(p[i].raw, expected, per, &k1);
    }
    (void)k0;
    if (n >= 2) {
        long double mt = 0, mn = 0, sxy = 0, sxx = 0;
        for (uint32_t i = 0; i < n; i++) {
            mt += p[i].tick;
            mn += p[i].ns;
        }
        mt /= n;
        mn /= n;
        for (uint32_t i = 0; i < n; i++) {
            sxy += (p[i].tick - mt) * (p[i].ns - mn);
            sxx += (p[i].tick - mt) * (p[i].tick - mt);
        }
        l->rate = sxx > 0 && sxy > 0 ? sxy / sxx : nominal;
        l->offset = mn - l->rate * mt;
    } else {
        l->rate = nominal;
        l->offset = p[0].ns - nominal * p[0].tick;
    }
    for (uint32_t i = 0; i < n; i++) {
        double r = (double)fabsl(l->offset + l->rate * p[i].tick - p[i].ns);
        if (r > l->max_residual_ns)
            l->max_residual_ns = r;
    }
    l->mapped = 1;
    free(p);
}

static int by_callback(const void *a, const void *b)
{
    const tr_mpit_item *x = a, *y = b;
    if (x->callback_ns != y->callback_ns)
        return x->callback_ns < y->callback_ns ? -1 : 1;
    return (x->rec > y->rec) - (x->rec < y->rec);
}

static int by_time(const void *a, const void *b)
{
    const tr_mpit_item *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return by_callback(a, b);
}

/* Maps every event onto the timeline, in delivery order (the order of the
 * callbacks), counting an ordered source's ticks that go back. */
static void map_events(tr_mpit_loc *l)
{
    if (!l->n)
        return;
    tr_sort(l->items, l->n, sizeof *l->items, by_callback);
    long double per = l->src ? period(l->src) : 0, prev = -1;
    uint64_t kmin = UINT64_MAX, kmax = 0;
    for (size_t i = 0; i < l->n; i++) {
        tr_mpit_item *it = &l->items[i];
        const tr_record *r = it->rec;
        if (r->type != TR_REC_MPIT || !(r->dev2 & TR_MPIT_F_TICK) || !l->mapped)
            continue;
        int64_t raw = (int64_t)r->u[0];
        long double expected = ((long double)it->callback_ns - l->offset) / l->rate;
        uint64_t k = 0;
        long double tick = unwrap(raw, expected, per, &k);
        if (k < kmin)
            kmin = k;
        if (k > kmax)
            kmax = k;
        long double ns = l->offset + l->rate * tick;
        it->time = ns <= 0 ? 0 : (uint64_t)llroundl(ns);
        if (l->src->ordered && prev >= 0 && tick < prev) {
            it->violation = 1;
            l->violations++;
        }
        if (tick > prev)
            prev = tick;
    }
    l->wraps = kmax >= kmin && kmin != UINT64_MAX ? kmax - kmin : 0;
    /* A source's events are written in time order, whatever order they
     * came in (an unordered source's, or an ordered one's violations). */
    tr_sort(l->items, l->n, sizeof *l->items, by_time);
}

int tr_mpit_model_build(tr_mpit_model *m, const tr_journal_data *jd, const tr_collected *data, uint64_t first_location,
                        uint64_t *t_min, uint64_t *t_max)
{
    const tr_jmpit *cat = &jd->mpit;
    int any = 0;
    for (size_t s = 0; s < data->nstreams && !any; s++)
        for (size_t i = 0; i < data->streams[s].n && !any; i++)
            any = data->streams[s].rec[i].type == TR_REC_MPIT || data->streams[s].rec[i].type == TR_REC_MPIT_DROP;
    if (!cat->nsources && !any)
        return 0;
    m->nlocs = cat->nsources + 1;
    m->locs = calloc(m->nlocs, sizeof *m->locs);
    if (!m->locs)
        return -1;
    for (uint32_t i = 0; i < cat->nsources; i++)
        m->locs[i].src = &cat->sources[i];
    if (collect(m, jd, data))
        return -1;
    /* The catch-all location exists only when something needs it. */
    if (!m->locs[m->nlocs - 1].n)
        m->nlocs--;
    for (uint32_t i = 0; i < m->nlocs; i++) {
        tr_mpit_loc *l = &m->locs[i];
        /* A source that delivered nothing gets no location (its properties
         * still describe it): OTF2 3.0.2's reader misbehaves on a location
         * whose event file is empty. */
        if (l->n) {
            l->has_location = 1;
            l->location = first_location + m->nlocated++;
        }
        fit_clock(jd, l);
        map_events(l);
        if (l->n) {
            if (l->items[0].time < *t_min)
                *t_min = l->items[0].time;
            if (l->items[l->n - 1].time > *t_max)
                *t_max = l->items[l->n - 1].time;
        }
    }
    return 0;
}
