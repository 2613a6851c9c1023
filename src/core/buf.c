/* buf.c - slow path of the thread buffers: first use by a thread, chunk
 * switch, the bounded pool, block/drop, and the consumer's view. */
#include "core/buf.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/fork_guard.h"
#include "core/inflight.h"
#include "core/log.h"

_Static_assert(sizeof(tr_chunk) == TR_CHUNK_BYTES, "chunk is exactly TR_CHUNK_BYTES");

static int recording_static; /* until a page wiped in children is had (no claim: unit tests) */
int *tr_buf_recording_word = &recording_static;
int tr_buf_ever_recorded;
__thread tr_tbuf *tr_buf_tls __attribute__((tls_model("initial-exec")));
__thread int tr_buf_never_block __attribute__((tls_model("initial-exec")));
void (*tr_buf_wake_consumer)(void);

static char *pool;             /* reserved, touched on first use only */
static uint32_t pool_chunks;   /* capacity */
static uint32_t pool_fresh;    /* chunks never used yet start here (fetch-add) */
static uint64_t free_head;     /* tag << 32 | (index + 1); 0 = empty */
static uint32_t quota;         /* chunks one thread may hold */
static int drop_mode;

static tr_chunk *full_stack;
static tr_tbuf *registry;
static uint32_t thread_count;
static uint64_t refused;
static unsigned registering; /* threads inside reserve_first */
static int oom_once, block_once;
static int pressure;           /* a thread found no free chunk since the last reclaim */
static int use_membarrier;     /* else the hot path fences (TR_BUF_FENCE) */
static uint64_t last_reclaim_ns;

static tr_chunk *chunk_at(uint32_t i) { return (tr_chunk *)(pool + (size_t)i * TR_CHUNK_BYTES); }

/* Taking an idle thread's chunk needs a full fence between the owner's
 * "busy = 1" and its read of switch_req, and one between the consumer's
 * "switch_req = ASKED" and its read of busy (Dekker). membarrier(2) lets the
 * rare side (the consumer, under pressure) pay for both: it makes every
 * other thread of the process execute a full barrier, so the hot path needs
 * only a compiler barrier. Without it (Linux < 4.14, a seccomp filter) the
 * hot path fences itself (TR_BUF_FENCE): a few ns more per event. */
static int register_membarrier(void)
{
#ifdef SYS_membarrier
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
        return 0;
    return 1;
#else
    return 0;
#endif
}

