/* otf2_workers.c - see otf2_workers.h. */
#define _GNU_SOURCE 1
#include "writer/otf2_workers.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/u64map.h"
#include "writer/event_queue.h"

/* The events between two hand-overs: fewer would make the threads share
 * the queue's indices too often, more would keep the writer waiting. */
#define BATCH 256
#define QUEUE_BYTES (4u << 20)

typedef struct worker {
    struct tr_workers *ws;
    pthread_t thread;
    int started;
    tr_queue q;
    OTF2_AttributeList *al;
    tr_u64map index;           /* location + 1 -> index in writers */
    OTF2_EvtWriter **writers;
    uint64_t *locs, *counts;
    size_t n, cap;
    int failed;
} worker;

struct tr_workers {
    OTF2_Archive *ar;
    uint64_t loc_base;
    unsigned n;
    unsigned batched;          /* events reserved since the last hand-over */
    worker *w;
};

static OTF2_EvtWriter *writer_of(worker *k, uint64_t loc, size_t *slot)
{
    uint64_t i;
    if (tr_u64map_get(&k->index, loc + 1, &i)) {
        *slot = (size_t)i;
        return k->writers[i];
    }
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 16;
        OTF2_EvtWriter **g = realloc(k->writers, cap * sizeof *g);
        if (g)
            k->writers = g;
        uint64_t *l = realloc(k->locs, cap * sizeof *l);
        if (l)
            k->locs = l;
        uint64_t *c = realloc(k->counts, cap * sizeof *c);
        if (c)
            k->counts = c;
        if (!g || !l || !c)
            return 0;
        k->cap = cap;
    }
    OTF2_EvtWriter *ew = OTF2_Archive_GetEvtWriter(k->ws->ar, k->ws->loc_base + loc);
    if (!ew || tr_u64map_put(&k->index, loc + 1, k->n))
        return 0;
    k->writers[k->n] = ew;
    k->locs[k->n] = loc;
    k->counts[k->n] = 0;
    *slot = k->n++;
    return ew;
}

static void close_slot(worker *k, size_t slot)
{
    if (!k->writers[slot])
        return;
    OTF2_EvtWriter_GetNumberOfEvents(k->writers[slot], &k->counts[slot]);
    if (OTF2_Archive_CloseEvtWriter(k->ws->ar, k->writers[slot]) != OTF2_SUCCESS)
        k->failed = 1;
    k->writers[slot] = 0;
}

static void handle(worker *k, const tr_wire_ev *e)
{
    size_t slot;
    OTF2_EvtWriter *ew = writer_of(k, e->loc, &slot);
    if (!ew) {
        k->failed = 1;
        return;
    }
    if (e->kind == TR_WIRE_CLOSE)
        close_slot(k, slot);
    else
        tr_wire_write(ew, k->al, e);
}

static void *run(void *arg)
{
    worker *k = arg;
    size_t at, len;
    while (tr_queue_peek(&k->q, &at, &len)) {
        size_t done = 0;
        while (done < len) {
            uint64_t size;
            memcpy(&size, k->q.ring + at + done, 8);
            if (size == TR_QUEUE_WRAP) {
                done = len; /* the rest of the ring, up to its end */
                break;
            }
            handle(k, (const tr_wire_ev *)(const void *)(k->q.ring + at + done + 8));
            done += size;
        }
        tr_queue_release(&k->q, done);
    }
    for (size_t i = 0; i < k->n; i++)
        close_slot(k, i);
    return 0;
}

unsigned tr_workers_default(void)
{
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return cpus <= 1 ? 0 : (unsigned)(cpus - 1);
}

static void free_worker(worker *k)
{
    if (k->al)
        OTF2_AttributeList_Delete(k->al);
    tr_queue_free(&k->q);
    tr_u64map_free(&k->index);
    free(k->writers);
    free(k->locs);
    free(k->counts);
}

tr_workers *tr_workers_start(OTF2_Archive *ar, uint64_t loc_base, unsigned n)
{
    if (!n)
        return 0;
    tr_workers *ws = calloc(1, sizeof *ws);
    if (!ws)
        return 0;
    ws->ar = ar;
    ws->loc_base = loc_base;
    /* The queues' indices sit on lines of their own (_Alignas(64)), which
     * calloc's 16-byte alignment would not keep. */
    ws->w = aligned_alloc(_Alignof(worker), n * sizeof *ws->w);
    if (ws->w)
        memset(ws->w, 0, n * sizeof *ws->w);
    if (!ws->w) {
        free(ws);
        return 0;
    }
    int ok = 1;
    for (unsigned i = 0; i < n && ok; i++) {
        worker *k = &ws->w[i];
        k->ws = ws;
        ok = !tr_queue_init(&k->q, QUEUE_BYTES) && (k->al = OTF2_AttributeList_New()) != 0;
        if (ok)
            ws->n = i + 1;
    }
    /* The program's signals are not for these threads: they start with
     * every signal blocked (the creating thread's mask, for a moment). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (unsigned i = 0; i < ws->n && ok; i++)
        ok = (ws->w[i].started = pthread_create(&ws->w[i].thread, 0, run, &ws->w[i]) == 0);
    pthread_sigmask(SIG_SETMASK, &old, 0);
    if (!ok) {
        for (unsigned i = 0; i < ws->n; i++) {
            tr_queue_close(&ws->w[i].q);
            if (ws->w[i].started)
                pthread_join(ws->w[i].thread, 0);
            free_worker(&ws->w[i]);
        }
        free(ws->w);
        free(ws);
        return 0;
    }
    return ws;
}

tr_wire_ev *tr_workers_reserve(tr_workers *ws, uint64_t loc, size_t bytes)
{
    if (++ws->batched >= BATCH)
        tr_workers_publish(ws);
    return tr_queue_reserve(&ws->w[loc % ws->n].q, bytes);
}

void tr_workers_publish(tr_workers *ws)
{
    ws->batched = 0;
    for (unsigned i = 0; i < ws->n; i++)
        tr_queue_publish(&ws->w[i].q);
}

int tr_workers_finish(tr_workers *ws, uint64_t *events, uint64_t nlocs)
{
    int rc = 0;
    for (unsigned i = 0; i < ws->n; i++)
        tr_queue_close(&ws->w[i].q);
    for (unsigned i = 0; i < ws->n; i++) {
        worker *k = &ws->w[i];
        pthread_join(k->thread, 0);
        for (size_t j = 0; j < k->n; j++)
            if (k->locs[j] < nlocs)
                events[k->locs[j]] = k->counts[j];
        rc |= k->failed ? -1 : 0;
        free_worker(k);
    }
    free(ws->w);
    free(ws);
    return rc;
}
