/* ompt_callbacks.c - OMPT target callbacks -> records (the hot path).
 *
 * EMI callbacks let the tool own the ids: at begin we write our own id into
 * target_data / *host_op_id, and the runtime hands the same storage back at
 * end, so begin and end pair exactly even when operations nest or overlap. */
#include "ompt/ompt_callbacks.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/filter.h"
#include "core/ids.h"
#include "core/lifecycle.h"
#include "ompt/ompt_phase.h"
#include "tracer.h"

/* libxxhash's dispatching XXH3 picks AVX2 or AVX-512 at run time: 2-4
 * times the SSE2 code a generic build inlines (bench/hash_cost.py). */
#include <xxh_x86dispatch.h>

/* target_submit carries no device number; the enclosing target construct on
 * this thread does. */
static __thread int32_t cur_target_device __attribute__((tls_model("initial-exec"))) = -1;
/* ... and its code pointer names the kernel, even when TRACER_OMPT leaves
 * the target construct itself out. */
static __thread uint64_t cur_target_codeptr __attribute__((tls_model("initial-exec")));

/* Device strings may live in a plugin unloaded before the writer runs, so the
 * rare device callbacks keep their own copy. */
static uint64_t copy_string(const char *s)
{
    int saved_errno = errno;
    char *copy = s ? strdup(s) : 0;
    if (copy)
        tr_lifecycle_note_text((uint64_t)(uintptr_t)copy, copy);
    errno = saved_errno;
    return (uint64_t)(uintptr_t)copy;
}

/* Devices seen, for tracer_ompt_device(); device_initialize is rare. */
#define MAX_DEVICES_SEEN 256
static struct {
    int num;
    const char *type;
} devices_seen[MAX_DEVICES_SEEN];
static unsigned ndevices_seen;

__attribute__((visibility("default"))) int tracer_ompt_device(unsigned index, int *device_num, const char **type)
{
    if (index >= __atomic_load_n(&ndevices_seen, __ATOMIC_ACQUIRE))
        return -1;
    *device_num = devices_seen[index].num;
    *type = devices_seen[index].type;
    return 0;
}

