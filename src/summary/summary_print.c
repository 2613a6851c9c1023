/* summary_print.c - the report of summary.h as text or JSON, and the
 * end-of-run report of TRACER_SUMMARY=1. */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "summary/summary.h"

/* The text form lists the most-launched kernels only; --json lists all. */
#define TR_TEXT_MAX_KERNELS 8
static int tr_cmp_kernel(const void *a, const void *b)
{
    const struct tr_kernel_count *x = *(const struct tr_kernel_count *const *)a;
    const struct tr_kernel_count *y = *(const struct tr_kernel_count *const *)b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Most-launched first so the text output shows what matters when cut. */
static const struct tr_kernel_count **tr_sorted_kernels(const struct tr_summary *s)
{
    const struct tr_kernel_count **v = malloc((s->n_kernels + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < s->n_kernels; i++)
        v[i] = &s->kernels[i];
    qsort(v, s->n_kernels, sizeof *v, tr_cmp_kernel);
    return v;
}

/* Names come from the traced binary; keep terminal control bytes out. */
static void tr_put_clean(FILE *fp, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, fp);
}

static const char *tr_plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* " a x2, c x1" */
/* What each advice category asks the user to change (src/model/advice.h
 * defines the categories). */
static const struct {
    const char *category, *change;
} advice_hints[] = {
    {"duplicate_transfer", "the device already holds these bytes: drop the copy (map(alloc:) or present, no update to)"},
    {"round_trip", "the bytes came back and went out again unchanged: keep them on the device (target data around both)"},
    {"repeated_allocation", "the same host range is mapped again and again: map it once (target data or enter/exit data around the loop)"},
    {"unused_allocation", "no kernel ran on the device while it was mapped: remove the mapping"},
    {"unused_transfer", "overwritten or freed before any kernel ran or any copy read it back: remove this copy"},
};

/* The data mapping advice: one line per group, the costliest first, then
 * what to change for each category seen. */
static void tr_print_advice(FILE *fp, const struct tr_summary *s)
{
    if (!s->n_advice)
        return;
    uint64_t ns = 0, moved = 0, n = 0;
    for (size_t i = 0; i < s->n_advice; i++) {
        ns += s->advice[i].time_ns;
        n += s->advice[i].count;
        if (strstr(s->advice[i].category, "transfer") || !strcmp(s->advice[i].category, "round_trip"))
            moved += s->advice[i].bytes;
    }
    fprintf(fp, "data mapping: %llu %s in %zu %s; removing them saves %.3f ms and %llu bytes moved:\n",
            (unsigned long long)n, tr_plural(n, "data operation to remove", "data operations to remove"),
            s->n_advice, tr_plural(s->n_advice, "place", "places"), (double)ns / 1e6, (unsigned long long)moved);
    fprintf(fp, "  %-20s %7s %12s %12s  %s\n", "category", "count", "bytes", "time us", "where (variable)");
    for (size_t i = 0; i < s->n_advice; i++) {
        const struct tr_advice_group *g = &s->advice[i];
        fprintf(fp, "  %-20s %7llu %12llu %12.3f  ", g->category, (unsigned long long)g->count,
                (unsigned long long)g->bytes, (double)g->time_ns / 1e3);
        if (g->rank >= 0)
            fprintf(fp, "rank %d: ", g->rank);
        fputs(g->source ? g->source : "?", fp);
        if (g->variable)
            fprintf(fp, " (%s)", g->variable);
        fputc('\n', fp);
    }
    for (size_t k = 0; k < sizeof advice_hints / sizeof *advice_hints; k++)
        for (size_t i = 0; i < s->n_advice; i++)
            if (!strcmp(s->advice[i].category, advice_hints[k].category)) {
                fprintf(fp, "  %s: %s\n", advice_hints[k].category, advice_hints[k].change);
                break;
            }
}

static void tr_put_counts(FILE *fp, const struct tr_kernel_count *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : " ", fp);
        tr_put_clean(fp, v[i].name);
        fprintf(fp, " x%llu", (unsigned long long)v[i].count);
    }
}

/* "value (default)": the variable kept its default (tracer's writer). */
static bool tr_config_is_default(const char *value)
{
    size_t n = strlen(value), k = strlen(" (default)");
    return n >= k && strcmp(value + n - k, " (default)") == 0;
}

