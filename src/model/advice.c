/* advice.c - the data mapping patterns of advice.h, in one time-ordered
 * walk over the run's data operations and kernel launches.
 *
 * Each device has a kernel epoch, bumped by every launch on it: whatever
 * was set in an older epoch may have been read or changed by a kernel. An
 * allocation remembers its epoch (unused while it still matches), and the
 * content of each host range copied into it: the hash and the epoch it was
 * known in (valid while it matches), and the copy to the device that put
 * it there (unused while its epoch matches). A range of host memory on a
 * device (address, size) outlives its allocations: how often it was
 * allocated, and the hash of what last came back from it. */
#include "model/advice.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/sort.h"

static const char *const names[TR_ADVICE_COUNT] = {
    "", "duplicate_transfer", "round_trip", "repeated_allocation", "unused_allocation", "unused_transfer",
};

const char *tr_advice_name(int category)
{
    return category > 0 && category < TR_ADVICE_COUNT ? names[category] : "";
}

typedef struct content {
    uint64_t host, bytes, hash;
    int has_hash;
    uint64_t epoch;       /* the device's kernel epoch when the hash became known */
    size_t to_op;         /* the copy to the device that set it, or SIZE_MAX */
    uint64_t to_epoch;
} content;

typedef struct allocation { /* a live one: freed ones are taken out */
    int device;
    uint64_t host, bytes, dev_addr;
    uint64_t epoch;       /* the device's kernel epoch at the alloc */
    size_t alloc_op;
    size_t range;         /* its (device, host, bytes) range */
    content *c;
    size_t nc, capc;
} allocation;

typedef struct range {
    int device;
    uint64_t host, bytes;
    uint32_t allocations; /* allocations of it so far */
    int has_from;
    uint64_t from_hash;   /* the last copy back from the device */
} range;

typedef struct state {
    const tr_advice_op *ops;
    uint8_t *cat;
    allocation *a;        /* the live allocations */
    size_t na, capa;
    range *r;
    size_t nr, capr;
    size_t *slots;        /* open addressing over r: index + 1, 0 empty */
    size_t nslots;
    struct dev_epoch {
        int device;
        uint64_t epoch;   /* bumped by each launch on the device */
    } *devs;
    size_t ndevs, capdevs;
} state;

static uint64_t *epoch_of(state *s, int device)
{
    for (size_t i = 0; i < s->ndevs; i++)
        if (s->devs[i].device == device)
            return &s->devs[i].epoch;
    if (tr_grow((void **)&s->devs, &s->capdevs, s->ndevs, sizeof *s->devs, 4))
        return 0;
    s->devs[s->ndevs] = (struct dev_epoch){device, 1};
    return &s->devs[s->ndevs++].epoch;
}

static size_t slot_of(const state *s, int device, uint64_t host, uint64_t bytes)
{
    uint64_t h = (host * 0x9e3779b97f4a7c15ull) ^ (bytes * 0xc2b2ae3d27d4eb4full) ^ (uint64_t)(unsigned)device;
    return (size_t)(h ^ (h >> 29)) & (s->nslots - 1);
}

/* The range (@device, @host, @bytes), made when new; SIZE_MAX out of memory. */
static size_t range_of(state *s, int device, uint64_t host, uint64_t bytes)
{
    if (2 * (s->nr + 1) > s->nslots) {
        size_t n = s->nslots ? 2 * s->nslots : 64;
        size_t *slots = calloc(n, sizeof *slots);
        if (!slots)
            return SIZE_MAX;
        free(s->slots);
        s->slots = slots;
        s->nslots = n;
        for (size_t i = 0; i < s->nr; i++) {
            size_t k = slot_of(s, s->r[i].device, s->r[i].host, s->r[i].bytes);
            while (s->slots[k])
                k = (k + 1) & (n - 1);
            s->slots[k] = i + 1;
        }
    }
    size_t k = slot_of(s, device, host, bytes);
    for (; s->slots[k]; k = (k + 1) & (s->nslots - 1)) {
        range *r = &s->r[s->slots[k] - 1];
        if (r->device == device && r->host == host && r->bytes == bytes)
            return s->slots[k] - 1;
    }
    if (tr_grow((void **)&s->r, &s->capr, s->nr, sizeof *s->r, 16))
        return SIZE_MAX;
    s->r[s->nr] = (range){.device = device, .host = host, .bytes = bytes};
    s->slots[k] = ++s->nr;
    return s->nr - 1;
}

/* The live allocation on @device holding host bytes [@host, +@bytes), or NULL. */
static allocation *holding(state *s, int device, uint64_t host, uint64_t bytes)
{
    for (size_t i = s->na; i-- > 0;) {
        allocation *a = &s->a[i];
        if (a->device == device && host >= a->host && host - a->host <= a->bytes &&
            bytes <= a->bytes - (host - a->host))
            return a;
    }
    return 0;
}

static void flag(state *s, size_t op, int category)
{
    if (op != SIZE_MAX && !s->cat[op])
        s->cat[op] = (uint8_t)category;
}

/* The content entry of exactly [@host, +@bytes) in @a, made when new; the
 * entries it overlaps are dropped (their content is no longer known). */
static content *content_of(allocation *a, uint64_t host, uint64_t bytes, int *fresh)
{
    content *hit = 0;
    size_t k = 0;
    for (size_t i = 0; i < a->nc; i++) {
        content *c = &a->c[i];
        if (c->host == host && c->bytes == bytes) {
            a->c[k++] = *c;
            hit = &a->c[k - 1];
        } else if (c->host + c->bytes <= host || host + bytes <= c->host) {
            a->c[k++] = *c;
        }
    }
    a->nc = k;
    *fresh = !hit;
    if (hit)
        return hit;
    if (tr_grow((void **)&a->c, &a->capc, a->nc, sizeof *a->c, 16))
        return 0;
    a->c[a->nc] = (content){.host = host, .bytes = bytes, .to_op = SIZE_MAX};
    return &a->c[a->nc++];
}

