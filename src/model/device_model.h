/* device_model.h - the devices' side of a run, found in the model's one
 * pass (model.h) as it reads the host threads' records in time order,
 * holding only what is open.
 *
 * OMPT reports kernels, device events, allocations and deletes on the host
 * thread that asked for them; what they say about a device needs every
 * thread at once, in time order:
 * - kernels submitted concurrently by several threads overlap, and regions
 *   must nest per location, so an overlapping kernel goes to the first
 *   extra lane ("device d stream k") free at its start. A kernel's end is
 *   found in its stream's lookahead, and then it is placed knowing it; one
 *   whose end lies farther (or never comes) holds its lane until the pass
 *   reaches its end (or the run's);
 * - memory allocated on one thread may be freed on another: the live
 *   allocations of every thread give a delete its size and host address,
 *   and the memory in use over time.
 * Device numbers are noted as records name them; the host's own number
 * (the side of the first data op that is not a device) is not a device.
 *
 * Memory: the target constructs and kernels still open, the allocations
 * still live, the events of each lane not yet in time order (its open
 * kernel's Leave, and what happened at the present instant). Internal to
 * src/model/. */
#ifndef TR_MODEL_DEVICE_MODEL_H
#define TR_MODEL_DEVICE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"
#include "core/record.h"
#include "model/lane_events.h"

struct tr_pass_ctx;

#define TR_DEVICE_MAX_LANES 256

/* What a delete freed: each part may be missing. */
typedef struct tr_delete_answer {
    int has_bytes, has_host;
    uint64_t bytes, host;
} tr_delete_answer;

typedef struct tr_device_state {
    uint64_t in_use;
    uint64_t lane_end[TR_DEVICE_MAX_LANES]; /* busy until; UINT64_MAX: its kernel's end is not known yet */
    tr_lane_events *lanes;                  /* per lane: its events not yet in time order */
    uint32_t nlanes;
    tr_u64map bytes, host;                  /* live allocations: device address -> bytes, host address */
    uint64_t items, metrics;                /* numbered as they come (the order of equal events) */
} tr_device_state;

/* A kernel whose end the lookahead did not reach. */
typedef struct tr_open_kernel {
    uint32_t device, lane;
    uint64_t index;          /* its item number on the device */
    uint64_t region;
    uint64_t start;
} tr_open_kernel;

typedef struct tr_device_model {
    tr_device_state *st;      /* per m->devices, in the same order */
    size_t nst, capst;
    tr_u64map target_index;   /* target_id -> index in targets */
    struct tr_target_info *targets;
    size_t ntargets, captargets;
    uint32_t *free_targets;   /* indices of ended ones, reused */
    size_t nfree, capfree;
    tr_u64map *open_submits;  /* per stream: host_op_ids of kernels begun, for stray ends */
    tr_u64map *open_kernels;  /* per stream: host_op_id -> index in kernels, for ends beyond the lookahead */
    tr_open_kernel *kernels;
    size_t nkernels, capkernels;
    uint32_t *free_kernels;
    size_t nfree_kernels, capfree_kernels;
    size_t last_index;        /* of the device asked for last */
    uint64_t decided;         /* bit n: number n is a device, or the host's */
    int *pending;             /* device numbers seen before the host's was known */
    size_t npending, cappending;
} tr_device_model;

/* For a pass of @nstreams host threads. Returns 0, or -1 out of memory. */
int tr_device_model_init(tr_device_model *dm, size_t nstreams);
/* The device numbers record @r names (before the host thread takes it, so
 * that a transfer's window exists). Returns 0, or -1 out of memory. */
int tr_device_model_note(struct tr_pass_ctx *p, const tr_record *r);
/* Record @r of stream @stream (after the host thread took it). Returns 0,
 * or -1 out of memory. */
int tr_device_model_record(struct tr_pass_ctx *p, size_t stream, const tr_record *r);
/* What the delete that ends with @end (its END, or its POINT) frees, as
 * every thread's live allocations say before it. */
tr_delete_answer tr_device_model_freed(const struct tr_pass_ctx *p, const tr_record *end);
/* The index of device @num in m->devices, -1 when it is none. */
int tr_device_model_index(const struct tr_pass_ctx *p, int num);
/* After the last record: devices still unsettled, kernels still open (they
 * end with the run), every lane's last events. Returns 0, or -1. */
int tr_device_model_finish(struct tr_pass_ctx *p);
void tr_device_model_free(tr_device_model *dm, size_t nstreams);

#endif
