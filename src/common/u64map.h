/* u64map.h - open-addressing hash map from nonzero uint64 keys to uint64
 * values (ids, addresses). Generic: any folder may include it (src/common/
 * depends on nothing but libc). A key and its value share a slot, so a
 * lookup touches one cache line. */
#ifndef TR_COMMON_U64MAP_H
#define TR_COMMON_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_u64slot {
    uint64_t key; /* 0: empty */
    uint64_t val;
} tr_u64slot;

typedef struct tr_u64map {
    tr_u64slot *slots;
    size_t cap, count;
} tr_u64map;

/* Returns 0, or -1 when out of memory. Key 0 is reserved. */
int tr_u64map_put(tr_u64map *m, uint64_t key, uint64_t val);
/* Makes room for @n more keys at once, so that filling a map whose size is
 * known beforehand rehashes nothing. Returns 0, or -1 when out of memory
 * (the map is unchanged). */
int tr_u64map_reserve(tr_u64map *m, size_t n);
/* Returns 1 and sets *val when found. */
int tr_u64map_get(const tr_u64map *m, uint64_t key, uint64_t *val);
/* Removes @key if present; returns 1 when it was there. */
int tr_u64map_del(tr_u64map *m, uint64_t key, uint64_t *val);
/* Iteration: slot @i (0 <= i < m->cap) holds an entry when it returns 1. */
static inline int tr_u64map_at(const tr_u64map *m, size_t i, uint64_t *key, uint64_t *val)
{
    if (!m->slots[i].key)
        return 0;
    *key = m->slots[i].key;
    *val = m->slots[i].val;
    return 1;
}
void tr_u64map_free(tr_u64map *m);

#endif
