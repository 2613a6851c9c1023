/* ompt_double.c - TEST DOUBLE of an OpenMP runtime's OMPT side.
 *
 * This program is not an OpenMP runtime. It plays one, calling libtracer's
 * ompt_start_tool and then the callbacks tracer registers, for two cases no
 * real producer available here creates:
 *   nonemi      a runtime that refuses the EMI target callbacks (OpenMP 5.0
 *               era); LLVM 19 accepts them all, so the fallback to
 *               target / target_data_op / target_submit is otherwise untested;
 *   incomplete  begins whose ends never come (a runtime bug or a crash
 *               inside the runtime): target, data op and kernel submit;
 *   overlap     two kernels on one device that overlap in time, as two host
 *               threads make them by chance; here made deterministic;
 *   linkstale   a declare-target-link variable whose storage moves without
 *               the runtime writing the device's reference pointer. LLVM 19
 *               writes it whenever the storage moves, so no real producer
 *               makes this case; the link entry below is laid out like LLVM
 *               19's (flag 1 = link) so tracer finds it as it finds real ones.
 * Real runtimes are used by every other offload test. The addresses and
 * sizes below are the ground truth test_ompt_double.py checks.
 */
#include <omp-tools.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version);

#define HOST 4
#define DEV 0
#define HOST_BUF ((void *)0x100000)
#define DEV_BUF ((void *)0x200000)

static int refuse_emi;

/* A link variable as clang lays it out: the variable, its host reference
 * pointer holding its address, and an offload entry flagged as link. */
double linked[4];
void *linked_decl_tgt_ref_ptr = linked;
struct double_entry {
    void *addr;
    const char *name;
    size_t size;
    int32_t flags;
    int32_t data;
};
__attribute__((section("omp_offloading_entries"), used)) static struct double_entry linked_entry = {
    &linked_decl_tgt_ref_ptr, "linked_decl_tgt_ref_ptr", 8, 1, 0};
static ompt_callback_t cb[64];

static int set_callback(ompt_callbacks_t which, ompt_callback_t fn)
{
    int emi = which == ompt_callback_target_emi || which == ompt_callback_target_data_op_emi ||
              which == ompt_callback_target_submit_emi || which == ompt_callback_target_map_emi;
    if (refuse_emi && emi)
        return ompt_set_never;
    if (which == ompt_callback_target_map || which == ompt_callback_target_map_emi)
        return ompt_set_never; /* like LLVM 19 */
    cb[which] = fn;
    return ompt_set_always;
}

static ompt_interface_fn_t lookup(const char *name)
{
    if (!strcmp(name, "ompt_set_callback"))
        return (ompt_interface_fn_t)set_callback;
    return 0;
}

#define CALL(which, type, ...) ((type)cb[which])(__VA_ARGS__)

static void run_nonemi(void)
{
    const void *ra = (const void *)run_nonemi;
    CALL(ompt_callback_device_initialize, ompt_callback_device_initialize_t, DEV, "double", 0, lookup, 0);
    ompt_data_t task = {0};
    CALL(ompt_callback_target, ompt_callback_target_t, ompt_target, ompt_scope_begin, DEV, &task, 100, ra);
    CALL(ompt_callback_target_data_op, ompt_callback_target_data_op_t, 100, 201, ompt_target_data_alloc,
         HOST_BUF, HOST, DEV_BUF, DEV, 4096, ra);
    CALL(ompt_callback_target_data_op, ompt_callback_target_data_op_t, 100, 202,
         ompt_target_data_transfer_to_device, HOST_BUF, HOST, DEV_BUF, DEV, 4096, ra);
    CALL(ompt_callback_target_submit, ompt_callback_target_submit_t, 100, 203, 8);
    CALL(ompt_callback_target_data_op, ompt_callback_target_data_op_t, 100, 204,
         ompt_target_data_transfer_from_device, DEV_BUF, DEV, HOST_BUF, HOST, 1024, ra);
    CALL(ompt_callback_target_data_op, ompt_callback_target_data_op_t, 100, 205, ompt_target_data_delete,
         DEV_BUF, DEV, (void *)0, -1, 0, ra);
    CALL(ompt_callback_target, ompt_callback_target_t, ompt_target, ompt_scope_end, DEV, &task, 100, ra);
}

static void run_incomplete(void)
{
    const void *ra = (const void *)run_incomplete;
    CALL(ompt_callback_device_initialize, ompt_callback_device_initialize_t, DEV, "double", 0, lookup, 0);
    ompt_data_t task = {0}, target = {0};
    ompt_id_t op = 0, kernel = 0, op2 = 0;
    /* A complete target first, so the trace also has a closed region. */
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target_enter_data, ompt_scope_begin, DEV,
         &task, 0, &target, ra);
    CALL(ompt_callback_target_data_op_emi, ompt_callback_target_data_op_emi_t, ompt_scope_begin, 0, &target,
         &op2, ompt_target_data_alloc, HOST_BUF, HOST, (void *)0, DEV, 512, ra);
    CALL(ompt_callback_target_data_op_emi, ompt_callback_target_data_op_emi_t, ompt_scope_end, 0, &target,
         &op2, ompt_target_data_alloc, HOST_BUF, HOST, DEV_BUF, DEV, 512, ra);
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target_enter_data, ompt_scope_end, DEV,
         &task, 0, &target, ra);
    /* Then a target whose transfer and kernel never end. */
    target.value = 0;
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target, ompt_scope_begin, DEV, &task, 0,
         &target, ra);
    CALL(ompt_callback_target_data_op_emi, ompt_callback_target_data_op_emi_t, ompt_scope_begin, 0, &target,
         &op, ompt_target_data_transfer_to_device, HOST_BUF, HOST, DEV_BUF, DEV, 256, ra);
    CALL(ompt_callback_target_submit_emi, ompt_callback_target_submit_emi_t, ompt_scope_begin, &target, &kernel,
         2);
}

