/* job_convert.c - the journals of an MPI job's ranks -> one OTF2 archive.
 *
 * Each journal names its rank (MPI_RANK frame). They are checked first
 * (cheaply: a scan stops at that frame), so a wrong set fails before any
 * file is written. Then rank by rank, in rank order: load and analyse the
 * journal exactly as alone (writer_unit.c), place it after the ranks before
 * it (location, group and window ids), write its events, and let go of its
 * records - so memory holds one rank's records at a time. The definitions
 * are shared and written last, with every rank's ClockOffsets.
 *
 * The per-rank steps need only the definitions (tr_defs) and the ids the
 * earlier ranks took, so a parallel version can analyse ranks side by side
 * once the definitions are made safe to share. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer_internal.h"

typedef struct probe {
    int found;
    tr_journal_mpi_rank mr;
} probe;

static int probe_visit(void *ctx, const tr_frame_header *h, const void *payload, uint64_t bytes)
{
    probe *p = ctx;
    if (h->type != TR_FRAME_MPI_RANK || bytes < 8)
        return 0;
    memcpy(&p->mr, payload, bytes < sizeof p->mr ? bytes : sizeof p->mr);
    p->found = 1;
    return 1; /* written right after MPI_Init: the rest need not be read now */
}

static int by_rank(const void *a, const void *b)
{
    const tr_job_rank *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The ranks of @journals, sorted; -1 with r->error when they are not the
 * ranks of one job. */
static int identify(const char *const *journals, size_t n, tr_job_rank *ranks, int32_t *size, tr_convert_report *r)
{
    int32_t *sizes = calloc(n, sizeof *sizes);
    if (!sizes) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        probe p = {0};
        tr_journal_stats st;
        if (tr_journal_scan_stored(journals[i], probe_visit, &p, &st)) {
            snprintf(r->error, sizeof r->error, "cannot read %s: %s", journals[i], strerror(errno));
            rc = -1;
        } else if (!p.found) {
            snprintf(r->error, sizeof r->error, "%s names no MPI rank (no MPI_RANK frame): not a rank of an MPI job",
                     journals[i]);
            rc = -1;
        } else if (p.mr.size <= 0 || p.mr.rank < 0 || p.mr.rank >= p.mr.size) {
            snprintf(r->error, sizeof r->error, "%s says it is rank %d of %d: not a rank of an MPI job", journals[i],
                     p.mr.rank, p.mr.size);
            rc = -1;
        }
        ranks[i].path = journals[i];
        ranks[i].rank = p.mr.rank;
        sizes[i] = p.mr.size;
        if (!rc && sizes[i] != sizes[0]) {
            snprintf(r->error, sizeof r->error,
                     "%s is a rank of a job of %d ranks, %s of one of %d: the journals are not of one job",
                     journals[i], sizes[i], journals[0], sizes[0]);
            rc = -1;
        }
    }
    *size = sizes[0];
    free(sizes);
    if (rc)
        return -1;
    qsort(ranks, n, sizeof *ranks, by_rank);
    for (size_t i = 1; i < n; i++)
        if (ranks[i].rank == ranks[i - 1].rank) {
            snprintf(r->error, sizeof r->error, "%s and %s are both rank %d", ranks[i - 1].path, ranks[i].path,
                     ranks[i].rank);
            return -1;
        }
    return 0;
}

static void add_report(tr_convert_report *r, const tr_job_rank *rk, int first)
{
    const tr_journal_data *jd = rk->w.jd;
    r->skipped_bytes += jd->stats.skipped_bytes;
    r->bad_frames += jd->stats.bad_frames;
    r->truncated |= jd->stats.truncated;
    r->ended = first ? jd->ended : r->ended && jd->ended;
    if (jd->crashed && !r->crashed) {
        r->crashed = 1;
        r->crash_signal = jd->crash_signal;
    }
    r->records += rk->w.data.records;
}

/* Host names in order of first appearance: one SystemTreeNode each. */
static const char **name_nodes(tr_writer **units, size_t n, uint32_t *nnodes)
{
    const char **nodes = calloc(n ? n : 1, sizeof *nodes);
    *nnodes = 0;
    for (size_t u = 0; nodes && u < n; u++) {
        const char *h = units[u]->jd->hostname ? units[u]->jd->hostname : "localhost";
        uint32_t k = 0;
        while (k < *nnodes && strcmp(nodes[k], h))
            k++;
        if (k == *nnodes)
            nodes[(*nnodes)++] = h;
        units[u]->node = 1 + k;
    }
    return nodes;
}

