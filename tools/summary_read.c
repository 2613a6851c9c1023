/* summary_read.c - count what a tracer OTF2 archive holds (tracer summary).
 *
 * Classification uses only canonical region names, region-independent RMA
 * events and the attributes named in docs/trace-model.md, never display
 * names, so that source locations in display names cannot change counts. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <otf2/otf2.h>

#include "commands.h"

#define TR_ANCHOR_NAME "traces.otf2"

/* Region classes beyond the target kinds (which use enum tr_target_kind). */
enum {
    TR_R_OTHER = -1,
    TR_R_ALLOC = TR_TARGET_KIND_COUNT,
    TR_R_DELETE,
    TR_R_KERNEL,
    TR_R_LINK_MAP,
    TR_R_STALE_LINK,
};

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

/* Every definition record below starts with its OTF2 id so one comparator
 * can sort and search all of them. */
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
};

/* A string-valued LocationGroupProperty: an MPI job's archive keeps each
 * rank's TRACER::MPIT::* on the rank's process group. */
struct tr_group_prop {
    uint32_t group;
    uint32_t name;
    uint32_t value;
};

struct tr_state {
    struct tr_summary *out;
    struct tr_vec strings;   /* struct tr_string */
    struct tr_vec regions;   /* struct tr_region */
    struct tr_vec attrs;     /* struct tr_attr */
    struct tr_vec locations; /* uint64_t */
    struct tr_vec groups;    /* struct tr_group */
    struct tr_vec gprops;    /* struct tr_group_prop */
    OTF2_AttributeRef attr_bytes;
    OTF2_AttributeRef attr_incomplete;
    OTF2_AttributeRef attr_variable;
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

static void tr_sort(struct tr_vec *vec, size_t size)
{
    if (vec->n > 1)
        qsort(vec->v, vec->n, size, tr_cmp_id);
}

static void *tr_find(const struct tr_vec *vec, size_t size, uint32_t id)
{
    return vec->n ? bsearch(&id, vec->v, vec->n, size, tr_cmp_id) : NULL;
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
    (void)role;
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
    (void)creator;
    struct tr_state *st = user;
    struct tr_group *g = tr_push(&st->groups, sizeof *g);
    if (!g) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    g->id = self;
    g->name = name;
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
    (void)group;
    struct tr_state *st = user;
    uint64_t *loc = tr_push(&st->locations, sizeof *loc);
    if (!loc) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    *loc = self;
    /* Strings precede locations in a global definition file. */
    const char *lname = tr_str_any(st, name);
    int mpit_source = lname && strncmp(lname, "MPI_T source ", 13) == 0;
    if (type == OTF2_LOCATION_TYPE_CPU_THREAD && !mpit_source)
        st->out->host_threads++;
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

/* Definitions may arrive in any order, so names are resolved only once all
 * global definitions are in. */
static int tr_resolve_defs(struct tr_state *st)
{
    tr_sort(&st->strings, sizeof(struct tr_string));
    tr_sort(&st->regions, sizeof(struct tr_region));
    tr_sort(&st->groups, sizeof(struct tr_group));

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
        if (r->cls == TR_R_KERNEL
            && tr_kernel_slot(st->out, name && name[0] ? name : canon, &r->kernel) != 0)
            return -1;
    }

    const struct tr_attr *attrs = st->attrs.v;
    for (size_t i = 0; i < st->attrs.n; i++) {
        const char *name = tr_str(st, attrs[i].name);
        if (!name)
            continue;
        if (strcmp(name, "bytes") == 0 && st->attr_bytes == OTF2_UNDEFINED_ATTRIBUTE)
            st->attr_bytes = attrs[i].id;
        else if (strcmp(name, "variable") == 0 && st->attr_variable == OTF2_UNDEFINED_ATTRIBUTE)
            st->attr_variable = attrs[i].id;
        else if (strcmp(name, "incomplete") == 0
                 && st->attr_incomplete == OTF2_UNDEFINED_ATTRIBUTE)
            st->attr_incomplete = attrs[i].id;
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

static void tr_saw_time(struct tr_state *st, OTF2_TimeStamp t)
{
    if (!st->any_event || t < st->first_ts)
        st->first_ts = t;
    if (!st->any_event || t > st->last_ts)
        st->last_ts = t;
    st->any_event = true;
}

static OTF2_CallbackCode tr_evt_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    (void)loc;
    struct tr_state *st = user;
    struct tr_summary *out = st->out;
    tr_saw_time(st, t);
    const struct tr_region *r = tr_find(&st->regions, sizeof *r, region);
    if (!r)
        return OTF2_CALLBACK_SUCCESS;
    uint64_t bytes = 0;
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
        break;
    case TR_R_LINK_MAP: {
        OTF2_StringRef ref;
        const char *var = NULL;
        if (attrs && st->attr_variable != OTF2_UNDEFINED_ATTRIBUTE &&
            OTF2_AttributeList_TestAttributeByID(attrs, st->attr_variable) &&
            OTF2_AttributeList_GetStringRef(attrs, st->attr_variable, &ref) == OTF2_SUCCESS)
            var = tr_str(st, ref);
        if (!var)
            var = "?";
        size_t i = 0;
        while (i < out->n_link_maps && strcmp(out->link_maps[i].name, var))
            i++;
        if (i == out->n_link_maps) {
            struct tr_kernel_count *m = realloc(out->link_maps, (i + 1) * sizeof *m);
            char *name = strdup(var);
            if (!m || !name) {
                free(name);
                if (m)
                    out->link_maps = m;
                break;
            }
            out->link_maps = m;
            m[i] = (struct tr_kernel_count){name, 0};
            out->n_link_maps++;
        }
        out->link_maps[i].count++;
        break;
    }
    default:
        out->target_regions[r->cls]++;
        break;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_evt_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    (void)loc;
    (void)region;
    struct tr_state *st = user;
    tr_saw_time(st, t);
    uint64_t flag = 0;
    if (tr_attr_u64(attrs, st->attr_incomplete, &flag) && flag == 1)
        st->out->incomplete++;
    return OTF2_CALLBACK_SUCCESS;
}

/* RmaPut is a transfer to the device, RmaGet one from it (trace model). */
static void tr_count_transfer(struct tr_state *st, OTF2_TimeStamp t, struct tr_count_bytes *cb, uint64_t bytes)
{
    tr_saw_time(st, t);
    cb->count++;
    cb->bytes += bytes;
}

static OTF2_CallbackCode tr_evt_put(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *attrs, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching)
{
    (void)loc, (void)attrs, (void)win, (void)remote, (void)matching;
    struct tr_state *st = user;
    tr_count_transfer(st, t, &st->out->transfers_to_device, bytes);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_evt_get(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *attrs, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching)
{
    (void)loc, (void)attrs, (void)win, (void)remote, (void)matching;
    struct tr_state *st = user;
    tr_count_transfer(st, t, &st->out->transfers_from_device, bytes);
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
    const uint64_t *locs = st->locations.v;
    OTF2_ErrorCode rc;
    for (size_t i = 0; i < st->locations.n; i++)
        if ((rc = OTF2_Reader_SelectLocation(rd, locs[i])) != OTF2_SUCCESS)
            return rc;
    bool defs_open = OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS;
    st->otf2_msg[0] = '\0';
    if ((rc = OTF2_Reader_OpenEvtFiles(rd)) != OTF2_SUCCESS)
        return rc;
    for (size_t i = 0; i < st->locations.n; i++) {
        if (defs_open) {
            /* A location without local definitions is normal. */
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, locs[i]);
            st->otf2_msg[0] = '\0'; /* keep the reason for a real failure */
            if (dr) {
                uint64_t n = 0;
                rc = OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
                OTF2_Reader_CloseDefReader(rd, dr);
                if (rc != OTF2_SUCCESS)
                    return rc;
            }
        }
        if (!OTF2_Reader_GetEvtReader(rd, locs[i]))
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

/* Transfers that TRACER_MIN_BYTES kept out of the event stream are only in
 * the archive's properties. Older traces have none: the totals stay 0. Only
 * names that exist are asked for, so OTF2 reports no "not found" error. */
static void tr_read_small_transfers(OTF2_Reader *rd, struct tr_summary *out)
{
    static const char *const names[2] = {"TRACER::FILTERED::SMALL_TRANSFERS_TO_DEVICE",
                                         "TRACER::FILTERED::SMALL_TRANSFERS_FROM_DEVICE"};
    struct tr_count_bytes *dest[2] = {&out->small_to_device, &out->small_from_device};
    uint32_t n = 0;
    char **have = NULL;
    if (OTF2_Reader_GetPropertyNames(rd, &n, &have) != OTF2_SUCCESS)
        return;
    for (uint32_t i = 0; have && i < n; i++) {
        char *end = NULL;
        if (strcmp(have[i], "TRACER::RUN::END") == 0 && OTF2_Reader_GetProperty(rd, have[i], &end) == OTF2_SUCCESS &&
            end)
            snprintf(out->run_end, sizeof out->run_end, "%s", end);
        free(end);
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
        if (rc != OTF2_SUCCESS) {
            tr_fail(st, rc, "cannot read events", err, errlen);
            return -1;
        }
    }
    tr_read_group_properties(st, st->out);
    tr_read_small_transfers(rd, st->out);
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

static void tr_state_free(struct tr_state *st)
{
    struct tr_string *strings = st->strings.v;
    for (size_t i = 0; i < st->strings.n; i++)
        free(strings[i].s);
    free(st->strings.v);
    free(st->regions.v);
    free(st->attrs.v);
    free(st->locations.v);
    free(st->groups.v);
    free(st->gprops.v);
}

void tr_summary_free(struct tr_summary *s)
{
    for (size_t i = 0; i < s->n_link_maps; i++)
        free(s->link_maps[i].name);
    free(s->link_maps);
    s->link_maps = NULL;
    s->n_link_maps = 0;
    for (size_t i = 0; i < s->n_kernels; i++)
        free(s->kernels[i].name);
    free(s->kernels);
    free(s->trace_path);
    memset(s, 0, sizeof *s);
}

static int tr_cmp_link_name(const void *a, const void *b)
{
    return strcmp(((const struct tr_kernel_count *)a)->name, ((const struct tr_kernel_count *)b)->name);
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
    if (out->n_link_maps)
        qsort(out->link_maps, out->n_link_maps, sizeof *out->link_maps, tr_cmp_link_name);
    return 0;
}

/* ---- output ------------------------------------------------------------------ */

