/* summary_print.c - the counts of tracer summary as text or JSON. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

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

void tr_summary_print_text(FILE *fp, const struct tr_summary *s)
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
    if (s->n_link_maps) {
        fprintf(fp, "link maps:");
        for (size_t i = 0; i < s->n_link_maps; i++)
            fprintf(fp, "%s %s x%llu", i ? "," : "", s->link_maps[i].name, (unsigned long long)s->link_maps[i].count);
        fprintf(fp, "\n");
    }
    if (s->stale_link_pointers)
        fprintf(fp, "stale link pointers: %llu (device code would use an old address)\n",
                (unsigned long long)s->stale_link_pointers);
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
    }
    if (s->mpit_status[0]) {
        fprintf(fp, ",\"mpit\":{\"sources\":%llu,\"events\":%llu,\"dropped\":%llu,\"order_violations\":%llu,"
                    "\"status\":",
                (unsigned long long)s->mpit_sources, (unsigned long long)s->mpit_events,
                (unsigned long long)s->mpit_dropped, (unsigned long long)s->mpit_order_violations);
        tr_json_string(fp, s->mpit_status);
        fputc('}', fp);
    }
    fputs("}\n", fp);
}

/* ---- command -------------------------------------------------------------------- */

