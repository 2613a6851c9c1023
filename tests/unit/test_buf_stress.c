/* test_buf_stress.c - the thread buffers (core/buf.h) under load: N producer
 * threads record numbered events as fast as they can while one taker thread
 * plays the journal's consumer (take_full, reclaim_idle, recycle). The pool
 * is small, so producers run out of chunks all the time:
 *
 *   block   (argv[1] = "block") TRACER_ON_FULL=block: every record arrives,
 *           exactly once, in its thread's order; nothing is lost.
 *   drop    (argv[1] = "drop") TRACER_ON_FULL=drop: every record arrives
 *           exactly once and in order, or is counted as lost; the LOSS record
 *           in front of the next chunk says exactly how many went missing
 *           there, and what is still pending at the end adds up.
 *
 * Both then stop recording while the producers go on trying: each refused
 * record is counted, and tr_buf_refused_total (read by another thread while
 * the producers still run, as at unload) sums to the number refused.
 *
 * One mode per process: tr_buf_init sets up the process's single pool. Built
 * with its own copy of buf.c, so it runs under ThreadSanitizer with nothing
 * else around (the TSan build is where a data race here shows up). Prints one
 * line per check and exits 1 if any fails. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"

#define PRODUCERS 4
#define PER_THREAD 150000u /* ~115 chunks' worth each */
#define REFUSED 1000u      /* tried by each producer after the stop */

static int failures;

static void check(const char *name, int ok, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail);
    failures += !ok;
}

/* What the taker saw of one producer. A record carries u0 = producer number
 * + 1, u1 = its serial (1, 2, ...): each producer's serials must arrive in
 * order, a gap only where a LOSS record says so. */
typedef struct seen {
    tr_tbuf *buf;        /* the producer's buffer (known once it recorded) */
    uint64_t next;       /* next serial expected */
    uint64_t received, lost, bad;
    uint64_t next_seq;   /* next chunk seq expected */
    uint64_t bad_seq;
    char first_bad[160];
} seen;

static seen producers[PRODUCERS];
static tr_tbuf *producer_buf[PRODUCERS]; /* set by each producer, read once joined */
static uint64_t attempted[PRODUCERS], got_null[PRODUCERS];
static int drop;

static void complain(seen *s, const char *what, uint64_t got)
{
    if (!s->bad++ && !s->bad_seq)
        snprintf(s->first_bad, sizeof s->first_bad, "%s: expected %llu, got %llu", what,
                 (unsigned long long)s->next, (unsigned long long)got);
}

/* Reads records [from, to) of @c. */
static void read_records(const tr_chunk *c, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        const tr_record *r = &c->rec[i];
        if (r->type == TR_REC_LOSS) {
            /* u0 lost records: the next serial is that many further on. */
            for (int p = 0; p < PRODUCERS; p++)
                if (producers[p].buf == c->owner) {
                    producers[p].lost += r->u[0];
                    producers[p].next += r->u[0];
                }
            continue;
        }
        uint64_t p = r->u[0] - 1;
        if (p >= PRODUCERS) {
            fprintf(stderr, "record %u of chunk %u: producer %llu\n", i, c->index, (unsigned long long)p);
            failures++;
            continue;
        }
        seen *s = &producers[p];
        s->buf = c->owner;
        if (r->u[1] != s->next)
            complain(s, "serial", r->u[1]);
        s->next = r->u[1] + 1;
        s->received++;
    }
}

/* One chunk off the full stack: it must be its owner's next one. */
static void read_chunk(tr_chunk *c)
{
    /* The producer of the chunk is known by its records (a loss record
     * alone says nothing of it: match the owner). */
    uint32_t n = __atomic_load_n(&c->count, __ATOMIC_ACQUIRE);
    seen *s = 0;
    for (uint32_t i = 0; i < n && !s; i++)
        if (c->rec[i].type != TR_REC_LOSS && c->rec[i].u[0] - 1 < PRODUCERS)
            s = &producers[c->rec[i].u[0] - 1];
    for (int p = 0; p < PRODUCERS && !s; p++)
        if (producers[p].buf == c->owner)
            s = &producers[p];
    if (s) {
        if (c->seq != s->next_seq && !s->bad_seq++)
            snprintf(s->first_bad, sizeof s->first_bad, "chunk seq: expected %llu, got %llu",
                     (unsigned long long)s->next_seq, (unsigned long long)c->seq);
        s->next_seq = c->seq + 1;
        s->buf = c->owner;
    }
    read_records(c, c->flushed, n);
    c->flushed = n;
}

/* The full stack is newest first: a thread's chunks must be read oldest
 * first. */
static uint32_t drain(void)
{
    tr_chunk *list = tr_buf_take_full(), *rev = 0;
    uint32_t n = 0;
    while (list) {
        tr_chunk *next = list->next_full;
        list->next_full = rev;
        rev = list;
        list = next;
    }
    while (rev) {
        tr_chunk *next = rev->next_full;
        read_chunk(rev);
        tr_buf_recycle(rev);
        rev = next;
        n++;
    }
    return n;
}

static int taker_stop;
static uint64_t chunks_taken, reclaimed;

