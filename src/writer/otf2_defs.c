/* otf2_defs.c - OTF2 definitions: strings, regions (made on demand while the
 * events are written) and the global definition file, written last because
 * it needs each location's event count. docs/trace-model.md is the contract. */
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer/writer_internal.h"

enum { KEY_TARGET = 1, KEY_DATA_OP, KEY_KERNEL, KEY_DEVICE_EVENT, KEY_USER, KEY_MARK, KEY_LINK };

static uint64_t key(int tag, uint64_t v) { return (uint64_t)tag << 58 | (v & ((1ull << 58) - 1)); }

uint32_t tr_defs_string(tr_writer *w, const char *s)
{
    uint32_t id = tr_strtab_id(&w->strings, s ? s : "");
    return id == UINT32_MAX ? 0 : id;
}

static uint32_t region_new(tr_writer *w, uint64_t k, const char *name, const char *canonical,
                           const char *description, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                           const char *file, uint32_t line)
{
    uint64_t v;
    if (tr_u64map_get(&w->region_keys, k, &v))
        return (uint32_t)v;
    if (w->nregions == w->capregions) {
        uint32_t cap = w->capregions ? 2 * w->capregions : 64;
        tr_region_def *r = realloc(w->regions, cap * sizeof *r);
        if (!r)
            return 0;
        w->regions = r;
        w->capregions = cap;
    }
    w->regions[w->nregions] = (tr_region_def){
        .name = tr_defs_string(w, name), .canonical = tr_defs_string(w, canonical),
        .description = tr_defs_string(w, description), .file = tr_defs_string(w, file ? file : ""),
        .line = line, .role = role, .paradigm = paradigm};
    tr_u64map_put(&w->region_keys, k, w->nregions);
    return w->nregions++;
}

