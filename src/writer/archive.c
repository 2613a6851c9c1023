/* archive.c - what writing an OTF2 archive takes whatever it holds: opening
 * it, keeping OTF2's errors for tracer's one line, the properties every
 * archive has, and the definitions written after the events. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
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

OTF2_Archive *tr_archive_open(const char *dir, const char *machine)
{
    OTF2_Archive *ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar)
        return 0;
    OTF2_Archive_SetFlushCallbacks(ar, &flush_callbacks, 0);
    OTF2_Archive_SetSerialCollectiveCallbacks(ar);
    OTF2_Archive_SetCreator(ar, "tracer " TRACER_VERSION);
    OTF2_Archive_SetDescription(ar, "OpenMP offload trace; see docs/trace-model.md of tracer");
    OTF2_Archive_SetMachineName(ar, machine ? machine : "");
    return ar;
}

/* OTF2 prints its errors on stderr by default; tracer owes the user a single
 * tracer: line, so the first message is kept for that line instead. */
static char otf2_error[256];
static OTF2_ErrorCallback previous;

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

void tr_archive_errors_begin(void)
{
    otf2_error[0] = 0;
    previous = OTF2_Error_RegisterCallback(keep_otf2_error, 0);
}

const char *tr_archive_errors_end(void)
{
    OTF2_Error_RegisterCallback(previous, 0);
    return otf2_error[0] ? otf2_error : 0;
}

/* The trace says how it was taken: every variable's value and where it came
 * from. */
void tr_archive_config_properties(OTF2_Archive *ar, const tr_journal_data *jd)
{
    char name[160];
    for (uint32_t i = 0; i < jd->nconfig; i++) {
        const char *eq = strchr(jd->config[i], '=');
        if (!eq || eq - jd->config[i] > 100)
            continue;
        snprintf(name, sizeof name, "TRACER::CONFIG::%.*s", (int)(eq - jd->config[i]), jd->config[i]);
        OTF2_Archive_SetProperty(ar, name, eq + 1, false);
    }
}

/* The totals of what the size filter kept out of the event stream. */
void tr_archive_filtered_properties(OTF2_Archive *ar, const uint64_t count[2], const uint64_t bytes[2])
{
    static const char *const dir[2] = {"TO_DEVICE", "FROM_DEVICE"};
    char name[160], value[160];
    for (int d = 0; d < 2; d++) {
        snprintf(name, sizeof name, "TRACER::FILTERED::SMALL_TRANSFERS_%s", dir[d]);
        snprintf(value, sizeof value, "%llu transfers, %llu bytes", (unsigned long long)count[d],
                 (unsigned long long)bytes[d]);
        OTF2_Archive_SetProperty(ar, name, value, false);
    }
}

/* Readers expect a local definition file per location. Alone, a journal's
 * are empty (all ids are global); a job's rank puts its ClockOffsets in
 * each of its locations' files, which is where OTF2 readers look for them. */
static int write_local_definitions(OTF2_Archive *ar, const tr_global *g)
{
    if (OTF2_Archive_OpenDefFiles(ar) != OTF2_SUCCESS)
        return 0; /* as before: the archive is still readable */
    for (size_t u = 0; u < g->nunits; u++) {
        const tr_writer *w = g->units[u];
        for (uint64_t l = 0; l < w->nlocations; l++) {
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, w->loc_base + l);
            if (!dw)
                continue;
            for (uint32_t i = 0; i < w->nclock; i++)
                OTF2_DefWriter_WriteClockOffset(dw, w->clock[i].time, w->clock[i].offset, w->clock[i].stddev);
            OTF2_Archive_CloseDefWriter(ar, dw);
        }
    }
    OTF2_Archive_CloseDefFiles(ar);
    return 0;
}

int tr_archive_finish(OTF2_Archive *ar, const tr_global *g)
{
    int rc = OTF2_Archive_CloseEvtFiles(ar) == OTF2_SUCCESS ? 0 : -1;
    if (!rc)
        rc = write_local_definitions(ar, g);
    if (!rc) {
        OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(ar);
        if (gw) {
            tr_defs_write_global(g, gw);
            OTF2_Archive_CloseGlobalDefWriter(ar, gw);
        } else {
            rc = -1;
        }
    }
    if (OTF2_Archive_Close(ar) != OTF2_SUCCESS)
        rc = -1;
    return rc;
}
