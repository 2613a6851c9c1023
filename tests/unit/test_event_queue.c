/* test_event_queue.c - the byte ring between the model's thread and a
 * writing thread (writer/event_queue.h): every entry arrives once, whole,
 * in order, through a ring small enough that both sides keep waiting for
 * each other (the producer for room, the consumer for entries), with
 * entries of every size up to the largest allowed, wraps at every offset,
 * and publishes at uneven intervals. A lost wake-up shows as a hang (the
 * test's timeout); a torn or reordered entry as a wrong checksum or
 * sequence number. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "writer/event_queue.h"

#define ENTRIES 400000
#define RING 4096

typedef struct entry {
    uint64_t seq;
    uint32_t words;  /* payload words after the header */
    uint32_t check;
} entry;

static tr_queue q;
static long failures;

static uint32_t mix(uint64_t seq, uint32_t i) { return (uint32_t)(seq * 2654435761u) ^ (i * 40503u); }

/* Now and then one side pauses, so that the other fills (or drains) the
 * ring and sleeps. */
static void pause_sometimes(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    if ((*state >> 16) % 5000 == 0) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, 0);
    }
}

static void *consume(void *arg)
{
    (void)arg;
    uint64_t want = 0;
    unsigned state = 7;
    size_t at, len;
    while (tr_queue_peek(&q, &at, &len)) {
        size_t done = 0;
        while (done < len) {
            uint64_t size;
            memcpy(&size, q.ring + at + done, 8);
            if (size == TR_QUEUE_WRAP) {
                done = len;
                break;
            }
            const entry *e = (const entry *)(const void *)(q.ring + at + done + 8);
            const uint32_t *w = (const uint32_t *)(const void *)(e + 1);
            uint32_t sum = 0;
            for (uint32_t i = 0; i < e->words; i++)
                sum ^= w[i] ^ mix(e->seq, i);
            if (e->seq != want || sum != 0 || e->check != (uint32_t)e->seq) {
                if (failures++ < 5)
                    printf("FAIL: entry %llu (want %llu), %u words, checksum %u\n", (unsigned long long)e->seq,
                           (unsigned long long)want, e->words, sum);
            }
            want = e->seq + 1;
            done += size;
        }
        tr_queue_release(&q, done);
        pause_sometimes(&state);
    }
    if (want != ENTRIES) {
        printf("FAIL: %llu entries arrived, want %d\n", (unsigned long long)want, ENTRIES);
        failures++;
    }
    return 0;
}

int main(void)
{
    if (tr_queue_init(&q, RING)) {
        puts("FAIL: out of memory");
        return 1;
    }
    pthread_t t;
    if (pthread_create(&t, 0, consume, 0)) {
        puts("FAIL: no thread");
        return 1;
    }
    unsigned state = 3;
    for (uint64_t seq = 0; seq < ENTRIES; seq++) {
        /* Sizes from the header alone up to a quarter of the ring. */
        uint32_t words = (uint32_t)((seq * 7919u) % ((RING / 4 - sizeof(entry) - 8) / 4));
        entry *e = tr_queue_reserve(&q, sizeof *e + words * 4u);
        e->seq = seq;
        e->words = words;
        e->check = (uint32_t)seq;
        uint32_t *w = (uint32_t *)(void *)(e + 1);
        for (uint32_t i = 0; i < words; i++)
            w[i] = mix(seq, i);
        if (seq % 37 == 0 || (seq * 31) % 101 == 0)
            tr_queue_publish(&q);
        pause_sometimes(&state);
    }
    tr_queue_close(&q);
    pthread_join(t, 0);
    tr_queue_free(&q);
    if (failures)
        return 1;
    puts("event_queue: OK");
    return 0;
}