static const char *const tr_loc_kind_plural[TR_LOC_KIND_COUNT] = {
    [TR_LOC_HOST] = "host threads",
    [TR_LOC_DEVICE] = "device streams",
    [TR_LOC_MPIT] = "MPI_T sources",
    [TR_LOC_OTHER] = "other locations",
};

static double tr_us(uint64_t ns)
{
    return (double)ns / 1e3;
}

/* Regions of one location kind, largest exclusive time first (the order
 * of tr_summary.regions), at most TOP of them (0: all). */
static void tr_print_regions(FILE *fp, const struct tr_summary *s, enum tr_loc_kind kind, size_t top)
{
    size_t first = 0, n = 0;
    while (first < s->n_regions && s->regions[first].kind != kind)
        first++;
    while (first + n < s->n_regions && s->regions[first + n].kind == kind)
        n++;
    if (!n)
        return;
    size_t shown = top && top < n ? top : n;
    fprintf(fp, "regions on %s: %zu, ", tr_loc_kind_plural[kind], n);
    if (shown < n)
        fprintf(fp, "top %zu by exclusive time:\n", shown);
    else
        fputs("by exclusive time:\n", fp);
    fprintf(fp, "  %10s %14s %14s  %s\n", "count", "inclusive us", "exclusive us", "region");
    for (size_t i = first; i < first + shown; i++) {
        const struct tr_region_stat *r = &s->regions[i];
        fprintf(fp, "  %10llu %14.3f %14.3f  ", (unsigned long long)r->count, tr_us(r->inclusive_ns),
                tr_us(r->exclusive_ns));
        tr_put_clean(fp, r->name);
        fputc('\n', fp);
    }
    if (shown < n)
        fprintf(fp, "  ... %zu more\n", n - shown);
}

/* ---- host OpenMP states ---- */

/* The text lists at most this many threads (the JSON all of them). */
#define TR_TEXT_MAX_OMP_THREADS 64

/* wait / (work + wait), in percent; < 0 when there was neither. */
static double tr_wait_percent(uint64_t work, uint64_t wait)
{
    return work + wait ? (double)wait * 100.0 / (double)(work + wait) : -1.0;
}

/* The largest work of one thread / the mean work over the threads (1 =
 * balanced); < 0 when there was no work. */
static double tr_imbalance(const struct tr_omp_parallel *p)
{
    uint64_t max = 0;
    for (size_t i = 0; i < p->n_threads; i++)
        if (p->threads[i].work_ns > max)
            max = p->threads[i].work_ns;
    if (!p->work_ns || !p->n_threads)
        return -1.0;
    return (double)max / ((double)p->work_ns / (double)p->n_threads);
}

/* In a job's archive (or one of several processes) a thread is named with
 * its rank: "rank 1 host thread 0". */
static bool tr_omp_with_process(const struct tr_summary *s)
{
    if (s->processes > 1)
        return true;
    for (size_t i = 0; i < s->n_omp_threads; i++)
        if (strncmp(s->omp_threads[i].process, "rank ", 5) == 0)
            return true;
    return false;
}

static void tr_put_thread(FILE *fp, const struct tr_summary *s, size_t i)
{
    if (tr_omp_with_process(s)) {
        tr_put_clean(fp, s->omp_threads[i].process);
        fputc(' ', fp);
    }
    tr_put_clean(fp, s->omp_threads[i].location);
}

static void tr_put_percent(FILE *fp, double pct)
{
    if (pct < 0)
        fprintf(fp, " %7s", "-");
    else
        fprintf(fp, " %6.1f%%", pct);
}

