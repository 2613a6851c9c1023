/* writer.c - the end of a run: collect every thread's records, analyse
 * them, write the OTF2 archive. Runs once, on the thread that ends the run. */
#include "writer/writer.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/lifecycle.h"
#include "core/log.h"
#include "writer/output_dir.h"
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

void tr_writer_install(void) { tr_lifecycle_set_end_hook(tr_writer_run); }

static int verbose(void) { return tr_cfg.verbose; }

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
static void record_configuration(OTF2_Archive *ar)
{
    char name[128], value[600];
    for (size_t i = 0; i < tr_cfg_nvars; i++) {
        const char *raw = tr_cfg_loaded.raw[i] ? tr_cfg_loaded.raw[i] : tr_cfg_vars[i].def;
        snprintf(name, sizeof name, "TRACER::CONFIG::%s", tr_cfg_vars[i].name);
        snprintf(value, sizeof value, "%s (%s)", raw,
                 tr_cfg_loaded.source[i] == TR_CFG_FROM_ENV ? "environment" : "default");
        OTF2_Archive_SetProperty(ar, name, value, false);
    }
    uint64_t count[2] = {0, 0}, bytes[2] = {0, 0};
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered)
        for (int d = 0; d < 2; d++) {
            count[d] += b->small_count[d];
            bytes[d] += b->small_bytes[d];
        }
    static const char *const dir[2] = {"TO_DEVICE", "FROM_DEVICE"};
    for (int d = 0; d < 2; d++) {
        snprintf(name, sizeof name, "TRACER::FILTERED::SMALL_TRANSFERS_%s", dir[d]);
        snprintf(value, sizeof value, "%llu transfers, %llu bytes", (unsigned long long)count[d],
                 (unsigned long long)bytes[d]);
        OTF2_Archive_SetProperty(ar, name, value, false);
    }
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
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    OTF2_Archive_SetMachineName(ar, host);
    record_configuration(ar);

    uint64_t nloc = w->data.nstreams;
    for (size_t d = 0; d < w->ndevices; d++)
        nloc += w->devices[d].nlanes;
    uint64_t *events = calloc(nloc ? nloc : 1, sizeof *events);
    int rc = events ? 0 : -1;
    if (!rc)
        rc = OTF2_Archive_OpenEvtFiles(ar) == OTF2_SUCCESS ? 0 : -1;
    for (size_t s = 0; !rc && s < w->data.nstreams; s++)
        rc = tr_events_write_host(w, ar, s, &events[s]);
    for (size_t d = 0; !rc && d < w->ndevices; d++)
        for (uint32_t l = 0; !rc && l < w->devices[d].nlanes; l++)
            rc = tr_events_write_device(w, ar, d, l, &events[w->devices[d].first_location + l]);
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
        char host[256] = "localhost";
        gethostname(host, sizeof host - 1);
        if (gw) {
            tr_defs_write_global(w, gw, events, nloc, host);
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
    tr_u64map_free(&w->region_keys);
    tr_strtab_free(&w->strings);
    tr_symbols_close(w->symbols);
    tr_collected_free(&w->data);
}

void tr_writer_run(uint64_t end_ticks)
{
    tr_clock_calibrate_end();
    tr_writer w;
    memset(&w, 0, sizeof w);
    if (tr_collect(&w.data)) {
        tr_log("writer: out of memory while collecting events; no trace written");
        tr_collected_free(&w.data);
        return;
    }
    if (w.data.records == 0) {
        if (verbose())
            tr_log("no events were recorded; no trace written");
        tr_collected_free(&w.data);
        return;
    }
    w.t_min = UINT64_MAX;
    w.t_max = tr_clock_to_ns(end_ticks);
    w.symbols = tr_symbols_open();
    char dir[4096];
    uint64_t total = 0;
    int dirfd;
    if (tr_model_build(&w)) {
        tr_log("writer: out of memory while analysing events; no trace written");
    } else if ((dirfd = tr_output_dir_create(dir, sizeof dir)) >= 0) {
        char via_fd[64];
        snprintf(via_fd, sizeof via_fd, "/proc/self/fd/%d", dirfd);
        struct stat a, b;
        /* Without /proc, the checked path itself is the best there is. */
        const char *path = stat(via_fd, &a) == 0 && fstat(dirfd, &b) == 0 && a.st_ino == b.st_ino ? via_fd : dir;
        otf2_error[0] = 0;
        OTF2_ErrorCallback old = OTF2_Error_RegisterCallback(keep_otf2_error, 0);
        int failed = write_archive(&w, path, &total);
        OTF2_Error_RegisterCallback(old, 0);
        close(dirfd);
        if (failed)
            tr_log("writer: writing %s/traces.otf2 failed (%s); the trace may be incomplete", dir,
                   otf2_error[0] ? otf2_error : "OTF2 error");
        else if (verbose())
            tr_log("trace written to %s/traces.otf2 (%llu events, %zu host threads, %zu devices)", dir,
                   (unsigned long long)total, w.data.nstreams, w.ndevices);
    }
    if (w.stray_ends && verbose())
        tr_log("%llu end events had no begin and were skipped", (unsigned long long)w.stray_ends);
    writer_free(&w);
}
