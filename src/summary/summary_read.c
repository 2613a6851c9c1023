/* summary_read.c - count what a tracer OTF2 archive holds (summary.h).
 *
 * Classification uses only canonical region names, region-independent RMA
 * events and the attributes named in docs/trace-model.md, never display
 * names, so that source locations in display names cannot change counts.
 *
 * Events come through OTF2's global event reader, location by location
 * interleaved in time; each location keeps its own stack of open regions
 * (as deep as its regions nest) for inclusive and exclusive times and for
 * the transfer a data op region stands for. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <otf2/otf2.h>

#include "summary/summary.h"

#define TR_ANCHOR_NAME "traces.otf2"
#define TR_MPIT_LOC_PREFIX "MPI_T source "
#define TR_CONFIG_PREFIX "TRACER::CONFIG::"

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

/* The waiting states: their time is OMP wait. */
static const char *const tr_omp_wait_names[] = {
    "<OMP-implicit_barrier>", "<OMP-explicit_barrier>",     "<OMP-taskwait>",
    "<OMP-taskgroup>",        "<OMP-lock_wait>",            "<OMP-critical_section_wait>",
    "<OMP-ordered_section_wait>", "<OMP-atomic_wait>",
};

/* Direction of a data op region that moves bytes. */
enum { TR_XFER_NONE, TR_XFER_TO, TR_XFER_FROM };

static const char *const tr_target_names[TR_TARGET_KIND_COUNT] = {
    [TR_TARGET] = "target",
    [TR_TARGET_ENTER_DATA] = "target enter data",
    [TR_TARGET_EXIT_DATA] = "target exit data",
    [TR_TARGET_UPDATE] = "target update",
    [TR_TARGET_NOWAIT] = "target nowait",
    [TR_TARGET_ENTER_DATA_NOWAIT] = "target enter data nowait",
    [TR_TARGET_EXIT_DATA_NOWAIT] = "target exit data nowait",
    [TR_TARGET_UPDATE_NOWAIT] = "target update nowait",
};

static const char *const tr_loc_kind_names[TR_LOC_KIND_COUNT] = {
    [TR_LOC_HOST] = "host thread",
    [TR_LOC_DEVICE] = "device stream",
    [TR_LOC_MPIT] = "MPI_T source",
    [TR_LOC_OTHER] = "other",
};

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

struct tr_vec {
    void *v;
    size_t n, cap;
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
};

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
    struct tr_vec strings;   /* struct tr_string */
    struct tr_vec regions;   /* struct tr_region */
    struct tr_vec rgroups;   /* struct tr_rgroup */
    struct tr_vec rstats;    /* struct tr_rstat */
    struct tr_vec attrs;     /* struct tr_attr */
    struct tr_vec locations; /* struct tr_loc, by id once definitions are in */
    struct tr_vec groups;    /* struct tr_group */
    struct tr_vec gprops;    /* struct tr_group_prop */
    struct tr_vec wins;      /* struct tr_rma_win */
    struct tr_vec members;   /* struct tr_metric_member */
    struct tr_vec metrics;   /* struct tr_metric */
    struct tr_vec devs;      /* struct tr_dev; the first n_devs_sorted by key */
    size_t n_devs_sorted;
    struct tr_vec mpit;      /* struct tr_mpit_source_stat */
    struct tr_vec ompstats;  /* struct tr_ompstat */
    bool omp_nonzero_metric; /* an OMP work / OMP wait value above 0 */
    OTF2_AttributeRef attr_bytes;
    OTF2_AttributeRef attr_incomplete;
    OTF2_AttributeRef attr_variable;
    OTF2_AttributeRef attr_src_device;
    OTF2_AttributeRef attr_dst_device;
    OTF2_AttributeRef attr_mpit_dropped;
    OTF2_AttributeRef attr_mpit_event_type;
    uint64_t timer_resolution;
    uint64_t trace_length;
    uint64_t first_ts, last_ts;
    bool any_event;
    bool oom;
    char otf2_msg[256]; /* first message OTF2 reported, for the error line */
};

const char *tr_target_kind_name(enum tr_target_kind kind)
{
    return (unsigned)kind < TR_TARGET_KIND_COUNT ? tr_target_names[kind] : "?";
}

const char *tr_loc_kind_name(enum tr_loc_kind kind)
{
    return (unsigned)kind < TR_LOC_KIND_COUNT ? tr_loc_kind_names[kind] : "?";
}

/* ---- small containers ------------------------------------------------ */

static void *tr_push(struct tr_vec *vec, size_t size)
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

static int tr_cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int tr_cmp_id64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void tr_sort(struct tr_vec *vec, size_t size)
{
    if (vec->n > 1)
        qsort(vec->v, vec->n, size, tr_cmp_id);
}

static void *tr_find(const struct tr_vec *vec, size_t size, uint32_t id)
{
    return vec->n ? bsearch(&id, vec->v, vec->n, size, tr_cmp_id) : NULL;
}

static struct tr_loc *tr_find_loc(const struct tr_state *st, uint64_t id)
{
    return st->locations.n ? bsearch(&id, st->locations.v, st->locations.n, sizeof(struct tr_loc), tr_cmp_id64)
                           : NULL;
}

static const char *tr_str(const struct tr_state *st, uint32_t ref)
{
    const struct tr_string *s = tr_find(&st->strings, sizeof *s, ref);
    return s ? s->s : NULL;
}

/* tr_str() before the strings are sorted (while definitions are read):
 * a linear search. */
static const char *tr_str_any(const struct tr_state *st, uint32_t ref)
{
    const struct tr_string *s = st->strings.v;
    for (size_t i = st->strings.n; i-- > 0;)
        if (s[i].id == ref)
            return s[i].s;
    return NULL;
}

/* A count per name (link maps, stale pointers per variable); names are
 * few, so a linear search. Returns -1 when out of memory. */
static int tr_count_name(struct tr_kernel_count **v, size_t *n, const char *name)
{
    size_t i = 0;
    while (i < *n && strcmp((*v)[i].name, name))
        i++;
    if (i == *n) {
        struct tr_kernel_count *m = realloc(*v, (i + 1) * sizeof *m);
        if (!m)
            return -1;
        *v = m;
        char *copy = strdup(name);
        if (!copy)
            return -1;
        m[i] = (struct tr_kernel_count){copy, 0};
        (*n)++;
    }
    (*v)[i].count++;
    return 0;
}

/* ---- OTF2 error capture ---------------------------------------------- */

/* OTF2 prints its errors to stderr by default; keep the first one instead
 * so the user sees a single `tracer:` line. */
static OTF2_ErrorCode tr_otf2_error(void *user, const char *file, uint64_t line,
                                    const char *function, OTF2_ErrorCode code,
                                    const char *fmt, va_list va)
{
    (void)file;
    (void)line;
    (void)function;
    struct tr_state *st = user;
    if (st && st->otf2_msg[0] == '\0') {
        char msg[200] = "";
        if (fmt)
            vsnprintf(msg, sizeof msg, fmt, va);
        /* The innermost failure of a file operation reads "POSIX: 'path'";
         * the errno meaning is only in the code. */
        if (strncmp(msg, "POSIX: ", 7) == 0)
            snprintf(st->otf2_msg, sizeof st->otf2_msg, "%s: %s", msg + 7,
                     OTF2_Error_GetDescription(code));
        else
            snprintf(st->otf2_msg, sizeof st->otf2_msg, "%s",
                     msg[0] ? msg : OTF2_Error_GetDescription(code));
    }
    return code;
}

static void tr_fail(const struct tr_state *st, OTF2_ErrorCode code, const char *what,
                    char *err, size_t errlen)
{
    if (st->oom)
        snprintf(err, errlen, "out of memory");
    else if (st->otf2_msg[0])
        snprintf(err, errlen, "%s: %s", what, st->otf2_msg);
    else
        snprintf(err, errlen, "%s: %s", what, OTF2_Error_GetDescription(code));
}

/* ---- global definitions ------------------------------------------------ */

