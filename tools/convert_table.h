/* convert_table.h - the containers of tracer convert's reader
 * (convert_internal.h): lookup of OTF2 definitions by id (over the
 * growable array of src/otf2read/otf2read.h) and a map from a composite
 * key to a dense id (the counters).
 *
 * Header-only and static inline: small private helpers of the reader's
 * files, not an API. Everything here grows with the definitions of an
 * archive, never with its events. */
#ifndef TR_TOOLS_CONVERT_TABLE_H
#define TR_TOOLS_CONVERT_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "otf2read/otf2read.h"

/* The growable array (struct otr_vec, otr_vec_push, otr_vec_at,
 * otr_reserve) is the OTF2 reading layer's, shared with the summary. */

/* ---- definitions by id ----------------------------------------------------- */

/* Definitions stay in the order they were read, because processes and
 * tracks follow that order; finding one by its OTF2 id is separate. Every
 * record starts with its id as a uint64_t. Writers (tracer, Score-P) number
 * definitions 0, 1, 2, ... in order, so record i nearly always has id i and
 * a lookup is one comparison; for anything else a sorted index is built. */
struct tc_idpos {
    uint64_t id;
    uint32_t pos;
};

struct tc_index {
    struct tc_idpos *e; /* NULL when every record i has id i */
    size_t n;
};

static inline int tc_idpos_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct tc_idpos *)a)->id, y = ((const struct tc_idpos *)b)->id;
    return (x > y) - (x < y);
}

static inline uint64_t tc_rec_id(const struct otr_vec *vec, size_t size, size_t i)
{
    uint64_t id;
    memcpy(&id, otr_vec_at(vec, size, i), sizeof id);
    return id;
}

/* Returns 0, or -1 when out of memory. */
static inline int tc_index_build(struct tc_index *ix, const struct otr_vec *vec, size_t size)
{
    ix->e = NULL;
    ix->n = 0;
    size_t i = 0;
    while (i < vec->n && tc_rec_id(vec, size, i) == i)
        i++;
    if (i == vec->n)
        return 0;
    ix->e = malloc((vec->n ? vec->n : 1) * sizeof *ix->e);
    if (!ix->e)
        return -1;
    for (i = 0; i < vec->n; i++)
        ix->e[i] = (struct tc_idpos){ tc_rec_id(vec, size, i), (uint32_t)i };
    ix->n = vec->n;
    qsort(ix->e, ix->n, sizeof *ix->e, tc_idpos_cmp);
    return 0;
}

/* The record with @id, or NULL. */
static inline void *tc_index_find(const struct tc_index *ix, const struct otr_vec *vec, size_t size,
                                  uint64_t id)
{
    if (id < vec->n && tc_rec_id(vec, size, id) == id)
        return otr_vec_at(vec, size, id);
    if (!ix->e)
        return NULL;
    struct tc_idpos key = { id, 0 };
    const struct tc_idpos *hit = bsearch(&key, ix->e, ix->n, sizeof *ix->e, tc_idpos_cmp);
    return hit ? otr_vec_at(vec, size, hit->pos) : NULL;
}

/* ---- composite key -> dense id ---------------------------------------------- */

struct tc_key {
    uint64_t a, b, c;
};

struct tc_map_slot {
    struct tc_key k;
    uint32_t val;
    bool used;
};

/* Open addressing, linear probing, at most half full. */
struct tc_map {
    struct tc_map_slot *s;
    size_t cap, n;
};

static inline size_t tc_key_hash(struct tc_key k)
{
    uint64_t h = k.a * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 29) ^ k.b) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 32) ^ k.c) * 0x94D049BB133111EBull;
    return (size_t)(h ^ (h >> 31));
}

static inline bool tc_key_eq(struct tc_key x, struct tc_key y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c;
}

/* The value stored for @k, or NULL. */
static inline uint32_t *tc_map_find(const struct tc_map *m, struct tc_key k)
{
    if (!m->cap)
        return NULL;
    for (size_t i = tc_key_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->s[i].used)
            return NULL;
        if (tc_key_eq(m->s[i].k, k))
            return &m->s[i].val;
    }
}

/* Stores @k -> @val (@k must not be there yet). Returns 0, or -1 when out
 * of memory. */
static inline int tc_map_put(struct tc_map *m, struct tc_key k, uint32_t val)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct tc_map_slot *s = calloc(cap, sizeof *s);
        if (!s)
            return -1;
        for (size_t j = 0; j < m->cap; j++) {
            if (!m->s[j].used)
                continue;
            size_t i = tc_key_hash(m->s[j].k) & (cap - 1);
            while (s[i].used)
                i = (i + 1) & (cap - 1);
            s[i] = m->s[j];
        }
        free(m->s);
        m->s = s;
        m->cap = cap;
    }
    size_t i = tc_key_hash(k) & (m->cap - 1);
    while (m->s[i].used)
        i = (i + 1) & (m->cap - 1);
    m->s[i] = (struct tc_map_slot){ k, val, true };
    m->n++;
    return 0;
}

#endif
