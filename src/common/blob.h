/* blob.h - a growable byte buffer and a bounds-checked reader over one: the
 * wire format of what the ranks of a job send one another at finalize
 * (definitions to unify, descriptions of each rank's part). Little-endian
 * fixed-width integers and length-prefixed strings; every rank runs the
 * same build, so no versioning is needed. Generic (libc only): any folder may
 * include it. */
#ifndef TR_COMMON_BLOB_H
#define TR_COMMON_BLOB_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_blob {
    unsigned char *p;
    size_t n, cap;
    int oom; /* set once an append failed; later appends do nothing */
} tr_blob;

void tr_blob_u8(tr_blob *b, uint8_t v);
void tr_blob_u32(tr_blob *b, uint32_t v);
void tr_blob_u64(tr_blob *b, uint64_t v);
void tr_blob_bytes(tr_blob *b, const void *p, size_t n);
/* u32 length, then the bytes (no NUL); NULL is stored as length UINT32_MAX. */
void tr_blob_str(tr_blob *b, const char *s);
void tr_blob_free(tr_blob *b);

typedef struct tr_blob_reader {
    const unsigned char *p;
    size_t n, at;
    int bad; /* set once a read ran past the end or met a malformed value */
} tr_blob_reader;

static inline tr_blob_reader tr_blob_read(const void *p, size_t n)
{
    tr_blob_reader r = {(const unsigned char *)p, n, 0, 0};
    return r;
}
/* Each returns 0 (and sets r->bad) when the blob is too short. */
uint8_t tr_blob_get_u8(tr_blob_reader *r);
uint32_t tr_blob_get_u32(tr_blob_reader *r);
uint64_t tr_blob_get_u64(tr_blob_reader *r);
/* A malloc'd NUL-terminated copy; NULL for a stored NULL, or with r->bad. */
char *tr_blob_get_str(tr_blob_reader *r);
/* A pointer into the blob, or NULL with r->bad. */
const void *tr_blob_get_bytes(tr_blob_reader *r, size_t n);

#endif
