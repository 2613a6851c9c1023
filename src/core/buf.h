/* buf.h - per-thread, lock-free record buffers (the hot path).
 *
 * Each thread owns a buffer: a current chunk of TR_CHUNK_RECORDS fixed-size
 * records and a write position only that thread moves, so reserving a slot is
 * a TLS load, a compare and an increment (no lock, no atomic RMW, no syscall).
 * Commit publishes the new count with a store-release so a reader that loads
 * the count with acquire sees complete records.
 *
 * Chunks come from one pool reserved at start (TRACER_MAX_MEMORY) and are
 * recycled by the journal's consumer thread once written, so the steady state
 * touches no new memory and makes no syscall. A full chunk goes onto a
 * lock-free stack (Treiber push; the consumer takes the whole stack with one
 * exchange, so no ABA); free chunks sit on a tagged index stack (ABA-safe
 * pops from any thread). A thread may hold at most TRACER_BUFFER_SIZE of
 * chunks; when it may take no more, TRACER_ON_FULL decides: block (wait for
 * the consumer; nothing is lost) or drop (count the loss, and record it in the
 * thread's stream when recording resumes).
 *
 * A thread that stops recording keeps its partly filled current chunk. When
 * chunks run out (a thread waits or drops), the consumer takes over the
 * current chunk of every thread that has been idle since its last look (see
 * tr_buf_reclaim_idle): otherwise threads idle on partly filled chunks (in a
 * barrier, waiting for the very thread that needs a chunk) would hold the
 * whole pool, and block mode would wait for ever. A thread whose chunk was
 * taken notices at its next record and takes a new one. The handshake costs
 * the hot path two plain stores and a load (busy, switch_req); the expensive
 * half of its fence is on the consumer side (membarrier), see buf.c.
 *
 * Buffers are registered once and never freed, so a thread that exits before
 * the end keeps its events.
 *
 * Usage by a producer:
 *     tr_record *r = tr_buf_reserve();
 *     if (r) { fill r ...; tr_buf_commit(); }
 */
#ifndef TR_CORE_BUF_H
#define TR_CORE_BUF_H

#include <stdint.h>
#include <sys/types.h>

#include "core/record.h"

#define TR_CHUNK_BYTES (64u * 1024u)
#define TR_CHUNK_RECORDS (TR_CHUNK_BYTES / sizeof(tr_record) - 1)

typedef struct tr_chunk tr_chunk;
typedef struct tr_tbuf tr_tbuf;

/* Chunk life: FREE -> CURRENT (a thread fills it) -> FULL (on the full stack)
 * -> TAKEN (the consumer is writing it) -> FREE. */
enum { TR_CHUNK_FREE, TR_CHUNK_CURRENT, TR_CHUNK_FULL, TR_CHUNK_TAKEN };

struct tr_chunk {
    tr_chunk *next_full;     /* link on the full stack / the consumer's batch */
    tr_tbuf *owner;
    uint64_t seq;            /* order of this chunk in its owner's stream */
    uint32_t count;          /* committed records; store-release / load-acquire */
    uint32_t state;          /* TR_CHUNK_*, atomic */
    uint32_t next_free;      /* free stack link: pool index + 1, 0 = none */
    uint32_t index;          /* this chunk's pool index */
    uint32_t flushed;        /* records already in the journal (consumer only) */
    uint32_t crash_written;  /* written by the crash handler (its only writer) */
    /* For tracer recover, which reads the pool from the in-flight file
     * (core/inflight.h) after the process died: owner means nothing there.
     * Set when a thread takes the chunk, after count = 0 (crash-survival.md). */
    uint32_t location;       /* the owner's index */
    uint32_t tid;
    uint32_t generation;     /* how many times the chunk was taken */
    uint32_t pad;
    tr_record rec[TR_CHUNK_RECORDS];
};

/* tr_tbuf.switch_req: the consumer asks for a thread's current chunk. */
enum { TR_SWITCH_NONE, TR_SWITCH_ASKED, TR_SWITCH_TAKEN };