static void run_overlap(void)
{
    const void *ra = (const void *)run_overlap;
    CALL(ompt_callback_device_initialize, ompt_callback_device_initialize_t, DEV, "double", 0, lookup, 0);
    ompt_data_t task = {0}, t1 = {0}, t2 = {0};
    ompt_id_t k1 = 0, k2 = 0, k3 = 0;
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target_nowait, ompt_scope_begin, DEV, &task,
         0, &t1, ra);
    CALL(ompt_callback_target_submit_emi, ompt_callback_target_submit_emi_t, ompt_scope_begin, &t1, &k1, 1);
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target_nowait, ompt_scope_begin, DEV, &task,
         0, &t2, ra);
    CALL(ompt_callback_target_submit_emi, ompt_callback_target_submit_emi_t, ompt_scope_begin, &t2, &k2, 2);
    CALL(ompt_callback_target_submit_emi, ompt_callback_target_submit_emi_t, ompt_scope_end, &t1, &k1, 1);
    CALL(ompt_callback_target_submit_emi, ompt_callback_target_submit_emi_t, ompt_scope_end, &t2, &k2, 2);
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target_nowait, ompt_scope_end, DEV, &task, 0,
         &t2, ra);
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target_nowait, ompt_scope_end, DEV, &task, 0,
         &t1, ra);
    /* A third kernel after both: back on the first stream. */
    CALL(ompt_callback_target_submit_emi, ompt_callback_target_submit_emi_t, ompt_scope_begin, &t1, &k3, 3);
    CALL(ompt_callback_target_submit_emi, ompt_callback_target_submit_emi_t, ompt_scope_end, &t1, &k3, 3);
}

#define STORE_X ((void *)0x300000)
#define STORE_Y ((void *)0x400000)
#define DEV_REF ((void *)0x500000)

static void data_op(ompt_data_t *target, ompt_target_data_op_t op, void *src, int sd, void *dst, int dd,
                    size_t bytes, void *dst_at_end)
{
    const void *ra = (const void *)data_op;
    ompt_id_t id = 0;
    CALL(ompt_callback_target_data_op_emi, ompt_callback_target_data_op_emi_t, ompt_scope_begin, 0, target, &id,
         op, src, sd, dst, dd, bytes, ra);
    CALL(ompt_callback_target_data_op_emi, ompt_callback_target_data_op_emi_t, ompt_scope_end, 0, target, &id, op,
         src, sd, dst_at_end, dd, bytes, ra);
}

static void run_linkstale(void)
{
    const void *ra = (const void *)run_linkstale;
    CALL(ompt_callback_device_initialize, ompt_callback_device_initialize_t, DEV, "double", 0, lookup, 0);
    ompt_data_t task = {0}, t1 = {0}, t2 = {0};
    /* 1: target maps `linked` at X and writes X into the device pointer. */
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target, ompt_scope_begin, DEV, &task, 0, &t1,
         ra);
    data_op(&t1, ompt_target_data_alloc, linked, HOST, 0, DEV, sizeof linked, STORE_X);
    data_op(&t1, ompt_target_data_transfer_to_device, linked, HOST, STORE_X, DEV, sizeof linked, STORE_X);
    void *x = STORE_X;
    data_op(&t1, ompt_target_data_transfer_to_device, &x, HOST, DEV_REF, DEV, 8, DEV_REF);
    data_op(&t1, ompt_target_data_delete, STORE_X, DEV, 0, -1, 0, 0);
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target, ompt_scope_end, DEV, &task, 0, &t1, ra);
    /* 2: enter data maps half of it at Y, and nobody tells the device. */
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target_enter_data, ompt_scope_begin, DEV, &task,
         0, &t2, ra);
    data_op(&t2, ompt_target_data_alloc, linked, HOST, 0, DEV, sizeof linked / 2, STORE_Y);
    CALL(ompt_callback_target_emi, ompt_callback_target_emi_t, ompt_target_enter_data, ompt_scope_end, DEV, &task, 0,
         &t2, ra);
}

int main(int argc, char **argv)
{
    int nonemi = argc > 1 && !strcmp(argv[1], "nonemi");
    refuse_emi = nonemi;
    ompt_start_tool_result_t *r = ompt_start_tool(201611, "tracer test double");
    if (!r || !r->initialize(lookup, HOST, &r->tool_data)) {
        fprintf(stderr, "ompt_double: tracer refused to start\n");
        return 1;
    }
    const char *mode = argc > 1 ? argv[1] : "incomplete";
    if (nonemi)
        run_nonemi();
    else if (!strcmp(mode, "overlap"))
        run_overlap();
    else if (!strcmp(mode, "linkstale"))
        run_linkstale();
    else
        run_incomplete();
    printf("ompt_double %s done\n", mode);
    return 0;
}