static OTF2_CallbackCode tr_def_clock(void *user, uint64_t resolution, uint64_t offset,
                                      uint64_t length, uint64_t realtime)
{
    (void)offset;
    (void)realtime;
    struct tr_state *st = user;
    st->timer_resolution = resolution;
    st->trace_length = length;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_string(void *user, OTF2_StringRef self, const char *string)
{
    struct tr_state *st = user;
    struct tr_string *s = tr_push(&st->strings, sizeof *s);
    char *copy = strdup(string ? string : "");
    if (!s || !copy) {
        free(copy);
        if (s)
            st->strings.n--;
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    s->id = self;
    s->s = copy;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_region(void *user, OTF2_RegionRef self, OTF2_StringRef name,
                                       OTF2_StringRef canon, OTF2_StringRef desc,
                                       OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                       OTF2_RegionFlag flags, OTF2_StringRef file,
                                       uint32_t begin_line, uint32_t end_line)
{
    (void)desc;
    (void)paradigm;
    (void)flags;
    (void)file;
    (void)begin_line;
    (void)end_line;
    struct tr_state *st = user;
    struct tr_region *r = tr_push(&st->regions, sizeof *r);
    if (!r) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    r->id = self;
    r->name = name;
    r->canon = canon;
    r->cls = TR_R_OTHER;
    r->role = role;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_attribute(void *user, OTF2_AttributeRef self,
                                          OTF2_StringRef name, OTF2_StringRef desc,
                                          OTF2_Type type)
{
    (void)desc;
    (void)type;
    struct tr_state *st = user;
    struct tr_attr *a = tr_push(&st->attrs, sizeof *a);
    if (!a) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    a->id = self;
    a->name = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_group(void *user, OTF2_LocationGroupRef self,
                                      OTF2_StringRef name, OTF2_LocationGroupType type,
                                      OTF2_SystemTreeNodeRef parent,
                                      OTF2_LocationGroupRef creator)
{
    (void)parent;
    struct tr_state *st = user;
    struct tr_group *g = tr_push(&st->groups, sizeof *g);
    if (!g) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    g->id = self;
    g->name = name;
    g->type = type;
    g->creator = creator;
    if (type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
        st->out->processes++;
    else if (type == OTF2_LOCATION_GROUP_TYPE_ACCELERATOR)
        st->out->devices++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_group_property(void *user, OTF2_LocationGroupRef group,
                                               OTF2_StringRef name, OTF2_Type type,
                                               OTF2_AttributeValue value)
{
    struct tr_state *st = user;
    if (type != OTF2_TYPE_STRING)
        return OTF2_CALLBACK_SUCCESS;
    struct tr_group_prop *p = tr_push(&st->gprops, sizeof *p);
    if (!p) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    p->group = group;
    p->name = name;
    p->value = value.stringRef;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_location(void *user, OTF2_LocationRef self, OTF2_StringRef name,
                                         OTF2_LocationType type, uint64_t n_events,
                                         OTF2_LocationGroupRef group)
{
    (void)n_events;
    struct tr_state *st = user;
    struct tr_loc *loc = tr_push(&st->locations, sizeof *loc);
    if (!loc) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    loc->id = self;
    loc->name = name;
    loc->group = group;
    loc->type = type;
    /* Strings precede locations in a global definition file. */
    const char *lname = tr_str_any(st, name);
    bool mpit_source = lname && strncmp(lname, TR_MPIT_LOC_PREFIX, strlen(TR_MPIT_LOC_PREFIX)) == 0;
    if (type == OTF2_LOCATION_TYPE_CPU_THREAD && !mpit_source)
        st->out->host_threads++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_rma_win(void *user, OTF2_RmaWinRef self, OTF2_StringRef name,
                                        OTF2_CommRef comm, OTF2_RmaWinFlag flags)
{
    (void)comm;
    (void)flags;
    struct tr_state *st = user;
    struct tr_rma_win *w = tr_push(&st->wins, sizeof *w);
    if (!w) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    w->id = self;
    w->name = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_metric_member(void *user, OTF2_MetricMemberRef self, OTF2_StringRef name,
                                              OTF2_StringRef desc, OTF2_MetricType mtype,
                                              OTF2_MetricMode mode, OTF2_Type vtype, OTF2_Base base,
                                              int64_t exponent, OTF2_StringRef unit)
{
    (void)desc, (void)mtype, (void)mode, (void)vtype, (void)base, (void)exponent, (void)unit;
    struct tr_state *st = user;
    struct tr_metric_member *m = tr_push(&st->members, sizeof *m);
    if (!m) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    m->id = self;
    m->name = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_metric_class(void *user, OTF2_MetricRef self, uint8_t n,
                                             const OTF2_MetricMemberRef *members,
                                             OTF2_MetricOccurrence occurrence, OTF2_RecorderKind kind)
{
    (void)occurrence, (void)kind;
    struct tr_state *st = user;
    uint32_t *copy = malloc((n ? n : 1) * sizeof *copy);
    struct tr_metric *m = copy ? tr_push(&st->metrics, sizeof *m) : NULL;
    if (!m) {
        free(copy);
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    for (uint8_t i = 0; i < n; i++)
        copy[i] = members[i];
    m->id = self;
    m->class = self;
    m->n = n;
    m->members = copy;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_metric_instance(void *user, OTF2_MetricRef self, OTF2_MetricRef metric_class,
                                                OTF2_LocationRef recorder, OTF2_MetricScope scope_type,
                                                uint64_t scope)
{
    (void)recorder, (void)scope_type, (void)scope;
    struct tr_state *st = user;
    struct tr_metric *m = tr_push(&st->metrics, sizeof *m);
    if (!m) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    m->id = self;
    m->class = metric_class;
    return OTF2_CALLBACK_SUCCESS;
}

static int tr_classify_name(const char *canon)
{
    for (int k = 0; k < TR_TARGET_KIND_COUNT; k++)
        if (strcmp(canon, tr_target_names[k]) == 0)
            return k;
    if (strcmp(canon, "alloc") == 0 || strcmp(canon, "alloc async") == 0)
        return TR_R_ALLOC;
    if (strcmp(canon, "delete") == 0 || strcmp(canon, "delete async") == 0)
        return TR_R_DELETE;
    if (strcmp(canon, "kernel") == 0)
        return TR_R_KERNEL;
    if (strcmp(canon, "link map") == 0)
        return TR_R_LINK_MAP;
    if (strcmp(canon, "stale link pointer") == 0)
        return TR_R_STALE_LINK;
    return TR_R_OTHER;
}

/* Host OpenMP states by canonical name; a parallel region (or a host
 * league's `teams`, work as a parallel region is) also by its role, so a
 * user region called "parallel" is not one. */
static int tr_classify_omp(const char *canon, OTF2_RegionRole role)
{
    if ((strcmp(canon, "parallel") == 0 || strcmp(canon, "teams") == 0) && role == OTF2_REGION_ROLE_PARALLEL)
        return TR_OMP_R_PARALLEL;
    if (strcmp(canon, "<OMP-overhead>") == 0)
        return TR_OMP_R_OVERHEAD;
    for (size_t i = 0; i < sizeof tr_omp_wait_names / sizeof *tr_omp_wait_names; i++)
        if (strcmp(canon, tr_omp_wait_names[i]) == 0)
            return TR_OMP_R_WAIT;
    return TR_OMP_R_NONE;
}

static int tr_classify_transfer(const char *canon)
{
    if (strcmp(canon, "transfer to device") == 0 || strcmp(canon, "transfer to device async") == 0)
        return TR_XFER_TO;
    if (strcmp(canon, "transfer from device") == 0 || strcmp(canon, "transfer from device async") == 0)
        return TR_XFER_FROM;
    return TR_XFER_NONE;
}

/* Kernels are grouped by display name, not region id: the writer defines
 * one region per name, but a merged archive might not. */
static int tr_kernel_slot(struct tr_summary *out, const char *name, size_t *slot)
{
    for (size_t i = 0; i < out->n_kernels; i++) {
        if (strcmp(out->kernels[i].name, name) == 0) {
            *slot = i;
            return 0;
        }
    }
    struct tr_kernel_count *k = realloc(out->kernels, (out->n_kernels + 1) * sizeof *k);
    if (!k)
        return -1;
    out->kernels = k;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    k[out->n_kernels] = (struct tr_kernel_count){ .name = copy, .count = 0 };
    *slot = out->n_kernels++;
    return 0;
}

/* The device number in "device <d>", "rank <N> device <d>" or "... device
 * <d> memory" (END: what must follow the number). Returns -1 if none. */
static int64_t tr_device_number(const char *name, const char *end)
{
    const char *p = name ? strstr(name, "device ") : NULL;
    if (!p)
        return -1;
    for (const char *q; (q = strstr(p + 1, "device ")) != NULL;)
        p = q;
    p += 7;
    if (*p < '0' || *p > '9')
        return -1;
    char *e = NULL;
    errno = 0;
    unsigned long d = strtoul(p, &e, 10);
    if (errno || d > INT32_MAX || strcmp(e, end) != 0)
        return -1;
    return (int64_t)d;
}

static uint64_t tr_dev_key(uint32_t process_group, int64_t device)
{
    return (uint64_t)process_group << 32 | (uint32_t)device;
}

static struct tr_dev *tr_dev_new(struct tr_state *st, uint64_t key, const char *name)
{
    char *copy = strdup(name);
    struct tr_dev *d = copy ? tr_push(&st->devs, sizeof *d) : NULL;
    if (!d) {
        free(copy);
        st->oom = true;
        return NULL;
    }
    d->key = key;
    d->s.name = copy;
    return d;
}

/* 1 + the index of the device DEVICE of the process whose location group
 * is PROCESS_GROUP, made when only transfers name it; 0 out of memory. */
static size_t tr_dev_slot(struct tr_state *st, uint32_t process_group, int64_t device)
{
    uint64_t key = tr_dev_key(process_group, device);
    struct tr_dev *devs = st->devs.v;
    const struct tr_dev *d =
        st->n_devs_sorted ? bsearch(&key, devs, st->n_devs_sorted, sizeof *devs, tr_cmp_id64) : NULL;
    if (d)
        return (size_t)(d - devs) + 1;
    for (size_t i = st->n_devs_sorted; i < st->devs.n; i++)
        if (devs[i].key == key)
            return i + 1;
    /* Named like the writer names device groups: "rank <N> device <d>"
     * in a job's archive, "device <d>" otherwise. */
    const struct tr_group *g = tr_find(&st->groups, sizeof *g, process_group);
    const char *gname = g ? tr_str(st, g->name) : NULL;
    char name[300];
    if (gname && strncmp(gname, "rank ", 5) == 0)
        snprintf(name, sizeof name, "%.200s device %lld", gname, (long long)device);
    else
        snprintf(name, sizeof name, "device %lld", (long long)device);
    return tr_dev_new(st, key, name) ? st->devs.n : 0;
}

struct tr_named {
    const char *name, *canon;
    size_t region;
};

static int tr_cmp_named(const void *a, const void *b)
{
    const struct tr_named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->canon, y->canon);
    if (!c)
        c = (x->region > y->region) - (x->region < y->region);
    return c;
}

/* Regions with the same display and canonical names become one group. */
static int tr_group_regions(struct tr_state *st)
{
    struct tr_region *regions = st->regions.v;
    size_t n = st->regions.n;
    if (!n)
        return 0;
    struct tr_named *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *name = tr_str(st, regions[i].name), *canon = tr_str(st, regions[i].canon);
        if (!name || !name[0])
            name = canon && canon[0] ? canon : "?";
        if (!canon || !canon[0])
            canon = name;
        v[i] = (struct tr_named){name, canon, i};
    }
    qsort(v, n, sizeof *v, tr_cmp_named);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(v[i].name, v[i - 1].name) || strcmp(v[i].canon, v[i - 1].canon)) {
            struct tr_rgroup *g = tr_push(&st->rgroups, sizeof *g);
            if (!g) {
                free(v);
                return -1;
            }
            g->name = v[i].name;
            g->canon = v[i].canon;
        }
        regions[v[i].region].group = st->rgroups.n - 1;
    }
    free(v);
    return 0;
}

/* Definitions may arrive in any order, so names are resolved only once all
 * global definitions are in. */
static int tr_resolve_defs(struct tr_state *st)
{
    tr_sort(&st->strings, sizeof(struct tr_string));
    tr_sort(&st->regions, sizeof(struct tr_region));
    tr_sort(&st->groups, sizeof(struct tr_group));
    tr_sort(&st->wins, sizeof(struct tr_rma_win));
    tr_sort(&st->members, sizeof(struct tr_metric_member));
    tr_sort(&st->metrics, sizeof(struct tr_metric));
    if (st->locations.n > 1)
        qsort(st->locations.v, st->locations.n, sizeof(struct tr_loc), tr_cmp_id64);

    struct tr_region *regions = st->regions.v;
    for (size_t i = 0; i < st->regions.n; i++) {
        struct tr_region *r = &regions[i];
        const char *name = tr_str(st, r->name);
        const char *canon = tr_str(st, r->canon);
        /* Archives from other writers may leave the canonical name out. */
        if (!canon || !canon[0])
            canon = name;
        if (!canon)
            continue;
        r->cls = tr_classify_name(canon);
        r->xfer = tr_classify_transfer(canon);
        r->mpit_drop = strcmp(canon, "MPI_T events dropped") == 0;
        r->omp = tr_classify_omp(canon, r->role);
        if (r->cls == TR_R_KERNEL
            && tr_kernel_slot(st->out, name && name[0] ? name : canon, &r->kernel) != 0)
            return -1;
    }
    if (tr_group_regions(st) != 0)
        return -1;

    const struct tr_attr *attrs = st->attrs.v;
    static const char *const attr_names[] = {"bytes", "variable", "incomplete", "src_device", "dst_device",
                                             "mpit_dropped", "mpit_event_type"};
    OTF2_AttributeRef *attr_refs[] = {&st->attr_bytes, &st->attr_variable, &st->attr_incomplete,
                                      &st->attr_src_device, &st->attr_dst_device, &st->attr_mpit_dropped,
                                      &st->attr_mpit_event_type};
    for (size_t i = 0; i < st->attrs.n; i++) {
        const char *name = tr_str(st, attrs[i].name);
        for (size_t k = 0; name && k < sizeof attr_names / sizeof *attr_names; k++)
            if (strcmp(name, attr_names[k]) == 0 && *attr_refs[k] == OTF2_UNDEFINED_ATTRIBUTE)
                *attr_refs[k] = attrs[i].id;
    }

    /* Metrics: which member of each class is device_memory_in_use or the
     * MPI_T drop count. */
    struct tr_metric *metrics = st->metrics.v;
    for (size_t i = 0; i < st->metrics.n; i++) {
        struct tr_metric *m = &metrics[i];
        m->mem_index = m->drop_index = m->work_index = m->wait_index = -1;
        for (uint8_t k = 0; m->members && k < m->n; k++) {
            const struct tr_metric_member *mm = tr_find(&st->members, sizeof *mm, m->members[k]);
            const char *name = mm ? tr_str(st, mm->name) : NULL;
            if (name && strcmp(name, "device_memory_in_use") == 0 && m->mem_index < 0)
                m->mem_index = k;
            else if (name && strcmp(name, "MPI_T dropped events") == 0 && m->drop_index < 0)
                m->drop_index = k;
            else if (name && strcmp(name, "OMP work") == 0 && m->work_index < 0)
                m->work_index = k;
            else if (name && strcmp(name, "OMP wait") == 0 && m->wait_index < 0)
                m->wait_index = k;
        }
    }

    /* Devices: every accelerator group, by (creating process, number). */
    struct tr_group *groups = st->groups.v;
    for (size_t i = 0; i < st->groups.n; i++) {
        if (groups[i].type != OTF2_LOCATION_GROUP_TYPE_ACCELERATOR)
            continue;
        const char *name = tr_str(st, groups[i].name);
        int64_t d = tr_device_number(name, "");
        /* A name that says no number (another writer): a key no transfer has. */
        uint64_t key = d >= 0 ? tr_dev_key(groups[i].creator, d)
                              : tr_dev_key(groups[i].creator, 0x80000000u | (groups[i].id & 0x7fffffffu));
        if (!tr_dev_new(st, key, name ? name : "device ?"))
            return -1;
    }
    if (st->devs.n > 1)
        qsort(st->devs.v, st->devs.n, sizeof(struct tr_dev), tr_cmp_id64);
    /* Two groups with one key: keep both, the lookup finds one. */
    st->n_devs_sorted = st->devs.n;
    struct tr_dev *devs = st->devs.v;
    for (size_t i = 0; i < st->groups.n; i++) {
        if (groups[i].type != OTF2_LOCATION_GROUP_TYPE_ACCELERATOR)
            continue;
        int64_t d = tr_device_number(tr_str(st, groups[i].name), "");
        uint64_t key = d >= 0 ? tr_dev_key(groups[i].creator, d)
                              : tr_dev_key(groups[i].creator, 0x80000000u | (groups[i].id & 0x7fffffffu));
        const struct tr_dev *found = bsearch(&key, devs, st->n_devs_sorted, sizeof *devs, tr_cmp_id64);
        groups[i].dev = found ? (size_t)(found - devs) + 1 : 0;
    }

    /* Locations: kind, device, MPI_T source. */
    struct tr_loc *locs = st->locations.v;
    for (size_t i = 0; i < st->locations.n; i++) {
        struct tr_loc *l = &locs[i];
        const char *lname = tr_str(st, l->name);
        const struct tr_group *g = tr_find(&st->groups, sizeof *g, l->group);
        if (l->type == OTF2_LOCATION_TYPE_CPU_THREAD && lname &&
            strncmp(lname, TR_MPIT_LOC_PREFIX, strlen(TR_MPIT_LOC_PREFIX)) == 0) {
            l->kind = TR_LOC_MPIT;
            const char *src = lname + strlen(TR_MPIT_LOC_PREFIX);
            struct tr_mpit_source_stat *s = st->mpit.v;
            size_t k = 0;
            while (k < st->mpit.n && strcmp(s[k].name, src))
                k++;
            if (k == st->mpit.n) {
                char *copy = strdup(src);
                struct tr_mpit_source_stat *ns = copy ? tr_push(&st->mpit, sizeof *ns) : NULL;
                if (!ns) {
                    free(copy);
                    return -1;
                }
                ns->name = copy;
            }
            ((struct tr_mpit_source_stat *)st->mpit.v)[k].locations++;
            l->mpit_source = k + 1;
        } else if (l->type == OTF2_LOCATION_TYPE_CPU_THREAD) {
            l->kind = TR_LOC_HOST;
        } else if (l->type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM) {
            l->kind = TR_LOC_DEVICE;
            l->dev = g ? g->dev : 0;
        } else {
            l->kind = TR_LOC_OTHER;
        }
    }
    return 0;
}

/* ---- events -------------------------------------------------------------- */

/* Attribute types follow the spec, but accept any integer type so a writer
 * that widens a field does not silently zero the counts. */
static bool tr_attr_u64(OTF2_AttributeList *list, OTF2_AttributeRef id, uint64_t *value)
{
    if (!list || id == OTF2_UNDEFINED_ATTRIBUTE || !OTF2_AttributeList_TestAttributeByID(list, id))
        return false;
    OTF2_Type type;
    OTF2_AttributeValue v;
    if (OTF2_AttributeList_GetAttributeByID(list, id, &type, &v) != OTF2_SUCCESS)
        return false;
    switch (type) {
    case OTF2_TYPE_UINT8: *value = v.uint8; return true;
    case OTF2_TYPE_UINT16: *value = v.uint16; return true;
    case OTF2_TYPE_UINT32: *value = v.uint32; return true;
    case OTF2_TYPE_UINT64: *value = v.uint64; return true;
    case OTF2_TYPE_INT8: *value = v.int8 < 0 ? 0 : (uint64_t)v.int8; return v.int8 >= 0;
    case OTF2_TYPE_INT16: *value = v.int16 < 0 ? 0 : (uint64_t)v.int16; return v.int16 >= 0;
    case OTF2_TYPE_INT32: *value = v.int32 < 0 ? 0 : (uint64_t)v.int32; return v.int32 >= 0;
    case OTF2_TYPE_INT64: *value = v.int64 < 0 ? 0 : (uint64_t)v.int64; return v.int64 >= 0;
    default: return false;
    }
}

static const char *tr_attr_str(const struct tr_state *st, OTF2_AttributeList *list, OTF2_AttributeRef id)
{
    OTF2_StringRef ref;
    if (!list || id == OTF2_UNDEFINED_ATTRIBUTE || !OTF2_AttributeList_TestAttributeByID(list, id) ||
        OTF2_AttributeList_GetStringRef(list, id, &ref) != OTF2_SUCCESS)
        return NULL;
    return tr_str(st, ref);
}

/* Every event: the trace's span, and the location's latest time (where
 * regions still open at its end are closed). */
static struct tr_loc *tr_saw_time(struct tr_state *st, OTF2_LocationRef loc, OTF2_TimeStamp t)
{
    if (!st->any_event || t < st->first_ts)
        st->first_ts = t;
    if (!st->any_event || t > st->last_ts)
        st->last_ts = t;
    st->any_event = true;
    struct tr_loc *l = tr_find_loc(st, loc);
    if (l && (!l->any_event || t > l->last_ts)) {
        l->last_ts = t;
        l->any_event = true;
    }
    return l;
}

static struct tr_rstat *tr_rstat_of(struct tr_state *st, const struct tr_region *r, enum tr_loc_kind kind)
{
    struct tr_rgroup *g = &((struct tr_rgroup *)st->rgroups.v)[r->group];
    if (!g->stat[kind]) {
        struct tr_rstat *s = tr_push(&st->rstats, sizeof *s);
        if (!s)
            return NULL;
        s->group = r->group;
        s->kind = kind;
        g->stat[kind] = st->rstats.n;
    }
    return &((struct tr_rstat *)st->rstats.v)[g->stat[kind] - 1];
}

/* MPI_T: an event type's region, or a drop report, on a source's location. */
static int tr_mpit_event(struct tr_state *st, const struct tr_loc *l, const struct tr_region *r,
                         OTF2_AttributeList *attrs)
{
    struct tr_mpit_source_stat *src = &((struct tr_mpit_source_stat *)st->mpit.v)[l->mpit_source - 1];
    const char *type;
    uint64_t dropped = 0;
    if (r->mpit_drop) {
        type = tr_attr_str(st, attrs, st->attr_mpit_event_type);
        tr_attr_u64(attrs, st->attr_mpit_dropped, &dropped);
    } else {
        const struct tr_rgroup *g = &((const struct tr_rgroup *)st->rgroups.v)[r->group];
        type = g->name;
    }
    if (!type)
        type = "unknown";
    size_t k = 0;
    while (k < src->n_types && strcmp(src->types[k].type, type))
        k++;
    if (k == src->n_types) {
        struct tr_mpit_type_stat *v = realloc(src->types, (k + 1) * sizeof *v);
        if (!v)
            return -1;
        src->types = v;
        char *copy = strdup(type);
        if (!copy)
            return -1;
        v[k] = (struct tr_mpit_type_stat){.type = copy};
        src->n_types++;
    }
    if (r->mpit_drop) {
        src->types[k].dropped += dropped;
        src->dropped += dropped;
    } else {
        src->types[k].events++;
        src->events++;
    }
    return 0;
}

/* The counts of the existing report, by region class. */
static int tr_count_class(struct tr_state *st, const struct tr_region *r, OTF2_AttributeList *attrs)
{
    struct tr_summary *out = st->out;
    uint64_t bytes = 0;
    const char *var;
    switch (r->cls) {
    case TR_R_OTHER:
        break;
    case TR_R_ALLOC:
        out->allocations.count++;
        if (tr_attr_u64(attrs, st->attr_bytes, &bytes))
            out->allocations.bytes += bytes;
        break;
    case TR_R_DELETE:
        out->deletes++;
        break;
    case TR_R_KERNEL:
        out->kernels[r->kernel].count++;
        break;
    case TR_R_STALE_LINK:
        out->stale_link_pointers++;
        var = tr_attr_str(st, attrs, st->attr_variable);
        return tr_count_name(&out->stale_by_variable, &out->n_stale_by_variable, var ? var : "?");
    case TR_R_LINK_MAP:
        var = tr_attr_str(st, attrs, st->attr_variable);
        return tr_count_name(&out->link_maps, &out->n_link_maps, var ? var : "?");
    default:
        out->target_regions[r->cls]++;
        break;
    }
    return 0;
}

/* A parallel region or a waiting state entered on a host thread. Returns
 * -1 when out of memory. */
static int tr_omp_enter(struct tr_state *st, struct tr_loc *l, const struct tr_region *r, struct tr_frame *f)
{
    if (l->kind != TR_LOC_HOST || (r->omp != TR_OMP_R_PARALLEL && r->omp != TR_OMP_R_WAIT))
        return 0;
    l->omp_seen = true;
    if (r->omp != TR_OMP_R_PARALLEL)
        return 0;
    l->par_open++;
    if (l->omp_after_overhead)
        ((struct tr_rgroup *)st->rgroups.v)[r->group].omp_teams++;
    struct tr_ompstat *stats = st->ompstats.v;
    size_t k = 0;
    while (k < l->n_ompstats && stats[l->ompstats[k]].group != r->group)
        k++;
    if (k == l->n_ompstats) {
        size_t *v = realloc(l->ompstats, (k + 1) * sizeof *v);
        if (!v)
            return -1;
        l->ompstats = v;
        struct tr_ompstat *s = tr_push(&st->ompstats, sizeof *s);
        if (!s)
            return -1;
        s->group = r->group;
        s->loc = (size_t)(l - (struct tr_loc *)st->locations.v);
        v[k] = st->ompstats.n - 1;
        l->n_ompstats++;
    }
    ((struct tr_ompstat *)st->ompstats.v)[l->ompstats[k]].enters++;
    f->ompstat = l->ompstats[k] + 1;
    return 0;
}

static OTF2_CallbackCode tr_evt_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    struct tr_state *st = user;
    struct tr_loc *l = tr_saw_time(st, loc, t);
    const struct tr_region *r = tr_find(&st->regions, sizeof *r, region);
    if (!r)
        return OTF2_CALLBACK_SUCCESS;
    if (tr_count_class(st, r, attrs) != 0)
        goto oom;
    if (!l)
        return OTF2_CALLBACK_SUCCESS;
    if (l->kind == TR_LOC_MPIT && tr_mpit_event(st, l, r, attrs) != 0)
        goto oom;
    struct tr_rstat *s = tr_rstat_of(st, r, l->kind);
    if (!s)
        goto oom;
    s->count++;

    if (l->depth == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct tr_frame *v = realloc(l->stack, cap * sizeof *v);
        if (!v)
            goto oom;
        l->stack = v;
        l->cap = cap;
    }
    struct tr_frame *f = &l->stack[l->depth];
    *f = (struct tr_frame){.r = r, .enter = t};
    for (size_t i = 0; i < l->depth && !f->nested; i++)
        f->nested = l->stack[i].r->group == r->group;
    if (r->xfer != TR_XFER_NONE) {
        uint64_t device;
        OTF2_AttributeRef dev_attr = r->xfer == TR_XFER_TO ? st->attr_dst_device : st->attr_src_device;
        f->has_bytes = tr_attr_u64(attrs, st->attr_bytes, &f->bytes);
        if (tr_attr_u64(attrs, dev_attr, &device) && device <= INT32_MAX && !(f->dev = tr_dev_slot(st, l->group, (int64_t)device)))
            goto oom;
    }
    if (tr_omp_enter(st, l, r, f) != 0)
        goto oom;
    l->omp_after_overhead = false;
    l->depth++;
    return OTF2_CALLBACK_SUCCESS;
oom:
    st->oom = true;
    return OTF2_CALLBACK_INTERRUPT;
}

/* Ends the innermost open region of L at T. */
static void tr_close_top(struct tr_state *st, struct tr_loc *l, uint64_t t)
{
    struct tr_frame *f = &l->stack[--l->depth];
    uint64_t incl = t > f->enter ? t - f->enter : 0;
    struct tr_rstat *s = tr_rstat_of(st, f->r, l->kind); /* made at the Enter */
    if (s) {
        s->excl_ticks += incl > f->child ? incl - f->child : 0;
        if (!f->nested)
            s->incl_ticks += incl;
    }
    if (l->depth)
        l->stack[l->depth - 1].child += incl;
    /* OMP wait: a waiting state passes its whole time down (waits nested
     * in it count once), any other region the waits inside it. */
    uint64_t wait = f->r->omp == TR_OMP_R_WAIT ? incl : f->wait;
    if (l->depth)
        l->stack[l->depth - 1].wait += wait;
    else
        l->omp_wait_ticks += wait;
    if (f->r->omp == TR_OMP_R_PARALLEL && l->kind == TR_LOC_HOST) {
        uint64_t w = f->wait < incl ? f->wait : incl;
        if (l->par_open)
            l->par_open--;
        if (!l->par_open)
            l->omp_work_ticks += incl - w;
        if (f->ompstat && !f->nested) {
            struct tr_ompstat *os = &((struct tr_ompstat *)st->ompstats.v)[f->ompstat - 1];
            os->incl_ticks += incl;
            os->wait_ticks += w;
        }
    }
    l->omp_after_overhead = f->r->omp == TR_OMP_R_OVERHEAD;
    if (f->r->xfer != TR_XFER_NONE && f->dev) {
        struct tr_dev *d = &((struct tr_dev *)st->devs.v)[f->dev - 1];
        struct tr_transfer_stat *x = f->r->xfer == TR_XFER_TO ? &d->s.to_device : &d->s.from_device;
        x->count++;
        x->bytes += f->bytes;
        x->time_ns += incl; /* ticks until the end */
    }
}

static OTF2_CallbackCode tr_evt_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    struct tr_state *st = user;
    struct tr_loc *l = tr_saw_time(st, loc, t);
    uint64_t flag = 0;
    if (tr_attr_u64(attrs, st->attr_incomplete, &flag) && flag == 1)
        st->out->incomplete++;
    else if (flag == 2)
        st->out->runtime_open++;
    if (!l)
        return OTF2_CALLBACK_SUCCESS;
    /* Normally the innermost region; a Leave of a region further down
     * closes what is open above it; one that matches nothing is ignored. */
    size_t i = l->depth;
    while (i > 0 && l->stack[i - 1].r->id != region)
        i--;
    if (i == 0)
        return OTF2_CALLBACK_SUCCESS;
    while (l->depth >= i)
        tr_close_top(st, l, t);
    return OTF2_CALLBACK_SUCCESS;
}

/* RmaPut is a transfer to the device, RmaGet one from it (trace model).
 * The open transfer region takes bytes and device from it when its own
 * attributes did not say. */
static OTF2_CallbackCode tr_count_transfer(struct tr_state *st, OTF2_LocationRef loc, OTF2_TimeStamp t,
                                           struct tr_count_bytes *cb, OTF2_RmaWinRef win, uint64_t bytes)
{
    struct tr_loc *l = tr_saw_time(st, loc, t);
    cb->count++;
    cb->bytes += bytes;
    if (!l || !l->depth || l->stack[l->depth - 1].r->xfer == TR_XFER_NONE)
        return OTF2_CALLBACK_SUCCESS;
    struct tr_frame *f = &l->stack[l->depth - 1];
    if (!f->has_bytes) {
        f->bytes = bytes;
        f->has_bytes = true;
    }
    if (!f->dev) {
        const struct tr_rma_win *w = tr_find(&st->wins, sizeof *w, win);
        int64_t d = w ? tr_device_number(tr_str(st, w->name), " memory") : -1;
        if (d >= 0 && !(f->dev = tr_dev_slot(st, l->group, d))) {
            st->oom = true;
            return OTF2_CALLBACK_INTERRUPT;
        }
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_evt_put(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *attrs, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching)
{
    (void)attrs, (void)remote, (void)matching;
    struct tr_state *st = user;
    return tr_count_transfer(st, loc, t, &st->out->transfers_to_device, win, bytes);
}

static OTF2_CallbackCode tr_evt_get(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *attrs, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching)
{
    (void)attrs, (void)remote, (void)matching;
    struct tr_state *st = user;
    return tr_count_transfer(st, loc, t, &st->out->transfers_from_device, win, bytes);
}

static bool tr_metric_u64(OTF2_Type type, OTF2_MetricValue v, uint64_t *out)
{
    switch (type) {
    case OTF2_TYPE_UINT64: *out = v.unsigned_int; return true;
    case OTF2_TYPE_INT64: *out = v.signed_int < 0 ? 0 : (uint64_t)v.signed_int; return true;
    case OTF2_TYPE_DOUBLE: *out = v.floating_point > 0 ? (uint64_t)v.floating_point : 0; return true;
    default: return false;
    }
}

/* device_memory_in_use on a device stream: its device's peak; "MPI_T
 * dropped events" on an MPI_T source: the source's running drop total. */
static OTF2_CallbackCode tr_evt_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                       OTF2_AttributeList *attrs, OTF2_MetricRef metric, uint8_t n,
                                       const OTF2_Type *types, const OTF2_MetricValue *values)
{
    (void)attrs;
    struct tr_state *st = user;
    struct tr_loc *l = tr_saw_time(st, loc, t);
    const struct tr_metric *m = tr_find(&st->metrics, sizeof *m, metric);
    if (m && m->class != m->id)
        m = tr_find(&st->metrics, sizeof *m, m->class);
    if (!l || !m)
        return OTF2_CALLBACK_SUCCESS;
    uint64_t v;
    if (l->dev && m->mem_index >= 0 && m->mem_index < n && tr_metric_u64(types[m->mem_index], values[m->mem_index], &v)) {
        struct tr_device_stat *d = &((struct tr_dev *)st->devs.v)[l->dev - 1].s;
        if (!d->has_memory || v > d->peak_memory)
            d->peak_memory = v;
        d->has_memory = true;
    }
    if (l->mpit_source && m->drop_index >= 0 && m->drop_index < n &&
        tr_metric_u64(types[m->drop_index], values[m->drop_index], &v) && v > l->drop_metric)
        l->drop_metric = v;
    /* OMP work / OMP wait: running totals, the last value counts. */
    if (l->kind == TR_LOC_HOST && m->work_index >= 0 && m->work_index < n &&
        tr_metric_u64(types[m->work_index], values[m->work_index], &v)) {
        l->work_metric = v;
        l->has_work_metric = true;
        st->omp_nonzero_metric |= v > 0;
    }
    if (l->kind == TR_LOC_HOST && m->wait_index >= 0 && m->wait_index < n &&
        tr_metric_u64(types[m->wait_index], values[m->wait_index], &v)) {
        l->wait_metric = v;
        l->has_wait_metric = true;
        st->omp_nonzero_metric |= v > 0;
    }
    return OTF2_CALLBACK_SUCCESS;
}

/* ---- reading ---------------------------------------------------------------- */

static OTF2_ErrorCode tr_read_global_defs(OTF2_Reader *rd, struct tr_state *st)
{
    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(rd);
    if (!gdr)
        return OTF2_ERROR_FILE_CAN_NOT_OPEN;
    OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
    if (!cb) {
        st->oom = true;
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    }
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, tr_def_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, tr_def_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, tr_def_region);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, tr_def_attribute);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, tr_def_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupPropertyCallback(cb, tr_def_group_property);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, tr_def_location);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, tr_def_rma_win);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, tr_def_metric_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, tr_def_metric_class);
    OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(cb, tr_def_metric_instance);
    OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalDefCallbacks(rd, gdr, cb, st);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    uint64_t n = 0;
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Reader_ReadAllGlobalDefinitions(rd, gdr, &n);
    OTF2_Reader_CloseGlobalDefReader(rd, gdr);
    return st->oom ? OTF2_ERROR_MEM_ALLOC_FAILED : rc;
}

/* Local definitions only carry id mappings; reading them lets the reader
 * translate local ids to global ones before our callbacks see events. */
static OTF2_ErrorCode tr_open_locations(OTF2_Reader *rd, struct tr_state *st)
{
    const struct tr_loc *locs = st->locations.v;
    OTF2_ErrorCode rc;
    for (size_t i = 0; i < st->locations.n; i++)
        if ((rc = OTF2_Reader_SelectLocation(rd, locs[i].id)) != OTF2_SUCCESS)
            return rc;
    bool defs_open = OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS;
    st->otf2_msg[0] = '\0';
    if ((rc = OTF2_Reader_OpenEvtFiles(rd)) != OTF2_SUCCESS)
        return rc;
    for (size_t i = 0; i < st->locations.n; i++) {
        if (defs_open) {
            /* A location without local definitions is normal. */
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, locs[i].id);
            st->otf2_msg[0] = '\0'; /* keep the reason for a real failure */
            if (dr) {
                uint64_t n = 0;
                rc = OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
                OTF2_Reader_CloseDefReader(rd, dr);
                if (rc != OTF2_SUCCESS)
                    return rc;
            }
        }
        if (!OTF2_Reader_GetEvtReader(rd, locs[i].id))
            return OTF2_ERROR_FILE_CAN_NOT_OPEN;
    }
    if (defs_open)
        OTF2_Reader_CloseDefFiles(rd);
    return OTF2_SUCCESS;
}

static OTF2_ErrorCode tr_read_events(OTF2_Reader *rd, struct tr_state *st)
{
    OTF2_GlobalEvtReader *ger = OTF2_Reader_GetGlobalEvtReader(rd);
    if (!ger)
        return OTF2_ERROR_FILE_CAN_NOT_OPEN;
    OTF2_GlobalEvtReaderCallbacks *cb = OTF2_GlobalEvtReaderCallbacks_New();
    if (!cb) {
        OTF2_Reader_CloseGlobalEvtReader(rd, ger);
        st->oom = true;
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    }
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, tr_evt_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, tr_evt_leave);
    OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback(cb, tr_evt_put);
    OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback(cb, tr_evt_get);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cb, tr_evt_metric);
    OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalEvtCallbacks(rd, ger, cb, st);
    OTF2_GlobalEvtReaderCallbacks_Delete(cb);
    uint64_t n = 0;
    if (rc == OTF2_SUCCESS)
        rc = OTF2_Reader_ReadAllGlobalEvents(rd, ger, &n);
    OTF2_Reader_CloseGlobalEvtReader(rd, ger);
    return rc;
}

