/* job_part.c - see job_part.h. */
#include "writer/job_part.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/defs_codec.h"
#include "writer/writer_internal.h"

struct tr_job_part {
    tr_defs defs;       /* its own, by content */
    tr_writer w;
    char *journal;
    int empty;          /* the journal holds no event */
    int written;        /* its events are: w's counts are final */
    int counted;        /* a counting pass gave counts (before writing) */
    uint64_t counts[3];
    int with_config;    /* its description carries the configuration */
    int described;
    tr_rank_desc desc;
};

struct tr_job_union {
    tr_defs defs;       /* unified, by content */
    tr_rank_desc *descs;
    size_t n, cap;
};

#define UNION_MAGIC 0x554a5254u /* "TRJU" */

tr_job_part *tr_job_part_open(const char *journal, int with_config, unsigned threads, char *err, size_t errlen)
{
    tr_job_part *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return 0;
    }
    tr_defs_init(&p->defs, 1);
    p->journal = strdup(journal);
    int rc = p->journal ? tr_unit_open(&p->w, &p->defs, journal, err, errlen) : -1;
    if (!p->journal)
        snprintf(err, errlen, "out of memory");
    if (rc >= 0 && !p->w.m.jd->has_mpi_rank) {
        snprintf(err, errlen, "%s names no MPI rank (no MPI_RANK frame): not a rank of an MPI job", journal);
        rc = -1;
    }
    if (rc < 0) {
        tr_job_part_free(p);
        return 0;
    }
    p->w.rank = p->w.m.jd->mpi_rank.rank;
    p->w.threads = threads;
    p->empty = rc == 1;
    p->with_config = with_config;
    if (p->empty) {
        if (tr_describe_empty(p->w.m.jd, p->w.rank, with_config, &p->desc)) {
            snprintf(err, errlen, "out of memory");
            tr_job_part_free(p);
            return 0;
        }
        p->described = 1;
        return p;
    }
    return p;
}

int tr_job_part_empty(const tr_job_part *p) { return p->empty; }

int32_t tr_job_part_rank(const tr_job_part *p) { return p->w.m.jd->mpi_rank.rank; }
int32_t tr_job_part_size(const tr_job_part *p) { return p->w.m.jd->mpi_rank.size; }
const char *tr_job_part_hostname(const tr_job_part *p) { return p->w.m.jd->hostname; }

static void counts_of(const tr_writer *w, uint64_t counts[3])
{
    counts[0] = w->nlocations;
    counts[1] = 1 + w->m.ndevices;
    counts[2] = w->m.ndevices;
}

/* Ranks that write together must agree on their ids before any of them
 * writes; the model finds devices and lanes as it writes, so such a rank
 * runs its pass once without writing to count them (its journal is then
 * read twice; `tracer recover` and the last rank to exit write rank after
 * rank, and read each journal once). */
int tr_job_part_counts(tr_job_part *p, uint64_t counts[3])
{
    memset(counts, 0, 3 * sizeof *counts);
    if (p->empty)
        return 0;
    if (p->written) {
        counts_of(&p->w, counts);
        return 0;
    }
    if (!p->counted) {
        tr_defs scratch;
        tr_defs_init(&scratch, 1);
        tr_writer w;
        char err[256];
        int rc = tr_unit_open(&w, &scratch, p->journal, err, sizeof err);
        if (!rc)
            rc = tr_unit_count(&w);
        if (!rc)
            counts_of(&w, p->counts);
        tr_unit_free(&w);
        tr_defs_free(&scratch);
        if (rc)
            return -1;
        p->counted = 1;
    }
    memcpy(counts, p->counts, sizeof p->counts);
    return 0;
}