static int on_alloc(state *s, size_t i, const tr_advice_op *o, uint64_t epoch)
{
    size_t r = range_of(s, o->device, o->host, o->bytes);
    if (r == SIZE_MAX || tr_grow((void **)&s->a, &s->capa, s->na, sizeof *s->a, 16))
        return -1;
    if (s->r[r].allocations++)
        flag(s, i, TR_ADVICE_REPEATED_ALLOCATION);
    s->a[s->na++] = (allocation){.device = o->device, .host = o->host, .bytes = o->bytes,
                                 .dev_addr = o->dev_addr, .epoch = epoch, .alloc_op = i, .range = r};
    return 0;
}

static void on_delete(state *s, size_t i, const tr_advice_op *o, uint64_t epoch)
{
    for (size_t k = s->na; k-- > 0;) {
        allocation *a = &s->a[k];
        if (a->device != o->device || a->dev_addr != o->dev_addr)
            continue;
        if (a->epoch == epoch) {
            /* Not needed at all outranks needed only once. */
            s->cat[a->alloc_op] = TR_ADVICE_UNUSED_ALLOCATION;
            flag(s, i, TR_ADVICE_UNUSED_ALLOCATION);
        }
        for (size_t j = 0; j < a->nc; j++)
            if (a->c[j].to_op != SIZE_MAX && a->c[j].to_epoch == epoch)
                flag(s, a->c[j].to_op, TR_ADVICE_UNUSED_TRANSFER);
        /* Gone: taken out, so that the live ones stay few to search. */
        free(a->c);
        s->a[k] = s->a[--s->na];
        return;
    }
}

static int on_to(state *s, size_t i, const tr_advice_op *o, uint64_t epoch)
{
    allocation *a = holding(s, o->device, o->host, o->bytes);
    if (!a)
        return 0;
    int fresh;
    content *c = content_of(a, o->host, o->bytes, &fresh);
    if (!c)
        return -1;
    int same = !fresh && o->has_hash && c->has_hash && c->hash == o->hash && c->epoch == epoch;
    if (same) {
        flag(s, i, TR_ADVICE_DUPLICATE_TRANSFER);
        return 0; /* the device keeps what the earlier copy put there */
    }
    range *r = &s->r[a->range];
    if (o->has_hash && r->has_from && r->from_hash == o->hash && o->host == a->host && o->bytes == a->bytes &&
        fresh && r->allocations > 1)
        flag(s, i, TR_ADVICE_ROUND_TRIP);
    if (!fresh && c->to_op != SIZE_MAX && c->to_epoch == epoch)
        flag(s, c->to_op, TR_ADVICE_UNUSED_TRANSFER);
    *c = (content){.host = o->host, .bytes = o->bytes, .hash = o->hash, .has_hash = o->has_hash,
                   .epoch = epoch, .to_op = i, .to_epoch = epoch};
    return 0;
}

static int on_from(state *s, const tr_advice_op *o, uint64_t epoch)
{
    allocation *a = holding(s, o->device, o->host, o->bytes);
    if (!a)
        return 0;
    int fresh;
    content *c = content_of(a, o->host, o->bytes, &fresh);
    if (!c)
        return -1;
    /* What came back is what the device holds now. The copy that put it
     * there was used: reading it back is a use (without that copy, the
     * host would get the device's older bytes). */
    c->to_op = SIZE_MAX;
    c->hash = o->hash;
    c->has_hash = o->has_hash;
    c->epoch = epoch;
    range *r = &s->r[a->range];
    if (o->host == a->host && o->bytes == a->bytes) {
        r->has_from = o->has_hash;
        r->from_hash = o->hash;
    }
    return 0;
}

typedef struct order {
    uint64_t time;
    size_t i;
} order;

static int by_time(const void *x, const void *y)
{
    const order *a = x, *b = y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

int tr_advice_run(tr_advice_op *ops, size_t n, uint8_t *category)
{
    memset(category, 0, n);
    order *ord = malloc((n ? n : 1) * sizeof *ord);
    if (!ord)
        return -1;
    for (size_t i = 0; i < n; i++)
        ord[i] = (order){ops[i].time, i};
    tr_sort(ord, n, sizeof *ord, by_time);
    state s = {.ops = ops, .cat = category};
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        size_t i = ord[k].i;
        const tr_advice_op *o = &ops[i];
        uint64_t *epoch = epoch_of(&s, o->device);
        if (!epoch) {
            rc = -1;
            break;
        }
        switch (o->kind) {
        case TR_ADV_KERNEL:
            ++*epoch;
            break;
        case TR_ADV_ALLOC:
            rc = on_alloc(&s, i, o, *epoch);
            break;
        case TR_ADV_DELETE:
            on_delete(&s, i, o, *epoch);
            break;
        case TR_ADV_TO:
            rc = on_to(&s, i, o, *epoch);
            break;
        case TR_ADV_FROM:
            rc = on_from(&s, o, *epoch);
            break;
        default:
            break;
        }
    }
    for (size_t i = 0; i < s.na; i++)
        free(s.a[i].c);
    free(s.a);
    free(s.r);
    free(s.slots);
    free(s.devs);
    free(ord);
    return rc;
}