static uint64_t tr_ticks_to_ns(uint64_t ticks, uint64_t resolution)
{
    if (resolution == 0 || resolution == 1000000000u)
        return ticks;
    return (uint64_t)((long double)ticks * 1e9L / (long double)resolution + 0.5L);
}

/* "N transfers, B bytes", as src/writer/writer.c records it. */
static void tr_parse_small(const char *value, struct tr_count_bytes *cb)
{
    unsigned long long count, bytes;
    if (sscanf(value, "%llu transfers, %llu bytes", &count, &bytes) == 2) {
        cb->count = count;
        cb->bytes = bytes;
    }
}

/* One rank's TRACER::MPIT::<kind> (kind: what follows the prefix and, in
 * old job archives, RANK<N>::): STATUS is kept when none is yet (the
 * callers offer rank 0's first), SOURCE::<name> adds to the totals. */
static void tr_mpit_property(struct tr_summary *out, const char *kind, const char *value)
{
    if (strcmp(kind, "STATUS") == 0) {
        if (!out->mpit_status[0])
            snprintf(out->mpit_status, sizeof out->mpit_status, "%s", value);
    } else if (strncmp(kind, "SOURCE::", 8) == 0) {
        const char *e = strstr(value, "; events="), *d = strstr(value, "; dropped="),
                   *v = strstr(value, "; order_violations=");
        out->mpit_sources++;
        out->mpit_events += e ? strtoull(e + 9, 0, 10) : 0;
        out->mpit_dropped += d ? strtoull(d + 10, 0, 10) : 0;
        out->mpit_order_violations += v ? strtoull(v + 19, 0, 10) : 0;
    }
}