static void full_fence_all_threads(void)
{
#ifdef SYS_membarrier
    if (use_membarrier && !syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
        return;
#endif
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static int *recording(void) { return __atomic_load_n(&tr_buf_recording_word, __ATOMIC_RELAXED); }

int tr_buf_init(uint64_t max_memory, uint64_t per_thread, int drop, int inflight)
{
    uint64_t n = max_memory / TR_CHUNK_BYTES;
    if (n < 2)
        n = 2;
    if (n > UINT32_MAX / 2)
        n = UINT32_MAX / 2;
    /* Address space only: pages become memory when a chunk is first used. */
    void *p = inflight ? tr_inflight_create(n, TR_CHUNK_BYTES) : 0;
    if (!p)
        p = mmap(0, (size_t)n * TR_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
    if (p == MAP_FAILED)
        return -1;
    pool = p;
    pool_chunks = (uint32_t)n;
    quota = (uint32_t)(per_thread / TR_CHUNK_BYTES);
    if (quota < 2)
        quota = 2;
    drop_mode = drop;
    use_membarrier = register_membarrier();
    int *word = tr_fork_guard_word(); /* NULL: this process claimed no tracing, or the kernel is old */
    if (word)
        __atomic_store_n(&tr_buf_recording_word, word, __ATOMIC_RELEASE);
    tr_buf_ever_recorded = 1;
    return 0;
}

void tr_buf_start(void)
{
    __atomic_store_n(recording(), TR_BUF_ON | (use_membarrier ? 0 : TR_BUF_FENCE), __ATOMIC_RELEASE);
}

/* ABA-safe: the tag changes on every successful pop and push. */
static tr_chunk *pool_get(void)
{
    uint64_t h = __atomic_load_n(&free_head, __ATOMIC_ACQUIRE);
    while ((uint32_t)h) {
        tr_chunk *c = chunk_at((uint32_t)h - 1);
        uint64_t next = ((h >> 32) + 1) << 32 | __atomic_load_n(&c->next_free, __ATOMIC_RELAXED);
        if (__atomic_compare_exchange_n(&free_head, &h, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return c;
    }
    uint32_t i = __atomic_load_n(&pool_fresh, __ATOMIC_RELAXED);
    while (i < pool_chunks) {
        if (__atomic_compare_exchange_n(&pool_fresh, &i, i + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            tr_inflight_reserve(i);
            tr_chunk *c = chunk_at(i);
            c->index = i;
            return c;
        }
    }
    return 0;
}

void tr_buf_recycle(tr_chunk *c)
{
    tr_tbuf *owner = c->owner;
    __atomic_store_n(&c->state, TR_CHUNK_FREE, __ATOMIC_RELEASE);
    uint64_t h = __atomic_load_n(&free_head, __ATOMIC_RELAXED);
    do {
        __atomic_store_n(&c->next_free, (uint32_t)h, __ATOMIC_RELAXED);
    } while (!__atomic_compare_exchange_n(&free_head, &h, ((h >> 32) + 1) << 32 | (c->index + 1u), 1,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    if (owner)
        __atomic_fetch_sub(&owner->held, 1, __ATOMIC_RELEASE);
}

/* Test builds only (tests/unit, -DTR_BUF_TEST_HOOKS): stops a thread at a
 * chosen instant of a chunk's hand-over, so a test can crash there. Never
 * compiled into libtracer, and on slow paths only. */
#ifdef TR_BUF_TEST_HOOKS
void (*tr_buf_test_point)(int where);
#define TEST_POINT(where) \
    do { \
        if (tr_buf_test_point) \
            tr_buf_test_point(where); \
    } while (0)
#else
#define TEST_POINT(where) ((void)0)
#endif

/* A chunk that stops being a thread's current one is FULL before it leaves
 * cur (issue 18, B2): the crash path finds committed records in a CURRENT
 * chunk through its owner's cur, in a FULL or TAKEN one through the pool,
 * so at no instant is a chunk in neither place. */
static void mark_full(tr_chunk *c)
{
    __atomic_store_n(&c->state, TR_CHUNK_FULL, __ATOMIC_RELEASE);
}

static void push_full(tr_chunk *c)
{
    mark_full(c);
    tr_chunk *head = __atomic_load_n(&full_stack, __ATOMIC_RELAXED);
    do {
        c->next_full = head;
    } while (!__atomic_compare_exchange_n(&full_stack, &head, c, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* A crash by stack overflow leaves no stack for the crash handler: give
 * each recording thread an alternate signal stack, unless it has one of its
 * own (the application's choice wins). Once per thread, on its first event. */
static void ensure_signal_stack(void)
{
    stack_t old;
    if (sigaltstack(0, &old) || !(old.ss_flags & SS_DISABLE))
        return;
    size_t size = 64 * 1024;
    void *p = mmap(0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    stack_t ss = {.ss_sp = p, .ss_size = size, .ss_flags = 0};
    if (sigaltstack(&ss, 0))
        munmap(p, size);
}

static tr_tbuf *tbuf_register(void)
{
    ensure_signal_stack();
    tr_tbuf *b = aligned_alloc(64, sizeof *b);
    if (!b)
        return 0;
    memset(b, 0, sizeof *b);
    b->tid = (pid_t)syscall(SYS_gettid);
    b->index = __atomic_fetch_add(&thread_count, 1, __ATOMIC_RELAXED);
    b->pos = (uint32_t)TR_CHUNK_RECORDS; /* forces a chunk on first reserve */
    tr_tbuf *head = __atomic_load_n(&registry, __ATOMIC_RELAXED);
    do {
        b->next_registered = head;
    } while (!__atomic_compare_exchange_n(&registry, &head, b, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    tr_buf_tls = b;
    return b;
}

static tr_chunk *take_chunk(tr_tbuf *b)
{
    if (__atomic_load_n(&b->held, __ATOMIC_ACQUIRE) >= quota)
        return 0;
    tr_chunk *c = pool_get();
    if (!c)
        return 0;
    __atomic_fetch_add(&b->held, 1, __ATOMIC_RELAXED);
    /* This order is what makes the in-flight file safe to read after any
     * death (docs/crash-survival.md): count drops to 0 before the header
     * names the new owner and seq, so the old records are never read as the
     * new owner's, and it rises again only after new records exist. */
    __atomic_store_n(&c->count, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&c->owner, b, __ATOMIC_RELAXED);
    __atomic_store_n(&c->location, b->index, __ATOMIC_RELEASE);
    __atomic_store_n(&c->tid, (uint32_t)b->tid, __ATOMIC_RELEASE);
    __atomic_store_n(&c->seq, b->next_seq++, __ATOMIC_RELEASE);
    __atomic_store_n(&c->generation, c->generation + 1, __ATOMIC_RELEASE);
    c->flushed = 0;
    __atomic_store_n(&c->state, TR_CHUNK_CURRENT, __ATOMIC_RELEASE);
    return c;
}

/* One more record refused after the end. Only the owner writes dropped, so
 * a load and a store do (no atomic read-modify-write on this path); both are
 * atomic because tr_buf_refused_total reads it from another thread while
 * the owner may still be refusing records (a data race, found by TSan). */
static void count_dropped(tr_tbuf *b)
{
    __atomic_store_n(&b->dropped, __atomic_load_n(&b->dropped, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* Drop mode: the first record of the next chunk says what was lost, where
 * (this thread) and when (first and last dropped event). It is stamped with
 * the last dropped event's time, not now: the record this slow path is
 * reserving for was stamped before the call, and must not come earlier than
 * the loss record in front of it (OTF2 refuses a timestamp that goes back). */
static uint32_t write_loss(tr_tbuf *b, tr_chunk *c)
{
    if (!b->lost)
        return 0;
    c->rec[0] = (tr_record){.time = b->lost_last, .type = TR_REC_LOSS, .phase = TR_PHASE_POINT,
                            .u = {b->lost, b->lost_first, b->lost_last}};
    __atomic_store_n(&b->lost, 0, __ATOMIC_RELAXED); /* atomic: see reserve_slow */
    return 1;
}

/* No slot for this record: busy goes back to 0, as a commit would. */
static tr_record *no_slot(tr_tbuf *b)
{
    __atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
    return 0;
}

/* Called with busy = 1 (set by the fast path, or by reserve_first). */
static tr_record *reserve_slow(tr_tbuf *b)
{
    __atomic_store_n(&b->busy, 1, __ATOMIC_RELAXED);
    tr_chunk *old = b->cur;
    uint32_t req = __atomic_load_n(&b->switch_req, __ATOMIC_ACQUIRE);
    /* ASKED: answer it (-> NONE) and switch the chunk, full or not. The
     * consumer may have moved first, and the failed exchange says where to:
     * TAKEN (it has our chunk), or back to NONE (it saw us busy, here, and
     * withdrew): then the chunk is still ours and only we hand it over;
     * forgetting it would lose its records and the chunk itself. */
    if (req == TR_SWITCH_ASKED)
        __atomic_compare_exchange_n(&b->switch_req, &req, TR_SWITCH_NONE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (req == TR_SWITCH_TAKEN) {
        /* The consumer has our chunk (and writes it); forget it. Cleared
         * only after cur, so the consumer never sees the old chunk as ours
         * again. */
        old = 0;
        __atomic_store_n(&b->cur, (tr_chunk *)0, __ATOMIC_RELEASE);
        b->pos = (uint32_t)TR_CHUNK_RECORDS;
        __atomic_store_n(&b->switch_req, TR_SWITCH_NONE, __ATOMIC_RELEASE);
    }
    if (old) {
        /* Hand the chunk over first: the consumer may need it back to give
         * this very thread (or another) a free one. */
        mark_full(old);
        __atomic_store_n(&b->cur, (tr_chunk *)0, __ATOMIC_RELEASE);
        b->pos = (uint32_t)TR_CHUNK_RECORDS;
        TEST_POINT(TR_BUF_TP_SWITCHED);
        push_full(old);
    }
    for (unsigned spins = 0;; spins++) {
        tr_chunk *c = take_chunk(b);
        if (c) {
            uint32_t first = write_loss(b, c);
            b->pos = first;
            __atomic_store_n(&c->count, first, __ATOMIC_RELEASE);
            __atomic_store_n(&b->cur, c, __ATOMIC_RELEASE);
            return &c->rec[first];
        }
        if (!__atomic_load_n(recording(), __ATOMIC_RELAXED)) {
            count_dropped(b);
            return no_slot(b);
        }
        /* Tell the consumer: chunks held idle by other threads are needed. */
        if (!__atomic_load_n(&pressure, __ATOMIC_RELAXED))
            __atomic_store_n(&pressure, 1, __ATOMIC_RELAXED);
        if (drop_mode || tr_buf_never_block) {
            /* Only this thread writes the pending loss, but the end of the
             * run (session.c, write_end) reads it from another thread while
             * this one may still be dropping: relaxed atomic stores (a data
             * race before, found by TSan). */
            uint64_t now = tr_clock_ticks();
            if (!b->lost)
                __atomic_store_n(&b->lost_first, now, __ATOMIC_RELAXED);
            __atomic_store_n(&b->lost_last, now, __ATOMIC_RELAXED);
            __atomic_store_n(&b->lost, b->lost + 1, __ATOMIC_RELAXED);
            return no_slot(b);
        }
        /* Block mode: nothing is lost; the thread waits for the journal. */
        if (spins == 1000)
            tr_log_once(&block_once, "buffers are full; threads wait for the journal writer "
                                      "(TRACER_ON_FULL=drop would drop events instead)");
        if (tr_buf_wake_consumer)
            tr_buf_wake_consumer();
        struct timespec ts = {0, 50000};
        nanosleep(&ts, 0);
    }
}

/* A thread's first record. Until the thread has a buffer it has no busy
 * flag for the end to wait on (tr_buf_wait_inflight), and registering is
 * the slowest step of all (an allocation, an alternate signal stack, a
 * chunk's first pages): a worker thread libomp starts just before the end
 * would otherwise reserve before it and commit after the final flush. So
 * it is counted in `registering` until busy covers it. The count goes up
 * before recording is read again, and the end reads the count after
 * stopping (both seq_cst): either the end waits for this thread, or this
 * thread sees that recording has stopped. */
static tr_record *reserve_first(void)
{
    __atomic_fetch_add(&registering, 1, __ATOMIC_SEQ_CST);
    tr_record *r = 0;
    tr_tbuf *b = 0;
    if (!__atomic_load_n(recording(), __ATOMIC_SEQ_CST))
        __atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
    else if (!(b = tbuf_register())) {
        tr_log_once(&oom_once, "out of memory for thread buffers; events are being dropped");
        __atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
    } else {
        TEST_POINT(TR_BUF_TP_REGISTERED);
        r = reserve_slow(b);
    }
    __atomic_fetch_sub(&registering, 1, __ATOMIC_RELEASE);
    return r;
}

/* Runs inside the host's runtime calls: mmap/malloc must not leave the
 * application a different errno than it had. */
tr_record *tr_buf_reserve_slow(void)
{
    int saved_errno = errno;
    tr_tbuf *b = tr_buf_tls;
    tr_record *r = b ? reserve_slow(b) : reserve_first();
    errno = saved_errno;
    return r;
}

void tr_buf_count_small(int from_device, uint64_t bytes)
{
    tr_tbuf *b = tr_buf_tls;
    if (!b) {
        int saved_errno = errno;
        b = tbuf_register();
        errno = saved_errno;
        if (!b)
            return;
    }
    /* Owner-only writes, read at the end by another thread (write_end):
     * relaxed atomic stores, as for dropped. */
    int d = from_device != 0;
    __atomic_store_n(&b->small_count[d], b->small_count[d] + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&b->small_bytes[d], b->small_bytes[d] + bytes, __ATOMIC_RELAXED);
}

/* Only a run that traced counts what came too late; before that, or with
 * tracing off, a refused event costs a branch, not a shared atomic. */
void tr_buf_count_refused(void)
{
    if (!tr_buf_ever_recorded)
        return;
    tr_tbuf *b = tr_buf_tls;
    if (b)
        count_dropped(b);
    else
        __atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
}

void tr_buf_stop(void)
{
    __atomic_store_n(recording(), 0, __ATOMIC_SEQ_CST);
}

static int someone_recording(void)
{
    if (__atomic_load_n(&registering, __ATOMIC_SEQ_CST))
        return 1;
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered)
        if (b != tr_buf_tls && __atomic_load_n(&b->busy, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

int tr_buf_wait_inflight(uint64_t max_ns)
{
    /* A thread's "busy = 1" is only compiler-ordered (tr_buf_reserve); the
     * barrier makes every one stored so far visible here. */
    full_fence_all_threads();
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (!someone_recording())
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t waited = (uint64_t)(now.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)now.tv_nsec -
                          (uint64_t)t0.tv_nsec;
        if (waited >= max_ns)
            return -1;
        struct timespec ts = {0, 20000};
        nanosleep(&ts, 0);
    }
}

tr_chunk *tr_buf_take_full(void)
{
    return __atomic_exchange_n(&full_stack, 0, __ATOMIC_ACQUIRE);
}

/* Block mode must never wait for ever, yet a thread that stopped recording
 * keeps its partly filled chunk: with more recording threads than chunks
 * (TRACER_MAX_MEMORY=128k is 2 chunks), the holders may be waiting (in a
 * barrier, a join) for the very threads that wait here for a chunk. So the
 * pool is never only "full chunks come back": under pressure the consumer
 * takes over idle threads' chunks, as LTTng's consumer switches an idle
 * sub-buffer. Refusing such settings instead would not do: how many threads
 * will record is not known when the pool is sized.
 *
 * Idle = the same chunk and count as at the previous look, at least 1 ms
 * before (a thread that records goes on filling its chunk and keeps it).
 * The take is a handshake, never a write into the owner's fields: ask
 * (switch_req NONE -> ASKED), fence every thread, then
 *  - owner busy (inside reserve..commit): withdraw the request; ask again
 *    next time;
 *  - owner not busy: it cannot be writing, and its next reserve sees the
 *    request (the fence). Whoever moves switch_req off ASKED first wins: the
 *    consumer (-> TAKEN: it pushes the chunk; the owner forgets it and takes
 *    a new one) or the owner (-> NONE: it switches the chunk itself).
 * An owner that saw ASKED may find NONE when it answers: the consumer saw it
 * busy and withdrew. The chunk is then still the owner's to switch, never
 * forgotten as if TAKEN (that lost the chunk and every record in it).
 * Only the owner writes cur; a chunk taken from it may still be its cur until
 * it notices, so readers of cur check tr_buf_is_current. */
int tr_buf_under_pressure(void) { return __atomic_load_n(&pressure, __ATOMIC_RELAXED); }

uint32_t tr_buf_reclaim_idle(void)
{
    if (!__atomic_load_n(&pressure, __ATOMIC_RELAXED))
        return 0;
    uint64_t now = tr_clock_mono_ns();
    if (now - last_reclaim_ns < 1000000)
        return 0;
    last_reclaim_ns = now;
    __atomic_store_n(&pressure, 0, __ATOMIC_RELAXED);
    uint32_t asked = 0, taken = 0;
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered) {
        tr_chunk *c = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
        uint32_t n = c ? __atomic_load_n(&c->count, __ATOMIC_ACQUIRE) : 0;
        if (!tr_buf_is_current(b, c) || b->seen_chunk != c || b->seen_count != n) {
            b->seen_chunk = c;
            b->seen_count = n;
            continue;
        }
        uint32_t none = TR_SWITCH_NONE;
        b->asked = __atomic_compare_exchange_n(&b->switch_req, &none, TR_SWITCH_ASKED, 0, __ATOMIC_SEQ_CST,
                                               __ATOMIC_RELAXED);
        asked += b->asked;
    }
    if (!asked)
        return 0;
    full_fence_all_threads();
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered) {
        if (!b->asked)
            continue;
        b->asked = 0;
        b->seen_chunk = 0;
        uint32_t ask = TR_SWITCH_ASKED;
        tr_chunk *c = 0;
        if (!__atomic_load_n(&b->busy, __ATOMIC_ACQUIRE)) {
            c = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
            if (!tr_buf_is_current(b, c))
                c = 0;
        }
        if (!c) {
            __atomic_compare_exchange_n(&b->switch_req, &ask, TR_SWITCH_NONE, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED);
            continue;
        }
        /* Not busy, and its next reserve sees ASKED: the owner never writes
         * into c again, whoever wins the exchange below (the owner, if it
         * does, pushes c itself). FULL now, before the owner may forget it. */
        mark_full(c);
        if (__atomic_compare_exchange_n(&b->switch_req, &ask, TR_SWITCH_TAKEN, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            TEST_POINT(TR_BUF_TP_RECLAIMED);
            push_full(c);
            taken++;
        }
    }
    return taken;
}

tr_tbuf *tr_buf_registered(void)
{
    return __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
}

uint32_t tr_buf_thread_count(void)
{
    return __atomic_load_n(&thread_count, __ATOMIC_RELAXED);
}

/* Records of @c committed after the journal's last look at it. */
static uint64_t unwritten(tr_chunk *c)
{
    uint32_t n = __atomic_load_n(&c->count, __ATOMIC_ACQUIRE);
    return n > c->flushed ? n - c->flushed : 0;
}

uint64_t tr_buf_refused_total(void)
{
    uint64_t n = __atomic_load_n(&refused, __ATOMIC_RELAXED);
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered) {
        n += __atomic_load_n(&b->dropped, __ATOMIC_RELAXED);
        /* A thread that reserved before tr_buf_stop and committed after the
         * consumer's final flush: its record is in its chunk and never
         * reaches the journal. (The consumer, gone, no longer writes
         * flushed.) */
        tr_chunk *c = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
        if (tr_buf_is_current(b, c))
            n += unwritten(c);
    }
    /* The same thread may have switched chunks for it: the one it pushed
     * after the final drain is on the full stack, which nobody takes now. */
    unsigned guard = 0;
    for (tr_chunk *c = __atomic_load_n(&full_stack, __ATOMIC_ACQUIRE); c && guard < 1u << 21;
         c = c->next_full, guard++)
        n += unwritten(c);
    return n;
}

uint64_t tr_buf_pool_bytes_used(void)
{
    uint32_t n = __atomic_load_n(&pool_fresh, __ATOMIC_RELAXED);
    return (uint64_t)(n < pool_chunks ? n : pool_chunks) * TR_CHUNK_BYTES;
}

tr_chunk *tr_buf_pool_chunk(uint32_t i)
{
    uint32_t n = __atomic_load_n(&pool_fresh, __ATOMIC_ACQUIRE);
    return i < n && i < pool_chunks ? chunk_at(i) : 0;
}

void tr_buf_reset_after_fork(void)
{
    __atomic_store_n(recording(), 0, __ATOMIC_RELAXED);
    /* The pool is not mapped in the child (MADV_DONTFORK): nothing may
     * look at it, nor remove the parent's file. */
    pool = 0;
    pool_chunks = 0;
    pool_fresh = 0;
    free_head = 0;
    tr_inflight_forget();
    /* The child records nothing: what it refuses is not "late" events of a
     * trace (the end-of-run line would claim so), so it is not counted. */
    tr_buf_ever_recorded = 0;
    refused = 0;
    registering = 0;
    pressure = 0;
    full_stack = 0;
    registry = 0;
    thread_count = 0;
    tr_buf_tls = 0;
}
