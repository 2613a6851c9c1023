/* consumer.c - see consumer.h. Runs on its own thread; never on the hot path. */
#define _GNU_SOURCE 1 /* pthread_mutex_clocklock, sem_clockwait */
#include "journal/consumer.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/unload.h"
#include "core/user_regions.h"
#include "journal/data_op.h"
#include "journal/journal_frames.h"
#include "journal/journal_write.h"
#include "journal/record_delta.h"
#include "journal/symbols.h"
#include "common/u64map.h"

static uint64_t interval_ns;
static pthread_t thread;
static int running, stopping;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
/* Held by the thread while it works (never while it sleeps), and by a
 * forking thread around fork: see park_for_fork. */
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t started;
static int write_failed_once;
void (*tr_consumer_interval_hook)(void);

/* tr_consumer_sync: rounds asked for and rounds done, under wake_lock. */
static uint64_t sync_wanted, sync_done;
static pthread_cond_t sync_cond = PTHREAD_COND_INITIALIZER;
static pid_t consumer_pid;

/* The chunks the thread took but has not finished; a crash handler writes
 * them (duplicates are dropped by readers: same location and seq). */
static tr_chunk *batch;

static ZSTD_CCtx *cctx;
static char *zbuf;
static size_t zcap;
static void *delta_buf; /* TR_CHUNK_BYTES: a chunk's records delta-coded */
static tr_u64map done_codeptrs, spans_now, done_texts, done_users, done_addrs, done_vars;
static tr_symbols *symbols;

/* A failed append says so once. ESTALE: the journal is gone, and its own
 * line said so. */
static void check(int rc)
{
    if (rc && errno != ESTALE)
        tr_log_once(&write_failed_once, "journal: write failed (%s); the trace may miss events", strerror(errno));
}

static void append(tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes)
{
    check(tr_journal_append(h, type, payload, bytes));
}

static void write_clock(void)
{
    uint64_t tick, ns;
    tr_clock_read_pair(&tick, &ns);
    check(tr_journal_write_clock(tick, ns));
}

/* The unloads announced since the last look go into the journal (before
 * any chunk or symbol that needs them: a journal cut short must not name a
 * later span's records after an earlier one). */
static uint32_t unloads_written;
static uint64_t last_unload_tick;

static void write_unloads(void)
{
    uint32_t n = tr_unload_count();
    for (; unloads_written < n; unloads_written++) {
        tr_unload u = tr_unload_get(unloads_written);
        tr_journal_unload ju = {u.tick, u.lo, u.hi};
        last_unload_tick = u.tick;
        tr_u64map_free(&spans_now);
        tr_frame_header h = {0};
        h.raw_bytes = sizeof ju;
        append(&h, TR_FRAME_UNLOAD, &ju, sizeof ju);
    }
}

/* The span (core/unload.h) of @codeptr at @tick. spans_now holds each
 * address's span after the latest unload, so that a record later than
 * every unload costs a map lookup, not a walk over every unload; each
 * unload empties it. *@gone: as tr_unload_since says. */
static uint64_t span_of(uint64_t codeptr, uint64_t tick, int *gone)
{
    *gone = 0;
    if (tr_unload_count() != unloads_written)
        write_unloads(); /* one announced while this chunk was being written */
    if (!unloads_written)
        return 0;
    uint64_t since;
    int after_all = tick > last_unload_tick;
    if (after_all && tr_u64map_get(&spans_now, codeptr, &since))
        return since;
    since = tr_unload_since(codeptr, tick, gone);
    if (after_all)
        tr_u64map_put(&spans_now, codeptr, since);
    return since;
}

/* A code address is named once per span: done_codeptrs holds the latest
 * span named. An earlier span was named before it (the records of a span
 * come before the unload that ends it, which waits for them), or its code
 * is gone: a record met again (a chunk's prefix is walked at each partial
 * flush) names nothing twice. The journal's SYMBOL frame carries the span
 * in its header's seq. */
