/* job_convert.c - the journals of an MPI job's ranks -> one OTF2 archive.
 *
 * Each journal names its rank (MPI_RANK frame). They are checked first
 * (cheaply: a scan stops at that frame), so a wrong set fails before any
 * file is written. A journal cut short before that frame (or unreadable) is
 * lost, not the job: the others are written, and its rank (from its file
 * name) is in the archive without events, marked "journal lost". Then rank by rank, in rank order: load and analyse the
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
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer/archive_stage.h"
#include "writer/job_part.h"
#include "writer/writer_internal.h"

typedef struct tr_job_rank {
    const char *path;
    int32_t rank;       /* -1: a lost journal whose rank is unknown */
    char lost[128];     /* why its journal is lost; "" when it names its rank */
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

/* The journals that name their rank first, in rank order; the lost ones
 * after them. */
static int by_rank(const void *a, const void *b)
{
    const tr_job_rank *x = a, *y = b;
    if (!x->lost[0] != !y->lost[0])
        return x->lost[0] ? 1 : -1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The N of a path ending in rank<N>.journal (how a job's directory names
 * its journals), or -1. */
static int32_t rank_of_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "rank", 4) || base[4] < '0' || base[4] > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(base + 4, &end, 10);
    return errno || v > INT32_MAX || strcmp(end, ".journal") ? -1 : (int32_t)v;
}

/* Nonzero when @rank is taken by a journal of ranks[0..n) other than @self. */
static int rank_taken(const tr_job_rank *ranks, size_t n, size_t self, int32_t rank)
{
    for (size_t i = 0; i < n; i++)
        if (i != self && ranks[i].rank == rank)
            return 1;
    return 0;
}

/* A lost journal's rank: the number its file name gives, when it is a rank
 * of the job no other journal names; else, when only one journal's rank is
 * unknown and only one rank of the job is unnamed, that one. */
static void place_lost(tr_job_rank *ranks, size_t n, size_t named, int32_t size)
{
    size_t unknown = 0, at = 0;
    for (size_t i = named; i < n; i++)
        ranks[i].rank = -1;
    for (size_t i = named; i < n; i++) {
        int32_t k = rank_of_name(ranks[i].path);
        if (k >= 0 && k < size && !rank_taken(ranks, n, i, k))
            ranks[i].rank = k;
        else
            unknown++, at = i;
    }
    if (unknown != 1)
        return;
    int32_t free_rank = -1, nfree = 0;
    for (int32_t k = 0; k < size && nfree < 2; k++)
        if (!rank_taken(ranks, n, at, k))
            free_rank = k, nfree++;
    if (nfree == 1)
        ranks[at].rank = free_rank;
}

/* Why @path (of no MPI rank) is a lost journal: "" when it is no rank's
 * journal at all (whole and ended, it never named a rank). */
static void why_lost(const char *path, const tr_journal_stats *st, int scan_errno, char *why, size_t size)
{
    struct stat sb;
    if (scan_errno)
        snprintf(why, size, "cannot be read: %s", strerror(scan_errno));
    else if (st->ended && !st->bad_frames)
        why[0] = 0;
    else if (st->ended)
        snprintf(why, size, "damaged where it names its rank");
    else if (!stat(path, &sb))
        snprintf(why, size, "%lld bytes, cut short before it names its rank", (long long)sb.st_size);
    else
        snprintf(why, size, "cut short before it names its rank");
}

/* r->lost_journals and r->ranks_lost from the lost journals ranks[named..n). */
static void report_lost(const tr_job_rank *ranks, size_t n, size_t named, tr_convert_report *r)
{
    size_t at = 0;
    for (size_t i = named; i < n; i++) {
        char rank[32] = "rank ?";
        if (ranks[i].rank >= 0)
            snprintf(rank, sizeof rank, "rank %d", ranks[i].rank);
        int k = snprintf(r->lost_journals + at, sizeof r->lost_journals - at, "%s%s (%s: %s)", at ? "; " : "",
                         rank, ranks[i].path, ranks[i].lost);
        if (k < 0 || (size_t)k >= sizeof r->lost_journals - at) {
            snprintf(r->lost_journals + sizeof r->lost_journals - 4, 4, "...");
            at = sizeof r->lost_journals - 1;
        } else {
            at += (size_t)k;
        }
    }
    r->ranks_lost = n - named;
}

