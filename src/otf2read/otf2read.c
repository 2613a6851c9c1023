/* otf2read.c - opening and reading an OTF2 archive for tracer's readers
 * (otf2read.h). */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/trace_vocab.h"
#include "otf2read/otf2read.h"

/* A trace directory with a journal and no trace written from it: the run
 * died (or still runs). What to do is known, so say it. */
static bool only_journal(const char *dir, size_t len, const struct stat *anchor, char *err, size_t errlen)
{
    if (anchor && anchor->st_size > 0)
        return false;
    char *journal;
    if (asprintf(&journal, "%.*s/%s", (int)len, dir, TRV_JOURNAL_NAME) < 0)
        return false;
    struct stat sb;
    bool there = stat(journal, &sb) == 0 && S_ISREG(sb.st_mode);
    free(journal);
    if (there)
        snprintf(err, errlen, "no trace written yet, only the run's journal (the run died, still runs, or ran "
                 "with TRACER_WRITE_AT_END=0): 'tracer recover %.*s' writes it", (int)len, dir);
    return there;
}

char *otr_anchor(const char *path, unsigned flags, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    char *anchor;
    if (S_ISDIR(sb.st_mode)) {
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/')
            len--;
        if (asprintf(&anchor, "%.*s/%s", (int)len, path, TRV_ANCHOR_NAME) < 0) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        bool found = stat(anchor, &sb) == 0;
        if (only_journal(path, len, found ? &sb : NULL, err, errlen)) {
            free(anchor);
            return NULL;
        }
        if (!found) {
            snprintf(err, errlen, "no %s in this directory", TRV_ANCHOR_NAME);
            free(anchor);
            return NULL;
        }
    } else if (!(anchor = strdup(path))) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (!S_ISREG(sb.st_mode) || ((flags & OTR_ANCHOR_NONEMPTY) && sb.st_size == 0)) {
        snprintf(err, errlen, "not an OTF2 archive (%s)",
                 S_ISREG(sb.st_mode) ? "the anchor file is empty: a run that never wrote its trace?"
                                     : "no regular anchor file");
        free(anchor);
        return NULL;
    }
    if (flags & OTR_ANCHOR_REALPATH) {
        char *real = realpath(anchor, NULL);
        if (real) {
            free(anchor);
            anchor = real;
        }
    }
    return anchor;
}

/* OTF2 reports running out of memory as one of these (a chunk per open
 * location: "Could not allocate memory for chunk!"). */
static bool is_memory(OTF2_ErrorCode code)
{
    return code == OTF2_ERROR_MEM_FAULT || code == OTF2_ERROR_MEM_ALLOC_FAILED || code == OTF2_ERROR_ENOMEM;
}

/* OTF2 prints its errors to stderr unless told otherwise; keep the first
 * one so the user sees a single `tracer:` line with the real reason. */
static OTF2_ErrorCode otr_capture(void *user, const char *file, uint64_t line, const char *function,
                                  OTF2_ErrorCode code, const char *fmt, va_list va)
{
    (void)file, (void)line, (void)function;
    struct otr_archive *a = user;
    if (a && a->code == OTF2_SUCCESS)
        a->code = code;
    if (a && a->msg[0] == '\0') {
        char msg[200] = "";
        if (fmt)
            vsnprintf(msg, sizeof msg, fmt, va);
        /* The innermost failure of a file operation reads "POSIX: 'path'";
         * the errno meaning is only in the code. */
        if (strncmp(msg, "POSIX: ", 7) == 0)
            snprintf(a->msg, sizeof a->msg, "%s: %s", msg + 7, OTF2_Error_GetDescription(code));
        else
            snprintf(a->msg, sizeof a->msg, "%s", msg[0] ? msg : OTF2_Error_GetDescription(code));
    }
    return code;
}

void otr_fail(const struct otr_archive *a, OTF2_ErrorCode code, const char *what, char *err, size_t errlen)
{
    if (is_memory(code) || is_memory(a->code))
        snprintf(err, errlen, "%s: out of memory%s%s%s", what, a->msg[0] ? " (" : "", a->msg, a->msg[0] ? ")" : "");
    else if (a->msg[0])
        snprintf(err, errlen, "%s: %s", what, a->msg);
    else
        snprintf(err, errlen, "%s: %s", what, OTF2_Error_GetDescription(code));
}