int tr_job_part_write_events(tr_job_part *p, OTF2_Archive *ar, const uint64_t bases[3], char *err, size_t errlen)
{
    if (p->empty)
        return 0;
    tr_writer *w = &p->w;
    tr_unit_place(w, bases[0], (uint32_t)bases[1], (uint32_t)bases[2]);
    uint64_t total = 0;
    if (tr_unit_write_events(w, ar, &total)) {
        snprintf(err, errlen, "OTF2 failed to write the events of rank %d", w->rank);
        return -1;
    }
    p->written = 1;
    /* A rank measured once is corrected up to its last event, known now. */
    if (tr_job_clock_points(w)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (p->counted) {
        uint64_t c[3];
        counts_of(w, c);
        if (memcmp(c, p->counts, sizeof c)) {
            snprintf(err, errlen, "rank %d: its journal gave other counts when written than when counted", w->rank);
            return -1;
        }
    }
    if (tr_describe(w, p->with_config, &p->desc)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->described = 1;
    return 0;
}

static int local_defs(tr_job_part *p, tr_defs *global, OTF2_Archive *ar)
{
    if (p->empty)
        return 0;
    tr_defs_map map = {0};
    int rc = tr_defs_merge(global, &p->defs, &map);
    if (!rc)
        tr_archive_local_defs(ar, &p->w, &map);
    tr_defs_map_free(&map);
    return rc;
}

int tr_job_part_local_defs(tr_job_part *p, OTF2_Archive *ar, const void *global, size_t len)
{
    if (p->empty)
        return 0;
    tr_blob_reader r = tr_blob_read(global, len);
    tr_defs g;
    if (tr_defs_unpack(&r, &g))
        return -1;
    int rc = local_defs(p, &g, ar);
    tr_defs_free(&g);
    return rc;
}

void tr_job_part_free(tr_job_part *p)
{
    if (!p)
        return;
    tr_unit_free(&p->w);
    tr_defs_free(&p->defs);
    free(p->journal);
    if (p->described)
        tr_rank_desc_free(&p->desc);
    free(p);
}

tr_job_union *tr_job_union_new(void)
{
    tr_job_union *u = calloc(1, sizeof *u);
    if (u)
        tr_defs_init(&u->defs, 1);
    return u;
}

static tr_rank_desc *union_slot(tr_job_union *u)
{
    if (u->n == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 8;
        tr_rank_desc *d = realloc(u->descs, cap * sizeof *d);
        if (!d)
            return 0;
        u->descs = d;
        u->cap = cap;
    }
    return &u->descs[u->n];
}

/* A copy by value, through the wire format: one path, tested by every job. */
int tr_job_union_add_desc(tr_job_union *u, const tr_defs *defs, const tr_rank_desc *desc)
{
    tr_blob b = {0};
    tr_rank_desc_pack(desc, &b);
    tr_rank_desc *slot = union_slot(u);
    tr_blob_reader r = tr_blob_read(b.p, b.n);
    int rc = b.oom || !slot || tr_rank_desc_unpack(&r, slot) ? -1 : 0;
    tr_blob_free(&b);
    if (!rc)
        u->n++;
    if (!rc && defs)
        rc = tr_defs_merge(&u->defs, defs, 0);
    return rc;
}

int tr_job_union_add_part(tr_job_union *u, const tr_job_part *p)
{
    if (!p->described)
        return -1;
    return tr_job_union_add_desc(u, p->empty ? 0 : &p->defs, &p->desc);
}

int tr_job_union_add_blob(tr_job_union *u, const void *blob, size_t len)
{
    tr_blob_reader r = tr_blob_read(blob, len);
    if (tr_blob_get_u32(&r) != UNION_MAGIC)
        return -1;
    tr_defs d;
    if (tr_defs_unpack(&r, &d))
        return -1;
    int rc = tr_defs_merge(&u->defs, &d, 0);
    tr_defs_free(&d);
    uint64_t n = tr_blob_get_u64(&r);
    for (uint64_t i = 0; !rc && i < n; i++) {
        tr_rank_desc *slot = union_slot(u);
        if (!slot || tr_rank_desc_unpack(&r, slot))
            rc = -1;
        else
            u->n++;
    }
    return rc || r.bad || r.at != r.n ? -1 : 0;
}

int tr_job_union_pack(const tr_job_union *u, tr_blob *out)
{
    tr_blob_u32(out, UNION_MAGIC);
    tr_defs_pack(&u->defs, out);
    tr_blob_u64(out, u->n);
    for (size_t i = 0; i < u->n; i++)
        tr_rank_desc_pack(&u->descs[i], out);
    return out->oom ? -1 : 0;
}

int tr_job_union_pack_defs(const tr_job_union *u, tr_blob *out)
{
    tr_defs_pack(&u->defs, out);
    return out->oom ? -1 : 0;
}

int tr_job_union_local_defs(tr_job_union *u, tr_job_part *p, OTF2_Archive *ar) { return local_defs(p, &u->defs, ar); }

static int by_rank(const void *a, const void *b)
{
    const tr_rank_desc *x = *(const tr_rank_desc *const *)a, *y = *(const tr_rank_desc *const *)b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int tr_job_union_write(tr_job_union *u, OTF2_Archive *ar, int32_t size, tr_convert_report *r)
{
    const tr_rank_desc **all = calloc(u->n ? u->n : 1, sizeof *all);
    const tr_rank_desc **parts = calloc(u->n ? u->n : 1, sizeof *parts);
    if (!all || !parts) {
        free(all);
        free(parts);
        snprintf(r->error, sizeof r->error, "out of memory");
        OTF2_Archive_Close(ar);
        return -1;
    }
    for (size_t i = 0; i < u->n; i++)
        all[i] = &u->descs[i];
    qsort(all, u->n, sizeof *all, by_rank);
    size_t nparts = 0;
    for (size_t i = 0; i < u->n; i++) {
        const tr_rank_desc *d = all[i];
        r->skipped_bytes += d->skipped_bytes;
        r->bad_frames += d->bad_frames;
        r->truncated |= d->truncated;
        r->ended = i == 0 ? d->ended : r->ended && d->ended;
        if (d->crashed && !r->crashed) {
            r->crashed = 1;
            r->crash_signal = d->crash_signal;
        }
        r->records += d->records;
        if (d->empty)
            continue;
        parts[nparts++] = d;
        r->events += d->events_total;
        r->locations += d->nhost;
        r->devices += d->ndevices;
        r->lost += d->lost;
    }
    r->job_size = (uint64_t)size;
    r->ranks = nparts;
    r->ranks_missing = r->job_size > nparts ? r->job_size - nparts : 0;
    int rc = 0;
    tr_global g = {.defs = &u->defs, .parts = parts, .nparts = nparts, .job = 1};
    if (!nparts) {
        snprintf(r->error, sizeof r->error, "no rank's journal holds events");
        rc = -1;
    } else if (tr_job_properties(ar, all, u->n, size, r) || tr_global_prepare(&g)) {
        snprintf(r->error, sizeof r->error, "out of memory");
        rc = -1;
    }
    if (!rc)
        rc = tr_archive_global_defs(ar, &g);
    else
        OTF2_Archive_Close(ar);
    if (rc && !r->error[0])
        snprintf(r->error, sizeof r->error, "OTF2 failed to write the global definitions");
    tr_global_free(&g);
    free(all);
    free(parts);
    return rc;
}

void tr_job_union_free(tr_job_union *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++)
        tr_rank_desc_free(&u->descs[i]);
    free(u->descs);
    tr_defs_free(&u->defs);
    free(u);
}
