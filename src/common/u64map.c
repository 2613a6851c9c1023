#include "common/u64map.h"

#include <stdlib.h>

static size_t slot(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static int grow(tr_u64map *m)
{
    size_t cap = m->cap ? 2 * m->cap : 64;
    uint64_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = slot(m->keys[i], cap);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = cap;
    return 0;
}

int tr_u64map_put(tr_u64map *m, uint64_t key, uint64_t val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m))
        return -1;
    size_t j = slot(key, m->cap);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        m->count++;
    m->keys[j] = key;
    m->vals[j] = val;
    return 0;
}

int tr_u64map_get(const tr_u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return 0;
    size_t j = slot(key, m->cap);
    while (m->keys[j]) {
        if (m->keys[j] == key) {
            if (val)
                *val = m->vals[j];
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
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        return 0;
    if (val)
        *val = m->vals[j];
    m->keys[j] = 0;
    m->count--;
    size_t i = j;
    for (;;) {
        i = (i + 1) & (m->cap - 1);
        if (!m->keys[i])
            break;
        size_t home = slot(m->keys[i], m->cap);
        /* Move the entry back if its home is not between the hole and it. */
        if ((i > j && (home <= j || home > i)) || (i < j && home <= j && home > i)) {
            m->keys[j] = m->keys[i];
            m->vals[j] = m->vals[i];
            m->keys[i] = 0;
            j = i;
        }
    }
    return 1;
}

void tr_u64map_free(tr_u64map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = 0;
    m->cap = m->count = 0;
}
