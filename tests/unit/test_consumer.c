/* test_consumer.c - the journal's consumer thread (journal/consumer.h):
 * records in, journal frames out, in order, nothing lost.
 *
 * The real buffers, consumer and journal writer: 4 threads record numbered
 * events (several chunks each, some of them while the consumer writes the
 * committed part of their current chunk every millisecond), a sync midway,
 * then the end as the library does it (tr_buf_stop, tr_consumer_stop). The
 * journal, read back, must hold:
 *   - for each thread one location whose chunks' seqs run 0, 1, 2, ... with
 *     no hole, each seq's frames in the file in seq order (a chunk may be
 *     written more than once, a growing prefix of it, never a shorter one
 *     after a longer one);
 *   - every record of every thread exactly once (largest copy of each
 *     chunk), in the order it was recorded;
 *   - no damage, and tr_journal_load's view: one stream per thread with
 *     every record and no missing chunk.
 *
 * Prints one line per check and exits 1 if any fails. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "journal/consumer.h"
#include "journal/journal_read.h"
#include "journal/journal_write.h"
#include "journal/symbols.h"
#include "journal/journal_load.h"

/* The consumer names what records reference; these records reference
 * nothing, so no symbol table or region name is ever asked for. */
tr_symbols *tr_symbols_open(void) { return 0; }
void tr_symbols_close(tr_symbols *s) { (void)s; }
void tr_symbols_describe(tr_symbols *s, uint64_t pc, tr_code_description *out) { (void)s, (void)pc, (void)out; }
int tr_symbols_variable(tr_symbols *s, uint64_t addr, tr_variable *out) { (void)s, (void)addr, (void)out; return 0; }
const char *tr_user_region_name(uint32_t id) { (void)id; return 0; }
int tr_lifecycle_active(void) { return 1; }

#define THREADS 4
#define PER_THREAD 20000u /* ~20 chunks each */
#define MAX_SEQ 256

static int failures;

static void check(const char *name, int ok, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail);
    failures += !ok;
}

static pthread_barrier_t half;

static void *producer(void *arg)
{
    uint64_t t = (uint64_t)(intptr_t)arg;
    for (uint64_t serial = 1; serial <= PER_THREAD; serial++) {
        tr_record *r = tr_buf_reserve();
        if (!r) {
            fprintf(stderr, "thread %llu: no slot for record %llu\n", (unsigned long long)t,
                    (unsigned long long)serial);
            exit(1);
        }
        *r = (tr_record){.time = serial, .type = TR_REC_MPI_CALL, .phase = TR_PHASE_POINT, .u = {t + 1, serial}};
        tr_buf_commit();
        if (serial == PER_THREAD / 2)
            pthread_barrier_wait(&half);
        if (serial % 512 == 0)
            sched_yield(); /* let the consumer's partial flushes fall between records */
    }
    return 0;
}

/* One location of the journal: the largest copy of each chunk, and what
 * was wrong in the order of its frames. */
typedef struct loc {
    uint64_t producer;           /* u0 of its records, 0 until seen */
    uint32_t records[MAX_SEQ];   /* largest copy of each seq */
    uint64_t first[MAX_SEQ];     /* serial of its first record */
    uint64_t max_seq;            /* highest seq seen, +1 */
    int bad_order, mixed;
} loc;

static loc locs[THREADS];
static int bad_location;

static int visit(void *ctx, const tr_frame_header *h, const void *payload, uint64_t bytes)
{
    (void)ctx;
    if (h->type != TR_FRAME_CHUNK)
        return 0;
    if (h->location >= THREADS || h->seq >= MAX_SEQ || bytes != h->records * sizeof(tr_record)) {
        bad_location++;
        return 0;
    }
    loc *l = &locs[h->location];
    const tr_record *r = payload;
    for (uint32_t i = 0; i < h->records; i++) {
        if (!l->producer)
            l->producer = r[i].u[0];
        l->mixed += r[i].u[0] != l->producer;
    }
    /* File order: never an older seq after a newer one, never a shorter
     * copy of a chunk after a longer one. */
    if (h->seq + 1 < l->max_seq || (h->seq + 1 == l->max_seq && h->records < l->records[h->seq]))
        l->bad_order++;
    if (h->seq + 1 > l->max_seq)
        l->max_seq = h->seq + 1;
    if (h->records > l->records[h->seq]) {
        l->records[h->seq] = h->records;
        l->first[h->seq] = h->records ? r[0].u[1] : 0;
    }
    return 0;
}

