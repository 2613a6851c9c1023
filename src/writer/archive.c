/* archive.c - what writing an OTF2 archive takes whatever it holds: opening
 * it, keeping OTF2's errors for tracer's one line, the properties every
 * archive has, and the definitions written after the events. */
#include <otf2/OTF2_Pthread_Locks.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "writer/chunk_pool.h"
#include "writer/defs_codec.h"
#include "writer/job_part.h"
#include "writer/writer_internal.h"

/* Once a writer outgrew a small-chunk archive's budget (tr_archive_open),
 * that archive is written again: nothing more goes to its files, so none
 * reaches OTF2's 4 MiB file buffer. */
static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *caller, bool final)
{
    (void)type, (void)loc, (void)caller, (void)final;
    const tr_chunk_budget *budget = user;
    return budget && budget->exceeded ? OTF2_NO_FLUSH : OTF2_FLUSH;
}

/* No post-flush callback: with one, OTF2 writes a BufferFlush event at every
 * flush before the end (chunk_pool.h makes those happen), an event the run
 * never had. */
static const OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush, .otf2_post_flush = 0};

/* OTF2 3.0.2 buffers file writes 4 MiB at a time (OTF2_FILE_BUFFER_SIZE),
 * and when a write that fills that buffer fails (a full disk, a quota), it
 * frees the buffer but keeps it, so that closing the file writes from it and
 * frees it again: the program aborts ("double free"). Chunks of exactly 4
 * MiB never take that path: a whole chunk is written directly, and a file's
 * last, partial chunk goes into the empty buffer and is written once, at
 * close, where a failure is only reported. */
#define CHUNK_SIZE (4 * 1024 * 1024)

static OTF2_Archive *open_archive(const char *dir, const char *machine, int serial, uint64_t chunk,
                                  tr_chunk_budget *budget)
{
    OTF2_Archive *ar = OTF2_Archive_Open(dir, TRV_ARCHIVE_NAME, OTF2_FILEMODE_WRITE, chunk, chunk,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar)
        return 0;
    /* Writing threads (otf2_workers.h) open and close event writers side
     * by side. */
    if (OTF2_Pthread_Archive_SetLockingCallbacks(ar, 0) != OTF2_SUCCESS) {
        OTF2_Archive_Close(ar);
        return 0;
    }
    OTF2_Archive_SetFlushCallbacks(ar, &flush_callbacks, budget);
    OTF2_Archive_SetMemoryCallbacks(ar, tr_chunk_pool_callbacks(), budget);
    if (serial)
        OTF2_Archive_SetSerialCollectiveCallbacks(ar);
    OTF2_Archive_SetCreator(ar, "tracer " TRACER_VERSION);
    OTF2_Archive_SetDescription(ar, "OpenMP offload trace; see docs/trace-model.md of tracer");
    OTF2_Archive_SetMachineName(ar, machine ? machine : "");
    return ar;
}

OTF2_Archive *tr_job_archive_open(const char *dir, const char *machine, int serial)
{
    return open_archive(dir, machine, serial, CHUNK_SIZE, 0);
}

/* OTF2 fills the rest of a writer's chunk when it closes the writer (every
 * location's events, every definitions file): with 4 MiB chunks a short
 * run's dozen writers cost 48 MiB of memset and first-touch page faults,
 * most of its end-of-run write. Small chunks are safe from the double free
 * above as long as no file reaches the 4 MiB buffer: the budget stops any
 * writer at 15 chunks of 256 KiB (3.75 MiB): past that nothing more is
 * written (pre_flush), and the caller writes the archive again with 4 MiB
 * chunks. */
OTF2_Archive *tr_archive_open(const char *dir, const char *machine, tr_chunk_budget *small)
{
    if (!small)
        return open_archive(dir, machine, 1, CHUNK_SIZE, 0);
    small->max_chunks_per_file = (uint32_t)((CHUNK_SIZE - 1) / OTF2_CHUNK_SIZE_MIN);
    small->exceeded = 0;
    return open_archive(dir, machine, 1, OTF2_CHUNK_SIZE_MIN, small);
}

/* OTF2 prints its errors on stderr by default; tracer owes the user a single
 * tracer: line, so the first message is kept for that line instead. */
static char otf2_error[256], incomplete[256];
static OTF2_ErrorCallback previous;

/* An error of the system (a full disk, a quota, I/O) or of memory: OTF2's
 * calls may still return success (it does not check every write when it
 * closes a file), but the archive's files are incomplete. */
static int leaves_files_incomplete(OTF2_ErrorCode code)
{
    return (code >= OTF2_ERROR_E2BIG && code <= OTF2_ERROR_EXDEV) || code == OTF2_ERROR_FILE_INTERACTION ||
           code == OTF2_ERROR_FILE_CAN_NOT_OPEN || code == OTF2_ERROR_MEM_FAULT ||
           code == OTF2_ERROR_MEM_ALLOC_FAILED;
}

static void format(char *out, size_t size, OTF2_ErrorCode code, const char *fmt, va_list va)
{
    int n = snprintf(out, size, "%s: ", OTF2_Error_GetDescription(code));
    if (n > 0 && (size_t)n < size)
        vsnprintf(out + n, size - (size_t)n, fmt, va);
}