static const char *target_kind_name(uint16_t kind)
{
    switch (kind) {
    case ompt_target: return "target";
    case ompt_target_enter_data: return "target enter data";
    case ompt_target_exit_data: return "target exit data";
    case ompt_target_update: return "target update";
    case ompt_target_nowait: return "target nowait";
    case ompt_target_enter_data_nowait: return "target enter data nowait";
    case ompt_target_exit_data_nowait: return "target exit data nowait";
    case ompt_target_update_nowait: return "target update nowait";
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
    const tr_jsymbol *sym = tr_journal_find_symbol(w->jd, codeptr);
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

static const char *optype_name(uint16_t t, OTF2_RegionRole *role)
{
    *role = OTF2_REGION_ROLE_ARTIFICIAL;
    switch (t) {
    case ompt_target_data_alloc: *role = OTF2_REGION_ROLE_ALLOCATE; return "alloc";
    case ompt_target_data_alloc_async: *role = OTF2_REGION_ROLE_ALLOCATE; return "alloc async";
    case ompt_target_data_transfer_to_device: *role = OTF2_REGION_ROLE_DATA_TRANSFER; return "transfer to device";
    case ompt_target_data_transfer_to_device_async:
        *role = OTF2_REGION_ROLE_DATA_TRANSFER;
        return "transfer to device async";
    case ompt_target_data_transfer_from_device:
        *role = OTF2_REGION_ROLE_DATA_TRANSFER;
        return "transfer from device";
    case ompt_target_data_transfer_from_device_async:
        *role = OTF2_REGION_ROLE_DATA_TRANSFER;
        return "transfer from device async";
    case ompt_target_data_delete: *role = OTF2_REGION_ROLE_DEALLOCATE; return "delete";
    case ompt_target_data_delete_async: *role = OTF2_REGION_ROLE_DEALLOCATE; return "delete async";
    case ompt_target_data_associate: return "associate";
    case ompt_target_data_disassociate: return "disassociate";
    default: return "data op (unknown type)";
    }
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
    const tr_jsymbol *js = tr_journal_find_symbol(w->jd, target_codeptr);
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
    return region_new(w, key(KEY_KERNEL, tr_defs_string(w, name)), name, "kernel",
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
    const char *name = tr_journal_user_name(w->jd, id & 0x7fffffffu);
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
    const char *desc = !strcmp(canonical, "stale link pointer")
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
    [TR_ATTR_SRC_DEVICE] = {"src_device", "source device number", OTF2_TYPE_INT32},
    [TR_ATTR_DST_ADDR] = {"dst_addr", "destination address, as reported at the end", OTF2_TYPE_UINT64},
    [TR_ATTR_DST_DEVICE] = {"dst_device", "destination device number (-1: none)", OTF2_TYPE_INT32},
    [TR_ATTR_BYTES] = {"bytes", "bytes of the operation", OTF2_TYPE_UINT64},
    [TR_ATTR_TEAMS] = {"requested_teams", "requested_num_teams of the kernel", OTF2_TYPE_UINT32},
    [TR_ATTR_MODULE_ID] = {"module_id", "device_load module id", OTF2_TYPE_UINT64},
    [TR_ATTR_HOST_ADDR] = {"host_addr", "host address (device_load: the image; link events: the mapped range)",
                           OTF2_TYPE_UINT64},
    [TR_ATTR_DEVICE_ADDR] = {"device_addr", "device address (device_load: the image; link events: the storage)",
                             OTF2_TYPE_UINT64},
    [TR_ATTR_FILE] = {"file", "device_load file name", OTF2_TYPE_STRING},
    [TR_ATTR_DEVICE_TYPE] = {"device_type", "device_initialize type string", OTF2_TYPE_STRING},
    [TR_ATTR_INCOMPLETE] = {"incomplete", "1: begin seen, end never came; closed by tracer", OTF2_TYPE_UINT8},
    [TR_ATTR_VALUE] = {"value", "tracer_mark() value", OTF2_TYPE_UINT64},
    [TR_ATTR_LOST] = {"lost", "events dropped (TRACER_ON_FULL=drop) in this gap", OTF2_TYPE_UINT64},
    [TR_ATTR_VARIABLE] = {"variable", "the named global the host address belongs to", OTF2_TYPE_STRING},
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
    [TR_ATTR_MPIT_DROPPED] = {"mpit_dropped", "MPI_T events the MPI library dropped (this report)",
                              OTF2_TYPE_UINT64},
    [TR_ATTR_MPIT_EVENT_TYPE] = {"mpit_event_type", "MPI_T event type name", OTF2_TYPE_STRING},
    [TR_ATTR_MPIT_READ_FAILED] = {"mpit_read_failed", "1: an element could not be read; its value is 0",
                                  OTF2_TYPE_UINT8},
};

OTF2_Type tr_defs_attr_type(enum tr_attr a) { return attrs[a].type; }

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

void tr_defs_write_global(tr_writer *w, OTF2_GlobalDefWriter *gw, const uint64_t *events_per_location,
                          uint64_t nlocations, const char *hostname)
{
    /* Every string must exist before the definitions below are emitted, so
     * intern them all first, then write strings, then the rest. */
    char buf[256];
    uint32_t s_machine = tr_defs_string(w, "machine"), s_node_class = tr_defs_string(w, "node");
    uint32_t s_host = tr_defs_string(w, hostname);
    snprintf(buf, sizeof buf, "process %llu", (unsigned long long)w->jd->pid);
    uint32_t s_process = tr_defs_string(w, buf);
    uint32_t *s_loc = calloc(nlocations ? nlocations : 1, sizeof *s_loc);
    uint32_t *s_devgroup = calloc(w->ndevices ? w->ndevices : 1, sizeof *s_devgroup);
    uint32_t *s_comm = calloc(w->ndevices ? w->ndevices : 1, sizeof *s_comm);
    uint32_t *s_win = calloc(w->ndevices ? w->ndevices : 1, sizeof *s_win);
    if (!s_loc || !s_devgroup || !s_comm || !s_win)
        goto out;
    for (size_t i = 0; i < w->data.nstreams; i++) {
        snprintf(buf, sizeof buf, "host thread %zu", i);
        s_loc[i] = tr_defs_string(w, buf);
    }
    for (size_t d = 0; d < w->ndevices; d++) {
        tr_device *dev = &w->devices[d];
        for (uint32_t l = 0; l < dev->nlanes; l++) {
            if (l == 0)
                snprintf(buf, sizeof buf, "device %d stream", dev->num);
            else
                snprintf(buf, sizeof buf, "device %d stream %u", dev->num, l);
            s_loc[dev->first_location + l] = tr_defs_string(w, buf);
        }
        snprintf(buf, sizeof buf, "device %d", dev->num);
        s_devgroup[d] = tr_defs_string(w, buf);
        snprintf(buf, sizeof buf, "host<->device %d", dev->num);
        s_comm[d] = tr_defs_string(w, buf);
        snprintf(buf, sizeof buf, "device %d memory", dev->num);
        s_win[d] = tr_defs_string(w, buf);
    }
    uint32_t s_attr[TR_ATTR_COUNT][2];
    for (int a = 0; a < TR_ATTR_COUNT; a++) {
        s_attr[a][0] = tr_defs_string(w, attrs[a].name);
        s_attr[a][1] = tr_defs_string(w, attrs[a].description);
    }
    uint32_t s_metric = tr_defs_string(w, "device_memory_in_use");
    uint32_t s_metric_desc = tr_defs_string(w, "bytes allocated by the OpenMP runtime on the device, not yet deleted");
    uint32_t s_bytes = tr_defs_string(w, "bytes");
    uint32_t s_all = tr_defs_string(w, "all locations");
    tr_defs_write_mpit(w, 0, 0, 0); /* interns its strings */

    for (uint32_t i = 0; i < w->strings.count; i++)
        OTF2_GlobalDefWriter_WriteString(gw, i, w->strings.s[i]);

    struct timespec rt;
    (void)rt;
    uint64_t realtime = (uint64_t)((int64_t)w->t_min + w->jd->realtime_offset);
    OTF2_GlobalDefWriter_WriteClockProperties(gw, 1000000000u, w->t_min, w->t_max - w->t_min, realtime);

    OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, s_machine, s_machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 1, s_host, s_node_class, 0);
    OTF2_GlobalDefWriter_WriteLocationGroup(gw, 0, s_process, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    for (size_t d = 0; d < w->ndevices; d++)
        OTF2_GlobalDefWriter_WriteLocationGroup(gw, (OTF2_LocationGroupRef)(1 + d), s_devgroup[d],
                                                OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, 1, 0);
    for (size_t i = 0; i < w->data.nstreams; i++)
        OTF2_GlobalDefWriter_WriteLocation(gw, i, s_loc[i], OTF2_LOCATION_TYPE_CPU_THREAD,
                                           events_per_location[i], 0);
    for (size_t d = 0; d < w->ndevices; d++) {
        tr_device *dev = &w->devices[d];
        for (uint32_t l = 0; l < dev->nlanes; l++) {
            uint64_t id = dev->first_location + l;
            OTF2_GlobalDefWriter_WriteLocation(gw, id, s_loc[id], OTF2_LOCATION_TYPE_ACCELERATOR_STREAM,
                                               events_per_location[id], (OTF2_LocationGroupRef)(1 + d));
        }
    }
    tr_defs_write_mpit(w, gw, TR_MPIT_DEFS_LOCATIONS, events_per_location);

    for (uint32_t i = 0; i < w->nregions; i++) {
        tr_region_def *r = &w->regions[i];
        OTF2_GlobalDefWriter_WriteRegion(gw, i, r->name, r->canonical, r->description, r->role, r->paradigm,
                                         OTF2_REGION_FLAG_NONE, r->file, r->line, r->line);
    }
    for (int a = 0; a < TR_ATTR_COUNT; a++)
        OTF2_GlobalDefWriter_WriteAttribute(gw, (OTF2_AttributeRef)a, s_attr[a][0], s_attr[a][1], attrs[a].type);

    OTF2_MetricMemberRef member = 0;
    OTF2_GlobalDefWriter_WriteMetricMember(gw, 0, s_metric, s_metric_desc, OTF2_METRIC_TYPE_OTHER,
                                           OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                           s_bytes);
    OTF2_GlobalDefWriter_WriteMetricClass(gw, 0, 1, &member, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                          OTF2_RECORDER_KIND_ABSTRACT);
    tr_defs_write_mpit(w, gw, TR_MPIT_DEFS_REST, events_per_location);

    /* Communicators for the RMA windows: group 0 lists every location, group
     * 1 + d the host threads plus device d's first stream (its last member). */
    uint64_t *members = malloc((nlocations ? nlocations : 1) * sizeof *members);
    if (members) {
        for (uint64_t i = 0; i < nlocations; i++)
            members[i] = i;
        OTF2_GlobalDefWriter_WriteGroup(gw, 0, s_all, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP,
                                        OTF2_GROUP_FLAG_NONE, (uint32_t)nlocations, members);
        for (size_t d = 0; d < w->ndevices; d++) {
            uint32_t n = (uint32_t)w->data.nstreams;
            for (uint32_t i = 0; i < n; i++)
                members[i] = i;
            members[n] = w->devices[d].first_location;
            OTF2_GlobalDefWriter_WriteGroup(gw, (OTF2_GroupRef)(1 + d), s_comm[d], OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, n + 1, members);
            OTF2_GlobalDefWriter_WriteComm(gw, (OTF2_CommRef)d, s_comm[d], (OTF2_GroupRef)(1 + d),
                                           OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
            OTF2_GlobalDefWriter_WriteRmaWin(gw, (OTF2_RmaWinRef)d, s_win[d], (OTF2_CommRef)d,
                                             OTF2_RMA_WIN_FLAG_NONE);
        }
        free(members);
    }
out:
    free(s_loc);
    free(s_devgroup);
    free(s_comm);
    free(s_win);
}