static void *taker(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&taker_stop, __ATOMIC_ACQUIRE)) {
        uint32_t n = drain();
        chunks_taken += n;
        reclaimed += tr_buf_reclaim_idle();
        /* Drop mode: a slow consumer, so producers run out of chunks. */
        struct timespec ts = {0, drop ? 200000 : (n ? 0 : 100000)};
        nanosleep(&ts, 0);
    }
    chunks_taken += drain();
    return 0;
}

static pthread_barrier_t stopped;

static void *producer(void *arg)
{
    int p = (int)(intptr_t)arg;
    for (uint64_t serial = 1; serial <= PER_THREAD; serial++) {
        tr_record *r = tr_buf_reserve();
        attempted[p]++;
        if (!r) {
            got_null[p]++;
            continue;
        }
        *r = (tr_record){.time = serial, .type = TR_REC_MPI_CALL, .phase = TR_PHASE_POINT,
                         .u = {(uint64_t)p + 1, serial}};
        tr_buf_commit();
    }
    producer_buf[p] = tr_buf_tls;
    pthread_barrier_wait(&stopped); /* everyone recorded */
    pthread_barrier_wait(&stopped); /* main stopped recording */
    for (unsigned i = 0; i < REFUSED; i++)
        if (tr_buf_reserve())
            tr_buf_commit();
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, 0, _IOLBF, 0);
    if (argc != 2 || (strcmp(argv[1], "block") && strcmp(argv[1], "drop"))) {
        fprintf(stderr, "usage: %s block|drop\n", argv[0]);
        return 2;
    }
    drop = !strcmp(argv[1], "drop");
    for (int p = 0; p < PRODUCERS; p++)
        producers[p].next = 1;
    /* 8 chunks for 4 producers, 3 each at most: they wait (or drop) often. */
    if (tr_buf_init(8u * TR_CHUNK_BYTES, 3u * TR_CHUNK_BYTES, drop, 0)) {
        perror("tr_buf_init");
        return 1;
    }
    tr_buf_start();
    pthread_barrier_init(&stopped, 0, PRODUCERS + 1);
    pthread_t tk, th[PRODUCERS];
    pthread_create(&tk, 0, taker, 0);
    for (int p = 0; p < PRODUCERS; p++)
        pthread_create(&th[p], 0, producer, (void *)(intptr_t)p);
    pthread_barrier_wait(&stopped);
    tr_buf_stop();
    __atomic_store_n(&taker_stop, 1, __ATOMIC_RELEASE);
    pthread_join(tk, 0);
    /* What is left in the producers' current chunks (a chunk taken over
     * by reclaim_idle is FULL, not current: it was on the full stack). The
     * producers wait at the barrier meanwhile. */
    for (int p = 0; p < PRODUCERS; p++) {
        tr_tbuf *b = producer_buf[p];
        producers[p].buf = b;
        tr_chunk *c = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
        if (tr_buf_is_current(b, c))
            read_chunk(c);
    }
    /* The producers are refusing now; the total is read meanwhile (as the
     * library reads it at unload while the application's threads may still
     * run), then once they are done. */
    pthread_barrier_wait(&stopped);
    uint64_t refused_during = tr_buf_refused_total();
    for (int p = 0; p < PRODUCERS; p++)
        pthread_join(th[p], 0);
    uint64_t refused = tr_buf_refused_total();

    char detail[512];
    int order_ok = 1, count_ok = 1;
    uint64_t total_lost = 0, total_null = 0;
    for (int p = 0; p < PRODUCERS; p++) {
        seen *s = &producers[p];
        /* Still pending: dropped after the thread's last chunk was taken. */
        uint64_t pending = producer_buf[p]->lost;
        if (s->bad || s->bad_seq) {
            order_ok = 0;
            printf("# producer %d: %s (%llu bad serials, %llu bad seqs)\n", p, s->first_bad,
                   (unsigned long long)s->bad, (unsigned long long)s->bad_seq);
        }
        if (s->received + s->lost + pending != PER_THREAD || s->lost + pending != got_null[p]) {
            count_ok = 0;
            printf("# producer %d: received %llu + lost %llu + pending %llu, dropped %llu of %u\n", p,
                   (unsigned long long)s->received, (unsigned long long)s->lost, (unsigned long long)pending,
                   (unsigned long long)got_null[p], PER_THREAD);
        }
        total_lost += s->lost + pending;
        total_null += got_null[p];
    }
    snprintf(detail, sizeof detail, "%d producers x %u records, %llu chunks taken, %llu reclaimed", PRODUCERS,
             PER_THREAD, (unsigned long long)chunks_taken, (unsigned long long)reclaimed);
    check("order: every record arrives once, in its thread's order", order_ok, detail);
    snprintf(detail, sizeof detail, "%llu dropped, %llu counted as lost", (unsigned long long)total_null,
             (unsigned long long)total_lost);
    if (drop)
        check("drop: received + counted as lost = recorded, and some were dropped", count_ok && total_lost > 0,
              detail);
    else
        check("block: every record received, none lost", count_ok && total_null == 0, detail);
    snprintf(detail, sizeof detail, "refused %llu (read while refusing: %llu), expected %u",
             (unsigned long long)refused, (unsigned long long)refused_during, PRODUCERS * REFUSED);
    check("stop: every refused record is counted", refused == PRODUCERS * REFUSED &&
          refused_during <= refused, detail);
    return failures ? 1 : 0;
}
