/* summary_internal.h - what the files of the summary's reader share.
 *
 * The reader (tr_summary_collect(), summary.h) is one pass over an archive
 * through the OTF2 reading layer (src/otf2read/), split by job:
 *   summary_read.c        the pass, freeing, tr_summary_collect()
 *   summary_defs.c        global definition callbacks -> the tables below
 *   summary_resolve.c     once definitions are in: classes, groups, devices
 *   summary_devices.c     devices by (process, number), named like the writer
 *   summary_events.c      Enter/Leave: region stats, class counts, MPI_T, OMP
 *   summary_rma_metrics.c RMA transfers and metric samples
 *   summary_props.c       archive and location group properties
 *   summary_finish.c      after the events: ticks -> ns, report order
 *   summary_omp.c         the host OpenMP rows
 * Not an API: only these files include it. */
#ifndef TRACER_SUMMARY_SUMMARY_INTERNAL_H
#define TRACER_SUMMARY_SUMMARY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <otf2/otf2.h>

#include "otf2read/otf2read.h"
#include "summary/summary.h"

/* Region classes beyond the target kinds (which use enum tr_target_kind). */
enum {
    TR_R_OTHER = -1,
    TR_R_ALLOC = TR_TARGET_KIND_COUNT,
    TR_R_DELETE,
    TR_R_KERNEL,
    TR_R_LINK_MAP,
    TR_R_STALE_LINK,
};

/* Host OpenMP states (docs/trace-model.md): what a region is to the
 * OMP work / OMP wait accounting. */
enum { TR_OMP_R_NONE, TR_OMP_R_PARALLEL, TR_OMP_R_WAIT, TR_OMP_R_OVERHEAD };

/* Direction of a data op region that moves bytes. */
enum { TR_XFER_NONE, TR_XFER_TO, TR_XFER_FROM };

/* Every definition record below that is searched by id starts with its
 * 32-bit OTF2 id so one comparator can sort and search all of them. */
struct tr_string {
    uint32_t id;
    char *s;
};

struct tr_region {
    uint32_t id;
    uint32_t name;
    uint32_t canon;
    int cls;       /* enum tr_target_kind or TR_R_* */
    size_t kernel; /* index into tr_summary.kernels when cls == TR_R_KERNEL */
    int xfer;      /* TR_XFER_* */
    bool mpit_drop; /* "MPI_T events dropped" */
    size_t group;  /* index into tr_state.rgroups */
    OTF2_RegionRole role;
    int omp;       /* TR_OMP_R_* */
};

/* Regions with equal display and canonical names count as one (a job's
 * archive, or a writer that defines a region per call site). */
struct tr_rgroup {
    const char *name, *canon; /* tr_state.strings */
    size_t stat[TR_LOC_KIND_COUNT]; /* 1 + index into tr_state.rstats; 0: none yet */
    uint64_t omp_teams; /* parallel regions: Enters just after <OMP-overhead> */
};

/* A parallel region (rgroup) on one host thread (location). */
struct tr_ompstat {
    size_t group, loc; /* indexes into tr_state.rgroups, tr_state.locations */
    uint64_t enters;
    uint64_t incl_ticks, wait_ticks; /* outermost instances */
};

struct tr_rstat {
    size_t group;
    enum tr_loc_kind kind;
    uint64_t count, incl_ticks, excl_ticks;
};

struct tr_attr {
    uint32_t id;
    uint32_t name;
};

/* A location group (an MPI job's archive: "rank <N>", one per rank). */
struct tr_group {
    uint32_t id;
    uint32_t name;
    OTF2_LocationGroupType type;
    uint32_t creator;
    size_t dev; /* accelerators: 1 + index into tr_state.devs */
};

/* A string-valued LocationGroupProperty: an MPI job's archive keeps each
 * rank's TRACER::MPIT::* on the rank's process group. */
struct tr_group_prop {
    uint32_t group;
    uint32_t name;
    uint32_t value;
};

struct tr_rma_win {
    uint32_t id;
    uint32_t name;
};

struct tr_metric_member {
    uint32_t id;
    uint32_t name;
};

/* A metric class, or an instance of one (class != id). */
struct tr_metric {
    uint32_t id;
    uint32_t class;
    uint8_t n;
    uint32_t *members; /* classes only (owned) */
    int mem_index, drop_index; /* device_memory_in_use, MPI_T dropped events: -1 none */
    int work_index, wait_index; /* OMP work, OMP wait: -1 none */
};