/* Order of a location group as a rank: N for "rank <N>", after every rank
 * (by id) for any other name. */
static uint64_t tr_group_rank(const struct tr_state *st, uint32_t group)
{
    const struct tr_group *g = tr_find(&st->groups, sizeof *g, group);
    const char *name = g ? tr_str(st, g->name) : NULL;
    if (name && strncmp(name, "rank ", 5) == 0 && name[5] >= '0' && name[5] <= '9') {
        char *end = NULL;
        errno = 0;
        unsigned long rank = strtoul(name + 5, &end, 10);
        if (errno == 0 && *end == '\0' && rank <= UINT32_MAX)
            return rank;
    }
    return ((uint64_t)1 << 32) + group;
}

/* An MPI job's archive keeps each rank's TRACER::MPIT::* as properties of
 * the rank's location group: every group counts as a rank, the sources
 * add up, STATUS is the lowest rank's. Definitions must be resolved. */
static void tr_read_group_properties(const struct tr_state *st, struct tr_summary *out)
{
    const struct tr_group_prop *p = st->gprops.v;
    const char *status = NULL;
    uint64_t status_rank = UINT64_MAX;
    for (size_t i = 0; i < st->gprops.n; i++) {
        const char *name = tr_str(st, p[i].name), *value = tr_str(st, p[i].value);
        if (!name || !value || strncmp(name, "TRACER::MPIT::", 14) != 0)
            continue;
        if (strcmp(name + 14, "STATUS") == 0) {
            uint64_t rank = tr_group_rank(st, p[i].group);
            if (!status || rank < status_rank) {
                status = value;
                status_rank = rank;
            }
        } else {
            tr_mpit_property(out, name + 14, value);
        }
    }
    if (status)
        tr_mpit_property(out, "STATUS", status);
}

