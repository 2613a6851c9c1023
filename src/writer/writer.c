/* writer.c - a journal -> an OTF2 archive: load, analyse, write. */
#include "writer/writer.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer_internal.h"

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *caller, bool final)
{
    (void)user, (void)type, (void)loc, (void)caller, (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
    (void)user, (void)type, (void)loc;
    return 0;
}

static const OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush};

/* OTF2 prints its errors on stderr by default; tracer owes the user a single
 * tracer: line, so the first message is kept for that line instead. */
static char otf2_error[256];

static OTF2_ErrorCode keep_otf2_error(void *user, const char *file, uint64_t line, const char *function,
                                      OTF2_ErrorCode code, const char *fmt, va_list va)
{
    (void)user, (void)file, (void)line, (void)function;
    if (!otf2_error[0]) {
        int n = snprintf(otf2_error, sizeof otf2_error, "%s: ", OTF2_Error_GetDescription(code));
        if (n > 0 && (size_t)n < sizeof otf2_error)
            vsnprintf(otf2_error + n, sizeof otf2_error - (size_t)n, fmt, va);
    }
    return code;
}

/* The trace says how it was taken: every variable's value and where it came
 * from, and the totals of what filters kept out of the event stream. */
static void record_configuration(OTF2_Archive *ar, const tr_journal_data *jd)
{
    char name[160], value[600];
    for (uint32_t i = 0; i < jd->nconfig; i++) {
        const char *eq = strchr(jd->config[i], '=');
        if (!eq || eq - jd->config[i] > 100)
            continue;
        snprintf(name, sizeof name, "TRACER::CONFIG::%.*s", (int)(eq - jd->config[i]), jd->config[i]);
        OTF2_Archive_SetProperty(ar, name, eq + 1, false);
    }
    static const char *const dir[2] = {"TO_DEVICE", "FROM_DEVICE"};
    for (int d = 0; d < 2; d++) {
        snprintf(name, sizeof name, "TRACER::FILTERED::SMALL_TRANSFERS_%s", dir[d]);
        snprintf(value, sizeof value, "%llu transfers, %llu bytes", (unsigned long long)jd->end.small_count[d],
                 (unsigned long long)jd->end.small_bytes[d]);
        OTF2_Archive_SetProperty(ar, name, value, false);
    }
    snprintf(value, sizeof value, "%s", jd->ended ? "normal end" : jd->crashed ? "crashed (signal)" : "recovered");
    if (jd->crashed)
        snprintf(value, sizeof value, "crashed (signal %d)", jd->crash_signal);
    else if (!jd->ended)
        snprintf(value, sizeof value, "recovered (the run did not end normally)");
    OTF2_Archive_SetProperty(ar, "TRACER::RUN::END", value, false);
}

static int write_archive(tr_writer *w, const char *dir, uint64_t *total_events)
{
    OTF2_Archive *ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar)
        return -1;
    OTF2_Archive_SetFlushCallbacks(ar, &flush_callbacks, 0);
    OTF2_Archive_SetSerialCollectiveCallbacks(ar);
    OTF2_Archive_SetCreator(ar, "tracer " TRACER_VERSION);
    OTF2_Archive_SetDescription(ar, "OpenMP offload trace; see docs/trace-model.md of tracer");
    OTF2_Archive_SetMachineName(ar, w->jd->hostname ? w->jd->hostname : "");
    record_configuration(ar, w->jd);

    tr_mpit_properties(w, ar);
    uint64_t nloc = w->data.nstreams;
    for (size_t d = 0; d < w->ndevices; d++)
        nloc += w->devices[d].nlanes;
    nloc += w->mpit.nlocated;
    uint64_t *events = calloc(nloc ? nloc : 1, sizeof *events);
    int rc = events ? 0 : -1;
    if (!rc)
        rc = OTF2_Archive_OpenEvtFiles(ar) == OTF2_SUCCESS ? 0 : -1;
    for (size_t s = 0; !rc && s < w->data.nstreams; s++)
        rc = tr_events_write_host(w, ar, s, &events[s]);
    for (size_t d = 0; !rc && d < w->ndevices; d++)
        for (uint32_t l = 0; !rc && l < w->devices[d].nlanes; l++)
            rc = tr_events_write_device(w, ar, d, l, &events[w->devices[d].first_location + l]);
    for (uint32_t i = 0; !rc && i < w->mpit.nlocs; i++)
        if (w->mpit.locs[i].has_location)
            rc = tr_events_write_mpit(w, ar, i, &events[w->mpit.locs[i].location]);
    if (!rc)
        rc = OTF2_Archive_CloseEvtFiles(ar) == OTF2_SUCCESS ? 0 : -1;

    /* Local definition files stay empty (all ids are global), but readers
     * expect one per location. */
    if (!rc && OTF2_Archive_OpenDefFiles(ar) == OTF2_SUCCESS) {
        for (uint64_t l = 0; l < nloc; l++) {
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, l);
            if (dw)
                OTF2_Archive_CloseDefWriter(ar, dw);
        }
        OTF2_Archive_CloseDefFiles(ar);
    }
    if (!rc) {
        OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(ar);
        if (gw) {
            tr_defs_write_global(w, gw, events, nloc, w->jd->hostname ? w->jd->hostname : "localhost");
            OTF2_Archive_CloseGlobalDefWriter(ar, gw);
        } else {
            rc = -1;
        }
    }
    for (uint64_t l = 0; events && l < nloc; l++)
        *total_events += events[l];
    free(events);
    if (OTF2_Archive_Close(ar) != OTF2_SUCCESS)
        rc = -1;
    return rc;
}