/* Work against wait per host thread, then per parallel region. */
static void tr_print_omp(FILE *fp, const struct tr_summary *s, size_t top)
{
    if (!s->has_omp)
        return;
    size_t from_metrics = 0;
    for (size_t i = 0; i < s->n_omp_threads; i++)
        from_metrics += s->omp_threads[i].from_metrics;
    fprintf(fp, "OpenMP work and wait per host thread: %zu %s (", s->n_omp_threads,
            tr_plural(s->n_omp_threads, "thread", "threads"));
    if (from_metrics == s->n_omp_threads)
        fputs("the OMP work / OMP wait metrics", fp);
    else if (!from_metrics)
        fputs("from the regions: no OMP work / OMP wait metrics", fp);
    else
        fputs("the OMP work / OMP wait metrics; * from the regions", fp);
    fputs("), wait % = wait / (work + wait):\n", fp);
    fprintf(fp, "  %14s %14s %8s  %s\n", "work us", "wait us", "wait %", "thread");
    size_t shown = s->n_omp_threads > TR_TEXT_MAX_OMP_THREADS ? TR_TEXT_MAX_OMP_THREADS : s->n_omp_threads;
    uint64_t work = 0, wait = 0;
    for (size_t i = 0; i < s->n_omp_threads; i++) {
        const struct tr_omp_thread *t = &s->omp_threads[i];
        work += t->work_ns;
        wait += t->wait_ns;
        if (i >= shown)
            continue;
        fprintf(fp, "  %14.3f %14.3f", tr_us(t->work_ns), tr_us(t->wait_ns));
        tr_put_percent(fp, tr_wait_percent(t->work_ns, t->wait_ns));
        fputs(from_metrics && !t->from_metrics ? "  * " : "  ", fp);
        tr_put_thread(fp, s, i);
        fputc('\n', fp);
    }
    if (shown < s->n_omp_threads)
        fprintf(fp, "  ... %zu more\n", s->n_omp_threads - shown);
    if (s->n_omp_threads > 1) {
        fprintf(fp, "  %14.3f %14.3f", tr_us(work), tr_us(wait));
        tr_put_percent(fp, tr_wait_percent(work, wait));
        fputs("  all threads\n", fp);
    }
    if (!s->n_omp_parallel)
        return;
    size_t n = s->n_omp_parallel;
    shown = top && top < n ? top : n;
    fprintf(fp, "OpenMP parallel regions: %zu, ", n);
    if (shown < n)
        fprintf(fp, "top %zu ", shown);
    fputs("by work + wait; imbalance = the largest work of a thread / the mean work of its threads "
          "(1.00 = balanced):\n", fp);
    fprintf(fp, "  %9s %7s %14s %14s %8s %9s  %s\n", "instances", "threads", "work us", "wait us", "wait %",
            "imbalance", "region");
    for (size_t i = 0; i < shown; i++) {
        const struct tr_omp_parallel *p = &s->omp_parallel[i];
        double imb = tr_imbalance(p);
        fprintf(fp, "  %9llu %7zu %14.3f %14.3f", (unsigned long long)p->instances, p->n_threads,
                tr_us(p->work_ns), tr_us(p->wait_ns));
        tr_put_percent(fp, tr_wait_percent(p->work_ns, p->wait_ns));
        if (imb < 0)
            fprintf(fp, " %9s  ", "-");
        else
            fprintf(fp, " %9.2f  ", imb);
        tr_put_clean(fp, p->name);
        fputc('\n', fp);
    }
    if (shown < n)
        fprintf(fp, "  ... %zu more\n", n - shown);
}

/* Achieved bandwidth, GB/s (bytes per ns); < 0 when no time was measured. */
static double tr_bandwidth(const struct tr_transfer_stat *x)
{
    return x->time_ns ? (double)x->bytes / (double)x->time_ns : -1.0;
}

static void tr_print_direction(FILE *fp, const char *what, const struct tr_transfer_stat *x)
{
    if (!x->count)
        return;
    fprintf(fp, "  %s: %llu %s, %llu bytes in %.3f us", what, (unsigned long long)x->count,
            tr_plural(x->count, "transfer", "transfers"), (unsigned long long)x->bytes, tr_us(x->time_ns));
    if (x->time_ns)
        fprintf(fp, ", %.3f GB/s\n", tr_bandwidth(x));
    else
        fputs(", bandwidth not measured\n", fp);
}

static bool tr_device_idle(const struct tr_device_stat *d)
{
    return !d->has_memory && !d->to_device.count && !d->from_device.count;
}

/* A device with transfers or memory in use gets its lines; the others
 * share one. */
static void tr_print_devices(FILE *fp, const struct tr_summary *s)
{
    size_t idle = 0;
    for (size_t i = 0; i < s->n_device_stats; i++) {
        const struct tr_device_stat *d = &s->device_stats[i];
        if (tr_device_idle(d)) {
            idle++;
            continue;
        }
        tr_put_clean(fp, d->name);
        if (d->has_memory)
            fprintf(fp, ": peak memory in use %llu bytes", (unsigned long long)d->peak_memory);
        else
            fputs(": no memory in use recorded", fp);
        if (!d->to_device.count && !d->from_device.count)
            fputs("; no transfers", fp);
        fputc('\n', fp);
        tr_print_direction(fp, "to device", &d->to_device);
        tr_print_direction(fp, "from device", &d->from_device);
    }
    if (!idle)
        return;
    fputs("devices without transfers or memory in use:", fp);
    const char *sep = " ";
    for (size_t i = 0; i < s->n_device_stats; i++) {
        if (!tr_device_idle(&s->device_stats[i]))
            continue;
        fputs(sep, fp);
        tr_put_clean(fp, s->device_stats[i].name);
        sep = ", ";
    }
    fputc('\n', fp);
}

