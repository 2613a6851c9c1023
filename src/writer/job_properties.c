/* job_properties.c - what a job's archive says about how it was taken, in
 * its anchor file: the configuration (rank 0's: every rank reads the same
 * environment from the launcher, normally), the filters' totals over all
 * ranks, how each rank ended, which ranks are missing. What is a rank's own
 * (its process, its MPI_T) is a property of its location group instead
 * (otf2_global_defs.c): OTF2 keeps the anchor's properties in one buffer of
 * 256 KiB and checks each new name against all before it, which thousands
 * of ranks would overflow and slow down quadratically. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "writer/writer.h"
#include "writer/writer_internal.h"

typedef struct text {
    char *s;
    size_t n, cap;
    int oom;
} text;

static void addf(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list va;
        va_start(va, fmt);
        int k = t->oom ? 0 : vsnprintf(t->s ? t->s + t->n : 0, t->s ? t->cap - t->n : 0, fmt, va);
        va_end(va);
        if (t->oom || k < 0)
            return;
        if (t->s && t->n + (size_t)k < t->cap) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = 2 * (t->cap + (size_t)k) + 64;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->oom = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

/* @s into @out, cut with "..." when it does not fit. */
static void copy_cut(char *out, size_t size, const char *s)
{
    size_t len = strlen(s);
    if (len < size) {
        memcpy(out, s, len + 1);
        return;
    }
    snprintf(out, size, "%.*s...", (int)(size - 4), s);
}

/* How each rank's run ended; "normal end" when every journal says so. */
static void run_end(text *t, const tr_rank_desc *const *ranks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const tr_rank_desc *d = ranks[i];
        char how[64] = "";
        if (d->journal_lost)
            snprintf(how, sizeof how, "journal lost");
        else if (d->crashed)
            tr_run_end_text(how, sizeof how, d->crash_signal);
        else if (!d->ended)
            snprintf(how, sizeof how, "recovered");
        if (!how[0] && !d->empty)
            continue;
        addf(t, "%srank %d: %s%s%s", t->n ? "; " : "", d->rank, how, how[0] && d->empty ? ", " : "",
             d->empty ? "no events" : "");
    }
    if (!t->n)
        addf(t, "normal end");
}

/* Ranks of 0..size-1 not in the archive, as "2,5-7". */
static void missing_ranks(text *t, const tr_rank_desc *const *ranks, size_t n, int32_t size)
{
    size_t i = 0;
    for (int32_t k = 0; k < size;) {
        while (i < n && (ranks[i]->rank < k || ranks[i]->empty))
            i++;
        if (i < n && ranks[i]->rank == k) {
            k++;
            continue;
        }
        int32_t last = i < n ? ranks[i]->rank - 1 : size - 1; /* the next present one ends the run */
        if (last == k)
            addf(t, "%s%d", t->n ? "," : "", k);
        else
            addf(t, "%s%d-%d", t->n ? "," : "", k, last);
        k = last + 1;
    }
}

int tr_job_properties(OTF2_Archive *ar, const tr_rank_desc *const *ranks, size_t n, int32_t size,
                      tr_convert_report *r)
{
    for (size_t i = 0; i < n; i++)
        if (ranks[i]->nconfig) {
            tr_archive_config_properties(ar, ranks[i]->config, ranks[i]->nconfig);
            break;
        }
    uint64_t count[2] = {0, 0}, bytes[2] = {0, 0};
    size_t present = 0;
    for (size_t i = 0; i < n; i++) {
        for (int d = 0; d < 2; d++) {
            count[d] += ranks[i]->small_count[d];
            bytes[d] += ranks[i]->small_bytes[d];
        }
        present += !ranks[i]->empty;
    }
    tr_archive_filtered_properties(ar, count, bytes);

    text end = {0}, missing = {0};
    run_end(&end, ranks, n);
    missing_ranks(&missing, ranks, n, size);
    int oom = end.oom || missing.oom;
    if (!oom) {
        OTF2_Archive_SetProperty(ar, TRV_PROP_RUN_END, end.s, false);
        copy_cut(r->ends, sizeof r->ends, end.s);
        char value[64];
        snprintf(value, sizeof value, "%zu/%d", present, size);
        OTF2_Archive_SetProperty(ar, "TRACER::JOB::RANKS", value, false);
        if (missing.n) {
            OTF2_Archive_SetProperty(ar, "TRACER::JOB::MISSING_RANKS", missing.s, false);
            copy_cut(r->missing, sizeof r->missing, missing.s);
        }
    }
    free(end.s);
    free(missing.s);
    return oom ? -1 : 0;
}
