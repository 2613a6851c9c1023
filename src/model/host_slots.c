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

static void swap(tr_host_slot_free *a, tr_host_slot_free *b)
{
    tr_host_slot_free t = *a;
    *a = *b;
    *b = t;
}

uint32_t tr_host_slots_take(tr_host_slots *hs, uint64_t t)
{
    /* The lowest free one only: another free one that would do is rare
     * (a first event in the past), and a new location is as correct. */
    if (!hs->nfree || hs->free[0].since > t)
        return hs->used++;
    tr_host_slot_free *h = hs->free;
    uint32_t lowest = h[0].slot;
    h[0] = h[--hs->nfree];
    for (size_t i = 0, n = hs->nfree;;) {
        size_t l = 2 * i + 1, best = i;
        if (l < n && h[l].slot < h[best].slot)
            best = l;
        if (l + 1 < n && h[l + 1].slot < h[best].slot)
            best = l + 1;
        if (best == i)
            break;
        swap(&h[i], &h[best]);
        i = best;
    }
    return lowest;
}

void tr_host_slots_give(tr_host_slots *hs, uint32_t slot, uint64_t since)
{
    /* Each location is free at most once at a time: nfree < used <= cap. */
    if (hs->nfree == hs->cap)
        return;
    tr_host_slot_free *h = hs->free;
    size_t i = hs->nfree++;
    h[i] = (tr_host_slot_free){slot, since};
    while (i > 0 && h[(i - 1) / 2].slot > h[i].slot) {
        swap(&h[i], &h[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

void tr_host_slots_free(tr_host_slots *hs)
{
    free(hs->free);
    *hs = (tr_host_slots){0};
}
