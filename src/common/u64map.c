#include "common/u64map.h"

#include <stdlib.h>

#include "common/hugepage.h"

/* The keys are mostly ids handed out in increasing runs (core/ids.c) and
 * looked up in about the order they were handed out: keys that differ only
 * in their low 6 bits land in neighbouring slots, so such a walk reads the
 * table a cache line after the next instead of a random line per key (the
 * writer's target and delete lookups were 8% of recovering 100,000 target
 * regions). The higher bits are mixed, which spreads the runs, and their
 * mix also rotates the run's place in its 64 slots, which keeps aligned
 * addresses (low bits zero) from piling up in a small table. */
static size_t slot(uint64_t k, size_t cap)
{
    uint64_t h = k >> 6;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)((h << 6) + ((k + h) & 63)) & (cap - 1);
}

static int rehash(tr_u64map *m, size_t cap)
{
    tr_u64slot *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    tr_hugepage_hint(s, cap * sizeof *s);
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key)
            continue;
        size_t j = slot(m->slots[i].key, cap);
        while (s[j].key)
            j = (j + 1) & (cap - 1);
        s[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = s;
    m->cap = cap;
    return 0;
}

static int grow(tr_u64map *m) { return rehash(m, m->cap ? 2 * m->cap : 64); }

int tr_u64map_reserve(tr_u64map *m, size_t n)
{
    if (!n)
        return 0;
    size_t cap = m->cap ? m->cap : 64;
    while ((m->count + n) * 2 > cap)
        cap *= 2;
    return cap == m->cap ? 0 : rehash(m, cap);
}

int tr_u64map_put(tr_u64map *m, uint64_t key, uint64_t val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m))
        return -1;
    size_t j = slot(key, m->cap);
    while (m->slots[j].key && m->slots[j].key != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->slots[j].key)
        m->count++;
    m->slots[j].key = key;
    m->slots[j].val = val;
    return 0;
}

int tr_u64map_get(const tr_u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return 0;
    size_t j = slot(key, m->cap);
    while (m->slots[j].key) {
        if (m->slots[j].key == key) {
            if (val)
                *val = m->slots[j].val;
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
int tr_u64map_del(tr_u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return 0;
    size_t j = slot(key, m->cap);
    while (m->slots[j].key && m->slots[j].key != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->slots[j].key)
        return 0;
    if (val)
        *val = m->slots[j].val;
    m->slots[j].key = 0;
    m->count--;
    size_t i = j;
    for (;;) {
        i = (i + 1) & (m->cap - 1);
        if (!m->slots[i].key)
            break;
        size_t home = slot(m->slots[i].key, m->cap);
        /* Move the entry back if its home is not between the hole and it. */
        if ((i > j && (home <= j || home > i)) || (i < j && home <= j && home > i)) {
            m->slots[j] = m->slots[i];
            m->slots[i].key = 0;
            j = i;
        }
    }
    return 1;
}

void tr_u64map_free(tr_u64map *m)
{
    free(m->slots);
    m->slots = 0;
    m->cap = m->count = 0;
}
