/* target_noop_tool.c - an OMPT tool whose target callbacks do nothing, for
 * bench/target_overhead.py (issue 19): preloaded instead of libtracer.so, it
 * registers the device and target callbacks tracer registers by default
 * (src/ompt/ompt_start.c: device initialize/finalize/load/unload and the EMI
 * target, data-op and submit callbacks), each returning at once. The
 * difference to an untraced run is the cost of OMPT itself; the difference
 * to tracer is the cost of recording.
 *
 * With TARGET_NOOP_THREAD=1 it also starts one thread that only sleeps, as
 * tracer starts its journal thread: glibc takes its single-threaded fast
 * paths (a mutex without atomic instructions) only while a process has one
 * thread, and libomptarget takes about 24 mutexes per target region (counted
 * with uprobes), so that run tells what the second thread alone costs the
 * loop. Measured: about 1% (bench/target_overhead.py), not the difference
 * to tracer. */
#include <omp-tools.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

__attribute__((constructor)) static void start_thread(void)
{
    const char *e = getenv("TARGET_NOOP_THREAD");
    pthread_t t;
    if (e && !strcmp(e, "1") && !pthread_create(&t, NULL, sleeper, NULL))
        pthread_detach(t);
}

static void device_initialize(int d, const char *t, ompt_device_t *dev, ompt_function_lookup_t l, const char *doc)
{
    (void)d, (void)t, (void)dev, (void)l, (void)doc;
}
static void device_finalize(int d) { (void)d; }
static void device_load(int d, const char *f, int64_t o, void *fa, size_t b, void *ha, void *da, uint64_t m)
{
    (void)d, (void)f, (void)o, (void)fa, (void)b, (void)ha, (void)da, (void)m;
}
static void device_unload(int d, uint64_t m) { (void)d, (void)m; }
static void target_emi(ompt_target_t k, ompt_scope_endpoint_t ep, int d, ompt_data_t *td, ompt_data_t *tgt,
                       ompt_id_t *h, const void *c)
{
    (void)k, (void)ep, (void)d, (void)td, (void)tgt, (void)h, (void)c;
}
static void data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *tgt, ompt_data_t *op, ompt_id_t *h,
                        ompt_target_data_op_t t, void *sa, int sd, void *da, int dd, size_t b, const void *c)
{
    (void)ep, (void)tgt, (void)op, (void)h, (void)t, (void)sa, (void)sd, (void)da, (void)dd, (void)b, (void)c;
}
static void submit_emi(ompt_scope_endpoint_t ep, ompt_data_t *tgt, ompt_id_t *h, unsigned int n)
{
    (void)ep, (void)tgt, (void)h, (void)n;
}

static int initialize(ompt_function_lookup_t lookup, int dev, ompt_data_t *data)
{
    (void)dev, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set)
        return 0;
    set(ompt_callback_device_initialize, (ompt_callback_t)device_initialize);
    set(ompt_callback_device_finalize, (ompt_callback_t)device_finalize);
    set(ompt_callback_device_load, (ompt_callback_t)device_load);
    set(ompt_callback_device_unload, (ompt_callback_t)device_unload);
    set(ompt_callback_target_emi, (ompt_callback_t)target_emi);
    set(ompt_callback_target_data_op_emi, (ompt_callback_t)data_op_emi);
    set(ompt_callback_target_submit_emi, (ompt_callback_t)submit_emi);
    return 1;
}

static void finalize(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime)
{
    (void)version, (void)runtime;
    static ompt_start_tool_result_t r = {initialize, finalize, {0}};
    return &r;
}
