/* model_event.h - what the model says, event by event, to whoever writes it:
 * the vocabulary between the model layer (src/model/) and a format
 * (src/writer/ turns it into OTF2; a counting pass writes nothing).
 *
 * The model reads a journal's records once, in time order, and says for
 * each location (host threads, device streams) which regions are entered
 * and left, with which attributes, where the device memory in use changes,
 * which transfers touch a device's memory window. Each location's events
 * come in its own time order (stamps never go back); locations interleave.
 * Regions are named by what they are made of (a tag and a key, e.g. a
 * target construct's kind and codeptr_ra), never by a format's ids: the
 * writer names and numbers them on first use. No OTF2 type appears here. */
#ifndef TR_MODEL_MODEL_EVENT_H
#define TR_MODEL_MODEL_EVENT_H

#include <stdint.h>

/* The attributes events carry (docs/trace-model.md lists their names,
 * types and meaning; the writer defines them). */
enum tr_attr {
    TR_ATTR_DEVICE,
    TR_ATTR_TARGET_ID,
    TR_ATTR_HOST_OP_ID,
    TR_ATTR_CODEPTR,
    TR_ATTR_OPTYPE,
    TR_ATTR_SRC_ADDR,
    TR_ATTR_SRC_DEVICE,
    TR_ATTR_DST_ADDR,
    TR_ATTR_DST_DEVICE,
    TR_ATTR_BYTES,
    TR_ATTR_TEAMS,
    TR_ATTR_MODULE_ID,
    TR_ATTR_HOST_ADDR,
    TR_ATTR_DEVICE_ADDR,
    TR_ATTR_FILE,
    TR_ATTR_DEVICE_TYPE,
    TR_ATTR_INCOMPLETE,
    TR_ATTR_VALUE,
    TR_ATTR_LOST,
    TR_ATTR_VARIABLE,
    TR_ATTR_REF_PTR,
    TR_ATTR_REF_PTR_WRITTEN,
    TR_ATTR_PARTIAL,
    TR_ATTR_REF_VALUE,
    TR_ATTR_MPIT_TICK,
    TR_ATTR_MPIT_TIME_BASE,
    TR_ATTR_MPIT_CALLBACK_TIME,
    TR_ATTR_MPIT_REGISTRATION,
    TR_ATTR_MPIT_OBJECT,
    TR_ATTR_MPIT_ORDER_VIOLATION,
    TR_ATTR_MPIT_DROPPED,
    TR_ATTR_MPIT_EVENT_TYPE,
    TR_ATTR_MPIT_READ_FAILED,
    TR_ATTR_TASK_ID,
    TR_ATTR_OMP_KIND,
    TR_ATTR_OMP_ID,
    TR_ATTR_OMP_ARG,
    TR_ATTR_OMP_ARG2,
    TR_ATTR_THREAD,
    TR_ATTR_CONTENT_HASH,
    TR_ATTR_ADVICE,
    TR_ATTR_COUNT
};

/* Whether attribute @a's value is a text (tr_mattr.s) rather than a number. */
static inline int tr_attr_is_text(int a)
{
    return a == TR_ATTR_FILE || a == TR_ATTR_DEVICE_TYPE || a == TR_ATTR_VARIABLE || a == TR_ATTR_MPIT_TIME_BASE ||
           a == TR_ATTR_ADVICE ||
           a == TR_ATTR_MPIT_EVENT_TYPE;
}

/* What a region is made of: the tag says which kind of thing, the key which
 * one (tr_region_key_make). */
enum tr_region_key {
    KEY_TARGET = 1,    /* key: codeptr << 5 | ompt_target_t kind */
    KEY_DATA_OP,       /* key: ompt_target_data_op_t */
    KEY_KERNEL,        /* key: the target construct's codeptr_ra (the writer names the kernel by it) */
    KEY_DEVICE_EVENT,  /* key: enum tr_rec_type (TR_REC_DEVICE_INIT ...) */
    KEY_USER,          /* key: tracer_region_t */
    KEY_MARK,          /* key: tracer_region_t */
    KEY_LINK,          /* key: enum tr_link_region */
    KEY_MPIT_TYPE,     /* key: MPI_T event type index */
    KEY_MPIT_DROP,
    KEY_MPI_CALL,      /* key: enum tr_mpi_call */
    KEY_OMP_CONSTRUCT, /* key: codeptr << 5 | enum tr_omp_construct */
    KEY_OMP_STATE,     /* key: enum tr_omp_state */
    KEY_OMP_MACHINE,   /* key: enum tr_omp_event (machine mode: one region per callback kind) */
};

#define TR_REGION_KEY_BITS 58

static inline uint64_t tr_region_key_make(int tag, uint64_t v)
{
    return (uint64_t)tag << TR_REGION_KEY_BITS | (v & ((1ull << TR_REGION_KEY_BITS) - 1));
}
static inline int tr_region_key_tag(uint64_t k) { return (int)(k >> TR_REGION_KEY_BITS); }
static inline uint64_t tr_region_key_value(uint64_t k) { return k & ((1ull << TR_REGION_KEY_BITS) - 1); }