/* A region open on a location. */
struct tr_frame {
    const struct tr_region *r;
    uint64_t enter, child; /* ticks; child: inclusive time of regions directly inside */
    bool nested;           /* its group is open further down: inclusive time counted there */
    bool has_bytes;
    size_t dev;            /* transfers: 1 + index into tr_state.devs; 0 unknown */
    uint64_t bytes;
    uint64_t wait;         /* ticks of the outermost waiting states inside it */
    size_t ompstat;        /* parallel regions: 1 + index into tr_state.ompstats */
    const char *advice;    /* data mapping advice: its category, NULL none (tr_state.strings) */
    const char *advice_var, *advice_source;
    int advice_rank;
    uint64_t advice_bytes, advice_addr;
};

/* An unused allocation's device address, until its delete adds its time. */
struct tr_advice_alloc {
    uint64_t addr;
    size_t group; /* index into tr_summary.advice */
};

/* A location. Starts with its 64-bit id: sorted by tr_cmp_id64, and
 * otr_read_events_by_group() reads the ids of the table. */
struct tr_loc {
    uint64_t id;
    uint32_t name;
    uint32_t group;
    OTF2_LocationType type;
    enum tr_loc_kind kind;
    size_t dev;         /* device streams: 1 + index into tr_state.devs */
    size_t mpit_source; /* MPI_T sources: 1 + index into tr_state.mpit */
    uint64_t drop_metric; /* last "MPI_T dropped events" value (a running total) */
    uint64_t last_ts;
    bool any_event;
    struct tr_frame *stack;
    size_t depth, cap;
    /* Host OpenMP states. */
    bool omp_seen;            /* entered a parallel region or a waiting state */
    bool omp_after_overhead;  /* the last event closed <OMP-overhead> */
    bool has_work_metric, has_wait_metric;
    uint64_t work_metric, wait_metric; /* last values */
    size_t par_open;          /* parallel regions open */
    uint64_t omp_work_ticks, omp_wait_ticks; /* from the regions */
    size_t *ompstats;         /* indexes into tr_state.ompstats, this location's */
    size_t n_ompstats;
};

struct tr_dev {
    uint64_t key; /* creating process group << 32 | device number */
    struct tr_device_stat s; /* times in ticks until the end */
};

struct tr_state {
    struct tr_summary *out;
    struct otr_vec strings;   /* struct tr_string */
    struct otr_vec regions;   /* struct tr_region */
    struct otr_vec rgroups;   /* struct tr_rgroup */
    struct otr_vec rstats;    /* struct tr_rstat */
    struct otr_vec attrs;     /* struct tr_attr */
    struct otr_vec locations; /* struct tr_loc, by id once definitions are in */
    struct otr_vec groups;    /* struct tr_group */
    struct otr_vec gprops;    /* struct tr_group_prop */
    struct otr_vec wins;      /* struct tr_rma_win */
    struct otr_vec members;   /* struct tr_metric_member */
    struct otr_vec metrics;   /* struct tr_metric */
    struct otr_vec devs;      /* struct tr_dev; the first n_devs_sorted by key */
    size_t n_devs_sorted;
    struct otr_vec mpit;      /* struct tr_mpit_source_stat */
    struct otr_vec ompstats;  /* struct tr_ompstat */
    bool omp_nonzero_metric; /* an OMP work / OMP wait value above 0 */
    OTF2_AttributeRef attr_bytes;
    OTF2_AttributeRef attr_incomplete;
    OTF2_AttributeRef attr_variable;
    OTF2_AttributeRef attr_advice;
    OTF2_AttributeRef attr_src_addr;
    OTF2_AttributeRef attr_dst_addr;
    struct otr_vec advice_open; /* struct tr_advice_alloc: unused allocations whose delete is to come */
    OTF2_AttributeRef attr_src_device;
    OTF2_AttributeRef attr_dst_device;
    OTF2_AttributeRef attr_mpit_dropped;
    OTF2_AttributeRef attr_lost;
    OTF2_AttributeRef attr_mpit_event_type;
    uint64_t timer_resolution;
    uint64_t trace_length;
    uint64_t first_ts, last_ts;
    bool any_event;
    bool oom;
    struct otr_archive ar;  /* the archive, and OTF2's first message for the error line */
};

/* ---- lookups (every definition record starts with its id) ------------------ */

static inline int tr_cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static inline int tr_cmp_id64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static inline void *tr_find(const struct otr_vec *vec, size_t size, uint32_t id)
{
    return vec->n ? bsearch(&id, vec->v, vec->n, size, tr_cmp_id) : NULL;
}

