#include "common/strtab.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s, uint64_t salt)
{
    uint64_t h = 1469598103934665603ull ^ salt;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}

uint32_t tr_strtab_id(tr_strtab *t, const char *s)
{
    /* Rehash with a salt on a collision between different strings. */
    for (uint64_t salt = 0;; salt++) {
        uint64_t h = hash(s, salt), v;
        if (!tr_u64map_get(&t->index, h, &v))
            break;
        if (!strcmp(t->s[v], s))
            return (uint32_t)v;
    }
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 256;
        char **n = realloc(t->s, cap * sizeof *n);
        if (!n)
            return UINT32_MAX;
        t->s = n;
        t->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy)
        return UINT32_MAX;
    uint64_t salt = 0, h;
    while (tr_u64map_get(&t->index, h = hash(s, salt), 0))
        salt++;
    if (tr_u64map_put(&t->index, h, t->count)) {
        free(copy);
        return UINT32_MAX;
    }
    t->s[t->count] = copy;
    return t->count++;
}

void tr_strtab_free(tr_strtab *t)
{
    for (uint32_t i = 0; i < t->count; i++)
        free(t->s[i]);
    free(t->s);
    tr_u64map_free(&t->index);
    memset(t, 0, sizeof *t);
}
