/* advice.h - which data mappings a program could remove (issue 37): five
 * patterns found in the run's data operations and kernel launches, in time
 * order, per device. docs/trace-model.md ("Data mapping advice") defines
 * each; the rules are here, in one place:
 *
 *   duplicate_transfer   a copy to the device of bytes the device already
 *                        holds for that host range: the range's last copy
 *                        either way had the same hash, the allocation is
 *                        the same, and no kernel ran on the device since
 *                        (or a copy back after it returned the same hash);
 *   round_trip           a copy to the device of bytes that came back from
 *                        that device unchanged (same range, same hash), its
 *                        allocation freed and made again in between;
 *   repeated_allocation  an allocation of a host range (address and size)
 *                        the device already allocated and freed before;
 *   unused_allocation    an allocation freed with no kernel launched on its
 *                        device while it lived;
 *   unused_transfer      a copy to the device overwritten by another copy
 *                        to the same range, or freed, before any kernel ran
 *                        on the device or any copy read the range back (an
 *                        overwrite by the same bytes is the later copy's
 *                        duplicate, not this one's waste).
 *
 * A kernel counts as using everything on its device: tracer cannot see what
 * a kernel reads or writes, so nothing a kernel may need is ever flagged.
 * A copy without a hash (TRACER_HASH off, too large, or not landed) makes
 * its range's content unknown: no duplicate or round trip is claimed on it.
 *
 * Pure computation: no journal, no OTF2. The model feeds it and attaches
 * each op's category to its events. */
#ifndef TR_MODEL_ADVICE_H
#define TR_MODEL_ADVICE_H

#include <stddef.h>
#include <stdint.h>

enum tr_advice_category {
    TR_ADVICE_NONE = 0,
    TR_ADVICE_DUPLICATE_TRANSFER,
    TR_ADVICE_ROUND_TRIP,
    TR_ADVICE_REPEATED_ALLOCATION,
    TR_ADVICE_UNUSED_ALLOCATION,
    TR_ADVICE_UNUSED_TRANSFER,
    TR_ADVICE_COUNT
};

/* The name tests and scripts read ("duplicate_transfer", ...); "" for NONE. */
const char *tr_advice_name(int category);

enum tr_advice_kind { TR_ADV_ALLOC, TR_ADV_TO, TR_ADV_FROM, TR_ADV_DELETE, TR_ADV_KERNEL };

/* One data operation (at its end) or kernel launch, as the analysis needs it. */
typedef struct tr_advice_op {
    uint64_t time;       /* ns; the order of the analysis */
    uint64_t op_id;      /* host_op_id: the key of the answer */
    int kind;            /* enum tr_advice_kind */
    int device;
    uint64_t host;       /* host address (alloc, to, from) */
    uint64_t dev_addr;   /* device address: an alloc's new storage, a delete's */
    uint64_t bytes;
    uint64_t hash;
    int has_hash;
} tr_advice_op;

/* Finds the patterns in @ops (any order; sorted here by time, then given
 * order) and writes, for each, the category of the op it flags into
 * @category[i] (TR_ADVICE_NONE elsewhere). An op gets one category: the
 * first found, except that an allocation found unused at its delete is
 * unused_allocation even when it was also a repeat (the delete carries the
 * category too). Returns 0, -1 out of memory. */
int tr_advice_run(tr_advice_op *ops, size_t n, uint8_t *category);

#endif
