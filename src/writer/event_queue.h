/* event_queue.h - a byte ring from one producer thread to one consumer
 * thread, for the events the model's pass has resolved to OTF2 ids
 * (otf2_events.c): the pass fills it, a writing thread empties it into OTF2
 * (otf2_workers.c).
 *
 * Entries are variable-sized and never split: one that would run past the
 * ring's end starts it again (a wrap marker fills the rest). The producer
 * publishes entries in batches (tr_queue_publish) so the two threads share
 * a cache line once per batch, not per event; either side that finds the
 * ring empty (full) sleeps on a condition variable until the other wakes
 * it. No allocation after tr_queue_init. */
#ifndef TR_WRITER_EVENT_QUEUE_H
#define TR_WRITER_EVENT_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tr_queue {
    unsigned char *ring;
    size_t cap;                 /* a power of two */
    _Alignas(64) _Atomic uint64_t tail; /* bytes published by the producer */
    uint64_t reserved;          /* producer: bytes written, published or not */
    _Alignas(64) _Atomic uint64_t head; /* bytes the consumer has released */
    _Alignas(64) pthread_mutex_t lock;
    pthread_cond_t entries, room; /* the consumer waits on the first, the producer on the second */
    _Atomic int consumer_waits, producer_waits;
    _Atomic int closed;         /* the producer is done: the consumer ends once the ring is empty */
} tr_queue;

/* A ring of @cap bytes (rounded up to a power of two). 0, or -1 out of memory. */
int tr_queue_init(tr_queue *q, size_t cap);
void tr_queue_free(tr_queue *q);

/* Producer: room for an entry of @bytes (at most cap / 4), waiting for the
 * consumer while the ring is full; the entry is the caller's to fill until
 * the next tr_queue_reserve. */
void *tr_queue_reserve(tr_queue *q, size_t bytes);
/* Producer: entries reserved so far become the consumer's. */
void tr_queue_publish(tr_queue *q);
/* Producer: no more entries (publishes what is reserved). */
void tr_queue_close(tr_queue *q);

/* Consumer: the published bytes not yet released, from *@at (an offset
 * into the ring) for *@len bytes, contiguous up to a wrap; waits while
 * there are none. Returns 0 when the queue is closed and empty. */
int tr_queue_peek(tr_queue *q, size_t *at, size_t *len);
/* Consumer: @bytes at the head are done (the producer may reuse them). */
void tr_queue_release(tr_queue *q, size_t bytes);

/* An entry starts with its size (bytes, a multiple of 8); 0 marks a wrap:
 * the rest of the ring up to its end is no entry. */
#define TR_QUEUE_WRAP 0u

#endif