/* The archive's span on rank 0's clock, as readers correct the stamps. */
static void time_span(tr_global *g)
{
    g->t_min = UINT64_MAX;
    g->t_max = 0;
    for (size_t u = 0; u < g->nunits; u++) {
        const tr_writer *w = g->units[u];
        uint64_t a = tr_job_clock_correct(w, w->t_min), b = tr_job_clock_correct(w, w->t_max);
        if (a < g->t_min)
            g->t_min = a;
        if (b > g->t_max)
            g->t_max = b;
    }
    if (g->t_min > g->t_max)
        g->t_min = g->t_max;
    /* The realtime of the first rank's local time that corresponds to t_min. */
    const tr_writer *ref = g->units[0];
    int64_t offset = (int64_t)(tr_job_clock_correct(ref, ref->t_min) - ref->t_min);
    g->realtime = (uint64_t)((int64_t)g->t_min - offset + ref->jd->realtime_offset);
}

/* Loads, places and writes every rank; opens the archive at the first rank
 * with events. Returns 0, or -1 with r->error. */
static int write_ranks(tr_job_rank *ranks, size_t n, tr_defs *defs, const char *dir, OTF2_Archive **ar,
                       tr_writer **units, size_t *nunits, tr_convert_report *r)
{
    uint64_t loc_base = 0;
    uint32_t group_base = 0, win_base = 0;
    for (size_t i = 0; i < n; i++) {
        tr_job_rank *rk = &ranks[i];
        int rc = tr_unit_open(&rk->w, defs, rk->path, r->error, sizeof r->error);
        if (rc < 0)
            return -1;
        rk->w.rank = rk->rank;
        add_report(r, rk, i == 0);
        if (rc == 1) {
            rk->empty = 1;
            continue;
        }
        if (!*ar) {
            *ar = tr_archive_open(dir, rk->w.jd->hostname);
            if (!*ar || OTF2_Archive_OpenEvtFiles(*ar) != OTF2_SUCCESS)
                return 1;
        }
        if (tr_job_clock_points(&rk->w) || tr_unit_place(&rk->w, loc_base, group_base, win_base)) {
            snprintf(r->error, sizeof r->error, "out of memory while analysing events of %s", rk->path);
            return -1;
        }
        if (tr_unit_write_events(&rk->w, *ar, &r->events))
            return 1;
        tr_unit_release_events(&rk->w);
        loc_base += rk->w.nlocations;
        group_base += 1 + (uint32_t)rk->w.ndevices;
        win_base += (uint32_t)rk->w.ndevices;
        r->locations += rk->w.data.nstreams;
        r->devices += rk->w.ndevices;
        r->lost += rk->w.lost;
        units[(*nunits)++] = &rk->w;
    }
    return 0;
}

int tr_writer_convert_job(const char *const *journals, size_t n, const char *archive_dir, tr_convert_report *r)
{
    memset(r, 0, sizeof *r);
    if (!n) {
        snprintf(r->error, sizeof r->error, "no journals");
        return -1;
    }
    tr_job_rank *ranks = calloc(n, sizeof *ranks);
    tr_writer **units = calloc(n, sizeof *units);
    int32_t size = 0;
    if (!ranks || !units) {
        free(ranks);
        free(units);
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    int rc = identify(journals, n, ranks, &size, r);
    tr_defs defs;
    tr_defs_init(&defs, 1);
    OTF2_Archive *ar = 0;
    size_t nunits = 0;
    if (!rc) {
        r->job_size = (uint64_t)size;
        tr_archive_errors_begin();
        int failed = write_ranks(ranks, n, &defs, archive_dir, &ar, units, &nunits, r);
        if (!failed && !nunits) {
            snprintf(r->error, sizeof r->error, "no rank's journal holds events");
            failed = -1;
        }
        uint32_t nnodes = 0;
        const char **nodes = failed ? 0 : name_nodes(units, nunits, &nnodes);
        if (!failed && (!nodes || tr_job_properties(ar, ranks, n, size, r))) {
            snprintf(r->error, sizeof r->error, "out of memory");
            failed = -1;
        }
        if (!failed) {
            tr_global g = {.defs = &defs, .units = units, .nunits = nunits, .job = 1, .nodes = nodes,
                           .nnodes = nnodes};
            time_span(&g);
            failed = tr_archive_finish(ar, &g) ? 1 : 0;
            ar = 0;
        } else if (ar) {
            OTF2_Archive_Close(ar);
            ar = 0;
        }
        free(nodes);
        const char *otf2_error = tr_archive_errors_end();
        if (failed > 0) {
            snprintf(r->error, sizeof r->error, "OTF2 failed: %s", otf2_error ? otf2_error : "unknown error");
        } else if (!failed && otf2_error) {
            snprintf(r->warning, sizeof r->warning, "OTF2 refused an event (%s); the trace may miss it", otf2_error);
        }
        rc = failed ? -1 : 0;
    }
    r->ranks = nunits;
    r->ranks_missing = r->job_size > nunits ? r->job_size - nunits : 0;
    for (size_t i = 0; i < n; i++)
        tr_unit_free(&ranks[i].w);
    tr_defs_free(&defs);
    free(units);
    free(ranks);
    return rc;
}