static void tr_print_mpit(FILE *fp, const struct tr_summary *s)
{
    if (!s->n_mpit_by_source)
        return;
    fputs("MPI_T events by source and type:\n", fp);
    for (size_t i = 0; i < s->n_mpit_by_source; i++) {
        const struct tr_mpit_source_stat *src = &s->mpit_by_source[i];
        fputs("  ", fp);
        tr_put_clean(fp, src->name);
        fprintf(fp, ": %llu %s, %llu dropped", (unsigned long long)src->events,
                tr_plural(src->events, "event", "events"), (unsigned long long)src->dropped);
        if (src->locations > 1)
            fprintf(fp, " (%llu locations)", (unsigned long long)src->locations);
        fputc('\n', fp);
        for (size_t k = 0; k < src->n_types; k++) {
            const struct tr_mpit_type_stat *t = &src->types[k];
            fputs("    ", fp);
            tr_put_clean(fp, t->type);
            fprintf(fp, ": %llu %s", (unsigned long long)t->events, tr_plural(t->events, "event", "events"));
            if (t->dropped)
                fprintf(fp, ", %llu dropped", (unsigned long long)t->dropped);
            fputc('\n', fp);
        }
    }
}

/* The variables that did not keep their default, one a line. */
static void tr_print_config(FILE *fp, const struct tr_summary *s)
{
    if (!s->n_config)
        return;
    size_t set = 0;
    for (size_t i = 0; i < s->n_config; i++)
        set += !tr_config_is_default(s->config[i].value);
    if (!set) {
        fprintf(fp, "configuration: all %zu variables at their defaults\n", s->n_config);
        return;
    }
    fprintf(fp, "configuration: %zu of %zu variables set, the others at their defaults:\n", set, s->n_config);
    for (size_t i = 0; i < s->n_config; i++) {
        if (tr_config_is_default(s->config[i].value))
            continue;
        fputs("  ", fp);
        tr_put_clean(fp, s->config[i].name);
        fputs(" = ", fp);
        tr_put_clean(fp, s->config[i].value);
        fputc('\n', fp);
    }
}

