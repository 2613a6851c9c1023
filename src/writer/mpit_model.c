/* mpit_model.c - see mpit_model.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer_internal.h"

void tr_mpit_model_free(tr_mpit_model *m)
{
    for (uint32_t i = 0; i < m->nlocs; i++)
        free(m->locs[i].items);
    free(m->locs);
    free(m->type_attr);
    free(m->elem_attr);
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

static int collect(tr_writer *w)
{
    tr_mpit_model *m = &w->mpit;
    for (size_t s = 0; s < w->data.nstreams; s++) {
        const tr_stream *st = &w->data.streams[s];
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
            tr_mpit_loc *l = loc_of(m, &w->jd->mpit, r->sub);
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

static void fit_clock(tr_writer *w, tr_mpit_loc *l)
{
    const tr_jmpit *cat = &w->jd->mpit;
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
    qsort(p, n, sizeof *p, by_ns);
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
    qsort(l->items, l->n, sizeof *l->items, by_callback);
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
    qsort(l->items, l->n, sizeof *l->items, by_time);
}

/* --- attributes of payload elements ------------------------------------------- */

static OTF2_Type element_type(const tr_jmpit_element *e)
{
    if (!e->known)
        return OTF2_TYPE_STRING;
    if (e->is_float)
        return e->size == 4 ? OTF2_TYPE_FLOAT : OTF2_TYPE_DOUBLE;
    switch (e->size) {
    case 1: return e->is_signed ? OTF2_TYPE_INT8 : OTF2_TYPE_UINT8;
    case 2: return e->is_signed ? OTF2_TYPE_INT16 : OTF2_TYPE_UINT16;
    case 4: return e->is_signed ? OTF2_TYPE_INT32 : OTF2_TYPE_UINT32;
    case 8: return e->is_signed ? OTF2_TYPE_INT64 : OTF2_TYPE_UINT64;
    default: return OTF2_TYPE_STRING;
    }
}

static int make_attributes(tr_writer *w)
{
    tr_mpit_model *m = &w->mpit;
    const tr_jmpit *cat = &w->jd->mpit;
    uint32_t total = 0;
    for (uint32_t t = 0; t < cat->ntypes; t++)
        total += (uint32_t)cat->types[t].nelements;
    m->type_attr = calloc(cat->ntypes ? cat->ntypes : 1, sizeof *m->type_attr);
    m->elem_attr = calloc(total ? total : 1, sizeof *m->elem_attr);
    if (!m->type_attr || !m->elem_attr)
        return -1;
    char name[200], desc[400];
    for (uint32_t t = 0; t < cat->ntypes; t++) {
        const tr_jmpit_type *ty = &cat->types[t];
        m->type_attr[t] = m->nelem;
        for (int e = 0; e < ty->nelements; e++) {
            const tr_jmpit_element *el = &ty->el[e];
            snprintf(name, sizeof name, "%s[%d]", ty->name, e);
            snprintf(desc, sizeof desc, "MPI_T element %d of %s: %s at displacement %lld%s", e, ty->name,
                     el->type_name, (long long)el->displacement,
                     el->known ? "" : " (datatype unknown to tracer: its bytes in memory order, hex)");
            uint32_t s_name = tr_defs_string(w, name), s_desc = tr_defs_string(w, desc);
            m->elem_attr[m->nelem++] = tr_defs_attribute(w->defs, s_name, s_desc, element_type(el));
        }
    }
    return 0;
}

int tr_mpit_model_build(tr_writer *w, uint64_t first_location)
{
    tr_mpit_model *m = &w->mpit;
    const tr_jmpit *cat = &w->jd->mpit;
    int any = 0;
    for (size_t s = 0; s < w->data.nstreams && !any; s++)
        for (size_t i = 0; i < w->data.streams[s].n && !any; i++)
            any = w->data.streams[s].rec[i].type == TR_REC_MPIT || w->data.streams[s].rec[i].type == TR_REC_MPIT_DROP;
    if (!cat->nsources && !any)
        return 0;
    m->nlocs = cat->nsources + 1;
    m->locs = calloc(m->nlocs, sizeof *m->locs);
    if (!m->locs || make_attributes(w))
        return -1;
    for (uint32_t i = 0; i < cat->nsources; i++)
        m->locs[i].src = &cat->sources[i];
    if (collect(w))
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
        fit_clock(w, l);
        map_events(l);
        if (l->n) {
            if (l->items[0].time < w->t_min)
                w->t_min = l->items[0].time;
            if (l->items[l->n - 1].time > w->t_max)
                w->t_max = l->items[l->n - 1].time;
        }
    }
    return 0;
}

