/* host_slots.h - which host location each thread's events go to (issue 34).
 *
 * A program that runs thousands of short threads must not cost a location
 * (an OTF2 event file, a writer's chunk, a reader's chunk) per thread: a
 * thread whose stream has ended with nothing left to write gives its
 * location back, and the next thread to need one takes the lowest free
 * location. Host locations are 0 .. used - 1, below the model's nstreams
 * (the numbers reserved for host threads). Internal to src/model/. */
#ifndef TR_MODEL_HOST_SLOTS_H
#define TR_MODEL_HOST_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#define TR_HOST_NO_SLOT UINT32_MAX

typedef struct tr_host_slots {
    uint32_t *free;   /* min-heap of the locations given back */
    size_t nfree, cap;
    uint32_t used;    /* locations handed out so far: 0 .. used - 1 */
} tr_host_slots;

/* Room for @nstreams threads, so that giving back never allocates.
 * Returns 0, or -1 out of memory. */
int tr_host_slots_init(tr_host_slots *hs, size_t nstreams);
/* The lowest free location, or the next new one. */
uint32_t tr_host_slots_take(tr_host_slots *hs);
/* @slot (taken before, not given back since) is free again. */
void tr_host_slots_give(tr_host_slots *hs, uint32_t slot);
void tr_host_slots_free(tr_host_slots *hs);

#endif