static void writer_free(tr_writer *w)
{
    for (size_t d = 0; d < w->ndevices; d++) {
        free(w->devices[d].items);
        free(w->devices[d].metrics);
    }
    free(w->devices);
    free(w->target_rec);
    free(w->regions);
    tr_u64map_free(&w->targets);
    tr_u64map_free(&w->delete_bytes);
    tr_u64map_free(&w->delete_host);
    tr_u64map_free(&w->region_keys);
    tr_strtab_free(&w->strings);
    tr_link_model_free(&w->links);
    tr_mpit_model_free(&w->mpit);
    tr_collected_free(&w->data);
}

/* MPI_T source locations come after the host threads and device streams. */
static uint64_t mpit_first(const tr_writer *w)
{
    uint64_t loc = w->data.nstreams;
    for (size_t d = 0; d < w->ndevices; d++)
        loc += w->devices[d].nlanes;
    return loc;
}

int tr_writer_convert(const char *journal, const char *archive_dir, tr_convert_report *r)
{
    memset(r, 0, sizeof *r);
    tr_journal_data jd;
    if (tr_journal_load(journal, &jd, r->error, sizeof r->error))
        return -1;
    r->skipped_bytes = jd.stats.skipped_bytes;
    r->bad_frames = jd.stats.bad_frames;
    r->truncated = jd.stats.truncated;
    r->ended = jd.ended;
    r->crashed = jd.crashed;
    r->crash_signal = jd.crash_signal;
    r->records = jd.data.records;

    tr_writer w;
    memset(&w, 0, sizeof w);
    w.jd = &jd;
    w.data = jd.data;
    memset(&jd.data, 0, sizeof jd.data);
    w.t_min = UINT64_MAX;
    w.t_max = jd.end_ns;
    int rc = 0;
    if (!w.data.records) {
        snprintf(r->error, sizeof r->error, "the journal holds no events");
        rc = -1;
    } else if (tr_model_build(&w) || tr_link_model_build(&w, &w.links) || tr_mpit_model_build(&w, mpit_first(&w))) {
        snprintf(r->error, sizeof r->error, "out of memory while analysing events");
        rc = -1;
    } else {
        if (w.t_min > w.t_max)
            w.t_min = w.t_max;
        otf2_error[0] = 0;
        OTF2_ErrorCallback old = OTF2_Error_RegisterCallback(keep_otf2_error, 0);
        if (write_archive(&w, archive_dir, &r->events)) {
            snprintf(r->error, sizeof r->error, "OTF2 failed: %s", otf2_error[0] ? otf2_error : "unknown error");
            rc = -1;
        } else if (otf2_error[0]) {
            /* The event calls' errors surface here: never drop one silently. */
            snprintf(r->warning, sizeof r->warning, "OTF2 refused an event (%s); the trace may miss it", otf2_error);
        }
        OTF2_Error_RegisterCallback(old, 0);
    }
    r->locations = w.data.nstreams;
    r->devices = w.ndevices;
    r->lost = w.lost;
    writer_free(&w);
    tr_journal_data_free(&jd);
    return rc;
}