/* TRACER::CONFIG::<VARIABLE>, in the archive's order. */
static int tr_add_config(struct tr_summary *out, const char *variable, const char *value)
{
    struct tr_config_entry *v = realloc(out->config, (out->n_config + 1) * sizeof *v);
    if (!v)
        return -1;
    out->config = v;
    char *name = strdup(variable), *val = strdup(value);
    if (!name || !val) {
        free(name);
        free(val);
        return -1;
    }
    v[out->n_config++] = (struct tr_config_entry){name, val};
    return 0;
}

/* The anchor file's properties: the configuration, how the run ended, a
 * lone process's MPI_T and the transfers that TRACER_MIN_BYTES kept out of
 * the event stream (older traces have none: the totals stay 0). Only names
 * that exist are asked for, so OTF2 reports no "not found" error. Returns
 * -1 when out of memory. */
static int tr_read_properties(OTF2_Reader *rd, struct tr_summary *out)
{
    static const char *const names[2] = {"TRACER::FILTERED::SMALL_TRANSFERS_TO_DEVICE",
                                         "TRACER::FILTERED::SMALL_TRANSFERS_FROM_DEVICE"};
    struct tr_count_bytes *dest[2] = {&out->small_to_device, &out->small_from_device};
    uint32_t n = 0;
    char **have = NULL;
    int ret = 0;
    if (OTF2_Reader_GetPropertyNames(rd, &n, &have) != OTF2_SUCCESS)
        return 0;
    for (uint32_t i = 0; have && i < n; i++) {
        char *value = NULL;
        if (strcmp(have[i], "TRACER::RUN::END") == 0 && OTF2_Reader_GetProperty(rd, have[i], &value) == OTF2_SUCCESS &&
            value)
            snprintf(out->run_end, sizeof out->run_end, "%s", value);
        else if (strncmp(have[i], TR_CONFIG_PREFIX, strlen(TR_CONFIG_PREFIX)) == 0 &&
                 OTF2_Reader_GetProperty(rd, have[i], &value) == OTF2_SUCCESS && value &&
                 tr_add_config(out, have[i] + strlen(TR_CONFIG_PREFIX), value) != 0)
            ret = -1;
        free(value);
    }
    for (uint32_t i = 0; have && i < n; i++) {
        char *value = NULL;
        /* A lone process's archive has TRACER::MPIT::... here; a job's
         * archive from before they moved to its location groups has them
         * per rank: TRACER::MPIT::RANK<N>::... */
        const char *kind = have[i];
        if (strncmp(kind, "TRACER::MPIT::", 14) != 0)
            continue;
        kind += 14;
        if (strncmp(kind, "RANK", 4) == 0) {
            const char *sep = strchr(kind, ':');
            if (!sep || sep[1] != ':')
                continue;
            kind = sep + 2;
        }
        int status = strcmp(kind, "STATUS") == 0 && !out->mpit_status[0];
        int source = strncmp(kind, "SOURCE::", 8) == 0;
        if ((!status && !source) || OTF2_Reader_GetProperty(rd, have[i], &value) != OTF2_SUCCESS || !value) {
            free(value);
            continue;
        }
        tr_mpit_property(out, kind, value);
        free(value);
    }
    for (uint32_t i = 0; have && i < n; i++)
        for (int d = 0; d < 2; d++) {
            char *value = NULL;
            if (strcmp(have[i], names[d]) == 0 && OTF2_Reader_GetProperty(rd, names[d], &value) == OTF2_SUCCESS
                && value)
                tr_parse_small(value, dest[d]);
            free(value);
        }
    free(have);
    return ret;
}

