/* host_slots.c - see host_slots.h. */
#include "model/host_slots.h"

#include <stdlib.h>

int tr_host_slots_init(tr_host_slots *hs, size_t nstreams)
{
    *hs = (tr_host_slots){0};
    hs->cap = nstreams ? nstreams : 1;
    hs->free = malloc(hs->cap * sizeof *hs->free);
    return hs->free ? 0 : -1;
}

uint32_t tr_host_slots_take(tr_host_slots *hs)
{
    if (!hs->nfree)
        return hs->used++;
    uint32_t *h = hs->free, lowest = h[0];
    h[0] = h[--hs->nfree];
    for (size_t i = 0, n = hs->nfree;;) {
        size_t l = 2 * i + 1, best = i;
        if (l < n && h[l] < h[best])
            best = l;
        if (l + 1 < n && h[l + 1] < h[best])
            best = l + 1;
        if (best == i)
            break;
        uint32_t t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
    return lowest;
}

void tr_host_slots_give(tr_host_slots *hs, uint32_t slot)
{
    /* Every slot is given back at most once per take: nfree < used <= cap. */
    if (hs->nfree == hs->cap)
        return;
    uint32_t *h = hs->free;
    size_t i = hs->nfree++;
    h[i] = slot;
    while (i > 0 && h[(i - 1) / 2] > h[i]) {
        uint32_t t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

void tr_host_slots_free(tr_host_slots *hs)
{
    free(hs->free);
    *hs = (tr_host_slots){0};
}
