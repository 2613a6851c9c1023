/* delete_info.h - what a device delete freed (its bytes, and the host
 * address its alloc mapped), without a table of every delete.
 *
 * OMPT's delete reports only the device address; the alloc that produced it
 * says the rest. Allocs and deletes may run on different threads, so the
 * answer comes from all of them in time order (the device pass), but the
 * host writer, which shows it on the delete's Enter, reads one thread at a
 * time. Almost always the alloc ran on the thread of the delete: the host
 * writer keeps that thread's own live allocations (tr_local_allocs, bounded
 * by what is allocated at once) and asks them. The model's device pass
 * runs the same local view of every thread beside the global one and keeps,
 * by host_op_id, only the deletes where the two disagree (the alloc ran on
 * another thread, or the address was freed and taken again there):
 * tr_delete_info.exceptions. Both views are asked at the same point, the
 * delete's begin, with the address its end reports, so the host writer's
 * answer is the global one, exactly, with memory bounded by what is live and
 * by the deletes that crossed threads. (Host_op_ids are unique in a
 * process: libomptarget counts them.)
 *
 * Model layer: no OTF2. */
#ifndef TR_MODEL_DELETE_INFO_H
#define TR_MODEL_DELETE_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"
#include "core/record.h"

/* What is known of a delete: each part may be missing. */
typedef struct tr_delete_answer {
    int has_bytes, has_host;
    uint64_t bytes, host;
} tr_delete_answer;

/* One view of the live device allocations: by device, address -> bytes
 * and -> host address. */
typedef struct tr_local_allocs {
    int *nums;               /* the devices' OpenMP numbers (the model's, in order) */
    tr_u64map *bytes, *host; /* per device */
    size_t ndevices;
} tr_local_allocs;

/* For the devices numbered @nums[0 .. @ndevices) (data ops on others are
 * not counted, as the memory metric does not count them). Returns 0, or -1
 * out of memory. */
int tr_local_allocs_init(tr_local_allocs *la, const int *nums, size_t ndevices);
void tr_local_allocs_free(tr_local_allocs *la);
/* Applies @r when it ends an alloc or a delete (an END or POINT data op):
 * the rule the device memory metric counts by. For a delete, *@freed (when
 * not NULL) says what it freed. Returns 0, or -1 out of memory. */
int tr_local_allocs_apply(tr_local_allocs *la, const tr_record *r, tr_delete_answer *freed);
/* What @la says the delete that ends with @end (its END, or the POINT
 * itself; NULL: none) frees, without applying it. */
tr_delete_answer tr_local_allocs_ask(const tr_local_allocs *la, const tr_record *end);

/* The deletes whose answer is not their thread's view, by host_op_id; and,
 * while the device pass runs, the local answers waiting for their delete's
 * end (pending) and the global answers that came before their begin
 * (early). */
typedef struct tr_delete_info {
    tr_u64map exceptions;       /* id -> index in answers */
    tr_delete_answer *answers;
    size_t nanswers, capanswers;
    tr_u64map pending, early;   /* id -> index in slots */
    tr_delete_answer *slots;
    size_t nslots, capslots;
    uint32_t *free_slots;
    size_t nfree, capfree;
} tr_delete_info;

/* The device pass: the delete @id begins (its begin record on the thread
 * whose view said @local). */
int tr_delete_info_begin(tr_delete_info *di, uint64_t id, tr_delete_answer local);
/* The device pass: the delete @id ended, and the global view says @global. */
int tr_delete_info_end(tr_delete_info *di, uint64_t id, tr_delete_answer global);
/* After the pass: begins whose end never came answer nothing. */
int tr_delete_info_finish(tr_delete_info *di);
/* The host writer: the answer for the delete @id whose thread's view says
 * @local. */
tr_delete_answer tr_delete_info_answer(const tr_delete_info *di, uint64_t id, tr_delete_answer local);
void tr_delete_info_free(tr_delete_info *di);

#endif