static int tr_cmp_rstat(const void *a, const void *b)
{
    const struct tr_region_stat *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->exclusive_ns != y->exclusive_ns)
        return x->exclusive_ns > y->exclusive_ns ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->canonical, y->canonical);
}

static int tr_cmp_mpit_type(const void *a, const void *b)
{
    return strcmp(((const struct tr_mpit_type_stat *)a)->type, ((const struct tr_mpit_type_stat *)b)->type);
}

static int tr_cmp_mpit_source(const void *a, const void *b)
{
    return strcmp(((const struct tr_mpit_source_stat *)a)->name, ((const struct tr_mpit_source_stat *)b)->name);
}

static int tr_cmp_link_name(const void *a, const void *b)
{
    return strcmp(((const struct tr_kernel_count *)a)->name, ((const struct tr_kernel_count *)b)->name);
}

/* Host threads of the OpenMP report in archive order: by rank (process
 * group), then location id. */
struct tr_omp_order {
    uint64_t rank, id;
    size_t loc;
};

static int tr_cmp_omp_order(const void *a, const void *b)
{
    const struct tr_omp_order *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* A parallel region's stats in output order: by region group, then thread. */
struct tr_omp_key {
    size_t group, thread;
    const struct tr_ompstat *s;
};

static int tr_cmp_omp_key(const void *a, const void *b)
{
    const struct tr_omp_key *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return (x->thread > y->thread) - (x->thread < y->thread);
}

static int tr_cmp_omp_parallel(const void *a, const void *b)
{
    const struct tr_omp_parallel *x = a, *y = b;
    uint64_t tx = x->work_ns + x->wait_ns, ty = y->work_ns + y->wait_ns;
    if (tx != ty)
        return tx > ty ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The host OpenMP part of *OUT, once every region is closed. */
static int tr_finish_omp(struct tr_state *st)
{
    struct tr_summary *out = st->out;
    uint64_t res = st->timer_resolution;
    struct tr_loc *locs = st->locations.v;
    bool any = st->omp_nonzero_metric;
    size_t n = 0;
    for (size_t i = 0; i < st->locations.n; i++) {
        if (locs[i].kind != TR_LOC_HOST)
            continue;
        any |= locs[i].omp_seen;
        n += locs[i].omp_seen || locs[i].has_work_metric || locs[i].has_wait_metric;
    }
    if (!any || !n)
        return 0;
    out->has_omp = true;

    struct tr_omp_order *order = malloc(n * sizeof *order);
    size_t *thread_of = malloc(st->locations.n * sizeof *thread_of);
    out->omp_threads = calloc(n, sizeof *out->omp_threads);
    if (!order || !thread_of || !out->omp_threads) {
        free(order);
        free(thread_of);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < st->locations.n; i++)
        if (locs[i].kind == TR_LOC_HOST && (locs[i].omp_seen || locs[i].has_work_metric || locs[i].has_wait_metric))
            order[k++] = (struct tr_omp_order){tr_group_rank(st, locs[i].group), locs[i].id, i};
    qsort(order, n, sizeof *order, tr_cmp_omp_order);
    for (size_t i = 0; i < st->locations.n; i++)
        thread_of[i] = SIZE_MAX;
    int ret = 0;
    for (size_t i = 0; i < n; i++) {
        const struct tr_loc *l = &locs[order[i].loc];
        struct tr_omp_thread *o = &out->omp_threads[i];
        const struct tr_group *g = tr_find(&st->groups, sizeof *g, l->group);
        const char *lname = tr_str(st, l->name), *gname = g ? tr_str(st, g->name) : NULL;
        thread_of[order[i].loc] = i;
        out->n_omp_threads++;
        if (lname)
            o->location = strdup(lname);
        else if (asprintf(&o->location, "location %llu", (unsigned long long)l->id) < 0)
            o->location = NULL;
        o->process = strdup(gname ? gname : "?");
        if (!o->location || !o->process) {
            ret = -1;
            goto done;
        }
        o->from_metrics = l->has_work_metric && l->has_wait_metric;
        if (o->from_metrics) {
            o->work_ns = l->work_metric;
            o->wait_ns = l->wait_metric;
        } else {
            o->work_ns = tr_ticks_to_ns(l->omp_work_ticks, res);
            o->wait_ns = tr_ticks_to_ns(l->omp_wait_ticks, res);
        }
    }

    /* Parallel regions: their stats by region, then thread. */
    size_t ns = st->ompstats.n;
    const struct tr_ompstat *stats = st->ompstats.v;
    struct tr_omp_key *keys = ns ? malloc(ns * sizeof *keys) : NULL;
    if (ns && !keys) {
        ret = -1;
        goto done;
    }
    for (size_t i = 0; i < ns; i++)
        keys[i] = (struct tr_omp_key){stats[i].group, thread_of[stats[i].loc], &stats[i]};
    if (ns > 1)
        qsort(keys, ns, sizeof *keys, tr_cmp_omp_key);
    size_t n_regions = 0;
    for (size_t i = 0; i < ns; i++)
        n_regions += i == 0 || keys[i].group != keys[i - 1].group;
    if (n_regions && !(out->omp_parallel = calloc(n_regions, sizeof *out->omp_parallel))) {
        free(keys);
        ret = -1;
        goto done;
    }
    const struct tr_rgroup *groups = st->rgroups.v;
    for (size_t i = 0, end; i < ns; i = end) {
        end = i + 1;
        while (end < ns && keys[end].group == keys[i].group)
            end++;
        struct tr_omp_parallel *p = &out->omp_parallel[out->n_omp_parallel++];
        p->name = strdup(groups[keys[i].group].name);
        p->threads = calloc(end - i, sizeof *p->threads);
        if (!p->name || !p->threads) {
            ret = -1;
            break;
        }
        p->instances = groups[keys[i].group].omp_teams;
        for (size_t j = i; j < end; j++) {
            struct tr_omp_region_thread *t = &p->threads[p->n_threads++];
            uint64_t incl = tr_ticks_to_ns(keys[j].s->incl_ticks, res);
            uint64_t wait = tr_ticks_to_ns(keys[j].s->wait_ticks, res);
            t->thread = keys[j].thread;
            t->instances = keys[j].s->enters;
            t->wait_ns = wait < incl ? wait : incl;
            t->work_ns = incl - t->wait_ns;
            p->work_ns += t->work_ns;
            p->wait_ns += t->wait_ns;
            /* Without <OMP-overhead> to tell a team's first thread: at
             * least as many teams as one thread took part in. */
            if (t->instances > p->instances)
                p->instances = t->instances;
        }
    }
    free(keys);
    if (ret == 0 && out->n_omp_parallel > 1)
        qsort(out->omp_parallel, out->n_omp_parallel, sizeof *out->omp_parallel, tr_cmp_omp_parallel);
done:
    free(order);
    free(thread_of);
    return ret;
}

/* After the events: close what is still open, turn ticks into ns and move
 * the counts into *OUT, ordered for the report. */
static int tr_finish(struct tr_state *st)
{
    struct tr_summary *out = st->out;
    uint64_t res = st->timer_resolution;
    struct tr_loc *locs = st->locations.v;
    uint64_t *drop_metric = st->mpit.n ? calloc(st->mpit.n, sizeof *drop_metric) : NULL;
    if (st->mpit.n && !drop_metric)
        return -1;
    for (size_t i = 0; i < st->locations.n; i++) {
        while (locs[i].depth)
            tr_close_top(st, &locs[i], locs[i].last_ts);
        if (locs[i].mpit_source)
            drop_metric[locs[i].mpit_source - 1] += locs[i].drop_metric;
    }
    /* A source's drops: the drop regions' counts, or the metric's running
     * totals when they say more (a region without its count). */
    struct tr_mpit_source_stat *src = st->mpit.v;
    for (size_t i = 0; i < st->mpit.n; i++)
        if (drop_metric[i] > src[i].dropped)
            src[i].dropped = drop_metric[i];
    free(drop_metric);

    const struct tr_rstat *rs = st->rstats.v;
    const struct tr_rgroup *groups = st->rgroups.v;
    if (st->rstats.n) {
        out->regions = calloc(st->rstats.n, sizeof *out->regions);
        if (!out->regions)
            return -1;
    }
    for (size_t i = 0; i < st->rstats.n; i++) {
        struct tr_region_stat *o = &out->regions[out->n_regions];
        o->name = strdup(groups[rs[i].group].name);
        o->canonical = strdup(groups[rs[i].group].canon);
        out->n_regions++;
        if (!o->name || !o->canonical)
            return -1;
        o->kind = rs[i].kind;
        o->count = rs[i].count;
        o->inclusive_ns = tr_ticks_to_ns(rs[i].incl_ticks, res);
        o->exclusive_ns = tr_ticks_to_ns(rs[i].excl_ticks, res);
    }
    if (out->n_regions > 1)
        qsort(out->regions, out->n_regions, sizeof *out->regions, tr_cmp_rstat);

    struct tr_dev *devs = st->devs.v;
    if (st->devs.n > 1)
        qsort(devs, st->devs.n, sizeof *devs, tr_cmp_id64);
    if (st->devs.n) {
        out->device_stats = calloc(st->devs.n, sizeof *out->device_stats);
        if (!out->device_stats)
            return -1;
    }
    for (size_t i = 0; i < st->devs.n; i++) {
        devs[i].s.to_device.time_ns = tr_ticks_to_ns(devs[i].s.to_device.time_ns, res);
        devs[i].s.from_device.time_ns = tr_ticks_to_ns(devs[i].s.from_device.time_ns, res);
        out->device_stats[i] = devs[i].s;
        devs[i].s.name = NULL; /* moved */
    }
    out->n_device_stats = st->devs.n;
    st->devs.n = 0;

    for (size_t i = 0; i < st->mpit.n; i++) {
        if (src[i].n_types > 1)
            qsort(src[i].types, src[i].n_types, sizeof *src[i].types, tr_cmp_mpit_type);
    }
    if (st->mpit.n > 1)
        qsort(src, st->mpit.n, sizeof *src, tr_cmp_mpit_source);
    out->mpit_by_source = st->mpit.v;
    out->n_mpit_by_source = st->mpit.n;
    st->mpit = (struct tr_vec){0};

    if (out->n_link_maps > 1)
        qsort(out->link_maps, out->n_link_maps, sizeof *out->link_maps, tr_cmp_link_name);
    if (out->n_stale_by_variable > 1)
        qsort(out->stale_by_variable, out->n_stale_by_variable, sizeof *out->stale_by_variable, tr_cmp_link_name);
    return tr_finish_omp(st);
}

static int tr_read(OTF2_Reader *rd, struct tr_state *st, char *err, size_t errlen)
{
    OTF2_ErrorCode rc = OTF2_Reader_SetSerialCollectiveCallbacks(rd);
    if (rc != OTF2_SUCCESS) {
        tr_fail(st, rc, "cannot set up the reader", err, errlen);
        return -1;
    }
    if ((rc = tr_read_global_defs(rd, st)) != OTF2_SUCCESS) {
        tr_fail(st, rc, "cannot read definitions", err, errlen);
        return -1;
    }
    if (tr_resolve_defs(st) != 0) {
        st->oom = true;
        tr_fail(st, rc, "", err, errlen);
        return -1;
    }
    if (st->locations.n > 0) {
        if ((rc = tr_open_locations(rd, st)) != OTF2_SUCCESS) {
            tr_fail(st, rc, "cannot open event files", err, errlen);
            return -1;
        }
        rc = tr_read_events(rd, st);
        OTF2_Reader_CloseEvtFiles(rd);
        if (rc != OTF2_SUCCESS || st->oom) {
            tr_fail(st, rc, "cannot read events", err, errlen);
            return -1;
        }
    }
    tr_read_group_properties(st, st->out);
    if (tr_read_properties(rd, st->out) != 0 || tr_finish(st) != 0) {
        st->oom = true;
        tr_fail(st, rc, "", err, errlen);
        return -1;
    }
    /* traceLength is the writer's own latest - earliest over every record;
     * fall back to the events we saw when it is missing. */
    uint64_t span = st->trace_length;
    if (span == 0 && st->any_event)
        span = st->last_ts - st->first_ts;
    st->out->duration_ns = tr_ticks_to_ns(span, st->timer_resolution);
    return 0;
}

/* Accept the trace directory or the anchor file itself; say precisely which
 * of the two is wrong because OTF2's own message for a bad path is vague. */
static char *tr_resolve_anchor(const char *path, char *err, size_t errlen)
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
        if (asprintf(&anchor, "%.*s/%s", (int)len, path, TR_ANCHOR_NAME) < 0) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        if (stat(anchor, &sb) != 0) {
            snprintf(err, errlen, "no %s in this directory", TR_ANCHOR_NAME);
            free(anchor);
            return NULL;
        }
    } else {
        anchor = strdup(path);
        if (!anchor) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "not an OTF2 archive (no regular anchor file)");
        free(anchor);
        return NULL;
    }
    char *real = realpath(anchor, NULL);
    if (real) {
        free(anchor);
        anchor = real;
    }
    return anchor;
}

