/* otf2_defs.c - the archive's definitions: strings, regions (made on demand
 * while the events are written) and attributes, shared by every journal
 * written into one archive. The global definition file is written last
 * (otf2_global_defs.c), because it needs each location's event count.
 * docs/trace-model.md is the contract. */
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/trace_vocab.h"
#include "writer/writer_internal.h"

static uint64_t key(int tag, uint64_t v) { return (uint64_t)tag << 58 | (v & ((1ull << 58) - 1)); }

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

static uint32_t region_new(tr_writer *w, uint64_t k, const char *name, const char *canonical,
                           const char *description, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                           const char *file, uint32_t line);

uint32_t tr_defs_region(tr_writer *w, enum tr_region_key tag, uint64_t v, const char *name, const char *canonical,
                        const char *description, OTF2_RegionRole role, OTF2_Paradigm paradigm)
{
    return region_new(w, key(tag, v), name, canonical, description, role, paradigm, 0, 0);
}

static uint32_t region_new(tr_writer *w, uint64_t k, const char *name, const char *canonical,
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

static const char *target_kind_name(uint16_t kind)
{
    switch (kind) {
    case ompt_target: return TRV_REGION_TARGET;
    case ompt_target_enter_data: return TRV_REGION_TARGET_ENTER_DATA;
    case ompt_target_exit_data: return TRV_REGION_TARGET_EXIT_DATA;
    case ompt_target_update: return TRV_REGION_TARGET_UPDATE;
    case ompt_target_nowait: return TRV_REGION_TARGET_NOWAIT;
    case ompt_target_enter_data_nowait: return TRV_REGION_TARGET_ENTER_DATA_NOWAIT;
    case ompt_target_exit_data_nowait: return TRV_REGION_TARGET_EXIT_DATA_NOWAIT;
    case ompt_target_update_nowait: return TRV_REGION_TARGET_UPDATE_NOWAIT;
    default: return "target (unknown kind)";
    }
}

static const char *basename_of(const char *path)
{
    const char *s = path ? strrchr(path, '/') : 0;
    return s ? s + 1 : path;
}

uint32_t tr_defs_region_target(tr_writer *w, uint16_t kind, uint64_t codeptr)
{
    uint64_t k = key(KEY_TARGET, codeptr << 5 | (kind & 31));
    uint64_t v;
    if (tr_u64map_get(&w->region_keys, k, &v))
        return (uint32_t)v;
    const char *canonical = target_kind_name(kind);
    const tr_jsymbol *sym = tr_journal_find_symbol(w->m.jd, codeptr);
    struct {
        const char *function, *file;
        int line;
    } loc = {sym ? sym->function : 0, sym ? sym->file : 0, sym ? sym->line : 0};
    /* Optimised code often gives the runtime call line 0, or the line of a
     * neighbouring statement; the kernel symbol names the construct's own. */
    if (sym && sym->kernel_line && (kind == ompt_target || kind == ompt_target_nowait))
        loc.line = sym->kernel_line;
    char name[512];
    if (loc.file && loc.line)
        snprintf(name, sizeof name, "%s (%s:%d)", canonical, basename_of(loc.file), loc.line);
    else if (loc.function)
        snprintf(name, sizeof name, "%s (%s)", canonical, loc.function);
    else
        snprintf(name, sizeof name, "%s", canonical);
    return region_new(w, k, name, canonical, "OpenMP target construct", OTF2_REGION_ROLE_WRAPPER,
                      OTF2_PARADIGM_OPENMP, loc.file, (uint32_t)loc.line);
}

static const char UNKNOWN_DATA_OP[] = "data op (unknown type)";

static const char *optype_name(uint16_t t, OTF2_RegionRole *role)
{
    *role = OTF2_REGION_ROLE_ARTIFICIAL;
    switch (t) {
    case ompt_target_data_alloc: *role = OTF2_REGION_ROLE_ALLOCATE; return TRV_REGION_ALLOC;
    case ompt_target_data_alloc_async: *role = OTF2_REGION_ROLE_ALLOCATE; return TRV_REGION_ALLOC_ASYNC;
    case ompt_target_data_transfer_to_device: *role = OTF2_REGION_ROLE_DATA_TRANSFER; return TRV_REGION_TO_DEVICE;
    case ompt_target_data_transfer_to_device_async:
        *role = OTF2_REGION_ROLE_DATA_TRANSFER;
        return TRV_REGION_TO_DEVICE_ASYNC;
    case ompt_target_data_transfer_from_device:
        *role = OTF2_REGION_ROLE_DATA_TRANSFER;
        return TRV_REGION_FROM_DEVICE;
    case ompt_target_data_transfer_from_device_async:
        *role = OTF2_REGION_ROLE_DATA_TRANSFER;
        return TRV_REGION_FROM_DEVICE_ASYNC;
    case ompt_target_data_delete: *role = OTF2_REGION_ROLE_DEALLOCATE; return TRV_REGION_DELETE;
    case ompt_target_data_delete_async: *role = OTF2_REGION_ROLE_DEALLOCATE; return TRV_REGION_DELETE_ASYNC;
    case ompt_target_data_associate: return "associate";
    case ompt_target_data_disassociate: return "disassociate";
    default: return UNKNOWN_DATA_OP;
    }
}

int tr_defs_data_op_named(uint16_t optype)
{
    OTF2_RegionRole role;
    return optype_name(optype, &role) != UNKNOWN_DATA_OP;
}

uint32_t tr_defs_region_data_op(tr_writer *w, uint16_t optype)
{
    OTF2_RegionRole role;
    const char *name = optype_name(optype, &role);
    return region_new(w, key(KEY_DATA_OP, optype), name, name, "OpenMP target data operation", role,
                      OTF2_PARADIGM_OPENMP, 0, 0);
}

uint32_t tr_defs_region_kernel(tr_writer *w, uint64_t target_codeptr)
{
    const tr_jsymbol *js = tr_journal_find_symbol(w->m.jd, target_codeptr);
    const char *sym = js ? js->kernel : 0;
    struct {
        const char *file;
        int line;
    } loc = {js ? js->file : 0, js ? (js->kernel_line ? js->kernel_line : js->line) : 0};
    char name[1024];
    if (sym)
        snprintf(name, sizeof name, "%s", sym);
    else if (loc.file && loc.line)
        snprintf(name, sizeof name, "kernel (%s:%d)", basename_of(loc.file), loc.line);
    else
        snprintf(name, sizeof name, "kernel");
    return region_new(w, key(KEY_KERNEL, tr_defs_string(w, name)), name, TRV_REGION_KERNEL,
                      "OpenMP target region executing on a device", OTF2_REGION_ROLE_FUNCTION,
                      OTF2_PARADIGM_OPENMP, loc.file, (uint32_t)loc.line);
}

uint32_t tr_defs_region_device_event(tr_writer *w, uint8_t rec_type)
{
    const char *name = rec_type == TR_REC_DEVICE_INIT   ? "device initialize"
                       : rec_type == TR_REC_DEVICE_FINI ? "device finalize"
                       : rec_type == TR_REC_DEVICE_LOAD ? "device load"
                                                        : "device unload";
    return region_new(w, key(KEY_DEVICE_EVENT, rec_type), name, name, "OpenMP device event",
                      OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_OPENMP, 0, 0);
}

uint32_t tr_defs_region_user(tr_writer *w, uint32_t id, int mark)
{
    const char *name = tr_journal_user_name(w->m.jd, id & 0x7fffffffu);
    char unknown[64];
    if (!name) {
        snprintf(unknown, sizeof unknown, "user region %u", id);
        name = unknown;
    }
    return region_new(w, key(mark ? KEY_MARK : KEY_USER, id), name, name,
                      mark ? "tracer_mark() instant" : "tracer_region_begin/end()",
                      mark ? OTF2_REGION_ROLE_ARTIFICIAL : OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                      0, 0);
}

uint32_t tr_defs_region_link(tr_writer *w, const char *canonical)
{
    const char *desc = !strcmp(canonical, TRV_REGION_STALE_LINK)
                           ? "a link variable's device storage is not what its device reference pointer holds"
                           : "declare target link variable mapped to, or unmapped from, device storage";
    return region_new(w, key(KEY_LINK, canonical[5] == 'm' ? 1 : canonical[5] == 'u' ? 2 : 3), canonical, canonical,
                      desc, OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_OPENMP, 0, 0);
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
    [TR_ATTR_SRC_ADDR] = {"src_addr", "source address", OTF2_TYPE_UINT64},
    [TR_ATTR_SRC_DEVICE] = {TRV_ATTR_SRC_DEVICE, "source device number", OTF2_TYPE_INT32},
    [TR_ATTR_DST_ADDR] = {"dst_addr", "destination address, as reported at the end", OTF2_TYPE_UINT64},
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
    [TR_ATTR_INCOMPLETE] = {TRV_ATTR_INCOMPLETE, "1: begin seen, end never came; closed by tracer. 2: the same, in a team the OpenMP runtime forked for itself (hidden helpers), not the program's", OTF2_TYPE_UINT8},
    [TR_ATTR_VALUE] = {"value", "tracer_mark() value", OTF2_TYPE_UINT64},
    [TR_ATTR_LOST] = {"lost", "events dropped (TRACER_ON_FULL=drop) in this gap", OTF2_TYPE_UINT64},
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
