/* buf.h - per-thread, lock-free record buffers (the hot path).
 *
 * Each thread owns a buffer: a current chunk of TR_CHUNK_RECORDS fixed-size
 * records and a write position only that thread moves, so reserving a slot is
 * a TLS load, a compare and an increment (no lock, no atomic RMW, no syscall).
 * Commit publishes the new count with a store-release so a reader that loads
 * the count with acquire sees complete records.
 *
 * A full chunk is pushed onto one process-wide lock-free stack (a Treiber
 * push; the consumer takes the whole stack with one exchange, so there is no
 * ABA). Chunks come from slabs mapped many at a time, so the steady state
 * makes no syscall and no malloc. Buffers are registered once and never
 * freed, so a thread that exits before the end keeps its events.
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

struct tr_chunk {
    tr_chunk *next_full;     /* link on the full stack */
    tr_tbuf *owner;
    uint64_t seq;            /* order of this chunk in its owner's stream */
    uint32_t count;          /* committed records; store-release / load-acquire */
    uint32_t pad[9];
    tr_record rec[TR_CHUNK_RECORDS];
};

/* Cache-line aligned: pos is written on every event, and two threads'
 * buffers on one line would slow each other down (false sharing). */
struct __attribute__((aligned(64))) tr_tbuf {
    tr_chunk *cur;
    uint32_t pos;            /* next free slot in cur; owner-only */
    uint32_t index;          /* order of registration, 0 = first thread */
    uint64_t next_seq;
    uint64_t dropped;        /* records refused after the end or without memory */
    uint64_t small_count[2]; /* transfers under TRACER_MIN_BYTES: [0] to, [1] from device */
    uint64_t small_bytes[2];
    pid_t tid;
    tr_tbuf *next_registered;
};

/* Nonzero while records are accepted (between activation and the end). */
extern int tr_buf_recording;

extern __thread tr_tbuf *tr_buf_tls __attribute__((tls_model("initial-exec")));

tr_record *tr_buf_reserve_slow(void);
void tr_buf_count_refused(void);

/* Returns the slot for the next record, or NULL when recording is off or no
 * memory is left (the loss is counted). Not async-signal-safe yet. */
static inline tr_record *tr_buf_reserve(void)
{
    tr_tbuf *b = tr_buf_tls;
    if (__builtin_expect(!__atomic_load_n(&tr_buf_recording, __ATOMIC_RELAXED), 0)) {
        tr_buf_count_refused();
        return 0;
    }
    if (__builtin_expect(b == 0 || b->pos == TR_CHUNK_RECORDS, 0))
        return tr_buf_reserve_slow();
    return &b->cur->rec[b->pos];
}

/* Publishes the record returned by the last tr_buf_reserve() of this thread. */
static inline void tr_buf_commit(void)
{
    tr_tbuf *b = tr_buf_tls;
    b->pos++;
    __atomic_store_n(&b->cur->count, b->pos, __ATOMIC_RELEASE);
}

/* Counts a transfer that TRACER_MIN_BYTES keeps out of the trace, so its
 * totals still are in it. @from_device: 0 host to device, 1 the other way. */
void tr_buf_count_small(int from_device, uint64_t bytes);

/* --- consumer side (the writer) ------------------------------------------ */

/* Stops recording; later tr_buf_reserve() calls return NULL. */
void tr_buf_stop(void);
/* Takes every full chunk pushed so far, as a list linked by next_full. */
tr_chunk *tr_buf_take_full(void);
/* First registered thread buffer; follow next_registered. */
tr_tbuf *tr_buf_registered(void);
/* Number of registered thread buffers. */
uint32_t tr_buf_thread_count(void);
/* Records refused because recording had stopped, summed over threads. */
uint64_t tr_buf_refused_total(void);
/* Forgets every buffer (a forked child that must not record). */
void tr_buf_reset_after_fork(void);

#endif