static void tr_mpit_sources_free(struct tr_mpit_source_stat *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < s[i].n_types; k++)
            free(s[i].types[k].type);
        free(s[i].types);
        free(s[i].name);
    }
    free(s);
}

static void tr_state_free(struct tr_state *st)
{
    struct tr_string *strings = st->strings.v;
    for (size_t i = 0; i < st->strings.n; i++)
        free(strings[i].s);
    free(st->strings.v);
    free(st->regions.v);
    free(st->rgroups.v);
    free(st->rstats.v);
    free(st->attrs.v);
    struct tr_loc *locs = st->locations.v;
    for (size_t i = 0; i < st->locations.n; i++) {
        free(locs[i].stack);
        free(locs[i].ompstats);
    }
    free(st->locations.v);
    free(st->ompstats.v);
    free(st->groups.v);
    free(st->gprops.v);
    free(st->wins.v);
    free(st->members.v);
    struct tr_metric *metrics = st->metrics.v;
    for (size_t i = 0; i < st->metrics.n; i++)
        free(metrics[i].members);
    free(st->metrics.v);
    struct tr_dev *devs = st->devs.v;
    for (size_t i = 0; i < st->devs.n; i++)
        free(devs[i].s.name);
    free(st->devs.v);
    tr_mpit_sources_free(st->mpit.v, st->mpit.n);
}

