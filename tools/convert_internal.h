/* convert_internal.h - what the files of tracer convert's OTF2 reader share.
 *
 * The reader is one pass over an archive (convert_read.c has the overview)
 * split by job:
 *   convert_defs.c    global definitions -> the tables below; processes and
 *                     tracks; sink begin
 *   convert_runs.c    which locations are read together (runs of at most
 *                     at_once); opening them and their local definitions
 *   convert_events.c  the event callbacks: time and order (the hold-back
 *                     invariant), args, counters, transfers, slices
 *   convert_read.c    the pass, failure messages, tc_convert()
 * Opening the archive, OTF2's error capture and reading definitions and
 * events with these callbacks are the OTF2 reading layer's
 * (src/otf2read/), shared with the summary.
 * Not an API: only these files include it, and only tc_convert() (in
 * convert_sink.h) leaves the reader. */
#ifndef TR_TOOLS_CONVERT_INTERNAL_H
#define TR_TOOLS_CONVERT_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "convert_sink.h"
#include "otf2read/otf2read.h"
#include "convert_table.h"

/* "No such position": a missing group, location, device or counter. */
#define TC_NONE UINT32_MAX

/* ---- definitions ------------------------------------------------------------ */

/* Each table of tc_state holds one kind of definition in the order the
 * archive gave them; positions in a table are what the reader keeps, ids
 * are looked up with TC_FIND once tc_resolve_defs() built the indexes.
 * Names are resolved there too, so until then only the *_ref fields are set. */

struct tc_string {
    uint64_t id;
    char *s;
};

struct tc_region {
    uint64_t id;
    uint32_t name_ref;
    OTF2_Paradigm paradigm;
    bool point;              /* role ARTIFICIAL: zero length is an instant */
    const char *name;
    const char *category;
};

struct tc_attr {
    uint64_t id;
    uint32_t name_ref;
    const char *name;
};

/* An OTF2 LocationGroup. */
struct tc_lgroup {
    uint64_t id;
    uint32_t name_ref;
    OTF2_LocationGroupType type;
    uint64_t creator;
    const char *name;
    uint32_t process; /* tc_process id */
};

/* An OTF2 Location, with what converting its events needs. */
struct tc_loc {
    uint64_t id;
    uint32_t name_ref;
    OTF2_LocationType type;
    uint64_t nevents;
    uint64_t group;
    const char *name;
    uint32_t process;
    uint32_t group_pos; /* TC_NONE: no such group */
    enum tc_track_kind kind;
    /* Open slices, innermost last (region positions). */
    uint32_t *stack;
    uint32_t depth, stack_cap;
    /* The held-back Enter (see the invariant in convert_events.c). */
    bool held;
    bool listed; /* in tc_state.held_list */
    uint64_t held_ts;
    uint32_t held_region;
    tc_arg *held_args;
    uint32_t held_nargs, held_cap;
};

struct tc_member {
    uint64_t id;
    uint32_t name_ref, unit_ref;
    const char *name, *unit;
};

/* A MetricClass, or a MetricInstance (same id space in OTF2). */
struct tc_metric {
    uint64_t id;
    bool instance;
    uint32_t nmembers;
    uint64_t *members; /* class */
    uint64_t klass;    /* instance */
    OTF2_MetricScope scope_type;
    uint64_t scope;
};

/* An OTF2 Group (communicator members). */
struct tc_cgroup {
    uint64_t id;
    OTF2_GroupType type;
    OTF2_Paradigm paradigm;
    uint32_t n;
    uint64_t *members;
};

struct tc_comm {
    uint64_t id;
    uint64_t group;
};

struct tc_win {
    uint64_t id;
    uint64_t comm;
};

/* A device that transfers went to: its transfer tracks, each with at most
 * one open slice, so slices nest trivially however transfers overlap. */
struct tc_dtrack {
    uint32_t track;
    bool busy;
};

struct tc_device {
    uint64_t key; /* group position, or 1<<32 | location position */
    uint32_t process;
    char *label; /* "device 0" */
    struct tc_dtrack *tracks;
    uint32_t ntracks, cap;
    uint32_t reuse_from; /* tracks before it belong to an earlier run */
};

/* A transfer whose device slice is open. */
struct tc_xfer {
    uint32_t loc;   /* host location position */
    uint32_t depth; /* the host slice's depth on its stack */
    uint32_t device, slot;
    uint64_t win, matching;
};

/* The reader's whole state, one per tc_convert() call (which frees it):
 * the definitions, what the pass adds (processes, transfer tracks,
 * devices, counters), the hold-back bookkeeping and what went wrong. */
struct tc_state {
    tc_sink *sink;
    tc_stats *stats;

    struct otr_vec strings, regions, attrs, lgroups, locs, members, metrics, cgroups, comms, wins;
    struct tc_index ix_strings, ix_regions, ix_attrs, ix_lgroups, ix_locs, ix_members, ix_metrics,
        ix_cgroups, ix_comms, ix_wins;
    /* The COMM_LOCATIONS group of each paradigm (TC_NONE: none). */
    uint32_t comm_locations[32];