static inline const char *tr_str(const struct tr_state *st, uint32_t ref)
{
    const struct tr_string *s = tr_find(&st->strings, sizeof *s, ref);
    return s ? s->s : NULL;
}

static inline uint64_t tr_ticks_to_ns(uint64_t ticks, uint64_t resolution)
{
    if (resolution == 0 || resolution == 1000000000u)
        return ticks;
    return (uint64_t)((long double)ticks * 1e9L / (long double)resolution + 0.5L);
}

/* ---- summary_defs.c ------------------------------------------------------------ */

/* Installs the global definition callbacks (user data: struct tr_state). */
void tr_def_callbacks(OTF2_GlobalDefReaderCallbacks *cb);

/* ---- summary_resolve.c ---------------------------------------------------------- */

/* Once every global definition is in: sorted tables, region classes and
 * groups, attribute and metric roles, devices, location kinds. Returns 0,
 * or -1 when out of memory. */
int tr_resolve_defs(struct tr_state *st);

/* ---- summary_devices.c ---------------------------------------------------------- */

/* The device number in "device <d>", "rank <N> device <d>" or "... device
 * <d> memory" (END: what must follow the number). Returns -1 if none. */
int64_t tr_device_number(const char *name, const char *end);

/* A device's key: the process group that created it, and its number. */
uint64_t tr_dev_key(uint32_t process_group, int64_t device);

/* A new device named NAME (copied); NULL (st->oom set) out of memory. */
struct tr_dev *tr_dev_new(struct tr_state *st, uint64_t key, const char *name);

/* 1 + the index of the device DEVICE of the process whose location group
 * is PROCESS_GROUP, made when only transfers name it; 0 out of memory. */
size_t tr_dev_slot(struct tr_state *st, uint32_t process_group, int64_t device);

/* ---- summary_events.c, summary_rma_metrics.c ----------------------------------- */

/* Installs the event callbacks (user data: struct tr_state). */
void tr_evt_callbacks(OTF2_GlobalEvtReaderCallbacks *cb);

/* Every event: the trace's span, and the location's latest time. */
struct tr_loc *tr_saw_time(struct tr_state *st, OTF2_LocationRef loc, OTF2_TimeStamp t);

/* Ends the innermost open region of L at T. */
void tr_close_top(struct tr_state *st, struct tr_loc *l, uint64_t t);

OTF2_CallbackCode tr_evt_put(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user, OTF2_AttributeList *attrs,
                             OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matching);
OTF2_CallbackCode tr_evt_get(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user, OTF2_AttributeList *attrs,
                             OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matching);
OTF2_CallbackCode tr_evt_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user, OTF2_AttributeList *attrs,
                                OTF2_MetricRef metric, uint8_t n, const OTF2_Type *types,
                                const OTF2_MetricValue *values);

/* ---- summary_props.c ------------------------------------------------------------ */

/* Order of a location group as a rank: N for "rank <N>", after every rank
 * (by id) for any other name. */
uint64_t tr_group_rank(const struct tr_state *st, uint32_t group);

/* Each rank's TRACER::MPIT::* on its location group (a job's archive).
 * Definitions must be resolved. */
void tr_read_group_properties(const struct tr_state *st, struct tr_summary *out);

/* The anchor file's properties. Returns -1 when out of memory. */
int tr_read_properties(OTF2_Reader *rd, struct tr_summary *out);

/* ---- summary_finish.c, summary_omp.c --------------------------------------------- */

/* After the events: close what is open, ticks -> ns, report order. Returns
 * 0, or -1 when out of memory. */
int tr_finish(struct tr_state *st);

/* The host OpenMP part of the report, once every region is closed. */
int tr_finish_omp(struct tr_state *st);

/* An Enter's attribute @id as a number or a string (NULL: absent). */
bool tr_attr_u64(OTF2_AttributeList *list, OTF2_AttributeRef id, uint64_t *value);
const char *tr_attr_str(const struct tr_state *st, OTF2_AttributeList *list, OTF2_AttributeRef id);

/* summary_advice.c: a flagged data op's frame was opened (@attrs: its
 * Enter's) or closed after @incl ticks. Return 0, -1 out of memory. */
int tr_advice_enter(struct tr_state *st, struct tr_loc *l, struct tr_frame *f, OTF2_AttributeList *attrs);
int tr_advice_close(struct tr_state *st, const struct tr_frame *f, uint64_t incl);
/* Ticks to ns, the costliest groups first. */
void tr_advice_finish(struct tr_summary *out, uint64_t timer_resolution);
void tr_advice_free(struct tr_summary *out);

#endif
