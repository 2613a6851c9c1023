/* otf2read.h - the one OTF2 reading layer of tracer's tools: what every
 * reader of an OTF2 archive does before and around its own callbacks.
 *
 *   - the path a user gives (trace directory or anchor file) -> the anchor
 *   - opening the archive with OTF2's error messages captured, so a failure
 *     is one `tracer:` line with OTF2's real reason, not OTF2's own prints
 *   - reading the global definitions and the events with the caller's
 *     callbacks, opening every location with its local definitions (OTF2
 *     applies their id mappings and clock offsets)
 *   - a growable array for the definition tables
 *
 * Users: the summary (src/summary/, also linked into libtracer.so) and
 * `tracer convert` (tools/convert_*). It knows OTF2 and nothing of tracer
 * above it; what a reader matches in an archive's names is spelled in
 * src/common/trace_vocab.h. Built as the static library tracer_otf2read
 * with hidden visibility. Not thread-safe: the error capture replaces
 * OTF2's process-wide error callback between otr_open() and otr_close(). */
#ifndef TRACER_OTF2READ_OTF2READ_H
#define TRACER_OTF2READ_OTF2READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

/* ---- growable array -------------------------------------------------------- */

struct otr_vec {
    void *v;
    size_t n, cap;
};

/* Appends one zeroed element of @size bytes; NULL when out of memory (the
 * array is then unchanged). */
static inline void *otr_vec_push(struct otr_vec *vec, size_t size)
{
    if (vec->n == vec->cap) {
        size_t cap = vec->cap ? vec->cap * 2 : 16;
        void *v = realloc(vec->v, cap * size);
        if (!v)
            return NULL;
        vec->v = v;
        vec->cap = cap;
    }
    void *slot = (char *)vec->v + vec->n++ * size;
    memset(slot, 0, size);
    return slot;
}

static inline void *otr_vec_at(const struct otr_vec *vec, size_t size, size_t i)
{
    return (char *)vec->v + i * size;
}

/* Makes room for @n elements of @size bytes in *@buf (capacity *@cap).
 * Returns 0, or -1 when out of memory (the buffer is then unchanged). */
static inline int otr_reserve(void **buf, uint32_t *cap, uint32_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 8;
    while (c < n)
        c *= 2;
    void *b = realloc(*buf, (size_t)c * size);
    if (!b)
        return -1;
    *buf = b;
    *cap = c;
    return 0;
}

/* In a definition or event callback: appends a zeroed record of TYPE to
 * the otr_vec *VEC as VAR, or, out of memory, sets OOM and interrupts the
 * reading (the caller then reports "out of memory"). */
#define OTR_PUSH_OR_INTERRUPT(vec, type, var, oom) \
    type *var = otr_vec_push((vec), sizeof *var);  \
    if (!var) {                                    \
        (oom) = true;                              \
        return OTF2_CALLBACK_INTERRUPT;            \
    }

/* ---- the archive ------------------------------------------------------------ */

#define OTR_MSG_LEN 256

/* An archive open for reading, and the first message OTF2 reported since
 * (or since a reader cleared msg[0] to forget an expected complaint). */
struct otr_archive {
    OTF2_Reader *rd;
    OTF2_ErrorCallback prev; /* restored by otr_close() */
    OTF2_ErrorCode code;     /* of the first message since a reader last cleared it */
    char msg[OTR_MSG_LEN];
};

/* otr_anchor() flags. */
enum {
    OTR_ANCHOR_REALPATH = 1, /* the anchor's real path (what the summary reports) */
    OTR_ANCHOR_NONEMPTY = 2, /* an empty anchor file is refused with its own reason */
};

/* Accepts the trace directory or the anchor file itself and returns the
 * anchor's path (malloc'ed), or NULL with the reason in @err: precisely
 * which of the two is wrong, because OTF2's own message is vague. */
char *otr_anchor(const char *path, unsigned flags, char *err, size_t errlen);