static void tr_counts_free(struct tr_kernel_count *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

void tr_summary_free(struct tr_summary *s)
{
    tr_counts_free(s->link_maps, s->n_link_maps);
    tr_counts_free(s->stale_by_variable, s->n_stale_by_variable);
    tr_counts_free(s->kernels, s->n_kernels);
    for (size_t i = 0; i < s->n_regions; i++) {
        free(s->regions[i].name);
        free(s->regions[i].canonical);
    }
    free(s->regions);
    for (size_t i = 0; i < s->n_device_stats; i++)
        free(s->device_stats[i].name);
    free(s->device_stats);
    tr_mpit_sources_free(s->mpit_by_source, s->n_mpit_by_source);
    for (size_t i = 0; i < s->n_config; i++) {
        free(s->config[i].name);
        free(s->config[i].value);
    }
    free(s->config);
    for (size_t i = 0; i < s->n_omp_threads; i++) {
        free(s->omp_threads[i].location);
        free(s->omp_threads[i].process);
    }
    free(s->omp_threads);
    for (size_t i = 0; i < s->n_omp_parallel; i++) {
        free(s->omp_parallel[i].name);
        free(s->omp_parallel[i].threads);
    }
    free(s->omp_parallel);
    free(s->trace_path);
    memset(s, 0, sizeof *s);
}

int tr_summary_collect(const char *path, struct tr_summary *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *anchor = tr_resolve_anchor(path, err, errlen);
    if (!anchor)
        return -1;

    struct tr_state st = {
        .out = out,
        .attr_bytes = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_incomplete = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_variable = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_src_device = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_dst_device = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_mpit_dropped = OTF2_UNDEFINED_ATTRIBUTE,
        .attr_mpit_event_type = OTF2_UNDEFINED_ATTRIBUTE,
    };
    OTF2_ErrorCallback prev = OTF2_Error_RegisterCallback(tr_otf2_error, &st);
    int ret = -1;
    OTF2_Reader *rd = OTF2_Reader_Open(anchor);
    if (!rd) {
        snprintf(err, errlen, "not an OTF2 archive%s%s", st.otf2_msg[0] ? ": " : "",
                 st.otf2_msg);
    } else {
        ret = tr_read(rd, &st, err, errlen);
        OTF2_Reader_Close(rd);
    }
    OTF2_Error_RegisterCallback(prev, NULL);
    tr_state_free(&st);

    if (ret != 0) {
        free(anchor);
        tr_summary_free(out);
        return -1;
    }
    out->trace_path = anchor;
    return 0;
}
