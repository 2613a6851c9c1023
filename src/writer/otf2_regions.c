/* otf2_regions.c - the model's regions (model_event.h: a tag and a key)
 * as OTF2 regions: their names, roles and source locations, defined on
 * first use. docs/trace-model.md ("Regions", "Host OpenMP states") is the
 * contract. */
#include <omp-tools.h>
#include <stdio.h>
#include <string.h>

#include "common/offload_entry.h"
#include "common/trace_vocab.h"
#include "core/record.h"
#include "writer/demangle.h"
#include "writer/writer_internal.h"

static const char *basename_of(const char *path)
{
    const char *s = path ? strrchr(path, '/') : 0;
    return s ? s + 1 : path;
}

/* A construct's region named after its function, when no file:line is
 * known: "<canonical> (<function as written>)". A demangled function's
 * linkage name goes to the description (@desc, from @what). */
static void name_by_function(char *name, size_t len, char *desc, size_t desc_len, const char *canonical,
                             const char *function, const char *what)
{
    char plain[400];
    bool demangled = tr_demangle(function, strlen(function), plain, sizeof plain);
    snprintf(name, len, "%s (%s)", canonical, plain);
    if (demangled)
        snprintf(desc, desc_len, "%s; in %s", what, function);
}

/* ---- offload ------------------------------------------------------------ */

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

/* LLVM 19 reports a construct with nowait under the plain kind; its call
 * is then in the task entry Clang made for it, which only deferred target
 * tasks have (common/offload_entry.h). */
static uint16_t nowait_kind(uint16_t kind, const tr_jsymbol *sym)
{
    if (!sym || !sym->function ||
        strncmp(sym->function, TR_OMP_TASK_ENTRY_PREFIX, strlen(TR_OMP_TASK_ENTRY_PREFIX)))
        return kind;
    switch (kind) {
    case ompt_target: return ompt_target_nowait;
    case ompt_target_enter_data: return ompt_target_enter_data_nowait;
    case ompt_target_exit_data: return ompt_target_exit_data_nowait;
    case ompt_target_update: return ompt_target_update_nowait;
    default: return kind;
    }
}

/* The function a construct's name gives when no file:line is known: the
 * one the user wrote. A nowait construct's call is in a task entry of the
 * compiler's; a target's kernel entry symbol names the user's function and
 * the construct's line, and for the others the function that creates the
 * task does. */
static void user_function(const tr_jsymbol *sym, uint16_t kind, char *out, size_t len, int *line)
{
    const char *f = sym->function, *entry_fn;
    size_t entry_len;
    int entry_line;
    out[0] = 0;
    if (f && strncmp(f, TR_OMP_TASK_ENTRY_PREFIX, strlen(TR_OMP_TASK_ENTRY_PREFIX)) == 0) {
        if (kind == ompt_target_nowait && sym->kernel &&
            tr_offload_entry_parse(sym->kernel, &entry_fn, &entry_len, &entry_line) == 0) {
            tr_demangle(entry_fn, entry_len, out, len);
            *line = entry_line;
        } else if (sym->task_of) {
            tr_demangle(sym->task_of, strlen(sym->task_of), out, len);
        }
        return;
    }
    if (f)
        tr_demangle(f, strlen(f), out, len);
}

