/* event_queue.c - see event_queue.h.
 *
 * Sleeping never loses a wake-up: a side that is about to sleep sets its
 * own flag (consumer_waits, producer_waits) under the lock and looks at the
 * other side's index once more before it waits; the other side stores its
 * index, then reads that flag (both sequentially consistent), and signals
 * that side's condition under the lock when it is set. Either the sleeper
 * sees the new index, or the other side sees the flag. Each side has a flag
 * and a condition of its own: both may sleep at once for a moment (the
 * producer waiting for room just after it woke the consumer). */
#include "writer/event_queue.h"

#include <stdlib.h>
#include <string.h>

int tr_queue_init(tr_queue *q, size_t cap)
{
    memset(q, 0, sizeof *q);
    size_t c = 4096;
    while (c < cap)
        c *= 2;
    q->cap = c;
    q->ring = malloc(c);
    if (!q->ring)
        return -1;
    atomic_init(&q->tail, 0);
    atomic_init(&q->head, 0);
    atomic_init(&q->consumer_waits, 0);
    atomic_init(&q->producer_waits, 0);
    atomic_init(&q->closed, 0);
    if (pthread_mutex_init(&q->lock, 0)) {
        free(q->ring);
        return -1;
    }
    if (pthread_cond_init(&q->entries, 0)) {
        pthread_mutex_destroy(&q->lock);
        free(q->ring);
        return -1;
    }
    if (pthread_cond_init(&q->room, 0)) {
        pthread_cond_destroy(&q->entries);
        pthread_mutex_destroy(&q->lock);
        free(q->ring);
        return -1;
    }
    return 0;
}

void tr_queue_free(tr_queue *q)
{
    if (!q->ring)
        return;
    pthread_cond_destroy(&q->entries);
    pthread_cond_destroy(&q->room);
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
    q->ring = 0;
}

static void wake_if(tr_queue *q, _Atomic int *waits, pthread_cond_t *cond)
{
    if (!atomic_load(waits))
        return;
    pthread_mutex_lock(&q->lock);
    pthread_cond_signal(cond);
    pthread_mutex_unlock(&q->lock);
}

void tr_queue_publish(tr_queue *q)
{
    if (atomic_load_explicit(&q->tail, memory_order_relaxed) == q->reserved)
        return;
    atomic_store(&q->tail, q->reserved);
    wake_if(q, &q->consumer_waits, &q->entries);
}

/* Producer: until @bytes more fit. */
static void wait_for_room(tr_queue *q, size_t bytes)
{
    if (q->reserved + bytes - atomic_load_explicit(&q->head, memory_order_acquire) <= q->cap)
        return;
    tr_queue_publish(q); /* what is reserved must reach the consumer for room to come */
    pthread_mutex_lock(&q->lock);
    atomic_store(&q->producer_waits, 1);
    while (q->reserved + bytes - atomic_load(&q->head) > q->cap)
        pthread_cond_wait(&q->room, &q->lock);
    atomic_store(&q->producer_waits, 0);
    pthread_mutex_unlock(&q->lock);
}

void *tr_queue_reserve(tr_queue *q, size_t bytes)
{
    size_t need = 8 + ((bytes + 7) & ~(size_t)7);
    size_t at = (size_t)(q->reserved & (q->cap - 1));
    if (need > q->cap - at) {
        size_t rest = q->cap - at;
        wait_for_room(q, rest);
        uint64_t wrap = TR_QUEUE_WRAP;
        memcpy(q->ring + at, &wrap, 8);
        q->reserved += rest;
        at = 0;
    }
    wait_for_room(q, need);
    uint64_t len = need;
    memcpy(q->ring + at, &len, 8);
    q->reserved += need;
    return q->ring + at + 8;
}

void tr_queue_close(tr_queue *q)
{
    tr_queue_publish(q);
    atomic_store(&q->closed, 1);
    pthread_mutex_lock(&q->lock);
    pthread_cond_signal(&q->entries);
    pthread_mutex_unlock(&q->lock);
}

int tr_queue_peek(tr_queue *q, size_t *at, size_t *len)
{
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    if (tail == head) {
        pthread_mutex_lock(&q->lock);
        atomic_store(&q->consumer_waits, 1);
        while ((tail = atomic_load(&q->tail)) == head && !atomic_load(&q->closed))
            pthread_cond_wait(&q->entries, &q->lock);
        atomic_store(&q->consumer_waits, 0);
        pthread_mutex_unlock(&q->lock);
        tail = atomic_load_explicit(&q->tail, memory_order_acquire);
        if (tail == head)
            return 0; /* closed, and everything taken */
    }
    *at = (size_t)(head & (q->cap - 1));
    size_t n = (size_t)(tail - head);
    *len = n < q->cap - *at ? n : q->cap - *at;
    return 1;
}

void tr_queue_release(tr_queue *q, size_t bytes)
{
    atomic_store(&q->head, atomic_load_explicit(&q->head, memory_order_relaxed) + bytes);
    wake_if(q, &q->producer_waits, &q->room);
}
