/* test_chunk_order.c - issue 18, B1 and B2: the buffer, the consumer and
 * the journal reader driven directly, with the interleavings forced (no
 * timing): the consumer's interval hook, and buf.c's test points (compiled
 * in with -DTR_BUF_TEST_HOOKS, in this test's own copy of buf.c only).
 *
 *   order   a thread pushes chunk k-1 and starts chunk k while the consumer
 *           runs its interval hook (after drain_full, before flush_partial):
 *           the journal must still hold the thread's chunks in seq order.
 *   gap     a journal whose chunks of a thread have a hole in their seqs:
 *           the reader must put a measurement gap there and count it.
 *   switch  a crash while a thread hands over a full chunk (it left cur, it
 *           is not on the full stack yet): the crash path must write it.
 *   reclaim a crash while the consumer takes an idle thread's chunk and the
 *           thread, noticing, forgets it: the crash path must write it.
 *
 * Prints one line per check and exits 1 if any fails. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "journal/consumer.h"
#include "journal/journal_read.h"
#include "journal/journal_write.h"
#include "journal/journal_load.h"

/* consumer.c names user regions (core/user_regions.c, not linked here); these records
 * have none. */
const char *tr_user_region_name(uint32_t id);
const char *tr_user_region_name(uint32_t id)
{
    (void)id;
    return 0;
}

/* core/unload.c asks whether tracing is active (core/lifecycle.c, not
 * linked here). */
int tr_lifecycle_active(void);
int tr_lifecycle_active(void) { return 1; }

static int failures;

static void check(const char *name, int ok, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail);
    failures += !ok;
}

static uint64_t serial = 1;

/* One record, numbered: the journal must give every number back. */
static void record(void)
{
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    *r = (tr_record){.time = serial, .type = TR_REC_MPI_CALL, .phase = TR_PHASE_POINT, .u = {serial}};
    serial++;
    tr_buf_commit();
}

static char dir[96]; /* the paths built from it are 128 bytes */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* The previous case's directory goes once it passed; after a failure it
 * stays for a look (its path was printed). */
static void remove_dir(void)
{
    if (dir[0] && !failures)
        nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    dir[0] = 0;
}

static void open_journal(const char *name)
{
    remove_dir();
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tr-chunk-order-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || tr_journal_open(fd)) {
        perror("journal");
        exit(1);
    }
    close(fd);
    printf("# %s: %s/tracer.journal\n", name, dir);
}

static void journal_path(char *out, size_t n) { snprintf(out, n, "%s/tracer.journal", dir); }

/* --- the frames of a journal --------------------------------------------- */

typedef struct frame {
    uint32_t location;
    uint64_t seq;
    uint32_t records;
    uint64_t first, last; /* serials */
} frame;

typedef struct frames {
    frame f[4096];
    int n;
} frames;

static int visit(void *ctx, const tr_frame_header *h, const void *payload, uint64_t bytes)
{
    frames *fs = ctx;
    if (h->type != TR_FRAME_CHUNK || !h->records || fs->n == 4096 || bytes < h->records * sizeof(tr_record))
        return 0;
    const tr_record *r = payload;
    fs->f[fs->n++] = (frame){h->location, h->seq, h->records, r[0].u[0], r[h->records - 1].u[0]};
    return 0;
}

static void scan(const char *path, frames *fs)
{
    tr_journal_stats st;
    memset(fs, 0, sizeof *fs);
    if (tr_journal_scan(path, visit, fs, &st)) {
        perror(path);
        exit(1);
    }
}

/* --- order --------------------------------------------------------------- */

static sem_t go, done;
static int armed;

static void hook(void)
{
    if (!__atomic_exchange_n(&armed, 0, __ATOMIC_ACQ_REL))
        return;
    sem_post(&go);  /* the consumer stands between drain_full and flush_partial */
    sem_wait(&done);
}

