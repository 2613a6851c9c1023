/* protobuf_writer.c - the out-of-line part of the protobuf encoder: growth,
 * length-delimited fields and nested messages (see protobuf_writer.h). */
#include <stdlib.h>

#include "protobuf_writer.h"

void tr_pb_init(struct tr_pb *b)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

void tr_pb_free(struct tr_pb *b)
{
    free(b->p);
    tr_pb_init(b);
}

int tr_pb_grow(struct tr_pb *b, size_t n)
{
    if (b->oom)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return 0;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void tr_pb_bytes(struct tr_pb *b, uint32_t field, const void *data, size_t n)
{
    if (n > SIZE_MAX - 2 * TR_PB_VARINT_MAX || !tr_pb_reserve(b, 2 * TR_PB_VARINT_MAX + n))
        return;
    tr_pb_put_varint(b, (uint64_t)field << 3 | TR_PB_LEN);
    tr_pb_put_varint(b, n);
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

/* The length goes in front of the message but is known only at its end.
 * One byte is set aside for it, which is enough for the short messages a
 * trace is mostly made of (under 128 bytes); a longer one is moved up by
 * the extra bytes its length needs. Moving keeps the encoding canonical
 * (no padded varints), so any protobuf reader accepts it. */
size_t tr_pb_begin(struct tr_pb *b, uint32_t field)
{
    if (!tr_pb_reserve(b, TR_PB_VARINT_MAX + 1))
        return b->len;
    tr_pb_put_varint(b, (uint64_t)field << 3 | TR_PB_LEN);
    b->p[b->len++] = 0;
    return b->len;
}

void tr_pb_end(struct tr_pb *b, size_t mark)
{
    if (b->oom)
        return;
    size_t body = b->len - mark;
    size_t extra = tr_pb_varint_size(body) - 1;
    if (extra) {
        if (!tr_pb_reserve(b, extra))
            return;
        memmove(b->p + mark + extra, b->p + mark, body);
        b->len += extra;
    }
    size_t end = b->len;
    b->len = mark - 1;
    tr_pb_put_varint(b, body);
    b->len = end;
}
