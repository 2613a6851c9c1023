/* otf2_defs.c - the archive's definitions: strings, regions (made on demand
 * while the events are written) and attributes, shared by every journal
 * written into one archive. The global definition file is written last
 * (otf2_global_defs.c), because it needs each location's event count.
 * docs/trace-model.md is the contract. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/trace_vocab.h"
#include "writer/writer_internal.h"


void tr_defs_init(tr_defs *d, int by_content)
{
    memset(d, 0, sizeof *d);
    d->by_content = by_content;
}

void tr_defs_free(tr_defs *d)
{
    tr_strtab_free(&d->strings);
    free(d->regions);
    free(d->attrs);
    tr_u64map_free(&d->region_index);
    tr_u64map_free(&d->attr_index);
    memset(d, 0, sizeof *d);
}

uint32_t tr_defs_str(tr_defs *d, const char *s)
{
    uint32_t id = tr_strtab_id(&d->strings, s ? s : "");
    return id == UINT32_MAX ? 0 : id;
}

uint32_t tr_defs_string(tr_writer *w, const char *s) { return tr_defs_str(w->defs, s); }

/* FNV-1a over the fields; never 0 (the maps' reserved key). */
static uint64_t mix(const uint32_t *v, int n, uint64_t salt)
{
    uint64_t h = 1469598103934665603ull ^ salt;
    for (int i = 0; i < n; i++)
        h = (h ^ v[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* The id of a definition equal to @v in @index, or UINT32_MAX; *@slot gets
 * the hash under which a new one goes (a collision takes the next salt). */
static uint32_t find_equal(const tr_u64map *index, const uint32_t *v, int n, uint64_t *slot,
                           int (*equal)(const tr_defs *, uint32_t, const uint32_t *), const tr_defs *d)
{
    for (uint64_t salt = 0;; salt++) {
        uint64_t h = mix(v, n, salt), id;
        if (!tr_u64map_get(index, h, &id)) {
            *slot = h;
            return UINT32_MAX;
        }
        if (equal(d, (uint32_t)id, v))
            return (uint32_t)id;
    }
}

static void region_fields(const tr_region_def *r, uint32_t v[7])
{
    v[0] = r->name, v[1] = r->canonical, v[2] = r->description, v[3] = r->file, v[4] = r->line;
    v[5] = (uint32_t)r->role, v[6] = (uint32_t)r->paradigm;
}

static int region_equal(const tr_defs *d, uint32_t id, const uint32_t *v)
{
    uint32_t f[7];
    region_fields(&d->regions[id], f);
    return !memcmp(f, v, sizeof f);
}

static uint32_t region_add(tr_defs *d, const tr_region_def *def)
{
    uint32_t v[7];
    uint64_t slot = 0;
    region_fields(def, v);
    if (d->by_content) {
        uint32_t id = find_equal(&d->region_index, v, 7, &slot, region_equal, d);
        if (id != UINT32_MAX)
            return id;
    }
    if (d->nregions == d->capregions) {
        uint32_t cap = d->capregions ? 2 * d->capregions : 64;
        tr_region_def *r = realloc(d->regions, cap * sizeof *r);
        if (!r)
            return 0;
        d->regions = r;
        d->capregions = cap;
    }
    d->regions[d->nregions] = *def;
    if (d->by_content)
        tr_u64map_put(&d->region_index, slot, d->nregions);
    return d->nregions++;
}

uint32_t tr_defs_region_add(tr_defs *d, const tr_region_def *def) { return region_add(d, def); }

uint32_t tr_defs_region_keyed(tr_writer *w, uint64_t k, const tr_region_def *def)
{
    uint64_t v;
    if (tr_u64map_get(&w->region_keys, k, &v))
        return (uint32_t)v;
    uint32_t id = region_add(w->defs, def);
    tr_u64map_put(&w->region_keys, k, id);
    return id;
}

static int attr_equal(const tr_defs *d, uint32_t id, const uint32_t *v)
{
    const tr_attr_def *a = &d->attrs[id - TR_ATTR_COUNT];
    return a->name == v[0] && a->description == v[1] && (uint32_t)a->type == v[2];
}

uint32_t tr_defs_attribute(tr_defs *d, uint32_t name, uint32_t description, OTF2_Type type)
{
    uint32_t v[3] = {name, description, (uint32_t)type};
    uint64_t slot = 0;
    if (d->by_content) {
        uint32_t id = find_equal(&d->attr_index, v, 3, &slot, attr_equal, d);
        if (id != UINT32_MAX)
            return id;
    }
    if (d->nattrs == d->capattrs) {
        uint32_t cap = d->capattrs ? 2 * d->capattrs : 64;
        tr_attr_def *a = realloc(d->attrs, cap * sizeof *a);
        if (!a)
            return TR_ATTR_MPIT_READ_FAILED; /* a fixed one, never an undefined id */
        d->attrs = a;
        d->capattrs = cap;
    }
    d->attrs[d->nattrs] = (tr_attr_def){name, description, type};
    uint32_t id = TR_ATTR_COUNT + d->nattrs++;
    if (d->by_content)
        tr_u64map_put(&d->attr_index, slot, id);
    return id;
}

OTF2_Type tr_defs_attribute_type(const tr_defs *d, uint32_t id)
{
    if (id < TR_ATTR_COUNT)
        return tr_defs_attr_type((enum tr_attr)id);
    return d->attrs[id - TR_ATTR_COUNT].type;
}

uint32_t tr_defs_region(tr_writer *w, enum tr_region_key tag, uint64_t v, const char *name, const char *canonical,
                        const char *description, OTF2_RegionRole role, OTF2_Paradigm paradigm)
{
    return tr_defs_region_full(w, tr_region_key_make(tag, v), name, canonical, description, role, paradigm, 0, 0);
}

uint32_t tr_defs_region_full(tr_writer *w, uint64_t k, const char *name, const char *canonical,
                             const char *description, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                             const char *file, uint32_t line)
{
    uint64_t v;
    if (tr_u64map_get(&w->region_keys, k, &v))
        return (uint32_t)v;
    /* Strings are numbered in order of first use: intern in a fixed order. */
    tr_region_def def = {.line = line, .role = role, .paradigm = paradigm};
    def.name = tr_defs_string(w, name);
    def.canonical = tr_defs_string(w, canonical);
    def.description = tr_defs_string(w, description);
    def.file = tr_defs_string(w, file ? file : "");
    return tr_defs_region_keyed(w, k, &def);
}

static const struct {
    const char *name, *description;
    OTF2_Type type;
} attrs[TR_ATTR_COUNT] = {
    [TR_ATTR_DEVICE] = {"device", "OpenMP device number", OTF2_TYPE_INT32},
    [TR_ATTR_TARGET_ID] = {"target_id", "id of the enclosing target construct (0: none)", OTF2_TYPE_UINT64},
    [TR_ATTR_HOST_OP_ID] = {"host_op_id", "id of this operation, unique in the process", OTF2_TYPE_UINT64},
    [TR_ATTR_CODEPTR] = {"codeptr_ra", "return address of the runtime entry point", OTF2_TYPE_UINT64},
    [TR_ATTR_OPTYPE] = {"optype", "ompt_target_data_op_t value", OTF2_TYPE_UINT32},
    [TR_ATTR_SRC_ADDR] = {TRV_ATTR_SRC_ADDR, "source address", OTF2_TYPE_UINT64},
    [TR_ATTR_SRC_DEVICE] = {TRV_ATTR_SRC_DEVICE, "source device number", OTF2_TYPE_INT32},
    [TR_ATTR_DST_ADDR] = {TRV_ATTR_DST_ADDR, "destination address, as reported at the end", OTF2_TYPE_UINT64},
    [TR_ATTR_DST_DEVICE] = {TRV_ATTR_DST_DEVICE, "destination device number (-1: none)", OTF2_TYPE_INT32},
    [TR_ATTR_BYTES] = {TRV_ATTR_BYTES, "bytes of the operation", OTF2_TYPE_UINT64},
    [TR_ATTR_TEAMS] = {"requested_teams", "requested_num_teams of the kernel", OTF2_TYPE_UINT32},
    [TR_ATTR_MODULE_ID] = {"module_id", "device_load module id", OTF2_TYPE_UINT64},
    [TR_ATTR_HOST_ADDR] = {"host_addr", "host address (device_load: the image; link events: the mapped range)",
                           OTF2_TYPE_UINT64},
    [TR_ATTR_DEVICE_ADDR] = {"device_addr", "device address (device_load: the image; link events: the storage)",
                             OTF2_TYPE_UINT64},
    [TR_ATTR_FILE] = {"file", "device_load file name", OTF2_TYPE_STRING},
    [TR_ATTR_DEVICE_TYPE] = {"device_type", "device_initialize type string", OTF2_TYPE_STRING},
    [TR_ATTR_ADVICE] = {TRV_ATTR_ADVICE, "data mapping advice: the pattern this data op belongs to (duplicate_transfer, "
                                  "round_trip, repeated_allocation, unused_allocation, unused_transfer)",
                        OTF2_TYPE_STRING},
    [TR_ATTR_CONTENT_HASH] = {"content_hash", "XXH3 64-bit hash of the host bytes a transfer moved (TRACER_HASH)",
                              OTF2_TYPE_UINT64},
    [TR_ATTR_INCOMPLETE] = {TRV_ATTR_INCOMPLETE, "1: begin seen, end never came; closed by tracer. 2: the same, in a team the OpenMP runtime forked for itself (hidden helpers), not the program's", OTF2_TYPE_UINT8},
    [TR_ATTR_VALUE] = {"value", "tracer_mark() value", OTF2_TYPE_UINT64},
    [TR_ATTR_LOST] = {TRV_ATTR_LOST, "events dropped (TRACER_ON_FULL=drop) in this gap", OTF2_TYPE_UINT64},
    [TR_ATTR_VARIABLE] = {TRV_ATTR_VARIABLE, "the named global the host address belongs to", OTF2_TYPE_STRING},
    [TR_ATTR_REF_PTR] = {"ref_ptr", "device address of the link variable's reference pointer (0 unknown)",
                         OTF2_TYPE_UINT64},
    [TR_ATTR_REF_PTR_WRITTEN] = {"ref_ptr_written", "1: the runtime wrote the storage into the reference pointer",
                                 OTF2_TYPE_UINT8},
    [TR_ATTR_PARTIAL] = {"partial", "1: only part of the variable is mapped", OTF2_TYPE_UINT8},
    [TR_ATTR_REF_VALUE] = {"ref_value", "what the device reference pointer last received (0 never)",
                           OTF2_TYPE_UINT64},
    [TR_ATTR_MPIT_TICK] = {"mpit_source_tick", "the MPI_T event's timestamp in its source's ticks, as delivered",
                           OTF2_TYPE_UINT64},
    [TR_ATTR_MPIT_TIME_BASE] = {"mpit_time_base",
                                "how the event's time was found: \"source clock\" (mapped from the tick) or "
                                "\"host clock at callback\"",
                                OTF2_TYPE_STRING},
    [TR_ATTR_MPIT_CALLBACK_TIME] = {"mpit_callback_time", "when tracer's callback ran (trace time, ns)",
                                    OTF2_TYPE_UINT64},
    [TR_ATTR_MPIT_REGISTRATION] = {"mpit_registration", "tracer's MPI_T event registration id", OTF2_TYPE_UINT32},
    [TR_ATTR_MPIT_OBJECT] = {"mpit_object", "handle of the MPI object a bound event type is registered for",
                             OTF2_TYPE_UINT64},
    [TR_ATTR_MPIT_ORDER_VIOLATION] = {"mpit_order_violation",
                                      "1: an ordered source delivered this tick after a later one",
                                      OTF2_TYPE_UINT8},
    [TR_ATTR_MPIT_DROPPED] = {TRV_ATTR_MPIT_DROPPED, "MPI_T events the MPI library dropped (this report)",
                              OTF2_TYPE_UINT64},
    [TR_ATTR_MPIT_EVENT_TYPE] = {TRV_ATTR_MPIT_EVENT_TYPE, "MPI_T event type name", OTF2_TYPE_STRING},
    [TR_ATTR_MPIT_READ_FAILED] = {"mpit_read_failed", "1: an element could not be read; its value is 0",
                                  OTF2_TYPE_UINT8},
    [TR_ATTR_TASK_ID] = {"task_id", "tracer's id of an OpenMP explicit task, unique in the process",
                         OTF2_TYPE_UINT64},
    [TR_ATTR_OMP_KIND] = {"omp_kind", "the OMPT callback's kind, type, flags or status argument (record dev)",
                          OTF2_TYPE_INT32},
    [TR_ATTR_OMP_ID] = {"omp_id", "tracer's parallel or task id, or the mutex wait_id (record id)",
                        OTF2_TYPE_UINT64},
    [TR_ATTR_OMP_ARG] = {"omp_arg", "team size, count or hint of the OMPT callback (record u1)", OTF2_TYPE_UINT64},
    [TR_ATTR_OMP_ARG2] = {"omp_arg2", "thread number in the team, or mutex implementation (record u2)",
                          OTF2_TYPE_UINT64},
    [TR_ATTR_THREAD] = {"thread", "OS thread id of the thread whose events on this location begin with this Enter "
                        "(threads that ended give their location to later ones)", OTF2_TYPE_UINT32},
};

OTF2_Type tr_defs_attr_type(enum tr_attr a) { return attrs[a].type; }
const char *tr_defs_attr_name(enum tr_attr a) { return attrs[a].name; }
const char *tr_defs_attr_description(enum tr_attr a) { return attrs[a].description; }

void tr_defs_attr_string(tr_writer *w, OTF2_AttributeList *al, enum tr_attr a, const char *s)
{
    OTF2_AttributeValue val;
    val.stringRef = tr_defs_string(w, s);
    OTF2_AttributeList_AddAttribute(al, (OTF2_AttributeRef)a, OTF2_TYPE_STRING, val);
}

void tr_defs_attr(OTF2_AttributeList *al, enum tr_attr a, uint64_t v)
{
    OTF2_AttributeValue val;
    switch (attrs[a].type) {
    case OTF2_TYPE_INT32: val.int32 = (int32_t)v; break;
    case OTF2_TYPE_UINT32: val.uint32 = (uint32_t)v; break;
    case OTF2_TYPE_UINT8: val.uint8 = (uint8_t)v; break;
    default: val.uint64 = v; break;
    }
    OTF2_AttributeList_AddAttribute(al, (OTF2_AttributeRef)a, attrs[a].type, val);
}

void tr_defs_write_omp_metrics(tr_defs *d, OTF2_GlobalDefWriter *gw)
{
    static const struct {
        uint32_t id;
        const char *name, *description;
    } m[2] = {
        {TR_METRIC_OMP_WORK, TRV_METRIC_OMP_WORK,
         "ns this thread spent in OpenMP parallel and teams regions and explicit tasks, not waiting (running total)"},
        {TR_METRIC_OMP_WAIT, TRV_METRIC_OMP_WAIT,
         "ns this thread spent waiting in the OpenMP runtime: barriers, taskwait, taskgroup, locks, critical, "
         "ordered, atomic (running total)"},
    };
    uint32_t s_unit = tr_defs_str(d, "ns");
    uint32_t s_name[2], s_desc[2];
    for (int i = 0; i < 2; i++) {
        s_name[i] = tr_defs_str(d, m[i].name);
        s_desc[i] = tr_defs_str(d, m[i].description);
    }
    if (!gw)
        return;
    for (int i = 0; i < 2; i++) {
        OTF2_MetricMemberRef member = m[i].id;
        OTF2_GlobalDefWriter_WriteMetricMember(gw, member, s_name[i], s_desc[i], OTF2_METRIC_TYPE_OTHER,
                                               OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL,
                                               0, s_unit);
        OTF2_GlobalDefWriter_WriteMetricClass(gw, m[i].id, 1, &member, OTF2_METRIC_SYNCHRONOUS,
                                              OTF2_RECORDER_KIND_ABSTRACT);
    }
}
