/* summary_omp.c - the host OpenMP rows of the summary: per thread
 * (from the OMP work / OMP wait metrics, else from the regions) and per
 * parallel region and thread. */
#define _GNU_SOURCE /* asprintf */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

/* Host threads of the OpenMP report in archive order: by rank (process
 * group), then location id. */
struct tr_omp_order {
    uint64_t rank, id;
    size_t loc;
};

static int tr_cmp_omp_order(const void *a, const void *b)
{
    const struct tr_omp_order *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* A parallel region's stats in output order: by region group, then thread. */
struct tr_omp_key {
    size_t group, thread;
    const struct tr_ompstat *s;
};

static int tr_cmp_omp_key(const void *a, const void *b)
{
    const struct tr_omp_key *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return (x->thread > y->thread) - (x->thread < y->thread);
}

static int tr_cmp_omp_parallel(const void *a, const void *b)
{
    const struct tr_omp_parallel *x = a, *y = b;
    uint64_t tx = x->work_ns + x->wait_ns, ty = y->work_ns + y->wait_ns;
    if (tx != ty)
        return tx > ty ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The host OpenMP part of *OUT, once every region is closed. */
int tr_finish_omp(struct tr_state *st)
{
    struct tr_summary *out = st->out;
    uint64_t res = st->timer_resolution;
    struct tr_loc *locs = st->locations.v;
    bool any = st->omp_nonzero_metric;
    size_t n = 0;
    for (size_t i = 0; i < st->locations.n; i++) {
        if (locs[i].kind != TR_LOC_HOST)
            continue;
        any |= locs[i].omp_seen;
        n += locs[i].omp_seen || locs[i].has_work_metric || locs[i].has_wait_metric;
    }
    if (!any || !n)
        return 0;
    out->has_omp = true;

    struct tr_omp_order *order = malloc(n * sizeof *order);
    size_t *thread_of = malloc(st->locations.n * sizeof *thread_of);
    out->omp_threads = calloc(n, sizeof *out->omp_threads);
    if (!order || !thread_of || !out->omp_threads) {
        free(order);
        free(thread_of);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < st->locations.n; i++)
        if (locs[i].kind == TR_LOC_HOST && (locs[i].omp_seen || locs[i].has_work_metric || locs[i].has_wait_metric))
            order[k++] = (struct tr_omp_order){tr_group_rank(st, locs[i].group), locs[i].id, i};
    qsort(order, n, sizeof *order, tr_cmp_omp_order);
    for (size_t i = 0; i < st->locations.n; i++)
        thread_of[i] = SIZE_MAX;
    int ret = 0;
    for (size_t i = 0; i < n; i++) {
        const struct tr_loc *l = &locs[order[i].loc];
        struct tr_omp_thread *o = &out->omp_threads[i];
        const struct tr_group *g = tr_find(&st->groups, sizeof *g, l->group);
        const char *lname = tr_str(st, l->name), *gname = g ? tr_str(st, g->name) : NULL;
        thread_of[order[i].loc] = i;
        out->n_omp_threads++;
        if (lname)
            o->location = strdup(lname);
        else if (asprintf(&o->location, "location %llu", (unsigned long long)l->id) < 0)
            o->location = NULL;
        o->process = strdup(gname ? gname : "?");
        if (!o->location || !o->process) {
            ret = -1;
            goto done;
        }
        o->from_metrics = l->has_work_metric && l->has_wait_metric;
        if (o->from_metrics) {
            o->work_ns = l->work_metric;
            o->wait_ns = l->wait_metric;
        } else {
            o->work_ns = tr_ticks_to_ns(l->omp_work_ticks, res);
            o->wait_ns = tr_ticks_to_ns(l->omp_wait_ticks, res);
        }
    }

    /* Parallel regions: their stats by region, then thread. */
    size_t ns = st->ompstats.n;
    const struct tr_ompstat *stats = st->ompstats.v;
    struct tr_omp_key *keys = ns ? malloc(ns * sizeof *keys) : NULL;
    if (ns && !keys) {
        ret = -1;
        goto done;
    }
    for (size_t i = 0; i < ns; i++)
        keys[i] = (struct tr_omp_key){stats[i].group, thread_of[stats[i].loc], &stats[i]};
    if (ns > 1)
        qsort(keys, ns, sizeof *keys, tr_cmp_omp_key);
    size_t n_regions = 0;
    for (size_t i = 0; i < ns; i++)
        n_regions += i == 0 || keys[i].group != keys[i - 1].group;
    if (n_regions && !(out->omp_parallel = calloc(n_regions, sizeof *out->omp_parallel))) {
        free(keys);
        ret = -1;
        goto done;
    }
    const struct tr_rgroup *groups = st->rgroups.v;
    for (size_t i = 0, end; i < ns; i = end) {
        end = i + 1;
        while (end < ns && keys[end].group == keys[i].group)
            end++;
        struct tr_omp_parallel *p = &out->omp_parallel[out->n_omp_parallel++];
        p->name = strdup(groups[keys[i].group].name);
        p->threads = calloc(end - i, sizeof *p->threads);
        if (!p->name || !p->threads) {
            ret = -1;
            break;
        }
        p->instances = groups[keys[i].group].omp_teams;
        for (size_t j = i; j < end; j++) {
            struct tr_omp_region_thread *t = &p->threads[p->n_threads++];
            uint64_t incl = tr_ticks_to_ns(keys[j].s->incl_ticks, res);
            uint64_t wait = tr_ticks_to_ns(keys[j].s->wait_ticks, res);
            t->thread = keys[j].thread;
            t->instances = keys[j].s->enters;
            t->wait_ns = wait < incl ? wait : incl;
            t->work_ns = incl - t->wait_ns;
            p->work_ns += t->work_ns;
            p->wait_ns += t->wait_ns;
            /* Without <OMP-overhead> to tell a team's first thread: at
             * least as many teams as one thread took part in. */
            if (t->instances > p->instances)
                p->instances = t->instances;
        }
    }
    free(keys);
    if (ret == 0 && out->n_omp_parallel > 1)
        qsort(out->omp_parallel, out->n_omp_parallel, sizeof *out->omp_parallel, tr_cmp_omp_parallel);
done:
    free(order);
    free(thread_of);
    return ret;
}