static void test_order(void)
{
    open_journal("order");
    sem_init(&go, 0, 0);
    sem_init(&done, 0, 0);
    tr_consumer_interval_hook = hook;
    if (tr_consumer_start(1)) {
        perror("consumer");
        exit(1);
    }
    for (int i = 0; i < 10; i++)
        record();
    __atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
    sem_wait(&go);
    /* Chunk 0 fills and goes onto the full stack; chunk 1 gets 5 records. */
    for (uint32_t i = 10; i < TR_CHUNK_RECORDS + 5; i++)
        record();
    sem_post(&done);
    tr_consumer_sync(); /* the round the hook was in ends, and one more */
    __atomic_store_n(&tr_consumer_interval_hook, 0, __ATOMIC_RELEASE); /* the consumer reads it atomically */
    tr_consumer_stop();
    tr_journal_close();
    char path[128];
    journal_path(path, sizeof path);
    static frames fs;
    scan(path, &fs);
    char detail[4096] = "";
    size_t len = 0;
    int ok = fs.n > 0;
    uint64_t max_seq = 0;
    for (int i = 0; i < fs.n; i++) {
        if (fs.f[i].location != 0)
            continue;
        if (len < sizeof detail - 64)
            len += (size_t)snprintf(detail + len, sizeof detail - len, "%sseq %llu (%u records)", len ? ", " : "",
                                    (unsigned long long)fs.f[i].seq, fs.f[i].records);
        if (fs.f[i].seq < max_seq)
            ok = 0;
        if (fs.f[i].seq > max_seq)
            max_seq = fs.f[i].seq;
    }
    check("order: a thread's chunks go into the journal in seq order", ok, detail);
}

/* --- gap ----------------------------------------------------------------- */

static void append_chunk(uint64_t seq, uint64_t first, uint32_t n)
{
    tr_record rec[8];
    for (uint32_t i = 0; i < n; i++)
        rec[i] = (tr_record){.time = 1000 + first + i, .type = TR_REC_MPI_CALL, .phase = TR_PHASE_POINT,
                             .u = {first + i}};
    tr_frame_header h = {0};
    h.seq = seq;
    h.records = n;
    h.raw_bytes = n * sizeof(tr_record);
    h.flags = TR_FRAME_RAW;
    tr_journal_append(&h, TR_FRAME_CHUNK, rec, h.raw_bytes);
}

static void test_gap(void)
{
    open_journal("gap");
    /* Thread 0's chunks 0 and 2 reached the journal, chunk 1 did not (the
     * journal was cut where B1 had put chunk 2 before chunk 1). */
    append_chunk(0, 1, 3);
    append_chunk(2, 9, 2);
    tr_journal_close();
    char path[128], err[256];
    journal_path(path, sizeof path);
    tr_journal_data jd;
    if (tr_journal_load(path, &jd, err, sizeof err)) {
        check("gap: the journal loads", 0, err);
        return;
    }
    const tr_stream *s = jd.data.nstreams ? &jd.data.streams[0] : 0;
    char detail[512] = "";
    size_t len = 0;
    int gap_at = -1, gaps = 0;
    for (size_t i = 0; s && i < s->n; i++) {
        const tr_record *r = &s->rec[i];
        if (r->type == TR_REC_LOSS) {
            gaps++;
            gap_at = (int)i;
        }
        len += (size_t)snprintf(detail + len, sizeof detail - len, "%s%s@%llu", i ? " " : "",
                                r->type == TR_REC_LOSS ? "GAP" : "ev", (unsigned long long)r->time);
    }
    /* 3 events, the gap from the third (t 1003) to the fourth (t 1009), 2 events */
    int ok = s && s->n == 6 && gaps == 1 && gap_at == 3 && s->rec[3].u[1] == 1003 && s->rec[3].time == 1009;
    check("gap: a hole in a thread's chunk seqs is a measurement gap in its stream", ok, detail);
    snprintf(detail, sizeof detail, "missing_chunks %llu", (unsigned long long)jd.stats.missing_chunks);
    check("gap: the reader counts the missing chunk", jd.stats.missing_chunks == 1, detail);
    tr_journal_data_free(&jd);
}

/* --- crash windows ------------------------------------------------------- */

static int crash_at;
static off_t crash_size;

static void crash_here(int where)
{
    if (where != crash_at)
        return;
    crash_at = 0;
    tr_consumer_crash_flush(SIGSEGV);
    char path[128];
    journal_path(path, sizeof path);
    struct stat st;
    crash_size = stat(path, &st) ? 0 : st.st_size;
}

/* What the crash path wrote: the journal as it was when it returned. */
static void crash_frames(frames *fs)
{
    char path[128], cut[160];
    journal_path(path, sizeof path);
    snprintf(cut, sizeof cut, "%s.at-crash", path);
    if (truncate(path, crash_size) == 0)
        rename(path, cut);
    scan(cut, fs);
}

/* Serials [first, last] all in some frame of @location in @fs. */
static int has_all(const frames *fs, uint32_t location, uint64_t first, uint64_t last)
{
    for (uint64_t s = first; s <= last; s++) {
        int found = 0;
        for (int i = 0; i < fs->n && !found; i++)
            found = fs->f[i].location == location && fs->f[i].first <= s && s <= fs->f[i].last;
        if (!found)
            return 0;
    }
    return 1;
}