int otr_open(struct otr_archive *a, const char *anchor, char *err, size_t errlen)
{
    a->msg[0] = '\0';
    a->code = OTF2_SUCCESS;
    a->prev = OTF2_Error_RegisterCallback(otr_capture, a);
    a->rd = OTF2_Reader_Open(anchor);
    if (!a->rd) {
        snprintf(err, errlen, "not an OTF2 archive%s%s", a->msg[0] ? ": " : "", a->msg);
        OTF2_Error_RegisterCallback(a->prev, NULL);
        return -1;
    }
    OTF2_ErrorCode rc = OTF2_Reader_SetSerialCollectiveCallbacks(a->rd);
    if (rc != OTF2_SUCCESS) {
        otr_fail(a, rc, "cannot set up the reader", err, errlen);
        otr_close(a);
        return -1;
    }
    return 0;
}

void otr_close(struct otr_archive *a)
{
    if (a->rd)
        OTF2_Reader_Close(a->rd);
    a->rd = NULL;
    OTF2_Error_RegisterCallback(a->prev, NULL);
}

OTF2_ErrorCode otr_read_global_defs(struct otr_archive *a, void (*set)(OTF2_GlobalDefReaderCallbacks *),
                                    void *user, bool *oom)
{
    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(a->rd);
    if (!gdr)
        return OTF2_ERROR_FILE_CAN_NOT_OPEN;
    OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
    if (!cb) {
        *oom = true;
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    }
    set(cb);
    OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalDefCallbacks(a->rd, gdr, cb, user);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    uint64_t n = 0;
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Reader_ReadAllGlobalDefinitions(a->rd, gdr, &n);
    OTF2_Reader_CloseGlobalDefReader(a->rd, gdr);
    return *oom ? OTF2_ERROR_MEM_ALLOC_FAILED : rc;
}

static uint64_t loc_id(const void *locs, size_t stride, size_t i)
{
    uint64_t id;
    memcpy(&id, (const char *)locs + i * stride, sizeof id);
    return id;
}

/* The local definitions of locations [@from, @to) of @locs, then their
 * event readers (OTF2 applies the definitions' id mappings and clock
 * offsets to them). The def files are open when @defs_open. With
 * @check_only, each is only opened and closed again: reading a location's
 * definitions twice would give OTF2 its clock offsets twice. */
static OTF2_ErrorCode open_range(struct otr_archive *a, const void *locs, size_t stride, size_t from, size_t to,
                                 bool defs_open, bool check_only, bool *some_defs, size_t *missing)
{
    OTF2_ErrorCode rc;
    for (size_t i = from; i < to; i++) {
        uint64_t id = loc_id(locs, stride, i);
        if (defs_open) {
            /* A writer may give no location local definitions: forget
             * OTF2's complaint, keep the reason of a real failure. */
            a->msg[0] = '\0';
            a->code = OTF2_SUCCESS;
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(a->rd, id);
            if (!dr && is_memory(a->code))
                return OTF2_ERROR_MEM_ALLOC_FAILED; /* not a location without definitions */
            a->msg[0] = '\0';
            if (dr) {
                uint64_t nd = 0;
                rc = check_only ? OTF2_SUCCESS : OTF2_Reader_ReadAllLocalDefinitions(a->rd, dr, &nd);
                OTF2_Reader_CloseDefReader(a->rd, dr);
                if (rc != OTF2_SUCCESS)
                    return rc;
                *some_defs = true;
            } else if (*missing == SIZE_MAX) {
                *missing = i;
            }
        }
        a->code = OTF2_SUCCESS;
        OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(a->rd, id);
        if (!er)
            return is_memory(a->code) ? OTF2_ERROR_MEM_ALLOC_FAILED : OTF2_ERROR_FILE_CAN_NOT_OPEN;
        if (check_only)
            OTF2_Reader_CloseEvtReader(a->rd, er);
    }
    return OTF2_SUCCESS;
}

static OTF2_ErrorCode select_all(struct otr_archive *a, const void *locs, size_t n, size_t stride)
{
    OTF2_ErrorCode rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = OTF2_Reader_SelectLocation(a->rd, loc_id(locs, stride, i))) != OTF2_SUCCESS)
            return rc;
    return OTF2_SUCCESS;
}