static uint32_t target(tr_writer *w, uint64_t k)
{
    uint64_t v = tr_region_key_value(k);
    uint64_t codeptr = v >> 5;
    const tr_jsymbol *sym = tr_journal_find_symbol(w->m.jd, codeptr);
    uint16_t kind = nowait_kind((uint16_t)(v & 31), sym);
    const char *canonical = target_kind_name(kind);
    struct {
        const char *function, *file;
        int line;
    } loc = {sym ? sym->function : 0, sym ? sym->file : 0, sym ? sym->line : 0};
    /* Optimised code often gives the runtime call line 0, or the line of a
     * neighbouring statement; the kernel symbol names the construct's own. */
    if (sym && sym->kernel_line && (kind == ompt_target || kind == ompt_target_nowait))
        loc.line = sym->kernel_line;
    char name[512], desc[1200] = "OpenMP target construct", fn[400] = "";
    int fn_line = 0;
    if (sym)
        user_function(sym, kind, fn, sizeof fn, &fn_line);
    if (loc.file && loc.line)
        snprintf(name, sizeof name, "%s (%s:%d)", canonical, basename_of(loc.file), loc.line);
    else if (fn[0] && fn_line)
        snprintf(name, sizeof name, "%s (%s, line %d)", canonical, fn, fn_line);
    else if (fn[0])
        snprintf(name, sizeof name, "%s (%s)", canonical, fn);
    else
        snprintf(name, sizeof name, "%s", canonical);
    if (loc.function && strcmp(fn, loc.function))
        snprintf(desc, sizeof desc, "OpenMP target construct; in %s", loc.function);
    return tr_defs_region_full(w, k, name, canonical, desc, OTF2_REGION_ROLE_WRAPPER, OTF2_PARADIGM_OPENMP,
                               loc.file, (uint32_t)loc.line);
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

static uint32_t data_op(tr_writer *w, uint64_t k)
{
    OTF2_RegionRole role;
    const char *name = optype_name((uint16_t)tr_region_key_value(k), &role);
    return tr_defs_region_full(w, k, name, name, "OpenMP target data operation", role, OTF2_PARADIGM_OPENMP, 0, 0);
}

/* A kernel is named after the function that holds its construct, as the
 * user wrote it, and the construct's place: "kernel
 * OMPStream<double>::add() (stream.cpp:87)", or "(line 87)" without -g.
 * Its entry symbol (__omp_offloading_<dev>_<file>_<function>_l<line>) is
 * the description, and identifies it: constructs whose kernels share an
 * entry share a region. Without an entry symbol, "kernel (file:line)". */
static uint32_t kernel(tr_writer *w, uint64_t k)
{
    const tr_jsymbol *js = tr_journal_find_symbol(w->m.jd, tr_region_key_value(k));
    const char *sym = js ? js->kernel : 0;
    struct {
        const char *file;
        int line;
    } loc = {js ? js->file : 0, js ? (js->kernel_line ? js->kernel_line : js->line) : 0};
    char name[1024], desc[1200] = "OpenMP target region executing on a device";
    const char *function;
    size_t function_len;
    int entry_line;
    if (sym && tr_offload_entry_parse(sym, &function, &function_len, &entry_line) == 0) {
        char plain[700];
        tr_demangle(function, function_len, plain, sizeof plain);
        if (loc.file && entry_line)
            snprintf(name, sizeof name, "kernel %s (%s:%d)", plain, basename_of(loc.file), entry_line);
        else
            snprintf(name, sizeof name, "kernel %s (line %d)", plain, entry_line);
    } else if (sym) {
        snprintf(name, sizeof name, "%s", sym);
    } else if (loc.file && loc.line) {
        snprintf(name, sizeof name, "kernel (%s:%d)", basename_of(loc.file), loc.line);
    } else {
        snprintf(name, sizeof name, "kernel");
    }
    if (sym)
        snprintf(desc, sizeof desc, "OpenMP target region executing on a device; entry %s", sym);
    uint64_t by_name = tr_region_key_make(KEY_KERNEL, tr_defs_string(w, sym ? sym : name)), id;
    if (tr_u64map_get(&w->kernel_names, by_name, &id)) {
        tr_u64map_put(&w->region_keys, k, id);
        return (uint32_t)id;
    }
    uint32_t region = tr_defs_region_full(w, k, name, TRV_REGION_KERNEL, desc, OTF2_REGION_ROLE_FUNCTION,
                                          OTF2_PARADIGM_OPENMP, loc.file, (uint32_t)loc.line);
    tr_u64map_put(&w->kernel_names, by_name, region);
    return region;
}

static uint32_t device_event(tr_writer *w, uint64_t k)
{
    uint64_t t = tr_region_key_value(k);
    const char *name = t == TR_REC_DEVICE_INIT   ? "device initialize"
                       : t == TR_REC_DEVICE_FINI ? "device finalize"
                       : t == TR_REC_DEVICE_LOAD ? "device load"
                                                 : "device unload";
    return tr_defs_region_full(w, k, name, name, "OpenMP device event", OTF2_REGION_ROLE_ARTIFICIAL,
                               OTF2_PARADIGM_OPENMP, 0, 0);
}

static uint32_t user(tr_writer *w, uint64_t k, int mark)
{
    uint32_t id = (uint32_t)tr_region_key_value(k);
    const char *name = tr_journal_user_name(w->m.jd, id & 0x7fffffffu);
    char unknown[64];
    if (!name) {
        snprintf(unknown, sizeof unknown, "user region %u", id);
        name = unknown;
    }
    return tr_defs_region_full(w, k, name, name, mark ? "tracer_mark() instant" : "tracer_region_begin/end()",
                               mark ? OTF2_REGION_ROLE_ARTIFICIAL : OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, 0,
                               0);
}

static uint32_t link(tr_writer *w, uint64_t k)
{
    uint64_t what = tr_region_key_value(k);
    const char *name = what == TR_LINK_MAP     ? TRV_REGION_LINK_MAP
                       : what == TR_LINK_UNMAP ? "link unmap"
                                               : TRV_REGION_STALE_LINK;
    const char *desc = what == TR_LINK_STALE
                           ? "a link variable's device storage is not what its device reference pointer holds"
                           : "declare target link variable mapped to, or unmapped from, device storage";
    return tr_defs_region_full(w, k, name, name, desc, OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_OPENMP, 0, 0);
}

static uint32_t mpi_call(tr_writer *w, uint64_t k)
{
    uint64_t call = tr_region_key_value(k);
    const char *name = call == TR_MPI_INIT               ? "MPI_Init"
                       : call == TR_MPI_INIT_THREAD      ? "MPI_Init_thread"
                       : call == TR_MPI_FINALIZE         ? "MPI_Finalize"
                       : call == TR_MPI_SESSION_INIT     ? "MPI_Session_init"
                       : call == TR_MPI_SESSION_FINALIZE ? "MPI_Session_finalize"
                                                         : "MPI call";
    return tr_defs_region_full(w, k, name, name, "MPI call (interposed by tracer)", OTF2_REGION_ROLE_FUNCTION,
                               OTF2_PARADIGM_MPI, 0, 0);
}

/* ---- host OpenMP -------------------------------------------------------- */

static const struct {
    const char *name, *description;
    OTF2_RegionRole role;
} constructs[TR_C_COUNT] = {
    [TR_C_PARALLEL] = {TRV_REGION_PARALLEL, "OpenMP parallel region (a team thread's implicit task)",
                       OTF2_REGION_ROLE_PARALLEL},
    [TR_C_LOOP] = {"loop", "OpenMP worksharing loop", OTF2_REGION_ROLE_LOOP},
    [TR_C_SECTIONS] = {"sections", "OpenMP sections", OTF2_REGION_ROLE_SECTIONS},
    [TR_C_SINGLE] = {"single", "OpenMP single", OTF2_REGION_ROLE_SINGLE},
    [TR_C_WORKSHARE] = {"workshare", "OpenMP workshare", OTF2_REGION_ROLE_WORKSHARE},
    [TR_C_DISTRIBUTE] = {"distribute", "OpenMP distribute", OTF2_REGION_ROLE_LOOP},
    [TR_C_TASKLOOP] = {"taskloop", "OpenMP taskloop", OTF2_REGION_ROLE_LOOP},
    [TR_C_SCOPE] = {"scope", "OpenMP scope", OTF2_REGION_ROLE_CODE},
    [TR_C_WORK] = {"work", "OpenMP work construct of a kind tracer does not know", OTF2_REGION_ROLE_CODE},
    [TR_C_MASKED] = {"masked", "OpenMP masked (master)", OTF2_REGION_ROLE_MASTER},
    [TR_C_CRITICAL] = {"critical", "OpenMP critical section, held", OTF2_REGION_ROLE_CRITICAL},
    [TR_C_ORDERED] = {"ordered", "OpenMP ordered section, held", OTF2_REGION_ROLE_ORDERED},
    [TR_C_TASK] = {"task", "OpenMP explicit task, executing", OTF2_REGION_ROLE_TASK},
    [TR_C_TEAMS] = {TRV_REGION_TEAMS, "OpenMP teams region on the host (a league's initial task)",
                    OTF2_REGION_ROLE_PARALLEL},
};

static const struct {
    const char *name, *description;
    OTF2_RegionRole role;
} states[TR_S_COUNT] = {
    [TR_S_IMPLICIT_BARRIER] = {TRV_STATE_IMPLICIT_BARRIER, "waiting in an implicit barrier",
                               OTF2_REGION_ROLE_IMPLICIT_BARRIER},
    [TR_S_EXPLICIT_BARRIER] = {TRV_STATE_EXPLICIT_BARRIER, "waiting in an explicit barrier",
                               OTF2_REGION_ROLE_BARRIER},
    [TR_S_TASKWAIT] = {TRV_STATE_TASKWAIT, "waiting in a taskwait", OTF2_REGION_ROLE_TASK_WAIT},
    [TR_S_TASKGROUP] = {TRV_STATE_TASKGROUP, "waiting at the end of a taskgroup", OTF2_REGION_ROLE_TASK_WAIT},
    [TR_S_REDUCTION] = {TRV_STATE_REDUCTION, "combining a reduction", OTF2_REGION_ROLE_ARTIFICIAL},
    [TR_S_LOCK_WAIT] = {TRV_STATE_LOCK_WAIT, "waiting for an OpenMP lock", OTF2_REGION_ROLE_ARTIFICIAL},
    [TR_S_CRITICAL_WAIT] = {TRV_STATE_CRITICAL_WAIT, "waiting to enter a critical section",
                            OTF2_REGION_ROLE_CRITICAL},
    [TR_S_ORDERED_WAIT] = {TRV_STATE_ORDERED_WAIT, "waiting to enter an ordered section",
                           OTF2_REGION_ROLE_ORDERED},
    [TR_S_ATOMIC_WAIT] = {TRV_STATE_ATOMIC_WAIT, "waiting for an atomic", OTF2_REGION_ROLE_ATOMIC},
    [TR_S_OVERHEAD] = {TRV_STATE_OVERHEAD, "forking or joining a team", OTF2_REGION_ROLE_ARTIFICIAL},
    [TR_S_IDLE] = {TRV_STATE_IDLE, "a worker thread between implicit tasks", OTF2_REGION_ROLE_ARTIFICIAL},
    [TR_S_TASK_CREATE] = {"task create", "an explicit task created", OTF2_REGION_ROLE_TASK_CREATE},
};

static const char *const machine_names[] = {
    [TR_OMP_THREAD] = "ompt thread",
    [TR_OMP_PARALLEL] = "ompt parallel",
    [TR_OMP_IMPLICIT_TASK] = "ompt implicit_task",
    [TR_OMP_WORK] = "ompt work",
    [TR_OMP_MASKED] = "ompt masked",
    [TR_OMP_SYNC] = "ompt sync_region",
    [TR_OMP_SYNC_WAIT] = "ompt sync_region_wait",
    [TR_OMP_REDUCTION] = "ompt reduction",
    [TR_OMP_MUTEX_WAIT] = "ompt mutex_wait",
    [TR_OMP_MUTEX_HELD] = "ompt mutex_held",
    [TR_OMP_TASK_CREATE] = "ompt task_create",
    [TR_OMP_TASK_SCHEDULE] = "ompt task_schedule",
};

/* A host construct's codeptr: its function, file and line (the kernel
 * fields of a symbol belong to target constructs). */
static uint32_t omp_construct(tr_writer *w, uint64_t k)
{
    uint64_t v = tr_region_key_value(k), codeptr = v >> 5;
    unsigned c = (unsigned)(v & 31);
    if (c >= TR_C_COUNT || !constructs[c].name)
        c = TR_C_WORK;
    const tr_jsymbol *sym = codeptr ? tr_journal_find_symbol(w->m.jd, codeptr) : 0;
    const char *canonical = constructs[c].name, *file = sym ? sym->file : 0;
    int line = sym ? sym->line : 0;
    char name[512], desc[1200];
    snprintf(desc, sizeof desc, "%s", constructs[c].description);
    if (file && line)
        snprintf(name, sizeof name, "%s (%s:%d)", canonical, basename_of(file), line);
    else if (sym && sym->function)
        name_by_function(name, sizeof name, desc, sizeof desc, canonical, sym->function, constructs[c].description);
    else
        snprintf(name, sizeof name, "%s", canonical);
    return tr_defs_region_full(w, k, name, canonical, desc, constructs[c].role, OTF2_PARADIGM_OPENMP, file,
                               (uint32_t)line);
}

static uint32_t omp_state(tr_writer *w, uint64_t k)
{
    uint64_t s = tr_region_key_value(k);
    if (s >= TR_S_COUNT || !states[s].name)
        s = TR_S_OVERHEAD;
    return tr_defs_region_full(w, k, states[s].name, states[s].name, states[s].description, states[s].role,
                               OTF2_PARADIGM_OPENMP, 0, 0);
}

static uint32_t omp_machine(tr_writer *w, uint64_t k)
{
    uint64_t sub = tr_region_key_value(k);
    const char *name = sub < sizeof machine_names / sizeof *machine_names && machine_names[sub]
                           ? machine_names[sub]
                           : "ompt (unknown callback)";
    return tr_defs_region_full(w, k, name, name, "an OMPT host callback, as the runtime reported it",
                               OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_OPENMP, 0, 0);
}

uint32_t tr_writer_region(tr_writer *w, uint64_t k)
{
    uint64_t v;
    if (tr_u64map_get(&w->region_keys, k, &v))
        return (uint32_t)v;
    switch (tr_region_key_tag(k)) {
    case KEY_TARGET: return target(w, k);
    case KEY_DATA_OP: return data_op(w, k);
    case KEY_KERNEL: return kernel(w, k);
    case KEY_DEVICE_EVENT: return device_event(w, k);
    case KEY_USER: return user(w, k, 0);
    case KEY_MARK: return user(w, k, 1);
    case KEY_LINK: return link(w, k);
    case KEY_MPI_CALL: return mpi_call(w, k);
    case KEY_OMP_CONSTRUCT: return omp_construct(w, k);
    case KEY_OMP_STATE: return omp_state(w, k);
    case KEY_OMP_MACHINE: return omp_machine(w, k);
    default: return tr_defs_region_full(w, k, "unknown", "unknown", "", OTF2_REGION_ROLE_UNKNOWN,
                                        OTF2_PARADIGM_UNKNOWN, 0, 0);
    }
}