    tc_process *procs;
    uint32_t nprocs;
    uint32_t ntracks; /* locations, then tracks added for transfers */
    struct otr_vec devices, xfers;
    struct tc_map counters;
    uint32_t ncounters;
    uint64_t next_flow;

    uint64_t resolution, offset;
    bool have_clock;
    uint64_t now;         /* the latest timestamp seen, ns */
    uint64_t latest;      /* the latest timestamp of the runs before this one */
    uint32_t *held_list;  /* locations that held an Enter at now */
    uint32_t nheld, held_cap;
    tc_arg *scratch;      /* the args of an event that is not held */
    uint32_t scratch_cap;

    uint64_t total_events; /* from the Location definitions, for progress */
    bool progress;         /* show progress on stderr */
    uint64_t progress_last; /* when it was last shown (CLOCK_MONOTONIC ns) */
    uint64_t clamped;      /* timestamps raised to keep the order */

    bool oom, sink_failed;
    int sink_errno;
    uint32_t missing_defs; /* a location whose local definitions are gone */
    /* The runs of locations read together (convert_runs.c). */
    uint64_t *run_ids;     /* the locations' ids in reading order */
    uint32_t *run_pos;     /* ... and their positions in locs */
    uint32_t *run_ends;    /* run r is [run_ends[r - 1], run_ends[r]) of them */
    uint32_t nruns;
    uint32_t at_once;      /* the most locations in a run */
    struct otr_groups groups;
    bool groups_open;
    struct otr_archive ar; /* the archive, and OTF2's first message */
};

/* The definition of table @table with OTF2 id @id, or NULL. */
#define TC_FIND(st, table, type, id) \
    ((struct type *)tc_index_find(&(st)->ix_##table, &(st)->table, sizeof(struct type), (id)))

static inline const char *tc_str(const struct tc_state *st, uint64_t ref)
{
    const struct tc_string *s = TC_FIND(st, strings, tc_string, ref);
    return s ? s->s : NULL;
}

static inline const char *tc_str_or(const struct tc_state *st, uint64_t ref, const char *fallback)
{
    const char *s = tc_str(st, ref);
    return s ? s : fallback;
}

static inline struct tc_loc *tc_loc_at(const struct tc_state *st, uint32_t pos)
{
    return otr_vec_at(&st->locs, sizeof(struct tc_loc), pos);
}

static inline struct tc_region *tc_region_at(const struct tc_state *st, uint32_t pos)
{
    return otr_vec_at(&st->regions, sizeof(struct tc_region), pos);
}

/* Records that a sink call failed, with its errno, for the error message.
 * Returns -1, for `return tc_sink_fail(st);`; inline so that the compiler
 * sees that -1 (callers leave out-parameters unset on failure). */
static inline int tc_sink_fail(struct tc_state *st)
{
    st->sink_errno = errno;
    st->sink_failed = true;
    return -1;
}

/* ---- convert_defs.c ---------------------------------------------------------- */

/* Installs the global definition callbacks that fill @st's tables (their
 * user data is the tc_state; otr_read_global_defs() reads with them). */
void tc_def_callbacks(OTF2_GlobalDefReaderCallbacks *cb);

/* Once all definitions are in: indexes, names, processes, track kinds.
 * Returns 0, or -1 when out of memory. */
int tc_resolve_defs(struct tc_state *st);

/* Announces every process and location track to the sink. Returns 0, or -1
 * with st->oom or st->sink_failed set. */
int tc_sink_begin(struct tc_state *st);

/* ---- convert_runs.c ---------------------------------------------------------- */

/* Plans the runs (locations read together), opens and checks every run's
 * local definitions and event files, and leaves the first run open.
 * Returns OTF2_SUCCESS or the failure; st->missing_defs names a location
 * whose local definitions alone are gone. */
OTF2_ErrorCode tc_runs_open(struct tc_state *st);
/* Opens run @r (> 0) for the next otr_read_events(). */
OTF2_ErrorCode tc_run_open(struct tc_state *st, uint32_t r);
/* Closes the files (also after a failure). */
void tc_runs_close(struct tc_state *st);

/* ---- convert_events.c -------------------------------------------------------- */

/* Sets the event callbacks of the pass (their user data is the tc_state). */
void tc_set_event_callbacks(OTF2_GlobalEvtReaderCallbacks *cb);

/* Releases every held Enter as a slice (time moved on, or the pass ended).
 * These four return 0, or -1 with st->oom or st->sink_failed set. */
int tc_release_all(struct tc_state *st);

/* Before run @r > 0: its times start over, and transfers no longer share
 * the device tracks of earlier runs (a slice of one may still be open). */
int tc_next_run(struct tc_state *st);

/* Ends the device slice of open transfer @i at @ts. */
int tc_xfer_end(struct tc_state *st, size_t i, uint64_t ts);

/* Ends slices of @l until @depth are left open. */
int tc_unwind(struct tc_state *st, struct tc_loc *l, uint32_t depth, uint64_t ts);

#endif