/* Selects @locs and opens the event files, and the local definition files
 * where there are any (*@defs_open); both readers start from here. */
static OTF2_ErrorCode open_files(struct otr_archive *a, const void *locs, size_t n, size_t stride, bool *defs_open)
{
    OTF2_ErrorCode rc = select_all(a, locs, n, stride);
    if (rc != OTF2_SUCCESS)
        return rc;
    *defs_open = OTF2_Reader_OpenDefFiles(a->rd) == OTF2_SUCCESS;
    a->msg[0] = '\0';
    return OTF2_Reader_OpenEvtFiles(a->rd);
}

OTF2_ErrorCode otr_groups_begin(struct otr_archive *a, struct otr_groups *g, const void *locs, size_t n,
                                size_t stride)
{
    *g = (struct otr_groups){ .locs = locs, .n = n, .stride = stride, .missing = SIZE_MAX };
    return open_files(a, locs, n, stride, &g->defs_open);
}

OTF2_ErrorCode otr_groups_open(struct otr_archive *a, struct otr_groups *g, size_t from, size_t to)
{
    return open_range(a, g->locs, g->stride, from, to, g->defs_open, false, &g->some_defs, &g->missing);
}

OTF2_ErrorCode otr_groups_check(struct otr_archive *a, struct otr_groups *g, size_t from, size_t to)
{
    return open_range(a, g->locs, g->stride, from, to, g->defs_open, true, &g->some_defs, &g->missing);
}

size_t otr_groups_missing(const struct otr_groups *g)
{
    /* Missing only matters when other locations have theirs. */
    return g->some_defs ? g->missing : SIZE_MAX;
}

void otr_groups_end(struct otr_archive *a, struct otr_groups *g)
{
    if (g->defs_open)
        OTF2_Reader_CloseDefFiles(a->rd);
    g->defs_open = false;
    OTF2_Reader_CloseEvtFiles(a->rd);
}

OTF2_ErrorCode otr_read_events_by_group(struct otr_archive *a, const void *locs, size_t n, size_t stride,
                                        void (*set)(OTF2_GlobalEvtReaderCallbacks *), void *user, bool *oom,
                                        const char **stage)
{
    *stage = "cannot open event files";
    struct otr_groups g;
    OTF2_ErrorCode rc = otr_groups_begin(a, &g, locs, n, stride);
    if (rc != OTF2_SUCCESS)
        return rc;
    for (size_t from = 0; from < n && rc == OTF2_SUCCESS; from += OTR_OPEN_MAX) {
        size_t to = n - from > OTR_OPEN_MAX ? from + OTR_OPEN_MAX : n;
        *stage = "cannot open event files";
        if ((rc = otr_groups_open(a, &g, from, to)) != OTF2_SUCCESS)
            break;
        /* The global reader closes the group's event readers with it. */
        *stage = "cannot read events";
        rc = otr_read_events(a, set, user, oom, 0, NULL);
    }
    otr_groups_end(a, &g);
    return rc;
}

OTF2_ErrorCode otr_read_events(struct otr_archive *a, void (*set)(OTF2_GlobalEvtReaderCallbacks *), void *user,
                               bool *oom, uint64_t batch, void (*after)(void *user, uint64_t n))
{
    OTF2_GlobalEvtReader *ger = OTF2_Reader_GetGlobalEvtReader(a->rd);
    if (!ger)
        return OTF2_ERROR_FILE_CAN_NOT_OPEN;
    OTF2_GlobalEvtReaderCallbacks *cb = OTF2_GlobalEvtReaderCallbacks_New();
    if (!cb) {
        OTF2_Reader_CloseGlobalEvtReader(a->rd, ger);
        *oom = true;
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    }
    set(cb);
    OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalEvtCallbacks(a->rd, ger, cb, user);
    OTF2_GlobalEvtReaderCallbacks_Delete(cb);
    while (rc == OTF2_SUCCESS) {
        uint64_t n = 0;
        rc = batch ? OTF2_Reader_ReadGlobalEvents(a->rd, ger, batch, &n)
                   : OTF2_Reader_ReadAllGlobalEvents(a->rd, ger, &n);
        if (after)
            after(user, n);
        if (!batch || n < batch)
            break;
    }
    OTF2_Reader_CloseGlobalEvtReader(a->rd, ger);
    return rc;
}
