/* job_convert.c - the journals of an MPI job's ranks -> one OTF2 archive.
 *
 * Each journal names its rank (MPI_RANK frame). They are checked first
 * (cheaply: a scan stops at that frame), so a wrong set fails before any
 * file is written. Then rank by rank, in rank order: load and analyse the
 * journal with definitions of its own, place it after the ranks before it
 * (location, group and window ids), write its events, let go of its records
 * (memory holds one rank's records at a time) and merge its definitions and
 * description into the job's union. Last, each rank's local definitions map
 * its ids to the unified ones, and the global definitions are written.
 *
 * These are the steps the ranks of a job take together at MPI_Finalize
 * (job_part.h), done here by one process, rank after rank (so each
 * journal is read once: a rank's ids are known when the ranks before it
 * are written): `tracer recover`, and jobs whose
 * ranks did not write at the end. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer/archive_stage.h"
#include "writer/job_part.h"
#include "writer/writer_internal.h"

typedef struct tr_job_rank {
    const char *path;
    int32_t rank;
} tr_job_rank;

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

int tr_writer_convert_job(const char *const *journals, size_t n, const char *archive_dir, tr_convert_report *r)
{
    memset(r, 0, sizeof *r);
    if (!n) {
        snprintf(r->error, sizeof r->error, "no journals");
        return -1;
    }
    tr_job_rank *ranks = calloc(n, sizeof *ranks);
    tr_job_part **parts = calloc(n, sizeof *parts);
    tr_job_union *u = tr_job_union_new();
    int32_t size = 0;
    if (!ranks || !parts || !u) {
        free(ranks);
        free(parts);
        tr_job_union_free(u);
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    int rc = identify(journals, n, ranks, &size, r);
    /* Written in a stage, moved into @archive_dir when complete. */
    tr_stage st = {.fd = -1};
    int dir = -1;
    if (!rc && (dir = open(archive_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        snprintf(r->error, sizeof r->error, "cannot open %s: %s", archive_dir, strerror(errno));
        rc = -1;
    }
    if (!rc)
        rc = tr_stage_create(&st, dir, archive_dir, r->error, sizeof r->error);
    OTF2_Archive *ar = 0;
    uint64_t bases[3] = {0, 0, 0};
    tr_job_errors_begin();
    for (size_t i = 0; !rc && i < n; i++) {
        parts[i] = tr_job_part_open(ranks[i].path, i == 0, tr_writer_threads(), r->error, sizeof r->error);
        if (!parts[i]) {
            rc = -1;
            break;
        }
        if (!tr_job_part_empty(parts[i]) && !ar) {
            ar = tr_job_archive_open(st.path, tr_job_part_hostname(parts[i]), 1);
            if (!ar || OTF2_Archive_OpenEvtFiles(ar) != OTF2_SUCCESS) {
                snprintf(r->error, sizeof r->error, "OTF2 failed to create the archive in %s", archive_dir);
                rc = -1;
                break;
            }
        }
        rc = tr_job_part_write_events(parts[i], ar, bases, r->error, sizeof r->error);
        if (!rc && tr_job_union_add_part(u, parts[i])) {
            snprintf(r->error, sizeof r->error, "out of memory");
            rc = -1;
        }
        uint64_t counts[3];
        if (!rc && tr_job_part_counts(parts[i], counts)) {
            snprintf(r->error, sizeof r->error, "out of memory");
            rc = -1;
        }
        for (int k = 0; !rc && k < 3; k++)
            bases[k] += counts[k];
    }
    if (!rc && !ar) {
        snprintf(r->error, sizeof r->error, "no rank's journal holds events");
        rc = -1;
    }
    if (!rc && OTF2_Archive_CloseEvtFiles(ar) != OTF2_SUCCESS) {
        snprintf(r->error, sizeof r->error, "OTF2 failed to close the event files");
        rc = -1;
    }
    if (!rc && OTF2_Archive_OpenDefFiles(ar) == OTF2_SUCCESS) {
        for (size_t i = 0; !rc && i < n; i++)
            if (tr_job_union_local_defs(u, parts[i], ar)) {
                snprintf(r->error, sizeof r->error, "out of memory");
                rc = -1;
            }
        OTF2_Archive_CloseDefFiles(ar);
    }
    if (!rc) {
        rc = tr_job_union_write(u, ar, size, r);
        ar = 0;
    }
    if (ar)
        OTF2_Archive_Close(ar);
    const char *otf2_error = tr_job_errors_end();
    const char *incomplete = tr_job_errors_incomplete();
    if (incomplete || (rc && otf2_error && !strncmp(r->error, "OTF2", 4))) {
        tr_stage_error(&st, r->error, sizeof r->error, incomplete ? incomplete : otf2_error);
        rc = -1;
    }
    if (rc)
        tr_stage_discard(&st);
    else if (tr_stage_commit(&st, r->error, sizeof r->error))
        rc = -1;
    else if (otf2_error)
        snprintf(r->warning, sizeof r->warning, "OTF2 refused an event (%s); the trace may miss it", otf2_error);
    if (dir >= 0)
        close(dir);
    for (size_t i = 0; i < n; i++)
        tr_job_part_free(parts[i]);
    tr_job_union_free(u);
    free(parts);
    free(ranks);
    return rc;
}