int main(void)
{
    setvbuf(stdout, 0, _IOLBF, 0);
    char dir[200];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tr-consumer-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    /* 128 chunks: enough for every thread's records at once, so nothing
     * waits and nothing is dropped; the check is what the consumer does. */
    if (dfd < 0 || tr_journal_open(dfd) || tr_buf_init(128u * TR_CHUNK_BYTES, 128u * TR_CHUNK_BYTES, 0, 0)) {
        printf("FAIL set-up\n");
        return 1;
    }
    close(dfd);
    tr_buf_start();
    if (tr_consumer_start(1000000ull)) { /* a partial flush every 1 ms */
        printf("FAIL consumer start\n");
        return 1;
    }
    pthread_barrier_init(&half, 0, THREADS + 1);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], 0, producer, (void *)(intptr_t)t);
    pthread_barrier_wait(&half);
    tr_consumer_sync(); /* while the threads go on recording */
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], 0);
    tr_buf_stop();
    tr_consumer_stop();
    uint64_t late = tr_buf_refused_total();
    tr_journal_close();

    char path[sizeof dir + 32], detail[512];
    snprintf(path, sizeof path, "%s/%s", dir, TR_JOURNAL_NAME);
    tr_journal_stats st;
    if (tr_journal_scan(path, visit, 0, &st)) {
        printf("FAIL cannot read %s\n", path);
        return 1;
    }
    snprintf(detail, sizeof detail, "frames %llu, chunk frames %llu, bad %llu, skipped %llu, truncated %d",
             (unsigned long long)st.frames, (unsigned long long)st.chunks, (unsigned long long)st.bad_frames,
             (unsigned long long)st.skipped_bytes, st.truncated);
    check("journal: intact", !st.bad_frames && !st.skipped_bytes && !st.truncated && !bad_location, detail);

    int order_ok = 1, all_ok = 1, producers_seen = 0;
    uint64_t total = 0;
    for (int i = 0; i < THREADS; i++) {
        loc *l = &locs[i];
        producers_seen |= l->producer && l->producer <= THREADS ? 1 << (l->producer - 1) : 0;
        if (l->bad_order || l->mixed) {
            order_ok = 0;
            printf("# location %d: %d frames out of order, %d records of another thread\n", i, l->bad_order,
                   l->mixed);
        }
        /* The largest copies, in seq order, hold serials 1..PER_THREAD. */
        uint64_t next = 1;
        for (uint64_t s = 0; s < l->max_seq; s++) {
            if (!l->records[s] || l->first[s] != next) {
                all_ok = 0;
                printf("# location %d, chunk %llu: %u records from serial %llu, expected serial %llu\n", i,
                       (unsigned long long)s, l->records[s], (unsigned long long)l->first[s],
                       (unsigned long long)next);
                break;
            }
            next += l->records[s];
        }
        if (next != PER_THREAD + 1) {
            all_ok = 0;
            printf("# location %d: serials up to %llu of %u\n", i, (unsigned long long)next - 1, PER_THREAD);
        }
        total += next - 1;
    }
    snprintf(detail, sizeof detail, "%d threads", THREADS);
    check("order: each thread's chunks and records in order, one location each",
          order_ok && producers_seen == (1 << THREADS) - 1, detail);
    snprintf(detail, sizeof detail, "%llu of %u records, %llu counted as late", (unsigned long long)total,
             THREADS * PER_THREAD, (unsigned long long)late);
    check("nothing lost: every record in the journal exactly once", all_ok && late == 0, detail);

    tr_journal_data jd;
    char err[256] = "";
    if (tr_journal_load(path, &jd, err, sizeof err)) {
        check("load: the journal loads", 0, err);
    } else {
        int streams_ok = jd.data.nstreams == THREADS;
        for (size_t s = 0; s < jd.data.nstreams; s++) {
            const tr_stream *str = &jd.data.streams[s];
            uint64_t n = 0;
            for (size_t i = 0; i < str->n; i++)
                if (str->rec[i].type == TR_REC_MPI_CALL && str->rec[i].u[1] == ++n)
                    continue;
                else
                    streams_ok = 0;
            streams_ok &= n == PER_THREAD;
        }
        snprintf(detail, sizeof detail, "%zu streams, missing_chunks %llu", (size_t)jd.data.nstreams,
                 (unsigned long long)jd.stats.missing_chunks);
        check("load: one stream per thread, every record in order", streams_ok && !jd.stats.missing_chunks,
              detail);
        tr_journal_data_free(&jd);
    }
    if (!failures) {
        unlink(path);
        rmdir(dir);
    }
    return failures ? 1 : 0;
}