static void write_symbol(uint64_t codeptr, uint64_t tick)
{
    if (!codeptr)
        return;
    int gone;
    uint64_t since = span_of(codeptr, tick, &gone), named;
    if (tr_u64map_get(&done_codeptrs, codeptr, &named) && named >= since)
        return;
    tr_u64map_put(&done_codeptrs, codeptr, since);
    if (!symbols)
        symbols = tr_symbols_open();
    tr_code_description d;
    /* Code unmapped before this thread named it: what the address holds now
     * is another library's, so it stays unnamed rather than misnamed. */
    tr_symbols_describe(gone ? 0 : symbols, codeptr, &d);
    char buf[sizeof(tr_journal_symbol) + 4 * TR_SYMBOL_TEXT];
    tr_journal_symbol s = {codeptr, d.line, d.kernel_line};
    const char *texts[4] = {d.function, d.file, d.kernel, d.task_of};
    size_t n = tr_journal_symbol_encode(buf, &s, texts, TR_SYMBOL_TEXT);
    tr_frame_header h = {0};
    h.raw_bytes = n;
    h.seq = since;
    append(&h, TR_FRAME_SYMBOL, buf, n);
}

static void write_text(uint64_t id)
{
    if (!id || tr_u64map_get(&done_texts, id, 0))
        return;
    tr_u64map_put(&done_texts, id, 1);
    const char *text = (const char *)(uintptr_t)id; /* a copy tracer made and never frees */
    check(tr_journal_write_text(id, text));
}

static void write_user_name(uint32_t id)
{
    id &= 0x7fffffffu;
    if (!id || tr_u64map_get(&done_users, id, 0))
        return;
    const char *name = tr_user_region_name(id);
    if (!name)
        return;
    tr_u64map_put(&done_users, id, 1);
    check(tr_journal_write_user_region(id, name));
}

/* A named global a data operation touched: its name, range and, for a
 * declare-target-link variable, its reference pointer. Looked up once per
 * address and span (a library loaded where an unloaded one was has globals
 * of its own there), here, never on the application's threads; the
 * VARIABLE frame's header seq carries the span. */
static void write_variable(uint64_t addr, uint64_t tick)
{
    if (!addr)
        return;
    int gone;
    uint64_t since = span_of(addr, tick, &gone), named;
    if (tr_u64map_get(&done_addrs, addr, &named) && named >= since)
        return; /* as in write_symbol */
    tr_u64map_put(&done_addrs, addr, since);
    if (gone)
        return; /* unmapped before this thread got to it: whatever is there now is not it */
    if (!symbols)
        symbols = tr_symbols_open();
    tr_variable v;
    if (!tr_symbols_variable(symbols, addr, &v) || (tr_u64map_get(&done_vars, v.base, &named) && named >= since))
        return;
    tr_u64map_put(&done_vars, v.base, since);
    char buf[1100];
    tr_journal_variable jv = {v.base, v.size, v.ref_ptr};
    size_t len = strnlen(v.name, 1000);
    memcpy(buf, &jv, sizeof jv);
    memcpy(buf + sizeof jv, v.name, len);
    buf[sizeof jv + len] = 0;
    tr_frame_header h = {0};
    h.raw_bytes = sizeof jv + len + 1;
    h.seq = since;
    append(&h, TR_FRAME_VARIABLE, buf, sizeof jv + len + 1);
}

/* The loaded objects, whenever the loader loaded one since they were last
 * written: a run that dies before this thread named its last code
 * addresses leaves `tracer recover` what it needs to name them
 * (journal/recover_names.h). Looked at each time this thread wakes and
 * before each chunk: one dl_iterate_phdr that stops at the first object
 * while nothing is loaded. */
static void write_modules(void)
{
    check(tr_journal_write_modules());
}

/* Names and symbols go in before the chunk that needs them, so a journal
 * read after a crash still has them (for every chunk this thread wrote). */
