/* code_spans.c - see code_spans.h. */
#include "journal/code_spans.h"

#include <stdlib.h>

#include "common/grow.h"

int tr_code_spans_add_unload(tr_code_spans *s, const tr_journal_unload *u)
{
    size_t cap = s->capunloads;
    if (u->lo >= u->hi)
        return 0;
    if (tr_grow((void **)&s->unloads, &cap, s->nunloads, sizeof *s->unloads, 16))
        return -1;
    s->capunloads = (uint32_t)cap;
    s->unloads[s->nunloads++] = *u;
    return 0;
}

static const tr_code_span_key *find(const tr_code_spans *s, uint64_t codeptr, uint64_t since)
{
    uint64_t i;
    if (!tr_u64map_get(&s->first, codeptr, &i))
        return 0;
    for (; i; i = s->keys[i - 1].next)
        if (s->keys[i - 1].since == since)
            return &s->keys[i - 1];
    return 0;
}

int tr_code_spans_named(const tr_code_spans *s, uint64_t codeptr, uint64_t since)
{
    return find(s, codeptr, since) != 0;
}

int tr_code_spans_add_symbol(tr_code_spans *s, uint64_t codeptr, uint64_t since, uint32_t index)
{
    size_t cap = s->capkeys;
    if (!codeptr || find(s, codeptr, since))
        return 0;
    if (tr_grow((void **)&s->keys, &cap, s->nkeys, sizeof *s->keys, 16))
        return -1;
    s->capkeys = (uint32_t)cap;
    uint64_t head = 0;
    tr_u64map_get(&s->first, codeptr, &head);
    s->keys[s->nkeys] = (tr_code_span_key){since, TR_CODE_KEY_NAMED | index, (uint32_t)head};
    if (tr_u64map_put(&s->first, codeptr, s->nkeys + 1))
        return -1;
    s->nkeys++;
    return 0;
}

static int by_tick(const void *a, const void *b)
{
    const tr_journal_unload *x = a, *y = b;
    return (x->tick > y->tick) - (x->tick < y->tick);
}

void tr_code_spans_finish(tr_code_spans *s)
{
    if (s->nunloads > 1)
        qsort(s->unloads, s->nunloads, sizeof *s->unloads, by_tick);
    s->lo = UINT64_MAX;
    s->hi = 0;
    for (uint32_t i = 0; i < s->nunloads; i++) {
        if (s->unloads[i].lo < s->lo)
            s->lo = s->unloads[i].lo;
        if (s->unloads[i].hi > s->hi)
            s->hi = s->unloads[i].hi;
    }
}

void tr_code_spans_rekey(const tr_code_spans *s, tr_record *r)
{
    if (!s->nunloads)
        return;
    int slot = tr_record_code_slot(r);
    if (slot < 0 || !r->u[slot] || r->u[slot] >= TR_CODE_KEY_UNNAMED)
        return;
    uint64_t a = r->u[slot];
    if (a < s->lo || a >= s->hi)
        return; /* no unload freed it: the common case, kept cheap */
    /* The latest unload before the record that freed its address. */
    for (uint32_t i = s->nunloads; i-- > 0;) {
        const tr_journal_unload *u = &s->unloads[i];
        if (u->tick >= r->time || a < u->lo || a >= u->hi)
            continue;
        const tr_code_span_key *k = find(s, a, u->tick);
        r->u[slot] = k ? k->key : TR_CODE_KEY_UNNAMED | a;
        return;
    }
}

void tr_code_spans_free(tr_code_spans *s)
{
    free(s->unloads);
    free(s->keys);
    tr_u64map_free(&s->first);
    *s = (tr_code_spans){0};
}
