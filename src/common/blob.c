/* blob.c - see blob.h. */
#include "common/blob.h"

#include <stdlib.h>
#include <string.h>

static unsigned char *room(tr_blob *b, size_t n)
{
    if (b->oom)
        return 0;
    if (b->cap - b->n < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->n < n) {
            if (cap > SIZE_MAX / 2) {
                b->oom = 1;
                return 0;
            }
            cap *= 2;
        }
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return 0;
        }
        b->p = p;
        b->cap = cap;
    }
    unsigned char *at = b->p + b->n;
    b->n += n;
    return at;
}

void tr_blob_bytes(tr_blob *b, const void *p, size_t n)
{
    unsigned char *at = room(b, n);
    if (at && n)
        memcpy(at, p, n);
}

static void put_le(tr_blob *b, uint64_t v, int bytes)
{
    unsigned char *at = room(b, (size_t)bytes);
    for (int i = 0; at && i < bytes; i++)
        at[i] = (unsigned char)(v >> (8 * i));
}

void tr_blob_u8(tr_blob *b, uint8_t v) { put_le(b, v, 1); }
void tr_blob_u32(tr_blob *b, uint32_t v) { put_le(b, v, 4); }
void tr_blob_u64(tr_blob *b, uint64_t v) { put_le(b, v, 8); }

void tr_blob_str(tr_blob *b, const char *s)
{
    if (!s) {
        tr_blob_u32(b, UINT32_MAX);
        return;
    }
    size_t n = strlen(s);
    if (n >= UINT32_MAX) {
        b->oom = 1;
        return;
    }
    tr_blob_u32(b, (uint32_t)n);
    tr_blob_bytes(b, s, n);
}

void tr_blob_free(tr_blob *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

const void *tr_blob_get_bytes(tr_blob_reader *r, size_t n)
{
    if (r->bad || r->n - r->at < n) {
        r->bad = 1;
        return 0;
    }
    const void *p = r->p + r->at;
    r->at += n;
    return p;
}

static uint64_t get_le(tr_blob_reader *r, int bytes)
{
    const unsigned char *p = tr_blob_get_bytes(r, (size_t)bytes);
    uint64_t v = 0;
    for (int i = 0; p && i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint8_t tr_blob_get_u8(tr_blob_reader *r) { return (uint8_t)get_le(r, 1); }
uint32_t tr_blob_get_u32(tr_blob_reader *r) { return (uint32_t)get_le(r, 4); }
uint64_t tr_blob_get_u64(tr_blob_reader *r) { return get_le(r, 8); }

char *tr_blob_get_str(tr_blob_reader *r)
{
    uint32_t n = tr_blob_get_u32(r);
    if (r->bad || n == UINT32_MAX)
        return 0;
    const char *p = tr_blob_get_bytes(r, n);
    char *s = p ? malloc((size_t)n + 1) : 0;
    if (!s) {
        r->bad = 1;
        return 0;
    }
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}
