/* Minimal independent OMPT tool: it counts target callbacks and writes the
 * count to $OMPT_PROBE_OUT at exit. test_offload_connect.py runs programs
 * with it alone to learn what the OpenMP runtime delivers on this machine
 * without tracer (LLVM 19 on Debian 12: nothing, because libomptarget cannot
 * find "libomp.so"). */
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

static int ntarget;

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
                      ompt_data_t *task_data, ompt_data_t *target_task_data,
                      ompt_data_t *target_data, const void *codeptr_ra)
{
    (void)kind; (void)device_num; (void)task_data; (void)target_task_data;
    (void)target_data; (void)codeptr_ra;
    if (endpoint == ompt_scope_begin)
        __atomic_add_fetch(&ntarget, 1, __ATOMIC_RELAXED);
}

static int init(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data)
{
    (void)initial_device_num; (void)tool_data;
    ompt_set_callback_t set_cb = (ompt_set_callback_t)lookup("ompt_set_callback");
    set_cb(ompt_callback_target_emi, (ompt_callback_t)on_target);
    return 1;
}

static void fini(ompt_data_t *tool_data) { (void)tool_data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    (void)omp_version; (void)runtime_version;
    static ompt_start_tool_result_t result = {init, fini, {0}};
    return &result;
}

__attribute__((destructor)) static void report(void)
{
    const char *out = getenv("OMPT_PROBE_OUT");
    FILE *f = out ? fopen(out, "w") : NULL;
    if (f) {
        fprintf(f, "%d\n", ntarget);
        fclose(f);
    }
}