void tr_summary_print_text(FILE *fp, const struct tr_summary *s, size_t top)
{
    fputs("trace: ", fp);
    tr_put_clean(fp, s->trace_path ? s->trace_path : "?");
    fputc('\n', fp);
    fprintf(fp, "duration: %.3f ms, %llu %s, %llu %s, %llu %s\n",
            (double)s->duration_ns / 1e6,
            (unsigned long long)s->processes, tr_plural(s->processes, "process", "processes"),
            (unsigned long long)s->host_threads,
            tr_plural(s->host_threads, "host thread", "host threads"),
            (unsigned long long)s->devices, tr_plural(s->devices, "device", "devices"));

    uint64_t total = 0;
    for (int k = 0; k < TR_TARGET_KIND_COUNT; k++)
        total += s->target_regions[k];
    fprintf(fp, "target regions: %llu", (unsigned long long)total);
    const char *sep = "  (";
    for (int k = 0; k < TR_TARGET_KIND_COUNT; k++) {
        if (s->target_regions[k] == 0)
            continue;
        fprintf(fp, "%s%s %llu", sep, tr_target_kind_name((enum tr_target_kind)k),
                (unsigned long long)s->target_regions[k]);
        sep = ", ";
    }
    fputs(total ? ")\n" : "\n", fp);

    total = 0;
    for (size_t i = 0; i < s->n_kernels; i++)
        total += s->kernels[i].count;
    fprintf(fp, "kernels: %llu", (unsigned long long)total);
    const struct tr_kernel_count **sorted = tr_sorted_kernels(s);
    size_t shown = 0;
    sep = "  (";
    for (size_t i = 0; sorted && i < s->n_kernels; i++) {
        if (sorted[i]->count == 0)
            break; /* defined but never launched: sorted last */
        if (shown == TR_TEXT_MAX_KERNELS) {
            size_t rest = 0;
            for (size_t j = i; j < s->n_kernels && sorted[j]->count; j++)
                rest++;
            fprintf(fp, ", ... %zu more", rest);
            break;
        }
        fputs(sep, fp);
        tr_put_clean(fp, sorted[i]->name);
        fprintf(fp, " x%llu", (unsigned long long)sorted[i]->count);
        sep = ", ";
        shown++;
    }
    free(sorted);
    fputs(shown ? ")\n" : "\n", fp);

    fprintf(fp, "transfers to device: %llu, %llu bytes\n",
            (unsigned long long)s->transfers_to_device.count,
            (unsigned long long)s->transfers_to_device.bytes);
    fprintf(fp, "transfers from device: %llu, %llu bytes\n",
            (unsigned long long)s->transfers_from_device.count,
            (unsigned long long)s->transfers_from_device.bytes);
    fprintf(fp, "allocations: %llu, %llu bytes; deletes: %llu\n",
            (unsigned long long)s->allocations.count,
            (unsigned long long)s->allocations.bytes, (unsigned long long)s->deletes);
    fprintf(fp, "incomplete operations: %llu\n", (unsigned long long)s->incomplete);
    if (s->drop_gaps)
        fprintf(fp, "events dropped: %llu in %llu %s, the buffers full (TRACER_ON_FULL=drop): a larger "
                "TRACER_MAX_MEMORY, or TRACER_ON_FULL=block, keeps them\n", (unsigned long long)s->dropped_events,
                (unsigned long long)s->drop_gaps, tr_plural(s->drop_gaps, "gap", "gaps"));
    if (s->missing_gaps)
        fprintf(fp, "gaps where the journal lost records: %llu (measurement off there; the journal was damaged "
                "or a write to it failed)\n", (unsigned long long)s->missing_gaps);
    if (s->runtime_open)
        fprintf(fp,
                "open at the end, the OpenMP runtime's own: %llu regions of its hidden-helper team, which waits "
                "until the process ends (not the program's; LIBOMP_NUM_HIDDEN_HELPER_THREADS sizes it)\n",
                (unsigned long long)s->runtime_open);
    if (s->n_link_maps) {
        fprintf(fp, "link maps:");
        tr_put_counts(fp, s->link_maps, s->n_link_maps);
        fprintf(fp, "\n");
    }
    if (s->stale_link_pointers) {
        fprintf(fp, "stale link pointers: %llu (device code would use an old address):",
                (unsigned long long)s->stale_link_pointers);
        tr_put_counts(fp, s->stale_by_variable, s->n_stale_by_variable);
        fputc('\n', fp);
    }
    tr_print_advice(fp, s);
    if (s->mpit_status[0]) {
        fprintf(fp, "MPI_T: %llu %s on %llu %s", (unsigned long long)s->mpit_events,
                tr_plural(s->mpit_events, "event", "events"), (unsigned long long)s->mpit_sources,
                tr_plural(s->mpit_sources, "source", "sources"));
        if (s->mpit_dropped)
            fprintf(fp, ", %llu dropped by the MPI", (unsigned long long)s->mpit_dropped);
        if (s->mpit_order_violations)
            fprintf(fp, ", %llu out of order", (unsigned long long)s->mpit_order_violations);
        fputs(" (", fp);
        tr_put_clean(fp, s->mpit_status);
        fputs(")\n", fp);
    }
    if (s->run_end[0] && strcmp(s->run_end, "normal end"))
        fprintf(fp, "run: %s (trace recovered from its journal)\n", s->run_end);
    if (s->small_to_device.count || s->small_from_device.count)
        fprintf(fp,
                "transfers below TRACER_MIN_BYTES (totals only): to device %llu, %llu bytes; "
                "from device %llu, %llu bytes\n",
                (unsigned long long)s->small_to_device.count, (unsigned long long)s->small_to_device.bytes,
                (unsigned long long)s->small_from_device.count, (unsigned long long)s->small_from_device.bytes);
    tr_print_omp(fp, s, top);
    for (int k = 0; k < TR_LOC_KIND_COUNT; k++)
        tr_print_regions(fp, s, (enum tr_loc_kind)k, top);
    tr_print_devices(fp, s);
    tr_print_mpit(fp, s);
    tr_print_config(fp, s);
}

