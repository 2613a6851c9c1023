/* buf.c - slow path of the thread buffers: first use by a thread, chunk
 * switch, the bounded pool, block/drop, and the consumer's view. */
#include "core/buf.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"

_Static_assert(sizeof(tr_chunk) == TR_CHUNK_BYTES, "chunk is exactly TR_CHUNK_BYTES");

int tr_buf_recording;
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
static int oom_once, block_once;

static tr_chunk *chunk_at(uint32_t i) { return (tr_chunk *)(pool + (size_t)i * TR_CHUNK_BYTES); }

int tr_buf_init(uint64_t max_memory, uint64_t per_thread, int drop)
{
    uint64_t n = max_memory / TR_CHUNK_BYTES;
    if (n < 2)
        n = 2;
    if (n > UINT32_MAX / 2)
        n = UINT32_MAX / 2;
    /* Address space only: pages become memory when a chunk is first used. */
    void *p = mmap(0, (size_t)n * TR_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return -1;
    pool = p;
    pool_chunks = (uint32_t)n;
    quota = (uint32_t)(per_thread / TR_CHUNK_BYTES);
    if (quota < 2)
        quota = 2;
    drop_mode = drop;
    tr_buf_ever_recorded = 1;
    return 0;
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

static void push_full(tr_chunk *c)
{
    __atomic_store_n(&c->state, TR_CHUNK_FULL, __ATOMIC_RELEASE);
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
    c->owner = b;
    c->seq = b->next_seq++;
    c->flushed = 0;
    __atomic_store_n(&c->count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->state, TR_CHUNK_CURRENT, __ATOMIC_RELEASE);
    return c;
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
    b->lost = 0;
    return 1;
}

static tr_record *reserve_slow(tr_tbuf *b)
{
    if (!b && !(b = tbuf_register())) {
        tr_log_once(&oom_once, "out of memory for thread buffers; events are being dropped");
        __atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
        return 0;
    }
    tr_chunk *old = b->cur;
    if (old) {
        /* Hand the full chunk over first: the consumer may need it back to
         * give this very thread a free one. */
        __atomic_store_n(&b->cur, (tr_chunk *)0, __ATOMIC_RELEASE);
        b->pos = (uint32_t)TR_CHUNK_RECORDS;
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
        if (!__atomic_load_n(&tr_buf_recording, __ATOMIC_RELAXED)) {
            b->dropped++;
            return 0;
        }
        if (drop_mode || tr_buf_never_block) {
            uint64_t now = tr_clock_ticks();
            if (!b->lost)
                b->lost_first = now;
            b->lost_last = now;
            b->lost++;
            return 0;
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

/* Runs inside the host's runtime calls: mmap/malloc must not leave the
 * application a different errno than it had. */
tr_record *tr_buf_reserve_slow(void)
{
    int saved_errno = errno;
    tr_record *r = reserve_slow(tr_buf_tls);
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
    b->small_count[from_device != 0]++;
    b->small_bytes[from_device != 0] += bytes;
}

/* Only a run that traced counts what came too late; before that, or with
 * tracing off, a refused event costs a branch, not a shared atomic. */
void tr_buf_count_refused(void)
{
    if (!tr_buf_ever_recorded)
        return;
    tr_tbuf *b = tr_buf_tls;
    if (b)
        b->dropped++;
    else
        __atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
}

void tr_buf_stop(void)
{
    __atomic_store_n(&tr_buf_recording, 0, __ATOMIC_SEQ_CST);
}

tr_chunk *tr_buf_take_full(void)
{
    return __atomic_exchange_n(&full_stack, 0, __ATOMIC_ACQUIRE);
}

tr_tbuf *tr_buf_registered(void)
{
    return __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
}

uint32_t tr_buf_thread_count(void)
{
    return __atomic_load_n(&thread_count, __ATOMIC_RELAXED);
}

uint64_t tr_buf_refused_total(void)
{
    uint64_t n = __atomic_load_n(&refused, __ATOMIC_RELAXED);
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered)
        n += b->dropped;
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
    tr_buf_recording = 0;
    /* The child records nothing: what it refuses is not "late" events of a
     * trace (the end-of-run line would claim so), so it is not counted. */
    tr_buf_ever_recorded = 0;
    refused = 0;
    full_stack = 0;
    registry = 0;
    thread_count = 0;
    tr_buf_tls = 0;
}