struct __attribute__((aligned(64))) tr_tbuf {
    tr_chunk *cur;           /* atomic: the consumer's periodic flush reads it; only the owner writes it */
    uint32_t pos;            /* next free slot in cur; owner-only */
    uint32_t busy;           /* owner: 1 from reserve to commit (atomic; the consumer reads it) */
    uint32_t switch_req;     /* TR_SWITCH_*, atomic: consumer asks/takes, owner answers */
    uint32_t index;          /* order of registration, 0 = first thread */
    uint64_t next_seq;
    uint32_t held;           /* chunks held: owner increments, consumer decrements */
    pid_t tid;
    uint64_t dropped;        /* records refused after the end; atomic: owner stores, others load */
    uint64_t lost, lost_first, lost_last; /* drop mode: pending loss (ticks); atomic: owner stores, others load */
    uint64_t small_count[2]; /* under TRACER_MIN_BYTES: [0] to, [1] from device; as lost */
    uint64_t small_bytes[2];
    tr_tbuf *next_registered;
    /* consumer-only: the current chunk and count at its last look */
    tr_chunk *seen_chunk;
    uint32_t seen_count;
    uint32_t asked;
};

/* Where the word lives that is nonzero while records are accepted (between
 * activation and the end): TR_BUF_ON, plus TR_BUF_FENCE where the kernel has
 * no membarrier and the hot path must fence by itself. Set by tr_buf_start().
 * It is on a page the kernel zeroes in a child (core/fork_guard.h): a child
 * made without atfork handlers (_Fork, a raw clone) records nothing and never
 * touches the pool, which it does not have. */