void tr_ompt_device_initialize(int device_num, const char *type, ompt_device_t *device,
                               ompt_function_lookup_t lookup, const char *documentation)
{
    (void)device, (void)lookup, (void)documentation;
    unsigned slot = __atomic_load_n(&ndevices_seen, __ATOMIC_RELAXED);
    while (slot < MAX_DEVICES_SEEN &&
           !__atomic_compare_exchange_n(&ndevices_seen, &slot, slot + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        ;
    if (slot < MAX_DEVICES_SEEN) {
        devices_seen[slot].num = device_num;
        devices_seen[slot].type = (const char *)(uintptr_t)copy_string(type);
    }
    if (!tr_filter_device(device_num))
        return;
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    *r = (tr_record){.time = tr_clock_ticks(), .type = TR_REC_DEVICE_INIT, .phase = TR_PHASE_POINT,
                     .dev = device_num, .u = {copy_string(type)}};
    tr_buf_commit();
}

void tr_ompt_device_finalize(int device_num)
{
    if (!tr_filter_device(device_num))
        return;
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    *r = (tr_record){.time = tr_clock_ticks(), .type = TR_REC_DEVICE_FINI, .phase = TR_PHASE_POINT,
                     .dev = device_num};
    tr_buf_commit();
}

void tr_ompt_device_load(int device_num, const char *filename, int64_t offset_in_file,
                         void *vma_in_file, size_t bytes, void *host_addr, void *device_addr,
                         uint64_t module_id)
{
    (void)offset_in_file, (void)vma_in_file;
    if (!tr_filter_device(device_num))
        return;
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    *r = (tr_record){.time = tr_clock_ticks(), .type = TR_REC_DEVICE_LOAD, .phase = TR_PHASE_POINT,
                     .dev = device_num, .id = module_id,
                     .u = {copy_string(filename), (uintptr_t)host_addr, bytes, (uintptr_t)device_addr}};
    tr_buf_commit();
}

void tr_ompt_device_unload(int device_num, uint64_t module_id)
{
    if (!tr_filter_device(device_num))
        return;
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    *r = (tr_record){.time = tr_clock_ticks(), .type = TR_REC_DEVICE_UNLOAD, .phase = TR_PHASE_POINT,
                     .dev = device_num, .id = module_id};
    tr_buf_commit();
}

/* ---- content hashes of transfers (TRACER_HASH) ----------------------------
 *
 * The report names a transfer that moves bytes the device already holds
 * (docs/trace-model.md, "Data mapping advice"); that takes a hash of the
 * host bytes each transfer moves. A copy to the device is hashed at its end
 * (the runtime has read its source by then and the program cannot have
 * changed it). A copy from the device is NOT complete at its end callback
 * on a GPU: libomptarget queues it on the device's stream and waits for the
 * stream at the end of the construct (measured on the CUDA plugin: the end
 * callback saw the old host bytes, the construct's end the new ones). So
 * its hash is taken at the end of the target construct it belongs to, from
 * a short per-thread list; one outside a construct, or beyond the list, gets
 * no hash, never a wrong one. Only host memory is read: the host side of a
 * copy is the host device, whose number the first alloc tells (an alloc's
 * source is always the host). */
static int host_device_num = INT_MIN;

static inline int copies_to_device(ompt_target_data_op_t t)
{
    return t == ompt_target_data_transfer_to_device || t == ompt_target_data_transfer_to_device_async;
}
static inline int copies_from_device(ompt_target_data_op_t t)
{
    return t == ompt_target_data_transfer_from_device || t == ompt_target_data_transfer_from_device_async;
}

#define PENDING_HASHES 32
static __thread struct pending_hash {
    uint64_t op;
    const void *host;
    size_t bytes;
} pending_hashes[PENDING_HASHES] __attribute__((tls_model("initial-exec")));
static __thread unsigned npending_hashes __attribute__((tls_model("initial-exec")));
static __thread unsigned target_depth __attribute__((tls_model("initial-exec")));

static void record_hash(uint64_t op, const void *host, size_t bytes)
{
    uint64_t hash = XXH3_64bits_dispatch(host, bytes);
    uint64_t t = tr_clock_ticks();
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    *r = (tr_record){.time = t, .type = TR_REC_DATA_HASH, .phase = TR_PHASE_POINT, .id = op,
                     .u = {hash, bytes, 0, 0}};
    tr_buf_commit();
}

static void flush_pending_hashes(void)
{
    for (unsigned i = 0; i < npending_hashes; i++)
        record_hash(pending_hashes[i].op, pending_hashes[i].host, pending_hashes[i].bytes);
    npending_hashes = 0;
}

/* At a transfer's end: hash it now, later, or not at all. A copy to the
 * device of 8 bytes or fewer needs no hash: its end record carries the
 * value itself. */
static inline void hash_transfer(uint64_t op, ompt_target_data_op_t optype, void *src, int src_dev, void *dst,
                                 int dst_dev, size_t bytes)
{
    if (!bytes || bytes > tr_flt.hash_max || !op)
        return;
    int host = __atomic_load_n(&host_device_num, __ATOMIC_RELAXED);
    if (copies_to_device(optype)) {
        if (src_dev == host && src && bytes > 8)
            record_hash(op, src, bytes);
    } else if (copies_from_device(optype) && dst_dev == host && dst && target_depth &&
               npending_hashes < PENDING_HASHES) {
        pending_hashes[npending_hashes++] = (struct pending_hash){op, dst, bytes};
    }
}

static inline void record_target(ompt_target_t kind, uint8_t phase, int device_num, uint64_t target_id,
                                 const void *codeptr_ra)
{
    if (phase == TR_PHASE_BEGIN) {
        cur_target_device = device_num;
        cur_target_codeptr = (uintptr_t)codeptr_ra;
        target_depth++;
    } else if (phase == TR_PHASE_END) {
        /* The construct's copies from the device have landed: hash them. */
        if (npending_hashes)
            flush_pending_hashes();
        if (target_depth)
            target_depth--;
    }
    /* Registered also for kernels (the device of a submit comes from here). */
    if (!(tr_flt.ompt & TR_OMPT_CONSTRUCTS) || !tr_filter_device(device_num))
        return;
    uint64_t t = tr_clock_ticks();
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    r->time = t;
    r->type = TR_REC_TARGET;
    r->phase = phase;
    r->sub = (uint16_t)kind;
    r->dev = device_num;
    r->dev2 = 0;
    r->aux = 0;
    r->id = target_id;
    r->u[0] = (uintptr_t)codeptr_ra;
    r->u[1] = r->u[2] = r->u[3] = 0;
    tr_buf_commit();
}

void tr_ompt_target_emi(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
                        ompt_data_t *task_data, ompt_data_t *target_task_data,
                        ompt_data_t *target_data, const void *codeptr_ra)
{
    (void)task_data, (void)target_task_data;
    if (endpoint == ompt_scope_begin && target_data)
        target_data->value = tr_ids_new();
    record_target(kind, tr_phase_of(endpoint), device_num, target_data ? target_data->value : 0, codeptr_ra);
}

static inline void record_data_op(uint8_t phase, uint64_t target_id, uint64_t op_id,
                                  ompt_target_data_op_t optype, void *src_addr, int src_device_num,
                                  void *dest_addr, int dest_device_num, size_t bytes,
                                  const void *codeptr_ra)
{
    uint64_t t = tr_clock_ticks();
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    r->time = t;
    r->type = TR_REC_DATA_OP;
    r->phase = phase;
    r->sub = (uint16_t)optype;
    r->dev = src_device_num;
    r->dev2 = dest_device_num;
    r->aux = 0;
    r->id = op_id;
    /* The begin keeps the target id, the end the code pointer: together the
     * pair carries every argument within one fixed-size record each. */
    r->u[0] = phase == TR_PHASE_END ? (uintptr_t)codeptr_ra : target_id;
    r->u[1] = (uintptr_t)src_addr;
    /* The value an 8-byte transfer writes is how a declare-target-link
     * pointer on the device learns its storage; the begin record keeps the
     * source address, so the end record carries the value. A shorter
     * transfer's value is carried the same way: its content hash is
     * computed from it when the trace is written (TR_DATA_OP_VALUE, set
     * within TRACER_HASH). Only
     * host memory is read: the source must be the host device. */
    if (__builtin_expect(bytes <= 8, 0) && phase == TR_PHASE_END && src_addr && bytes &&
        src_device_num == __atomic_load_n(&host_device_num, __ATOMIC_RELAXED) &&
        (optype == ompt_target_data_transfer_to_device || optype == ompt_target_data_transfer_to_device_async)) {
        r->u[1] = 0;
        memcpy(&r->u[1], src_addr, bytes);
        r->aux = bytes <= tr_flt.hash_max ? TR_DATA_OP_VALUE : 0;
    }
    r->u[2] = (uintptr_t)dest_addr;
    r->u[3] = bytes;
    tr_buf_commit();
}

/* The device side of an op: where it allocates, writes or frees. */
static inline int data_op_device(ompt_target_data_op_t optype, int src, int dst)
{
    switch (optype) {
    case ompt_target_data_transfer_from_device:
    case ompt_target_data_transfer_from_device_async:
    case ompt_target_data_delete:
    case ompt_target_data_delete_async:
        return src;
    default:
        return dst;
    }
}

static inline int is_transfer(ompt_target_data_op_t t)
{
    return t == ompt_target_data_transfer_to_device || t == ompt_target_data_transfer_from_device ||
           t == ompt_target_data_transfer_to_device_async || t == ompt_target_data_transfer_from_device_async;
}

/* Decided once per op, at its begin: 0 when the op is not recorded. */
static inline int keep_data_op(ompt_target_data_op_t optype, int src, int dst, size_t bytes)
{
    if (!tr_filter_device(data_op_device(optype, src, dst)))
        return 0;
    if (__builtin_expect(bytes < tr_flt.min_bytes, 0) && is_transfer(optype)) {
        tr_buf_count_small(optype == ompt_target_data_transfer_from_device ||
                               optype == ompt_target_data_transfer_from_device_async,
                           bytes);
        return 0;
    }
    return 1;
}

void tr_ompt_target_data_op_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_task_data,
                                ompt_data_t *target_data, ompt_id_t *host_op_id,
                                ompt_target_data_op_t optype, void *src_addr, int src_device_num,
                                void *dest_addr, int dest_device_num, size_t bytes,
                                const void *codeptr_ra)
{
    (void)target_task_data;
    uint64_t op = 0;
    if (host_op_id) {
        if (endpoint == ompt_scope_begin)
            *host_op_id = keep_data_op(optype, src_device_num, dest_device_num, bytes) ? tr_ids_new()
                                                                                        : TR_ID_SKIPPED;
        op = *host_op_id;
        if (op == TR_ID_SKIPPED)
            return;
    } else if (endpoint == ompt_scope_begin &&
               !keep_data_op(optype, src_device_num, dest_device_num, bytes)) {
        return;
    }
    if (__builtin_expect(host_device_num == INT_MIN, 0) &&
        (optype == ompt_target_data_alloc || optype == ompt_target_data_alloc_async))
        __atomic_store_n(&host_device_num, src_device_num, __ATOMIC_RELAXED);
    record_data_op(tr_phase_of(endpoint), target_data ? target_data->value : 0, op, optype, src_addr,
                   src_device_num, dest_addr, dest_device_num, bytes, codeptr_ra);
    if (endpoint == ompt_scope_end && tr_flt.hash_max)
        hash_transfer(op, optype, src_addr, src_device_num, dest_addr, dest_device_num, bytes);
}

static inline void record_submit(uint8_t phase, uint64_t target_id, uint64_t op_id, unsigned int teams)
{
    uint64_t t = tr_clock_ticks();
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    r->time = t;
    r->type = TR_REC_SUBMIT;
    r->phase = phase;
    r->sub = 0;
    r->dev = cur_target_device;
    r->dev2 = 0;
    r->aux = teams;
    r->id = op_id;
    r->u[0] = target_id;
    r->u[1] = cur_target_codeptr;
    r->u[2] = r->u[3] = 0;
    tr_buf_commit();
}

void tr_ompt_target_submit_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_data,
                               ompt_id_t *host_op_id, unsigned int requested_num_teams)
{
    uint64_t op = 0;
    if (host_op_id) {
        if (endpoint == ompt_scope_begin)
            *host_op_id = tr_filter_device(cur_target_device) ? tr_ids_new() : TR_ID_SKIPPED;
        op = *host_op_id;
        if (op == TR_ID_SKIPPED)
            return;
    } else if (!tr_filter_device(cur_target_device)) {
        return;
    }
    record_submit(tr_phase_of(endpoint), target_data ? target_data->value : 0, op, requested_num_teams);
}