static void test_switch(void)
{
    open_journal("switch");
    /* This thread's current chunk (1, from test_order) fills; the record
     * after the last one switches it. */
    uint64_t first = serial;
    while (__atomic_load_n(&tr_buf_tls->pos, __ATOMIC_RELAXED) < TR_CHUNK_RECORDS)
        record();
    uint64_t last = serial - 1;
    crash_at = TR_BUF_TP_SWITCHED;
    tr_buf_test_point = crash_here;
    record();
    tr_buf_test_point = 0;
    tr_journal_close();
    static frames fs;
    crash_frames(&fs);
    char detail[128];
    snprintf(detail, sizeof detail, "records %llu..%llu of chunk %llu", (unsigned long long)first,
             (unsigned long long)last, (unsigned long long)tr_buf_tls->next_seq - 2);
    check("switch: a crash while a full chunk is handed over writes it", crash_size && has_all(&fs, 0, first, last),
          detail);
}

/* A second thread records a few events and idles: its chunk is what the
 * consumer (this thread) takes. */
static sem_t idle_go, idle_rec, idle_done;
static uint64_t idle_first, idle_last;

static void *idle_thread(void *arg)
{
    (void)arg;
    tr_buf_never_block = 1; /* with the pool empty, drop rather than wait */
    sem_wait(&idle_go);
    for (int i = 0; i < 3; i++) {
        tr_record *r = tr_buf_reserve();
        uint64_t s = __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED);
        if (!i)
            idle_first = s;
        idle_last = s;
        *r = (tr_record){.time = s, .type = TR_REC_MPI_CALL, .phase = TR_PHASE_POINT, .u = {s}};
        tr_buf_commit();
    }
    sem_post(&idle_done);
    sem_wait(&idle_rec); /* idle, until the consumer has taken its chunk */
    /* Its next record notices the take and forgets the chunk. */
    tr_record *r = tr_buf_reserve();
    if (r)
        tr_buf_commit();
    sem_post(&idle_done);
    return 0;
}

static void on_reclaim(int where)
{
    if (where != TR_BUF_TP_RECLAIMED)
        return;
    tr_buf_test_point = 0;
    sem_post(&idle_rec);
    sem_wait(&idle_done); /* the owner has forgotten the chunk, which is not on the full stack yet */
    crash_at = TR_BUF_TP_RECLAIMED;
    crash_here(TR_BUF_TP_RECLAIMED);
}

static void test_reclaim(void)
{
    open_journal("reclaim");
    sem_init(&idle_go, 0, 0);
    sem_init(&idle_rec, 0, 0);
    sem_init(&idle_done, 0, 0);
    pthread_t t;
    pthread_create(&t, 0, idle_thread, 0);
    sem_post(&idle_go);
    sem_wait(&idle_done);
    /* Pressure: a thread found no free chunk. This one (never_block: it
     * drops instead of waiting) exhausts the pool. */
    tr_buf_never_block = 1;
    while (tr_buf_reserve())
        tr_buf_commit();
    struct timespec ms = {0, 2000000};
    tr_buf_reclaim_idle(); /* sees the idle thread's chunk and count */
    nanosleep(&ms, 0);
    tr_buf_reserve();      /* pressure again */
    tr_buf_test_point = on_reclaim;
    uint32_t taken = tr_buf_reclaim_idle();
    tr_buf_test_point = 0;
    pthread_join(t, 0);
    tr_journal_close();
    static frames fs;
    crash_frames(&fs);
    char detail[128];
    snprintf(detail, sizeof detail, "taken %u, the idle thread's records %llu..%llu", taken,
             (unsigned long long)idle_first, (unsigned long long)idle_last);
    check("reclaim: a crash while an idle thread's chunk is taken writes it",
          taken == 1 && crash_size && has_all(&fs, 1, idle_first, idle_last), detail);
}

int main(void)
{
    setvbuf(stdout, 0, _IOLBF, 0);
    /* 64 chunks: plenty for order and switch; reclaim empties the pool. */
    if (tr_buf_init(64u * TR_CHUNK_BYTES, 64u * TR_CHUNK_BYTES, 0, 0)) {
        perror("tr_buf_init");
        return 1;
    }
    tr_buf_start();
    test_order();
    test_gap();
    test_switch();
    tr_buf_start(); /* the crash stopped recording */
    test_reclaim();
    remove_dir();
    return failures ? 1 : 0;
}