static void write_references(const tr_record *rec, uint32_t n)
{
    write_modules();
    write_unloads();
    for (uint32_t i = 0; i < n; i++) {
        const tr_record *r = &rec[i];
        switch (r->type) {
        case TR_REC_TARGET:
            if (r->phase != TR_PHASE_END)
                write_symbol(r->u[0], r->time);
            break;
        case TR_REC_SUBMIT:
            write_symbol(r->u[1], r->time);
            break;
        case TR_REC_DEVICE_INIT:
        case TR_REC_DEVICE_LOAD:
            write_text(r->u[0]);
            break;
        case TR_REC_OMP:
            /* Host OpenMP constructs are named by their place in the source
             * (u0 = codeptr_ra, except in TASK_SCHEDULE: a task id). */
            if (r->phase != TR_PHASE_END && r->sub != TR_OMP_TASK_SCHEDULE)
                write_symbol(r->u[0], r->time);
            break;
        case TR_REC_USER_REGION:
        case TR_REC_USER_MARK:
            write_user_name((uint32_t)r->id);
            break;
        case TR_REC_DATA_OP:
            /* The host side of the op: where it reads or writes host memory. */
            if (r->phase != TR_PHASE_END)
                write_variable(tr_data_op_host_addr(r), r->time);
            break;
        default:
            break;
        }
    }
}

static void write_chunk(tr_chunk *c, uint32_t n)
{
    if (!n || n <= c->flushed)
        return;
    write_references(c->rec, n);
    tr_frame_header h = {0};
    h.location = c->owner ? c->owner->index : 0;
    h.tid = c->owner ? (uint32_t)c->owner->tid : 0;
    h.seq = c->seq;
    h.records = n;
    h.raw_bytes = (uint64_t)n * sizeof(tr_record);
    tr_records_delta(delta_buf, c->rec, n);
    size_t z = ZSTD_compressCCtx(cctx, zbuf, zcap, delta_buf, h.raw_bytes, 1);
    if (!ZSTD_isError(z) && z < h.raw_bytes) {
        h.flags = TR_FRAME_ZSTD_DELTA;
        append(&h, TR_FRAME_CHUNK, zbuf, z);
    } else {
        h.flags = TR_FRAME_RAW;
        append(&h, TR_FRAME_CHUNK, c->rec, h.raw_bytes);
    }
    c->flushed = n;
}

/* The full stack comes newest first; the journal gets each thread's chunks
 * in seq order, so a journal cut short (a kill during a write, a full disk)
 * loses the newest events of a thread, never older ones before newer. */
static tr_chunk *oldest_first(tr_chunk *list)
{
    tr_chunk *out = 0;
    unsigned guard = 0;
    while (list && guard++ < 1u << 21) {
        tr_chunk *next = list->next_full;
        list->next_full = out;
        out = list;
        list = next;
    }
    return out;
}

static void drain_full(void)
{
    for (;;) {
        tr_chunk *list = oldest_first(tr_buf_take_full());
        if (!list)
            return;
        __atomic_store_n(&batch, list, __ATOMIC_RELEASE);
        for (tr_chunk *c = list; c; c = c->next_full)
            __atomic_store_n(&c->state, TR_CHUNK_TAKEN, __ATOMIC_RELEASE);
        while (list) {
            tr_chunk *next = list->next_full;
            write_chunk(list, __atomic_load_n(&list->count, __ATOMIC_ACQUIRE));
            __atomic_store_n(&batch, next, __ATOMIC_RELEASE);
            tr_buf_recycle(list);
            list = next;
        }
    }
}

/* The committed prefix of each thread's current chunk: what a SIGKILL or an
 * _exit would otherwise take with it. Only this thread recycles chunks, so a
 * chunk read here stays valid even if its owner hands it over meanwhile;
 * one taken from its owner (tr_buf_reclaim_idle) is written by drain_full.
 *
 * A thread's chunks go into the journal in seq order (issue 18, B1): a
 * thread may have pushed its previous chunk since the last drain_full (while
 * the interval hook ran, say) and started the one seen here. It pushes a
 * chunk before it publishes the next as cur, so draining after reading cur
 * (acquire) gets every older chunk out first; the chunk is written only if
 * it is still that thread's current one with the same seq (else it was
 * pushed, and drain_full wrote it in its turn). */
static void flush_partial(void)
{
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered) {
        tr_chunk *c = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
        if (!tr_buf_is_current(b, c))
            continue;
        uint64_t seq = c->seq;
        drain_full();
        if (tr_buf_is_current(b, c) && c->seq == seq)
            write_chunk(c, __atomic_load_n(&c->count, __ATOMIC_ACQUIRE));
    }
    write_unloads(); /* an unload's sync: its frame goes in before it returns */
    write_modules();
    write_clock();
}

