/* buf.c - slow path of the thread buffers: first use by a thread, chunk
 * switch, slab allocation, and the consumer's view. */
#include "core/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"

#define SLAB_CHUNKS 16u

_Static_assert(sizeof(tr_chunk) == TR_CHUNK_BYTES, "chunk is exactly TR_CHUNK_BYTES");

int tr_buf_recording;
__thread tr_tbuf *tr_buf_tls __attribute__((tls_model("initial-exec")));

typedef struct slab {
    char *base;
    uint32_t next;  /* next chunk to hand out; fetch-add */
} slab;

static slab *cur_slab;
static tr_chunk *full_stack;
static tr_tbuf *registry;
static uint32_t thread_count;
static uint64_t refused;
static int oom_once;

static tr_record *reserve_slow(tr_tbuf *b);

static slab *slab_new(void)
{
    slab *s = malloc(sizeof *s);
    if (!s)
        return 0;
    void *p = mmap(0, (size_t)SLAB_CHUNKS * TR_CHUNK_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        free(s);
        return 0;
    }
    s->base = p;
    s->next = 0;
    return s;
}

/* Lock-free: threads race on the slab's counter; the one that overflows it
 * installs a new slab with a CAS, and a loser unmaps its spare. Old slabs stay
 * mapped because their chunks are still in use. */
static tr_chunk *chunk_alloc(void)
{
    for (;;) {
        slab *s = __atomic_load_n(&cur_slab, __ATOMIC_ACQUIRE);
        if (s) {
            uint32_t i = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
            if (i < SLAB_CHUNKS)
                return (tr_chunk *)(s->base + (size_t)i * TR_CHUNK_BYTES);
        }
        slab *n = slab_new();
        if (!n)
            return 0;
        if (!__atomic_compare_exchange_n(&cur_slab, &s, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            munmap(n->base, (size_t)SLAB_CHUNKS * TR_CHUNK_BYTES);
            free(n);
        }
    }
}

static void push_full(tr_chunk *c)
{
    tr_chunk *head = __atomic_load_n(&full_stack, __ATOMIC_RELAXED);
    do {
        c->next_full = head;
    } while (!__atomic_compare_exchange_n(&full_stack, &head, c, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

static tr_tbuf *tbuf_register(void)
{
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

/* Runs inside the host's runtime calls: mmap/malloc must not leave the
 * application a different errno than it had. */
tr_record *tr_buf_reserve_slow(void)
{
    int saved_errno = errno;
    tr_record *r = reserve_slow(tr_buf_tls);
    errno = saved_errno;
    return r;
}

static tr_record *reserve_slow(tr_tbuf *b)
{
    if (!b && !(b = tbuf_register())) {
        tr_log_once(&oom_once, "out of memory for thread buffers; events are being dropped");
        __atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
        return 0;
    }
    tr_chunk *c = chunk_alloc();
    if (!c) {
        b->dropped++;
        tr_log_once(&oom_once, "out of memory for thread buffers; events are being dropped");
        return 0;
    }
    c->owner = b;
    c->seq = b->next_seq++;
    c->count = 0;
    tr_chunk *old = b->cur;
    /* Publish the new chunk before the old one leaves, so the writer's view
     * (full stack + current chunk) never misses either. */
    __atomic_store_n(&b->cur, c, __ATOMIC_RELEASE);
    b->pos = 0;
    if (old)
        push_full(old);
    return &c->rec[0];
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

void tr_buf_count_refused(void)
{
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

void tr_buf_reset_after_fork(void)
{
    tr_buf_recording = 0;
    full_stack = 0;
    registry = 0;
    thread_count = 0;
    tr_buf_tls = 0;
}