static void tr_json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(fp, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(fp, "\\u%04x", c);
        else
            fputc(c, fp);
    }
    fputc('"', fp);
}

static void tr_json_count_bytes(FILE *fp, const char *key, const struct tr_count_bytes *cb)
{
    fprintf(fp, ",\"%s\":{\"count\":%llu,\"bytes\":%llu}", key, (unsigned long long)cb->count,
            (unsigned long long)cb->bytes);
}

static void tr_json_regions(FILE *fp, const struct tr_summary *s)
{
    fputs(",\"regions\":[", fp);
    for (size_t i = 0; i < s->n_regions; i++) {
        const struct tr_region_stat *r = &s->regions[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", fp);
        tr_json_string(fp, r->name);
        fputs(",\"canonical\":", fp);
        tr_json_string(fp, r->canonical);
        fprintf(fp, ",\"location_kind\":\"%s\",\"count\":%llu,\"inclusive_ns\":%llu,\"exclusive_ns\":%llu}",
                tr_loc_kind_name(r->kind), (unsigned long long)r->count, (unsigned long long)r->inclusive_ns,
                (unsigned long long)r->exclusive_ns);
    }
    fputc(']', fp);
}

static void tr_json_direction(FILE *fp, const char *key, const struct tr_transfer_stat *x)
{
    fprintf(fp, ",\"%s\":{\"count\":%llu,\"bytes\":%llu,\"time_ns\":%llu,\"bytes_per_s\":", key,
            (unsigned long long)x->count, (unsigned long long)x->bytes, (unsigned long long)x->time_ns);
    if (x->time_ns)
        fprintf(fp, "%.0f}", tr_bandwidth(x) * 1e9);
    else
        fputs("null}", fp);
}

static void tr_json_devices(FILE *fp, const struct tr_summary *s)
{
    fputs(",\"per_device\":[", fp);
    for (size_t i = 0; i < s->n_device_stats; i++) {
        const struct tr_device_stat *d = &s->device_stats[i];
        fputs(i ? ",{\"device\":" : "{\"device\":", fp);
        tr_json_string(fp, d->name);
        tr_json_direction(fp, "to_device", &d->to_device);
        tr_json_direction(fp, "from_device", &d->from_device);
        if (d->has_memory)
            fprintf(fp, ",\"peak_memory_bytes\":%llu}", (unsigned long long)d->peak_memory);
        else
            fputs(",\"peak_memory_bytes\":null}", fp);
    }
    fputc(']', fp);
}

static void tr_json_ratio(FILE *fp, const char *key, double v)
{
    if (v < 0)
        fprintf(fp, ",\"%s\":null", key);
    else
        fprintf(fp, ",\"%s\":%.4f", key, v);
}

static void tr_json_thread_id(FILE *fp, const struct tr_summary *s, size_t i)
{
    fputs("\"location\":", fp);
    tr_json_string(fp, s->omp_threads[i].location);
    fputs(",\"process\":", fp);
    tr_json_string(fp, s->omp_threads[i].process);
}

/* Only for archives with host OpenMP states. */
static void tr_json_omp(FILE *fp, const struct tr_summary *s)
{
    if (!s->has_omp)
        return;
    fputs(",\"omp\":{\"threads\":[", fp);
    for (size_t i = 0; i < s->n_omp_threads; i++) {
        const struct tr_omp_thread *t = &s->omp_threads[i];
        fputs(i ? ",{" : "{", fp);
        tr_json_thread_id(fp, s, i);
        fprintf(fp, ",\"work_ns\":%llu,\"wait_ns\":%llu", (unsigned long long)t->work_ns,
                (unsigned long long)t->wait_ns);
        tr_json_ratio(fp, "wait_percent", tr_wait_percent(t->work_ns, t->wait_ns));
        fprintf(fp, ",\"source\":\"%s\"}", t->from_metrics ? "metrics" : "regions");
    }
    fputs("],\"parallel_regions\":[", fp);
    for (size_t i = 0; i < s->n_omp_parallel; i++) {
        const struct tr_omp_parallel *p = &s->omp_parallel[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", fp);
        tr_json_string(fp, p->name);
        fprintf(fp, ",\"instances\":%llu,\"threads\":%zu,\"work_ns\":%llu,\"wait_ns\":%llu",
                (unsigned long long)p->instances, p->n_threads, (unsigned long long)p->work_ns,
                (unsigned long long)p->wait_ns);
        tr_json_ratio(fp, "wait_percent", tr_wait_percent(p->work_ns, p->wait_ns));
        tr_json_ratio(fp, "imbalance", tr_imbalance(p));
        fputs(",\"per_thread\":[", fp);
        for (size_t k = 0; k < p->n_threads; k++) {
            const struct tr_omp_region_thread *t = &p->threads[k];
            fputs(k ? ",{" : "{", fp);
            tr_json_thread_id(fp, s, t->thread);
            fprintf(fp, ",\"instances\":%llu,\"work_ns\":%llu,\"wait_ns\":%llu}",
                    (unsigned long long)t->instances, (unsigned long long)t->work_ns,
                    (unsigned long long)t->wait_ns);
        }
        fputs("]}", fp);
    }
    fputs("]}", fp);
}

/* Only for archives with MPI_T source locations. */
static void tr_json_mpit(FILE *fp, const struct tr_summary *s)
{
    if (!s->n_mpit_by_source)
        return;
    fputs(",\"mpit_by_source\":{", fp);
    for (size_t i = 0; i < s->n_mpit_by_source; i++) {
        const struct tr_mpit_source_stat *src = &s->mpit_by_source[i];
        if (i)
            fputc(',', fp);
        tr_json_string(fp, src->name);
        fprintf(fp, ":{\"locations\":%llu,\"events\":%llu,\"dropped\":%llu,\"types\":{",
                (unsigned long long)src->locations, (unsigned long long)src->events,
                (unsigned long long)src->dropped);
        for (size_t k = 0; k < src->n_types; k++) {
            if (k)
                fputc(',', fp);
            tr_json_string(fp, src->types[k].type);
            fprintf(fp, ":{\"events\":%llu,\"dropped\":%llu}", (unsigned long long)src->types[k].events,
                    (unsigned long long)src->types[k].dropped);
        }
        fputs("}}", fp);
    }
    fputc('}', fp);
}

/* One line, stable keys: every target kind is present even when zero so
 * scripts can index without checking. */
void tr_summary_print_json(FILE *fp, const struct tr_summary *s)
{
    fputs("{\"trace\":", fp);
    tr_json_string(fp, s->trace_path ? s->trace_path : "");
    fprintf(fp, ",\"duration_ns\":%llu,\"processes\":%llu,\"host_threads\":%llu,\"devices\":%llu",
            (unsigned long long)s->duration_ns, (unsigned long long)s->processes,
            (unsigned long long)s->host_threads, (unsigned long long)s->devices);
    fputs(",\"target_regions\":{", fp);
    for (int k = 0; k < TR_TARGET_KIND_COUNT; k++)
        fprintf(fp, "%s\"%s\":%llu", k ? "," : "", tr_target_kind_name((enum tr_target_kind)k),
                (unsigned long long)s->target_regions[k]);
    fputs("},\"kernels\":{", fp);
    const struct tr_kernel_count **sorted = tr_sorted_kernels(s);
    for (size_t i = 0; sorted && i < s->n_kernels; i++) {
        if (i)
            fputc(',', fp);
        tr_json_string(fp, sorted[i]->name);
        fprintf(fp, ":%llu", (unsigned long long)sorted[i]->count);
    }
    free(sorted);
    fputc('}', fp);
    tr_json_count_bytes(fp, "transfers_to_device", &s->transfers_to_device);
    tr_json_count_bytes(fp, "transfers_from_device", &s->transfers_from_device);
    tr_json_count_bytes(fp, "allocations", &s->allocations);
    fprintf(fp, ",\"deletes\":%llu,\"incomplete\":%llu", (unsigned long long)s->deletes,
            (unsigned long long)s->incomplete);
    fprintf(fp, ",\"dropped_events\":%llu,\"drop_gaps\":%llu,\"missing_gaps\":%llu",
            (unsigned long long)s->dropped_events, (unsigned long long)s->drop_gaps,
            (unsigned long long)s->missing_gaps);
    if (s->runtime_open) /* only then, so the keys of other traces stay as they were */
        fprintf(fp, ",\"runtime_team_open\":%llu", (unsigned long long)s->runtime_open);
    /* Only when some were filtered, so the keys of other traces stay as they were. */
    if (s->small_to_device.count || s->small_from_device.count) {
        fprintf(fp,
                ",\"small_transfers\":{\"to_device\":{\"count\":%llu,\"bytes\":%llu},"
                "\"from_device\":{\"count\":%llu,\"bytes\":%llu}}",
                (unsigned long long)s->small_to_device.count, (unsigned long long)s->small_to_device.bytes,
                (unsigned long long)s->small_from_device.count, (unsigned long long)s->small_from_device.bytes);
    }
    /* Link keys likewise only for traces that have link mappings. */
    if (s->n_link_maps || s->stale_link_pointers) {
        fputs(",\"link_maps\":{", fp);
        for (size_t i = 0; i < s->n_link_maps; i++) {
            if (i)
                fputc(',', fp);
            tr_json_string(fp, s->link_maps[i].name);
            fprintf(fp, ":%llu", (unsigned long long)s->link_maps[i].count);
        }
        fprintf(fp, "},\"stale_link_pointers\":%llu", (unsigned long long)s->stale_link_pointers);
        fputs(",\"stale_link_pointers_by_variable\":{", fp);
        for (size_t i = 0; i < s->n_stale_by_variable; i++) {
            if (i)
                fputc(',', fp);
            tr_json_string(fp, s->stale_by_variable[i].name);
            fprintf(fp, ":%llu", (unsigned long long)s->stale_by_variable[i].count);
        }
        fputc('}', fp);
    }
    /* Always present: an empty list says the run was looked at and is clean
     * (or was not hashed: see "config"). */
    fputs(",\"advice\":[", fp);
    for (size_t i = 0; i < s->n_advice; i++) {
        const struct tr_advice_group *g = &s->advice[i];
        fputs(i ? ",{\"category\":" : "{\"category\":", fp);
        tr_json_string(fp, g->category);
        fprintf(fp, ",\"count\":%llu,\"bytes\":%llu,\"time_ns\":%llu,\"source\":", (unsigned long long)g->count,
                (unsigned long long)g->bytes, (unsigned long long)g->time_ns);
        if (g->source)
            tr_json_string(fp, g->source);
        else
            fputs("null", fp);
        fputs(",\"variable\":", fp);
        if (g->variable)
            tr_json_string(fp, g->variable);
        else
            fputs("null", fp);
        fprintf(fp, ",\"saved_time_ns\":%llu,\"saved_bytes\":%llu,\"rank\":", (unsigned long long)g->time_ns,
                (unsigned long long)g->bytes);
        if (g->rank >= 0)
            fprintf(fp, "%d}", g->rank);
        else
            fputs("null}", fp);
    }
    fputc(']', fp);
    if (s->mpit_status[0]) {
        fprintf(fp, ",\"mpit\":{\"sources\":%llu,\"events\":%llu,\"dropped\":%llu,\"order_violations\":%llu,"
                    "\"status\":",
                (unsigned long long)s->mpit_sources, (unsigned long long)s->mpit_events,
                (unsigned long long)s->mpit_dropped, (unsigned long long)s->mpit_order_violations);
        tr_json_string(fp, s->mpit_status);
        fputc('}', fp);
    }
    tr_json_omp(fp, s);
    tr_json_regions(fp, s);
    tr_json_devices(fp, s);
    tr_json_mpit(fp, s);
    fputs(",\"config\":{", fp);
    for (size_t i = 0; i < s->n_config; i++) {
        if (i)
            fputc(',', fp);
        tr_json_string(fp, s->config[i].name);
        fputc(':', fp);
        tr_json_string(fp, s->config[i].value);
    }
    fputs("}}\n", fp);
}



int tr_summary_report_fd(int fd, const char *archive_dir, const char *shown_dir)
{
    char *buf = NULL, err[512] = "";
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return -1;
    struct tr_summary s;
    int ret = 0;
    if (tr_summary_collect(archive_dir, &s, err, sizeof err) != 0) {
        fprintf(mem, "tracer: summary: cannot read %s/traces.otf2: %s\n", shown_dir, err[0] ? err : "unknown error");
        ret = -1;
    } else {
        fprintf(mem, "tracer: summary of %s/traces.otf2:\n", shown_dir);
        tr_summary_print_text(mem, &s, TR_SUMMARY_DEFAULT_TOP);
        tr_summary_free(&s);
    }
    if (fclose(mem) != 0) {
        free(buf);
        return -1;
    }
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ret = -1;
            break;
        }
        off += (size_t)n;
    }
    free(buf);
    return ret;
}
