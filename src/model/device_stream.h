/* device_stream.h - the devices' side of a run, found in one pass over the
 * host threads' records merged in time order, holding only what is open.
 *
 * OMPT reports kernels, device events, allocations and deletes on the host
 * thread that asked for them; what they say about a device needs every
 * thread at once, in time order: kernels submitted concurrently by several
 * threads overlap, and OTF2 wants properly nested regions per location, so
 * overlapping kernels go to extra lanes ("device d stream k"); memory
 * allocated on one thread may be freed on another. The writer feeds every
 * record here as its merge of the threads' cursors yields it; items and
 * metric points come out, in the order of their start times, through a
 * tr_dev_sink. Memory: the target constructs and kernels still open, the
 * device allocations still live, 256 lanes per device: nothing that grows
 * with the length of the run.
 *
 * Model layer: no OTF2. */
#ifndef TR_MODEL_DEVICE_STREAM_H
#define TR_MODEL_DEVICE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"
#include "journal/stream_cursor.h"
#include "model/delete_info.h"
#include "model/model.h"

/* Where the items go. @item: @rec (a SUBMIT begin or point, or a device
 * event) starts an item at rec->time on @lane of m->devices[@device], ending
 * at @end (== rec->time: zero length, drawn as a point). @metric: the
 * device's memory in use becomes @value at @time. Both return 0, or -1 to
 * stop the pass. */
typedef struct tr_dev_sink {
    int (*item)(void *ctx, size_t device, uint32_t lane, const tr_record *rec, uint64_t end, uint32_t region,
                int incomplete);
    int (*metric)(void *ctx, size_t device, uint64_t time, uint64_t value);
    void *ctx;
    /* The model's pass (the first): it also counts stray ends and kernels
     * that never ended, and fills m->deletes (delete_info.h). */
    int model_pass;
} tr_dev_sink;

#define TR_DEVICE_MAX_LANES 256

typedef struct tr_device_state {
    uint64_t in_use;
    uint64_t lane_end[TR_DEVICE_MAX_LANES];
    uint32_t nlanes;
} tr_device_state;

typedef struct tr_device_stream {
    tr_model *m;
    const tr_model_labels *labels;
    tr_dev_sink sink;
    tr_device_state *dev;     /* per m->devices */
    tr_u64map target_index;   /* target_id -> index in targets */
    tr_target_info *targets;
    size_t ntargets, captargets;
    uint32_t *free_targets;   /* indices of ended ones, reused */
    size_t nfree, capfree;
    tr_u64map *open_submits;  /* per stream: host_op_ids of kernels begun, for stray ends */
    tr_local_allocs live;     /* every thread's live allocations, in time order */
    tr_local_allocs *local;   /* the model's pass: per stream, its own view of the live allocations */
} tr_device_stream;

/* After tr_model_build. Returns 0, or -1 out of memory. */
int tr_device_stream_init(tr_device_stream *ds, tr_model *m, const tr_model_labels *labels, tr_dev_sink sink);
/* Record @r, the one at @pos in stream @stream whose cursor @cur yielded it
 * last (its lookahead finds a kernel's end). Returns 0, or -1 (out of
 * memory, or the sink stopped it). */
int tr_device_stream_record(tr_device_stream *ds, size_t stream, uint64_t pos, const tr_record *r,
                            tr_stream_cursor *cur);
/* After the last record: each device's lane count (m->devices[i].nlanes).
 * Returns 0, or -1 out of memory. */
int tr_device_stream_finish(tr_device_stream *ds);
void tr_device_stream_free(tr_device_stream *ds);

#endif
