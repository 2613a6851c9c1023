/* unload.c - see unload.h. Never on the hot path: an unload is a dlclose,
 * and the consumer asks once per address and unload. */
#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include "core/unload.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/clock.h"
#include "core/lifecycle.h"
#include "core/object_span.h"

void (*tr_unload_hook)(void);

typedef struct noted {
    tr_unload u;
    int done; /* the hook returned: the object may be unmapped from now on */
} noted;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static noted *all;
static uint32_t n, cap; /* n: read without the lock by tr_unload_count */

struct span_of {
    uint64_t addr, lo, hi;
};

static int find_span(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct span_of *s = data;
    return tr_object_holds(info, s->addr) && tr_object_span(info, &s->lo, &s->hi);
}

/* Appends an unload of the object holding @inside; its index, or -1 when
 * it could not be remembered (out of memory: its names may then be those
 * of the code loaded there next, as before). */
static int64_t note(const void *inside)
{
    struct span_of s = {(uintptr_t)inside, 0, UINT64_MAX};
    if (!inside || !dl_iterate_phdr(find_span, &s)) {
        s.lo = 0;
        s.hi = UINT64_MAX;
    }
    pthread_mutex_lock(&lock);
    int64_t at = -1;
    if (n == cap) {
        uint32_t c = cap ? 2 * cap : 16;
        noted *p = realloc(all, c * sizeof *p);
        if (p) {
            all = p;
            cap = c;
        }
    }
    if (n < cap) {
        /* The tick is taken under the lock: unloads are noted in tick order. */
        all[n] = (noted){{tr_clock_ticks(), s.lo, s.hi}, 0};
        at = n;
        __atomic_store_n(&n, n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return at;
}

void tr_before_unload(const void *inside)
{
    void (*hook)(void) = __atomic_load_n(&tr_unload_hook, __ATOMIC_ACQUIRE);
    if (!hook || !tr_lifecycle_active())
        return;
    int64_t at = note(inside);
    hook();
    if (at >= 0) {
        pthread_mutex_lock(&lock);
        all[at].done = 1;
        pthread_mutex_unlock(&lock);
    }
}

uint32_t tr_unload_count(void) { return __atomic_load_n(&n, __ATOMIC_ACQUIRE); }

tr_unload tr_unload_get(uint32_t i)
{
    pthread_mutex_lock(&lock);
    tr_unload u = i < n ? all[i].u : (tr_unload){0, 0, 0};
    pthread_mutex_unlock(&lock);
    return u;
}

uint64_t tr_unload_since(uint64_t addr, uint64_t tick, int *gone)
{
    uint64_t since = 0;
    *gone = 0;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n; i++) {
        const noted *u = &all[i];
        if (addr < u->u.lo || addr >= u->u.hi)
            continue;
        if (u->u.tick < tick)
            since = u->u.tick;
        else if (u->done)
            *gone = 1;
    }
    pthread_mutex_unlock(&lock);
    return since;
}