enum tr_link_region { TR_LINK_MAP = 1, TR_LINK_UNMAP = 2, TR_LINK_STALE = 3 };

/* Host OpenMP constructs, named after their source location. */
enum tr_omp_construct {
    TR_C_PARALLEL = 1, TR_C_LOOP, TR_C_SECTIONS, TR_C_SINGLE, TR_C_WORKSHARE, TR_C_DISTRIBUTE, TR_C_TASKLOOP,
    TR_C_SCOPE, TR_C_WORK, TR_C_MASKED, TR_C_CRITICAL, TR_C_ORDERED, TR_C_TASK, TR_C_TEAMS,
    TR_C_COUNT
};

/* The OpenMP runtime's states (artificial regions, <OMP-...>). */
enum tr_omp_state {
    TR_S_NONE, TR_S_IMPLICIT_BARRIER, TR_S_EXPLICIT_BARRIER, TR_S_TASKWAIT, TR_S_TASKGROUP, TR_S_REDUCTION,
    TR_S_LOCK_WAIT, TR_S_CRITICAL_WAIT, TR_S_ORDERED_WAIT, TR_S_ATOMIC_WAIT, TR_S_OVERHEAD, TR_S_IDLE,
    TR_S_TASK_CREATE,
    TR_S_COUNT
};

/* Metric classes (and their one member each). */
enum tr_metric { TR_METRIC_DEVICE_MEMORY = 0, TR_METRIC_MPIT_DROPPED = 1, TR_METRIC_OMP_WORK = 2,
                 TR_METRIC_OMP_WAIT = 3 };

typedef struct tr_mattr {
    uint32_t id; /* enum tr_attr, or an MPI_T element's attribute (the writer's) */
    union {
        uint64_t v;
        const char *s; /* tr_attr_is_text: valid while the model lives */
    };
} tr_mattr;

#define TR_MEV_MAX_ATTRS 12

/* An event's attributes, in order. */
typedef struct tr_mattrs {
    uint32_t n;
    tr_mattr a[TR_MEV_MAX_ATTRS];
} tr_mattrs;

static inline void tr_mattrs_add(tr_mattrs *l, uint32_t id, uint64_t v)
{
    if (l->n < TR_MEV_MAX_ATTRS)
        l->a[l->n++] = (tr_mattr){.id = id, .v = v};
}

static inline void tr_mattrs_text(tr_mattrs *l, uint32_t id, const char *s)
{
    if (l->n < TR_MEV_MAX_ATTRS)
        l->a[l->n++] = (tr_mattr){.id = id, .s = s};
}

enum tr_mev_kind {
    TR_MEV_ENTER,         /* region, attrs */
    TR_MEV_LEAVE,         /* region, attrs (incomplete) */
    TR_MEV_METRIC,        /* metric, value */
    TR_MEV_RMA_PUT,       /* window (the device's index), remote, bytes, matching */
    TR_MEV_RMA_GET,       /* likewise */
    TR_MEV_RMA_COMPLETE,  /* window, matching */
    TR_MEV_FORK,          /* value: the team size asked for */
    TR_MEV_JOIN,
    TR_MEV_MEASURE_OFF,   /* attrs (lost) */
    TR_MEV_MEASURE_ON,
    TR_MEV_PROGRAM_BEGIN, /* host thread 0, first */
    TR_MEV_PROGRAM_END,   /* host thread 0, last; value: the exit status, INT64_MIN unknown */
    TR_MEV_WIN_CREATE,    /* window: on a device's first stream, first */
    TR_MEV_WIN_DESTROY,   /* window: on it, last */
};

/* One event. The model fills only what the kind uses. */
typedef struct tr_mev {
    uint8_t kind;       /* enum tr_mev_kind */
    uint32_t nattrs;
    const tr_mattr *attrs; /* valid during the sink's call */
    uint32_t metric;    /* METRIC: enum tr_metric */
    uint32_t window;    /* RMA, WIN_*: the device's index in the model */
    uint32_t remote;    /* RMA: the device stream's rank in the window's comm */
    uint64_t loc;       /* the journal's location (tr_model_location) */
    uint64_t time;      /* ns */
    uint64_t region;    /* ENTER, LEAVE: tr_region_key_make(tag, key) */
    uint64_t value;     /* METRIC, FORK, PROGRAM_END */
    uint64_t bytes, matching; /* RMA */
} tr_mev;

/* @e with @l's attributes. */
static inline const tr_mev *tr_mev_with(tr_mev *e, const tr_mattrs *l)
{
    e->nattrs = l->n;
    e->attrs = l->a;
    return e;
}

/* Where the model's events go. Required: event. Optional (NULL): the rest.
 * Each returns 0, or -1 to stop the pass (the model then fails). */
typedef struct tr_model_sink {
    int (*event)(void *ctx, const tr_mev *e);
    /* Location @loc will have no more events (its writer may close). */
    int (*location_done)(void *ctx, uint64_t loc);
    void *ctx;
} tr_model_sink;

#endif