static void *consumer_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, 0); /* the application's signals are not ours */
    tr_buf_never_block = 1; /* waiting for a chunk would wait for this thread */
    tr_journal_own_table(); /* else every append checks the descriptor first */
    sem_post(&started);
    pthread_mutex_lock(&work_lock);
    uint64_t last_flush = tr_clock_mono_ns();
    write_clock();
    pthread_mutex_unlock(&work_lock);
    for (;;) {
        pthread_mutex_lock(&wake_lock);
        if (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE) && sync_done == sync_wanted) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            /* 5 ms: often enough to keep up, rare enough to cost nothing;
             * 1 ms while threads lack chunks (drop mode does not wake us). */
            until.tv_nsec += tr_buf_under_pressure() ? 1000000 : 5000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&wake_cond, &wake_lock, &until);
        }
        uint64_t want = sync_wanted;
        pthread_mutex_unlock(&wake_lock);
        pthread_mutex_lock(&work_lock);
        write_modules(); /* a library dlopen'ed since: before its events can be saved by a crash */
        drain_full();
        /* Threads wait (or drop) for chunks that idle threads hold. */
        if (tr_buf_reclaim_idle())
            drain_full();
        if (want != sync_done) {
            flush_partial();
            pthread_mutex_lock(&wake_lock);
            sync_done = want;
            pthread_cond_broadcast(&sync_cond);
            pthread_mutex_unlock(&wake_lock);
        }
        int stop = __atomic_load_n(&stopping, __ATOMIC_ACQUIRE);
        uint64_t now = tr_clock_mono_ns();
        if (!stop && now - last_flush >= interval_ns) {
            void (*hook)(void) = __atomic_load_n(&tr_consumer_interval_hook, __ATOMIC_ACQUIRE);
            if (hook)
                hook();
            flush_partial();
            last_flush = now;
        }
        pthread_mutex_unlock(&work_lock);
        if (stop)
            break;
    }
    pthread_mutex_lock(&work_lock);
    drain_full();
    flush_partial();
    pthread_mutex_unlock(&work_lock);
    /* Here: the files libdwfl holds are in this thread's descriptor table. */
    tr_symbols_close(symbols);
    symbols = 0;
    return 0;
}

/* A child inherits the memory of a thread that was inside malloc when the
 * parent forked, locks included; an allocator that does not lock itself
 * around fork (GCC 12's ASan allocator) then hangs the child at its next
 * allocation of that size. This thread allocates while it works (symbols,
 * maps), so a fork waits for it to go back to sleep: at most one round of
 * writing. The wait is bounded, in case the forking thread holds a lock
 * the writer needs (a fork from a constructor holds the loader's). */
static __thread int parked __attribute__((tls_model("initial-exec")));

static void park_for_fork(void)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 2;
    parked = pthread_mutex_clocklock(&work_lock, CLOCK_MONOTONIC, &until) == 0;
}

static void unpark_after_fork(void)
{
    if (parked)
        pthread_mutex_unlock(&work_lock);
    parked = 0;
}

/* The thread has started once it runs its own code: the sanitizer runtimes
 * set a new thread up (allocating) before that, and a fork right after
 * tr_consumer_start must not come in the middle. Bounded like the park. */
static void wait_started(void)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 2;
    while (sem_clockwait(&started, CLOCK_MONOTONIC, &until) && errno == EINTR)
        ;
}

int tr_consumer_start(uint64_t flush_interval_ns)
{
    interval_ns = flush_interval_ns ? flush_interval_ns : 1;
    cctx = ZSTD_createCCtx();
    zcap = ZSTD_compressBound(TR_CHUNK_BYTES);
    zbuf = malloc(zcap);
    delta_buf = malloc(TR_CHUNK_BYTES);
    if (!cctx || !zbuf || !delta_buf) {
        errno = ENOMEM;
        return -1;
    }
    tr_buf_wake_consumer = tr_consumer_wake;
    static int atfork_done;
    if (!atfork_done && !pthread_atfork(park_for_fork, unpark_after_fork, unpark_after_fork))
        atfork_done = 1;
    sem_init(&started, 0, 0);
    int rc = pthread_create(&thread, 0, consumer_main, 0);
    if (rc) {
        errno = rc;
        return -1;
    }
    wait_started();
    consumer_pid = getpid();
    running = 1;
    __atomic_store_n(&tr_unload_hook, tr_consumer_sync, __ATOMIC_RELEASE);
    return 0;
}

