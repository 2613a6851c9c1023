/* ompt_start.c - the OMPT entry point and callback registration.
 *
 * ompt_start_tool is the only OMPT-named symbol tracer defines. It is called
 * by an OMPT-capable OpenMP runtime and by nothing else, which is what keeps
 * tracer inert in shells, launchers and compilers it is preloaded into. */
#include <omp-tools.h>
#include <stddef.h>
#include <stdio.h>

#include "core/config.h"
#include "core/lifecycle.h"
#include "core/log.h"
#include "ompt/ompt_callbacks.h"
#include "ompt/ompt_connect.h"
#include "ompt/ompt_host.h"
#include "ompt/ompt_registration.h"
#include "tracer.h"

static tr_ompt_registration registrations[TR_OMPT_MAX_REGISTRATIONS];
static int registration_count;
/* Set when the runtime accepted a target callback: from then on, a run
 * without any target callback needs an explanation (report_connection). */
static int target_registered;

static int try_register(ompt_set_callback_t set_callback, ompt_callbacks_t which, const char *name,
                        ompt_callback_t fn)
{
    int r = set_callback(which, fn);
    if (registration_count < TR_OMPT_MAX_REGISTRATIONS)
        registrations[registration_count++] = (tr_ompt_registration){name, r};
    /* ompt_set_never (1) means the callback will never be invoked. */
    return r > ompt_set_never;
}

#define REG(which, fn) try_register(set_callback, which, #which, (ompt_callback_t)(fn))

/* The host_states class: what every OpenMP thread of the host does. */
static void register_host(ompt_set_callback_t set_callback)
{
    REG(ompt_callback_thread_begin, tr_ompt_host_thread_begin);
    REG(ompt_callback_thread_end, tr_ompt_host_thread_end);
    REG(ompt_callback_parallel_begin, tr_ompt_host_parallel_begin);
    REG(ompt_callback_parallel_end, tr_ompt_host_parallel_end);
    REG(ompt_callback_implicit_task, tr_ompt_host_implicit_task);
    REG(ompt_callback_work, tr_ompt_host_work);
    /* ompt_callback_masked (5.1) has the number of 5.0's ompt_callback_master
     * and its signature: one registration serves both kinds of runtime. */
    REG(ompt_callback_masked, tr_ompt_host_masked);
    REG(ompt_callback_sync_region, tr_ompt_host_sync_region);
    REG(ompt_callback_sync_region_wait, tr_ompt_host_sync_region_wait);
    REG(ompt_callback_reduction, tr_ompt_host_reduction);
    REG(ompt_callback_mutex_acquire, tr_ompt_host_mutex_acquire);
    REG(ompt_callback_mutex_acquired, tr_ompt_host_mutex_acquired);
    REG(ompt_callback_mutex_released, tr_ompt_host_mutex_released);
    REG(ompt_callback_nest_lock, tr_ompt_host_nest_lock);
    REG(ompt_callback_task_create, tr_ompt_host_task_create);
    REG(ompt_callback_task_schedule, tr_ompt_host_task_schedule);
}

/* The target classes: constructs, data_ops, kernels, link_maps. */
static void register_target(ompt_set_callback_t set_callback, uint32_t classes)
{
    int constructs = classes & TR_OMPT_CONSTRUCTS, data_ops = classes & TR_OMPT_DATA_OPS;
    int kernels = classes & TR_OMPT_KERNELS, link_maps = classes & TR_OMPT_LINK_MAPS;
    target_registered = REG(ompt_callback_device_initialize, tr_ompt_device_initialize);
    REG(ompt_callback_device_finalize, tr_ompt_device_finalize);
    REG(ompt_callback_device_load, tr_ompt_device_load);
    REG(ompt_callback_device_unload, tr_ompt_device_unload);
    /* Kernels need the target callback too: it tells a submit's device. */
    if ((constructs || kernels) && !REG(ompt_callback_target_emi, tr_ompt_target_emi))
        REG(ompt_callback_target, tr_ompt_target);
    if (data_ops && !REG(ompt_callback_target_data_op_emi, tr_ompt_target_data_op_emi))
        REG(ompt_callback_target_data_op, tr_ompt_target_data_op);
    if (kernels && !REG(ompt_callback_target_submit_emi, tr_ompt_target_submit_emi))
        REG(ompt_callback_target_submit, tr_ompt_target_submit);
    if (link_maps && !REG(ompt_callback_target_map_emi, tr_ompt_target_map_emi))
        REG(ompt_callback_target_map, tr_ompt_target_map);
}

static int tr_ompt_initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data)
{
    (void)initial_device_num, (void)tool_data;
    ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_callback) {
        tr_log("ompt: the OpenMP runtime offers no ompt_set_callback; OpenMP is not traced");
        return 0;
    }
    if (!tr_lifecycle_activate("ompt"))
        return 0;

    /* TRACER_OMPT is decided here: a class that is off gets no callback.
     * With no class at all the tool stays: user regions are still recorded. */
    uint32_t classes = tr_cfg.ompt;
    if (classes & (TR_OMPT_CONSTRUCTS | TR_OMPT_DATA_OPS | TR_OMPT_KERNELS | TR_OMPT_LINK_MAPS))
        register_target(set_callback, classes);
    if (classes & TR_OMPT_HOST_STATES) {
        tr_ompt_host_set_runtime((const void *)(uintptr_t)lookup);
        register_host(set_callback);
    }
    if (tr_cfg.verbose) {
        char how[4 * 4096];
        tr_ompt_connect_describe(tr_ompt_connect_state(), how, sizeof how);
        tr_log("offload connection: %s", how);
    }
    return 1;
}

static void tr_ompt_finalize(ompt_data_t *tool_data)
{
    (void)tool_data;
    tr_lifecycle_end("ompt finalize");
}

__attribute__((visibility("default"))) ompt_start_tool_result_t *
ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    (void)omp_version, (void)runtime_version;
    static ompt_start_tool_result_t result = {tr_ompt_initialize, tr_ompt_finalize, {0}};
    return &result;
}

/* A run that asked for target callbacks and got none, in a process whose
 * libomptarget could not reach the running libomp, gets one line that says
 * why and what to do, rather than a trace that is silently without them. */
__attribute__((destructor)) static void report_connection(void)
{
    int num;
    const char *type;
    if (!target_registered || tracer_ompt_device(0, &num, &type) == 0)
        return;
    tr_connect_state state = tr_ompt_connect_state();
    if (state != TR_CONNECT_FAILED && state != TR_CONNECT_LATE)
        return;
    char why[4 * 4096];
    tr_ompt_connect_describe(state, why, sizeof why);
    tr_log("no target event was recorded: %s", why);
}

__attribute__((visibility("default"))) int tracer_ompt_connection(char *buf, size_t len)
{
    tr_connect_state state = tr_ompt_connect_prepare();
    if (state == TR_CONNECT_NO_OFFLOAD)
        state = tr_ompt_connect_state();
    if (buf && len)
        tr_ompt_connect_describe(state, buf, len);
    return (int)state;
}

__attribute__((visibility("default"))) int tracer_ompt_registration(unsigned index, const char **callback,
                                                                   int *result)
{
    if (index >= (unsigned)registration_count)
        return -1;
    *callback = registrations[index].callback;
    *result = registrations[index].result;
    return 0;
}

const tr_ompt_registration *tr_ompt_registrations(int *count)
{
    *count = registration_count;
    return registrations;
}