extern int *tr_buf_recording_word;
#define TR_BUF_ON 1
#define TR_BUF_FENCE 2
static inline int tr_buf_recording(void)
{
    return __atomic_load_n(__atomic_load_n(&tr_buf_recording_word, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}
/* Nonzero once tracing started in this process. */
extern int tr_buf_ever_recorded;

/* Set on a thread that must never wait for a free chunk (the journal's own
 * writer thread): when none is free, its event is dropped and counted, as in
 * drop mode. */
extern __thread int tr_buf_never_block __attribute__((tls_model("initial-exec")));

extern __thread tr_tbuf *tr_buf_tls __attribute__((tls_model("initial-exec")));

tr_record *tr_buf_reserve_slow(void);
void tr_buf_count_refused(void);

/* Returns the slot for the next record, or NULL when recording is off or,
 * in drop mode, no buffer is free (the loss is counted). Not
 * async-signal-safe. */
static inline tr_record *tr_buf_reserve(void)
{
    tr_tbuf *b = tr_buf_tls;
    int on = tr_buf_recording();
    if (__builtin_expect(!on, 0)) {
        tr_buf_count_refused();
        return 0;
    }
    if (__builtin_expect(b == 0, 0))
        return tr_buf_reserve_slow();
    /* Dekker with the consumer (tr_buf_reclaim_idle): busy is published
     * before switch_req is read. The consumer's membarrier makes the compiler
     * barrier a full fence; without membarrier the fence is real. */
    __atomic_store_n(&b->busy, 1, __ATOMIC_RELAXED);
    if (__builtin_expect(on & TR_BUF_FENCE, 0))
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    else
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__builtin_expect(b->pos == TR_CHUNK_RECORDS || __atomic_load_n(&b->switch_req, __ATOMIC_RELAXED), 0))
        return tr_buf_reserve_slow();
    return &b->cur->rec[b->pos];
}

/* Publishes the record returned by the last tr_buf_reserve() of this thread. */
static inline void tr_buf_commit(void)
{
    tr_tbuf *b = tr_buf_tls;
    b->pos++;
    __atomic_store_n(&b->cur->count, b->pos, __ATOMIC_RELEASE);
    __atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
}

/* Counts a transfer that TRACER_MIN_BYTES keeps out of the trace, so its
 * totals still are in it. @from_device: 0 host to device, 1 the other way. */
void tr_buf_count_small(int from_device, uint64_t bytes);

/* Reserves the pool: @max_memory for all threads, @per_thread for one,
 * @drop: drop mode, @inflight: in a /dev/shm file that outlives the process
 * (core/inflight.h; private memory where that fails). Returns 0, or -1
 * (nothing reserved). */
int tr_buf_init(uint64_t max_memory, uint64_t per_thread, int drop, int inflight);
/* Starts accepting records (after tr_buf_init). */
void tr_buf_start(void);

/* --- consumer side --------------------------------------------------------- */

/* Called (from any thread) when a blocked producer needs the consumer. */
extern void (*tr_buf_wake_consumer)(void);

/* Stops recording; later tr_buf_reserve() calls return NULL. */
void tr_buf_stop(void);
/* After tr_buf_stop: waits until no other thread is between a reserve and
 * its commit, at most @max_ns, so that the final flush that follows has
 * every record reserved before the stop. The calling thread's own record,
 * if any, is not waited for. Returns 0, or -1 when one was still open at
 * the deadline (it is then counted by tr_buf_refused_total). A thread that
 * read "recording" in the few instructions before it marks itself busy is
 * not seen; its record is counted the same way. */
int tr_buf_wait_inflight(uint64_t max_ns);
/* Takes every full chunk pushed so far, linked by next_full (newest first). */
tr_chunk *tr_buf_take_full(void);
/* Returns a written chunk to the pool. */
void tr_buf_recycle(tr_chunk *c);
/* Consumer thread only. When a thread found no free chunk since the last
 * call (it waits, or drops in drop mode), takes the current chunk of every
 * thread whose chunk did not change since the previous such call and that is
 * not inside a record, and pushes it onto the full stack (take it with
 * tr_buf_take_full). Returns how many it took. */
uint32_t tr_buf_reclaim_idle(void);
/* Nonzero while a thread found no free chunk since the last reclaim. */
int tr_buf_under_pressure(void);
/* Nonzero when @c (read from @b->cur) is @b's current chunk, not one taken
 * from it and maybe reused since. Async-signal-safe. */
static inline int tr_buf_is_current(const tr_tbuf *b, tr_chunk *c)
{
    return c && __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == TR_CHUNK_CURRENT &&
           __atomic_load_n(&c->owner, __ATOMIC_RELAXED) == b;
}
#ifdef TR_BUF_TEST_HOOKS
/* Test builds only: called at these instants (buf.c). */
enum { TR_BUF_TP_SWITCHED = 1, /* reserve: the old chunk left cur, not yet on the full stack */
       TR_BUF_TP_RECLAIMED,     /* reclaim_idle: an idle chunk taken, not yet on the full stack */
       TR_BUF_TP_REGISTERED };  /* a thread's first reserve: its buffer exists, not yet busy */
extern void (*tr_buf_test_point)(int where);
#endif

/* First registered thread buffer; follow next_registered. */
tr_tbuf *tr_buf_registered(void);
/* Number of registered thread buffers. */
uint32_t tr_buf_thread_count(void);
/* Records that came too late for the journal, summed over threads: refused
 * because recording had stopped, or reserved before tr_buf_stop and
 * committed after the consumer's final flush (lost, so counted here). Call
 * once the consumer is stopped: before, its pending records count too. */
uint64_t tr_buf_refused_total(void);
/* Bytes of the pool touched so far (its high-water mark). */
uint64_t tr_buf_pool_bytes_used(void);
/* The pool's chunk @i, or NULL past the last one ever handed out: a crash
 * handler finds every chunk, whichever list holds it. Async-signal-safe. */
tr_chunk *tr_buf_pool_chunk(uint32_t i);
/* Forgets every buffer (a forked child that must not record). */
void tr_buf_reset_after_fork(void);

#endif
