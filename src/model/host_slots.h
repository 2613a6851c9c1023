/* host_slots.h - which host location each thread's events go to (issue 34).
 *
 * A program that runs thousands of short threads must not cost a location
 * (an OTF2 event file, a writer's chunk, a reader's chunk) per thread: a
 * thread whose stream has ended with nothing left to write gives its
 * location back, and the next thread to need one takes the lowest free
 * location, as long as that location's last event is not later than the
 * thread's first (a thread whose first event is a drop-mode gap begun
 * earlier gets a new one): a location's events stay in time order. Host
 * locations are 0 .. used - 1, below the model's nstreams (the numbers
 * reserved for host threads). Internal to src/model/. */
#ifndef TR_MODEL_HOST_SLOTS_H
#define TR_MODEL_HOST_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#define TR_HOST_NO_SLOT UINT32_MAX

typedef struct tr_host_slot_free {
    uint32_t slot;
    uint64_t since; /* the time of its last event */
} tr_host_slot_free;

typedef struct tr_host_slots {
    tr_host_slot_free *free; /* min-heap (by slot) of the locations given back */
    size_t nfree, cap;
    uint32_t used;           /* locations handed out so far: 0 .. used - 1 */
} tr_host_slots;

/* Room for @nstreams threads, so that giving back never allocates.
 * Returns 0, or -1 out of memory. */
int tr_host_slots_init(tr_host_slots *hs, size_t nstreams);
/* For a thread whose first event is at @t: the lowest free location when
 * its last event is not after @t, else the next new one. */
uint32_t tr_host_slots_take(tr_host_slots *hs, uint64_t t);
/* @slot (taken before, not given back since) is free again; its last
 * event was at @since. */
void tr_host_slots_give(tr_host_slots *hs, uint32_t slot, uint64_t since);
void tr_host_slots_free(tr_host_slots *hs);

#endif