/* The ranks of @journals, sorted: those that name their rank, then (*named
 * of them) the lost ones. -1 with r->error when the journals are not the
 * ranks of one job, or none names its rank. */
static int identify(const char *const *journals, size_t n, tr_job_rank *ranks, size_t *named, int32_t *size,
                    tr_convert_report *r)
{
    int rc = 0;
    const char *first = 0; /* the first journal that names its rank */
    *size = 0;
    *named = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        probe p = {0};
        tr_journal_stats st;
        int scan_errno = 0;
        ranks[i].path = journals[i];
        ranks[i].lost[0] = 0;
        if (tr_journal_scan_stored(journals[i], probe_visit, &p, &st))
            scan_errno = errno ? errno : EIO;
        if (scan_errno == ENOMEM) {
            snprintf(r->error, sizeof r->error, "cannot read %s: %s", journals[i], strerror(scan_errno));
            rc = -1;
        } else if (scan_errno || !p.found) {
            why_lost(journals[i], &st, scan_errno, ranks[i].lost, sizeof ranks[i].lost);
            if (!ranks[i].lost[0]) {
                snprintf(r->error, sizeof r->error,
                         "%s names no MPI rank (no MPI_RANK frame): not a rank of an MPI job", journals[i]);
                rc = -1;
            }
        } else if (p.mr.size <= 0 || p.mr.rank < 0 || p.mr.rank >= p.mr.size) {
            snprintf(r->error, sizeof r->error, "%s says it is rank %d of %d: not a rank of an MPI job", journals[i],
                     p.mr.rank, p.mr.size);
            rc = -1;
        } else if (first && p.mr.size != *size) {
            snprintf(r->error, sizeof r->error,
                     "%s is a rank of a job of %d ranks, %s of one of %d: the journals are not of one job",
                     journals[i], p.mr.size, first, *size);
            rc = -1;
        } else {
            ranks[i].rank = p.mr.rank;
            if (!first) {
                first = journals[i];
                *size = p.mr.size;
            }
            ++*named;
        }
    }
    if (rc)
        return -1;
    if (!*named) {
        snprintf(r->error, sizeof r->error, "no journal names its MPI rank (%s: %s): nothing to recover", journals[0],
                 ranks[0].lost);
        return -1;
    }
    qsort(ranks, n, sizeof *ranks, by_rank);
    for (size_t i = 1; i < *named; i++)
        if (ranks[i].rank == ranks[i - 1].rank) {
            snprintf(r->error, sizeof r->error, "%s and %s are both rank %d", ranks[i - 1].path, ranks[i].path,
                     ranks[i].rank);
            return -1;
        }
    place_lost(ranks, n, *named, *size);
    report_lost(ranks, n, *named, r);
    return 0;
}

/* The lost journals' ranks, in the archive without events and marked
 * "journal lost" in its TRACER::RUN::END. */
static int add_lost(tr_job_union *u, const tr_job_rank *ranks, size_t n, size_t named)
{
    for (size_t i = named; i < n; i++) {
        if (ranks[i].rank < 0)
            continue;
        tr_rank_desc d = {.rank = ranks[i].rank, .empty = 1, .journal_lost = 1};
        if (tr_job_union_add_desc(u, 0, &d))
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
    size_t named = 0;
    if (!ranks || !parts || !u) {
        free(ranks);
        free(parts);
        tr_job_union_free(u);
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    int rc = identify(journals, n, ranks, &named, &size, r);
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
    for (size_t i = 0; !rc && i < named; i++) {
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
        for (size_t i = 0; !rc && i < named; i++)
            if (tr_job_union_local_defs(u, parts[i], ar)) {
                snprintf(r->error, sizeof r->error, "out of memory");
                rc = -1;
            }
        OTF2_Archive_CloseDefFiles(ar);
    }
    if (!rc && add_lost(u, ranks, n, named)) {
        snprintf(r->error, sizeof r->error, "out of memory");
        rc = -1;
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
