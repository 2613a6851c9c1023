/* writer.c - a journal -> an OTF2 archive: load, analyse, write. An MPI
 * job's journals -> one archive is job_convert.c. */
#include "common/trace_vocab.h"
#include "writer/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer/archive_stage.h"
#include "writer/otf2_workers.h"
#include "writer/writer_internal.h"

static int threads_asked = 8;

void tr_writer_set_threads(int n) { threads_asked = n < 0 ? 0 : n; }

unsigned tr_writer_threads(void)
{
    unsigned cpus = tr_workers_default();
    return (unsigned)threads_asked < cpus ? (unsigned)threads_asked : cpus;
}

/* How the run ended, as TRACER::RUN::END says it. */
static void run_end_property(OTF2_Archive *ar, const tr_journal_data *jd)
{
    char value[128];
    if (jd->crashed)
        tr_run_end_text(value, sizeof value, jd->crash_signal);
    else if (!jd->ended)
        snprintf(value, sizeof value, "recovered (the run did not end normally)");
    else
        snprintf(value, sizeof value, "normal end");
    OTF2_Archive_SetProperty(ar, TRV_PROP_RUN_END, value, false);
}

static int write_archive(tr_writer *w, const char *dir, tr_chunk_budget *small, uint64_t *total_events)
{
    const tr_journal_data *jd = w->m.jd;
    OTF2_Archive *ar = tr_archive_open(dir, jd->hostname, small);
    if (!ar)
        return -1;
    tr_archive_config_properties(ar, jd->config, jd->nconfig);
    tr_archive_filtered_properties(ar, jd->end.small_count, jd->end.small_bytes);
    run_end_property(ar, jd);

    int rc = OTF2_Archive_OpenEvtFiles(ar) == OTF2_SUCCESS ? 0 : -1;
    if (!rc)
        rc = tr_unit_write_events(w, ar, total_events);
    if (!rc)
        rc = OTF2_Archive_CloseEvtFiles(ar) == OTF2_SUCCESS ? 0 : -1;
    /* The MPI_T model is made by the pass. */
    if (!rc)
        tr_mpit_properties(w, TRV_PROP_MPIT_PREFIX, tr_archive_put_property, ar);
    tr_rank_desc d;
    if (!rc)
        rc = tr_describe(w, 0, &d);
    if (rc) {
        OTF2_Archive_Close(ar);
        return -1;
    }
    if (OTF2_Archive_OpenDefFiles(ar) == OTF2_SUCCESS) {
        tr_archive_local_defs(ar, w, 0);
        OTF2_Archive_CloseDefFiles(ar);
    }
    const tr_rank_desc *parts[1] = {&d};
    tr_global g = {.defs = w->defs, .parts = parts, .nparts = 1};
    if (tr_global_prepare(&g)) {
        rc = -1;
        OTF2_Archive_Close(ar);
    } else {
        rc = tr_archive_global_defs(ar, &g);
    }
    tr_global_free(&g);
    tr_rank_desc_free(&d);
    return small && small->exceeded ? -1 : rc;
}

/* The archive, written in a stage (archive_stage.h) and moved into
 * @archive_dir when complete. */
static int stage_and_write(tr_writer *w, const char *archive_dir, tr_chunk_budget *small, tr_convert_report *r)
{
    int dir = open(archive_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        snprintf(r->error, sizeof r->error, "cannot open %s: %s", archive_dir, strerror(errno));
        return -1;
    }
    tr_stage st;
    int rc = tr_stage_create(&st, dir, archive_dir, r->error, sizeof r->error);
    if (!rc) {
        tr_archive_errors_begin();
        int failed = write_archive(w, st.path, small, &r->events);
        const char *otf2_error = tr_archive_errors_end();
        const char *incomplete = tr_archive_errors_incomplete();
        if (failed || incomplete) {
            tr_stage_error(&st, r->error, sizeof r->error, incomplete ? incomplete : otf2_error);
            tr_stage_discard(&st);
            rc = -1;
        } else if (tr_stage_commit(&st, r->error, sizeof r->error)) {
            rc = -1;
        } else if (otf2_error) {
            /* The event calls' errors surface here: never drop one silently. */
            snprintf(r->warning, sizeof r->warning, "OTF2 refused an event (%s); the trace may miss it", otf2_error);
        }
    }
    close(dir);
    return rc;
}

/* One try; *too_big: small chunks were asked for and a file outgrew them. */
static int convert(const char *journal, const char *archive_dir, uint64_t small_records, tr_convert_report *r,
                   int *too_big)
{
    memset(r, 0, sizeof *r);
    *too_big = 0;
    tr_defs defs;
    tr_defs_init(&defs, 0);
    tr_writer w;
    int rc = tr_unit_open(&w, &defs, journal, r->error, sizeof r->error);
    if (rc == 1) {
        snprintf(r->error, sizeof r->error, "the journal holds no events");
        rc = -1;
    } else if (!rc) {
        tr_unit_place(&w, 0, 0, 0);
        w.threads = tr_writer_threads();
        tr_chunk_budget budget = {0}; /* read below even when no archive was opened */
        int small = tr_journal_records_stored(w.m.jd) <= small_records;
        rc = stage_and_write(&w, archive_dir, small ? &budget : 0, r);
        *too_big = small && budget.exceeded;
        if (rc && !r->error[0])
            snprintf(r->error, sizeof r->error, "out of memory while analysing events");
    }
    if (w.m.jd) {
        const tr_journal_data *jd = w.m.jd;
        r->skipped_bytes = jd->stats.skipped_bytes;
        r->bad_frames = jd->stats.bad_frames;
        r->missing_chunks = jd->stats.missing_chunks;
        r->truncated = jd->stats.truncated;
        r->ended = jd->ended;
        r->crashed = jd->crashed;
        r->crash_signal = jd->crash_signal;
        r->records = w.m.records;
    }
    r->locations = w.m.nhost;
    r->devices = w.m.ndevices;
    r->lost = w.m.lost;
    tr_unit_free(&w);
    tr_defs_free(&defs);
    return rc;
}

int tr_writer_convert_sized(const char *journal, const char *archive_dir, uint64_t small_records,
                            tr_convert_report *r)
{
    int too_big;
    int rc = convert(journal, archive_dir, small_records, r, &too_big);
    if (rc && too_big)
        rc = convert(journal, archive_dir, 0, r, &too_big);
    return rc;
}

int tr_writer_convert(const char *journal, const char *archive_dir, tr_convert_report *r)
{
    return tr_writer_convert_sized(journal, archive_dir, TR_WRITER_SMALL_RECORDS, r);
}