/* --- what the archive says about MPI_T ---------------------------------------------- */

static const char *level_name(int level)
{
    static const char *const names[] = {"unknown",      "user basic",   "user detail",
                                        "user all",     "tuner basic",  "tuner detail",
                                        "tuner all",    "mpidev basic", "mpidev detail",
                                        "mpidev all"};
    return level >= 0 && level <= 9 ? names[level] : "unknown";
}

/* OTF2 property names allow only [A-Z0-9_] per component: the MPI_T name
 * in upper case, anything else as '_' (the value repeats the real name). */
static void property_name(char *out, size_t size, const char *prefix, const char *kind, const char *mpit_name)
{
    int n = snprintf(out, size, "%s%s::", prefix, kind);
    if (n < 0 || n >= (int)size)
        n = 0;
    for (const char *c = mpit_name; *c && n + 1 < (int)size; c++)
        out[n++] = (*c >= 'a' && *c <= 'z') ? (char)(*c - 32)
                   : ((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')) ? *c
                                                                            : '_';
    out[n] = 0;
}

void tr_mpit_properties(const tr_writer *w, const char *prefix, tr_prop_fn put, void *ctx)
{
    const tr_jmpit *cat = &w->jd->mpit;
    if (!cat->status)
        return;
    char name[300], value[2048];
    snprintf(name, sizeof name, "%sSTATUS", prefix);
    put(ctx, name, cat->status);
    for (uint32_t i = 0; i < w->mpit.nlocs; i++) {
        const tr_mpit_loc *l = &w->mpit.locs[i];
        const tr_jmpit_source *s = l->src;
        const char *sname = s ? s->name : "(unknown)";
        if (s)
            snprintf(value, sizeof value,
                     "name=%s; %s; ticks_per_second=%lld; max_ticks=%lld; adhoc_timestamps=%s; events=%llu; dropped=%llu; "
                     "order_violations=%llu; description=%s",
                     s->name, s->ordered ? "ordered" : "unordered", (long long)s->ticks_per_second, (long long)s->max_ticks,
                     s->adhoc ? "yes" : "no", (unsigned long long)l->events, (unsigned long long)l->dropped,
                     (unsigned long long)l->violations, s->desc);
        else
            snprintf(value, sizeof value, "events whose source MPI_T did not report; events=%llu; dropped=%llu",
                     (unsigned long long)l->events, (unsigned long long)l->dropped);
        property_name(name, sizeof name, prefix, "SOURCE", sname);
        put(ctx, name, value);
        if (l->mapped)
            snprintf(value, sizeof value, "name=%s; ns = %.3Lf + %.12Lg * tick; pairs=%u; wraps=%llu; max_residual_ns=%.1f",
                     sname, l->offset, l->rate, l->npairs, (unsigned long long)l->wraps, l->max_residual_ns);
        else
            snprintf(value, sizeof value, "name=%s; host clock at callback (%s)", sname,
                     !s ? "unknown source" : !s->adhoc ? "no ad-hoc timestamps" : "no clock pairs recorded");
        property_name(name, sizeof name, prefix, "CLOCK", sname);
        put(ctx, name, value);
    }
    for (uint32_t t = 0; t < cat->ntypes; t++) {
        const tr_jmpit_type *ty = &cat->types[t];
        char elements[1200] = "";
        size_t n = 0;
        for (int e = 0; e < ty->nelements && n < sizeof elements - 80; e++)
            n += (size_t)snprintf(elements + n, sizeof elements - n, "%s%s@%lld", e ? "," : "", ty->el[e].type_name,
                                  (long long)ty->el[e].displacement);
        char reg[80];
        if (ty->registered > 0)
            snprintf(reg, sizeof reg, "yes");
        else if (ty->registered < 0)
            snprintf(reg, sizeof reg, "no (bound to %s, not tracked)", ty->bind_name);
        else
            snprintf(reg, sizeof reg, "no (filtered)");
        snprintf(value, sizeof value, "name=%s; verbosity=%s (%d); bind=%s; registered=%s; elements=%s; description=%.600s",
                 ty->name, level_name(ty->level), ty->level, ty->bind_name, reg, elements, ty->desc);
        property_name(name, sizeof name, prefix, "EVENT", ty->name);
        put(ctx, name, value);
    }
}
