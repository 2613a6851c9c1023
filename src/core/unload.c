/* unload.c - see unload.h. Never on the hot path: an unload is a dlclose,
 * and the consumer asks once per address and unload. */
#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include "core/unload.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/lifecycle.h"
#include "core/object_span.h"

void (*tr_unload_hook)(void);

/* Which object went: its load bias and name, as the loader gives them. */
typedef struct object_id {
    uint64_t bias;
    char name[128]; /* cut: a long path compares on its first 127 bytes */
} object_id;

typedef struct noted {
    tr_unload u;
    object_id id;
    int done; /* the hook returned: the object may be unmapped from now on */
} noted;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static noted *all;
static uint32_t n, cap; /* n: read without the lock by tr_unload_count */

struct span_of {
    uint64_t addr, lo, hi;
    object_id id;
};

static int find_span(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct span_of *s = data;
    if (!tr_object_holds(info, s->addr) || !tr_object_span(info, &s->lo, &s->hi))
        return 0;
    s->id.bias = info->dlpi_addr;
    snprintf(s->id.name, sizeof s->id.name, "%s", info->dlpi_name ? info->dlpi_name : "");
    return 1;
}

/* Whether the object that holds @addr now is @id: the one unloaded was not
 * unmapped after all (the program's own image, or a library still loaded,
 * unregistered at exit; one another handle keeps). */
static int still_there(uint64_t addr, const object_id *id)
{
    struct span_of s = {addr, 0, 0, {0, ""}};
    return dl_iterate_phdr(find_span, &s) && s.id.bias == id->bias && !strcmp(s.id.name, id->name);
}

/* Appends an unload of the object holding @inside; its index, or -1 when
 * it could not be remembered (out of memory: its names may then be those
 * of the code loaded there next, as before). */
static int64_t note(const void *inside)
{
    struct span_of s = {(uintptr_t)inside, 0, UINT64_MAX, {0, ""}};
    if (!inside || !dl_iterate_phdr(find_span, &s)) {
        s.lo = 0;
        s.hi = UINT64_MAX;
        s.id = (object_id){UINT64_MAX, "?"}; /* not known: never taken for one still there */
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
        all[n] = (noted){{tr_clock_ticks(), s.lo, s.hi}, s.id, 0};
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
    int later = 0;
    object_id first_later = {0, ""};
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n; i++) {
        const noted *u = &all[i];
        if (addr < u->u.lo || addr >= u->u.hi)
            continue;
        if (u->u.tick < tick)
            since = u->u.tick;
        else if (u->done && !later++)
            first_later = u->id; /* the object of @tick's span: the first to go after it */
    }
    pthread_mutex_unlock(&lock);
    /* The loader's list is read outside the lock: nothing here waits for
     * the loader while holding what an unloading thread takes. */
    *gone = later && !still_there(addr, &first_later);
    return since;
}