/* Captures OTF2's errors into a->msg, opens the anchor and sets up serial
 * reading. Returns 0, or -1 with the reason in @err (the capture is then
 * already undone). */
int otr_open(struct otr_archive *a, const char *anchor, char *err, size_t errlen);

/* Closes the reader and gives OTF2 back the error callback it had. */
void otr_close(struct otr_archive *a);

/* "@what: <OTF2's first message, or @code's description>" into @err;
 * "@what: out of memory (<OTF2's message>)" when that is what failed. */
void otr_fail(const struct otr_archive *a, OTF2_ErrorCode code, const char *what, char *err, size_t errlen);

/* Reads every global definition with the callbacks @set installs (user
 * data @user). A callback that runs out of memory sets *@oom and
 * interrupts; the result is then OTF2_ERROR_MEM_ALLOC_FAILED. */
OTF2_ErrorCode otr_read_global_defs(struct otr_archive *a, void (*set)(OTF2_GlobalDefReaderCallbacks *),
                                    void *user, bool *oom);

/* Locations whose event readers are open at once in the group readers
 * below: each holds a chunk of the archive (up to 4 MiB in tracer's
 * archives, 16 MiB in OTF2's), so this bounds the memory of a reader
 * whatever the number of locations. */
#define OTR_OPEN_MAX 64

/* Locations opened a group at a time. otr_groups_begin() selects the @n
 * locations of @locs (records of @stride bytes, each starting with its
 * uint64_t OTF2 id) and opens the event files, and the local definition
 * files where there are any; otr_groups_open() reads the local definitions
 * of [@from, @to) (OTF2 applies their id mappings and clock offsets) and
 * opens their event readers, which the next otr_read_events() reads in
 * time order and closes; otr_groups_check() only sees that both open
 * (a reader that must find a damaged archive before it writes anything
 * checks every group first); otr_groups_end() closes the files. A location without local definitions
 * is normal for some writers; otr_groups_missing() says whether one lacks
 * them while others have theirs. The others return OTF2_SUCCESS or the
 * failure. */
struct otr_groups {
    const void *locs;
    size_t n, stride;
    bool defs_open, some_defs;
    size_t missing;
};
OTF2_ErrorCode otr_groups_begin(struct otr_archive *a, struct otr_groups *g, const void *locs, size_t n,
                                size_t stride);
OTF2_ErrorCode otr_groups_open(struct otr_archive *a, struct otr_groups *g, size_t from, size_t to);
OTF2_ErrorCode otr_groups_check(struct otr_archive *a, struct otr_groups *g, size_t from, size_t to);
/* The first location of the groups opened or checked so far without local
 * definitions while others have theirs (a damaged archive: its id
 * mappings and clock offsets are lost), or SIZE_MAX. */
size_t otr_groups_missing(const struct otr_groups *g);
void otr_groups_end(struct otr_archive *a, struct otr_groups *g);

/* Reads the events of the @n locations of @locs (as otr_groups_begin)
 * OTR_OPEN_MAX locations at a time: each group in time order, the groups
 * one after the other. Only for a reader whose results do not depend on the
 * order of events across locations. Locations without local definitions
 * are read as they are. On failure *@stage says what failed ("cannot open
 * event files", "cannot read events"). */
OTF2_ErrorCode otr_read_events_by_group(struct otr_archive *a, const void *locs, size_t n, size_t stride,
                                        void (*set)(OTF2_GlobalEvtReaderCallbacks *), void *user, bool *oom,
                                        const char **stage);

/* Reads the events of the open locations in global time order with the
 * callbacks @set installs (user data @user), @batch at a time (0: all at
 * once) calling @after(@user, events read) after each batch when not NULL.
 * Sets *@oom when the callbacks cannot be allocated. */
OTF2_ErrorCode otr_read_events(struct otr_archive *a, void (*set)(OTF2_GlobalEvtReaderCallbacks *), void *user,
                               bool *oom, uint64_t batch, void (*after)(void *user, uint64_t n));

#endif