void tr_ompt_target_map_emi(ompt_data_t *target_data, unsigned int nitems, void **host_addr,
                            void **device_addr, size_t *bytes, unsigned int *mapping_flags,
                            const void *codeptr_ra)
{
    (void)host_addr, (void)device_addr, (void)bytes, (void)mapping_flags, (void)codeptr_ra;
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    *r = (tr_record){.time = tr_clock_ticks(), .type = TR_REC_TARGET_MAP, .phase = TR_PHASE_POINT,
                     .id = target_data ? target_data->value : 0, .aux = nitems};
    tr_buf_commit();
}

/* --- OpenMP 5.0 variants: the runtime owns the ids. -------------------- */

void tr_ompt_target(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
                    ompt_data_t *task_data, ompt_id_t target_id, const void *codeptr_ra)
{
    (void)task_data;
    record_target(kind, tr_phase_of(endpoint), device_num, target_id, codeptr_ra);
}

void tr_ompt_target_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t optype,
                            void *src_addr, int src_device_num, void *dest_addr, int dest_device_num,
                            size_t bytes, const void *codeptr_ra)
{
    if (!keep_data_op(optype, src_device_num, dest_device_num, bytes))
        return;
    record_data_op(TR_PHASE_POINT, target_id, host_op_id, optype, src_addr, src_device_num, dest_addr,
                   dest_device_num, bytes, codeptr_ra);
}

void tr_ompt_target_submit(ompt_id_t target_id, ompt_id_t host_op_id, unsigned int requested_num_teams)
{
    if (!tr_filter_device(cur_target_device))
        return;
    record_submit(TR_PHASE_POINT, target_id, host_op_id, requested_num_teams);
}

void tr_ompt_target_map(ompt_id_t target_id, unsigned int nitems, void **host_addr, void **device_addr,
                        size_t *bytes, unsigned int *mapping_flags, const void *codeptr_ra)
{
    (void)host_addr, (void)device_addr, (void)bytes, (void)mapping_flags, (void)codeptr_ra;
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    *r = (tr_record){.time = tr_clock_ticks(), .type = TR_REC_TARGET_MAP, .phase = TR_PHASE_POINT,
                     .id = target_id, .aux = nitems};
    tr_buf_commit();
}
