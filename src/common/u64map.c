#include "common/u64map.h"

#include <stdlib.h>

#include "common/hugepage.h"

static size_t slot(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
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