void tr_consumer_sync(void)
{
    /* Never from the writer thread itself, nor in a forked child, which has
     * no writer thread. */
    if (!running || getpid() != consumer_pid || pthread_equal(pthread_self(), thread))
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2; /* a writer stuck on a slow disk must not stop the program */
    pthread_mutex_lock(&wake_lock);
    uint64_t want = ++sync_wanted;
    pthread_cond_signal(&wake_cond);
    while (sync_done < want && !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
        if (pthread_cond_timedwait(&sync_cond, &wake_lock, &until))
            break;
    pthread_mutex_unlock(&wake_lock);
}

void tr_consumer_wake(void)
{
    pthread_cond_signal(&wake_cond);
}

void tr_consumer_stop(void)
{
    if (!running)
        return;
    __atomic_store_n(&tr_unload_hook, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&wake_lock);
    pthread_cond_signal(&wake_cond);
    pthread_cond_broadcast(&sync_cond);
    pthread_mutex_unlock(&wake_lock);
    pthread_join(thread, 0);
    running = 0;
    ZSTD_freeCCtx(cctx);
    cctx = 0;
    free(zbuf);
    zbuf = 0;
    free(delta_buf);
    delta_buf = 0;
}

/* --- crash path: async-signal-safe only --------------------------------- */

static void crash_write(tr_chunk *c)
{
    uint32_t n = __atomic_load_n(&c->count, __ATOMIC_ACQUIRE);
    if (!n || n > TR_CHUNK_RECORDS)
        return;
    c->crash_written = 1;
    tr_frame_header h = {0};
    h.location = c->owner ? c->owner->index : 0;
    h.tid = c->owner ? (uint32_t)c->owner->tid : 0;
    h.seq = c->seq;
    h.records = n;
    h.raw_bytes = (uint64_t)n * sizeof(tr_record);
    h.flags = TR_FRAME_RAW;
    tr_journal_append_signal(&h, TR_FRAME_CHUNK, c->rec, h.raw_bytes);
}

void tr_consumer_crash_flush(int sig)
{
    if (!tr_journal_is_open())
        return;
    tr_buf_stop();
    /* Oldest first: what the consumer was writing, then the full chunks it
     * had not taken yet, then the current ones. */
    unsigned guard = 0;
    for (tr_chunk *c = __atomic_load_n(&batch, __ATOMIC_ACQUIRE); c && guard < 1u << 20; c = c->next_full, guard++)
        if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == TR_CHUNK_TAKEN)
            crash_write(c);
    for (tr_chunk *c = oldest_first(tr_buf_take_full()); c && guard < 1u << 21; c = c->next_full, guard++)
        crash_write(c);
    /* The consumer thread runs on meanwhile: it may have finished the batch
     * walked above and taken the full chunks as its next batch, or hold a
     * batch it has not published yet. Every chunk with unwritten records is
     * FULL or TAKEN whatever list it is on (the consumer frees a chunk only
     * once written), so the pool itself has the rest. */
    tr_chunk *c;
    for (uint32_t i = 0; (c = tr_buf_pool_chunk(i)) != 0; i++) {
        uint32_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
        if ((st == TR_CHUNK_FULL || st == TR_CHUNK_TAKEN) && !c->crash_written)
            crash_write(c);
    }
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered) {
        tr_chunk *c = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
        if (tr_buf_is_current(b, c))
            crash_write(c);
    }
    uint64_t tick, ns;
    tr_clock_read_pair(&tick, &ns);
    tr_journal_write_clock_signal(tick, ns);
    struct {
        int32_t sig;
        uint32_t pad;
        uint64_t tick;
    } crash = {sig, 0, tick};
    tr_frame_header ch = {0};
    ch.raw_bytes = sizeof crash;
    tr_journal_append_signal(&ch, TR_FRAME_CRASH, &crash, sizeof crash);
}
