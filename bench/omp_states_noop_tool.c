/* omp_states_noop_tool.c - an OMPT tool whose callbacks do nothing, for
 * bench/omp_states_overhead.sh: preloaded instead of libtracer.so, it
 * registers the host callbacks tracer registers for TRACER_OMPT=host_states
 * (src/ompt/ompt_start.c), each returning at once. The difference to an
 * untraced run is the cost of OMPT itself (the runtime's bookkeeping and the
 * calls); the difference to tracer is the cost of recording.
 * OMPT_NOOP_VERBOSE=1: prints the runtime's answer to each registration on
 * stderr. */
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

static void thread_begin(ompt_thread_t t, ompt_data_t *d) { (void)t, (void)d; }
static void thread_end(ompt_data_t *d) { (void)d; }
static void parallel_begin(ompt_data_t *et, const ompt_frame_t *f, ompt_data_t *pd, unsigned int n, int flags,
                           const void *c)
{
    (void)et, (void)f, (void)pd, (void)n, (void)flags, (void)c;
}
static void parallel_end(ompt_data_t *pd, ompt_data_t *et, int flags, const void *c)
{
    (void)pd, (void)et, (void)flags, (void)c;
}
static void implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *pd, ompt_data_t *td, unsigned int n,
                          unsigned int i, int flags)
{
    (void)ep, (void)pd, (void)td, (void)n, (void)i, (void)flags;
}
static void work(ompt_work_t w, ompt_scope_endpoint_t ep, ompt_data_t *pd, ompt_data_t *td, uint64_t n,
                 const void *c)
{
    (void)w, (void)ep, (void)pd, (void)td, (void)n, (void)c;
}
static void masked(ompt_scope_endpoint_t ep, ompt_data_t *pd, ompt_data_t *td, const void *c)
{
    (void)ep, (void)pd, (void)td, (void)c;
}
static void sync_region(ompt_sync_region_t k, ompt_scope_endpoint_t ep, ompt_data_t *pd, ompt_data_t *td,
                        const void *c)
{
    (void)k, (void)ep, (void)pd, (void)td, (void)c;
}
static void mutex_acquire(ompt_mutex_t k, unsigned int h, unsigned int i, ompt_wait_id_t w, const void *c)
{
    (void)k, (void)h, (void)i, (void)w, (void)c;
}
static void mutex(ompt_mutex_t k, ompt_wait_id_t w, const void *c) { (void)k, (void)w, (void)c; }
static void nest_lock(ompt_scope_endpoint_t ep, ompt_wait_id_t w, const void *c) { (void)ep, (void)w, (void)c; }
static void task_create(ompt_data_t *et, const ompt_frame_t *f, ompt_data_t *nt, int flags, int deps,
                        const void *c)
{
    (void)et, (void)f, (void)nt, (void)flags, (void)deps, (void)c;
}
static void task_schedule(ompt_data_t *p, ompt_task_status_t s, ompt_data_t *n) { (void)p, (void)s, (void)n; }

static int verbose;

static void reg(ompt_set_callback_t set, ompt_callbacks_t which, const char *name, ompt_callback_t fn)
{
    int r = set(which, fn);
    if (verbose)
        fprintf(stderr, "omp_states_noop_tool: %s -> %d\n", name, r);
}
#define REG(which, fn) reg(set, which, #which, (ompt_callback_t)(fn))

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data)
{
    (void)initial_device_num, (void)tool_data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set)
        return 0;
    const char *v = getenv("OMPT_NOOP_VERBOSE");
    verbose = v && *v == '1';
    REG(ompt_callback_thread_begin, thread_begin);
    REG(ompt_callback_thread_end, thread_end);
    REG(ompt_callback_parallel_begin, parallel_begin);
    REG(ompt_callback_parallel_end, parallel_end);
    REG(ompt_callback_implicit_task, implicit_task);
    REG(ompt_callback_work, work);
    REG(ompt_callback_masked, masked);
    REG(ompt_callback_sync_region, sync_region);
    REG(ompt_callback_sync_region_wait, sync_region);
    REG(ompt_callback_reduction, sync_region);
    REG(ompt_callback_mutex_acquire, mutex_acquire);
    REG(ompt_callback_mutex_acquired, mutex);
    REG(ompt_callback_mutex_released, mutex);
    REG(ompt_callback_nest_lock, nest_lock);
    REG(ompt_callback_task_create, task_create);
    REG(ompt_callback_task_schedule, task_schedule);
    return 1;
}

static void finalize(ompt_data_t *tool_data) { (void)tool_data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    (void)omp_version, (void)runtime_version;
    static ompt_start_tool_result_t result = {initialize, finalize, {0}};
    return &result;
}