/* OTF2 may report from the writing threads too. */
static pthread_mutex_t errors_lock = PTHREAD_MUTEX_INITIALIZER;

static OTF2_ErrorCode keep_otf2_error(void *user, const char *file, uint64_t line, const char *function,
                                      OTF2_ErrorCode code, const char *fmt, va_list va)
{
    (void)user, (void)file, (void)line, (void)function;
    va_list again;
    va_copy(again, va);
    pthread_mutex_lock(&errors_lock);
    if (!otf2_error[0])
        format(otf2_error, sizeof otf2_error, code, fmt, va);
    if (!incomplete[0] && leaves_files_incomplete(code))
        format(incomplete, sizeof incomplete, code, fmt, again);
    pthread_mutex_unlock(&errors_lock);
    va_end(again);
    return code;
}

void tr_archive_errors_begin(void)
{
    otf2_error[0] = incomplete[0] = 0;
    previous = OTF2_Error_RegisterCallback(keep_otf2_error, 0);
}

const char *tr_archive_errors_incomplete(void) { return incomplete[0] ? incomplete : 0; }

const char *tr_archive_errors_end(void)
{
    OTF2_Error_RegisterCallback(previous, 0);
    return otf2_error[0] ? otf2_error : 0;
}

void tr_job_errors_begin(void) { tr_archive_errors_begin(); }
const char *tr_job_errors_end(void) { return tr_archive_errors_end(); }
const char *tr_job_errors_incomplete(void) { return tr_archive_errors_incomplete(); }

/* The trace says how it was taken: every variable's value and where it came
 * from. */
void tr_archive_config_properties(OTF2_Archive *ar, char *const *config, uint32_t nconfig)
{
    char name[160];
    for (uint32_t i = 0; i < nconfig; i++) {
        const char *eq = config[i] ? strchr(config[i], '=') : 0;
        if (!eq || eq - config[i] > 100)
            continue;
        snprintf(name, sizeof name, TRV_PROP_CONFIG_PREFIX "%.*s", (int)(eq - config[i]), config[i]);
        OTF2_Archive_SetProperty(ar, name, eq + 1, false);
    }
}

/* The totals of what the size filter kept out of the event stream. */
void tr_archive_filtered_properties(OTF2_Archive *ar, const uint64_t count[2], const uint64_t bytes[2])
{
    static const char *const dir[2] = {TRV_PROP_SMALL_TO, TRV_PROP_SMALL_FROM};
    char name[160], value[160];
    for (int d = 0; d < 2; d++) {
        snprintf(name, sizeof name, TRV_PROP_SMALL_PREFIX "%s", dir[d]);
        snprintf(value, sizeof value, TRV_PROP_SMALL_VALUE_FMT, (unsigned long long)count[d],
                 (unsigned long long)bytes[d]);
        OTF2_Archive_SetProperty(ar, name, value, false);
    }
}

void tr_archive_put_property(void *ar, const char *name, const char *value)
{
    OTF2_Archive_SetProperty(ar, name, value, false);
}

static void write_map(OTF2_DefWriter *dw, OTF2_MappingType type, const uint64_t *ids, uint32_t n)
{
    OTF2_IdMap *m = n ? OTF2_IdMap_CreateFromUint64Array(n, ids, true) : 0;
    if (m) {
        OTF2_DefWriter_WriteMappingTable(dw, type, m);
        OTF2_IdMap_Free(m);
    }
}

/* Readers expect a local definition file per location. A journal alone
 * leaves them empty (its ids are the global ones); a rank of a job maps its
 * own string, region and attribute ids to the unified ones (OTF2 readers
 * apply the map to every event) and gives its ClockOffsets. */
void tr_archive_local_defs(OTF2_Archive *ar, const tr_writer *w, const tr_defs_map *map)
{
    for (uint64_t l = 0; l < w->nlocations; l++) {
        if (l >= w->m.nhost && l < w->m.nstreams)
            continue; /* host numbers no thread needed (host_slots.h) */
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, w->loc_base + l);
        if (!dw)
            continue;
        if (map) {
            write_map(dw, OTF2_MAPPING_STRING, map->strings, map->nstrings);
            write_map(dw, OTF2_MAPPING_REGION, map->regions, map->nregions);
            write_map(dw, OTF2_MAPPING_ATTRIBUTE, map->attrs, map->nattrs);
        }
        for (uint32_t i = 0; i < w->nclock; i++)
            OTF2_DefWriter_WriteClockOffset(dw, w->clock[i].time, w->clock[i].offset, w->clock[i].stddev);
        OTF2_Archive_CloseDefWriter(ar, dw);
    }
}

int tr_archive_global_defs(OTF2_Archive *ar, const tr_global *g)
{
    int rc = 0;
    OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(ar);
    if (gw) {
        tr_defs_write_global(g, gw);
        OTF2_Archive_CloseGlobalDefWriter(ar, gw);
    } else {
        rc = -1;
    }
    if (OTF2_Archive_Close(ar) != OTF2_SUCCESS)
        rc = -1;
    return rc;
}
