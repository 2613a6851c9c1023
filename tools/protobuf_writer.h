/* protobuf_writer.h - just enough of the protobuf wire format to write a
 * Perfetto trace by hand, without a protobuf library.
 *
 * A struct tr_pb is one growable byte buffer that messages are appended to.
 * Scalars go straight in; a nested message (or a Trace's TracePacket) is
 * opened with tr_pb_begin() and closed with tr_pb_end(), which fills in its
 * length. Field numbers and types come from the caller (perfetto_sink.c
 * names each one against perfetto_trace.proto).
 *
 * Errors: the first failed allocation sets @oom and turns every later write
 * into a no-op, so a caller checks once, after a whole packet, instead of
 * after every field. Not thread-safe; one buffer per writer. */
#ifndef TR_TOOLS_PROTOBUF_WRITER_H
#define TR_TOOLS_PROTOBUF_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The wire types used (protobuf encoding: tag = field << 3 | wire type). */
enum tr_pb_wire {
    TR_PB_VARINT = 0,
    TR_PB_FIXED64 = 1,
    TR_PB_LEN = 2,
};

/* Longest varint: a uint64 takes at most 10 bytes; a tag with a field
 * number below 2^29 at most 5. */
#define TR_PB_VARINT_MAX 10

struct tr_pb {
    uint8_t *p;
    size_t len, cap;
    int oom; /* an allocation failed: the contents are incomplete */
};

/* An empty buffer; nothing is allocated until the first write. */
void tr_pb_init(struct tr_pb *b);
/* Frees the bytes; @b may then be initialised again. */
void tr_pb_free(struct tr_pb *b);
/* Makes room for @n more bytes (the out-of-line growth path of
 * tr_pb_reserve). Returns 1, or 0 and sets @oom. */
int tr_pb_grow(struct tr_pb *b, size_t n);

static inline int tr_pb_reserve(struct tr_pb *b, size_t n)
{
    if (b->cap - b->len >= n)
        return 1;
    return tr_pb_grow(b, n);
}

/* Appends @v as a base-128 varint; room for it must be reserved. */
static inline void tr_pb_put_varint(struct tr_pb *b, uint64_t v)
{
    uint8_t *q = b->p + b->len;
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    b->len = (size_t)(q - b->p);
}

static inline size_t tr_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* uint32, uint64, bool and enum fields. */
static inline void tr_pb_varint(struct tr_pb *b, uint32_t field, uint64_t v)
{
    if (!tr_pb_reserve(b, 2 * TR_PB_VARINT_MAX))
        return;
    tr_pb_put_varint(b, (uint64_t)field << 3 | TR_PB_VARINT);
    tr_pb_put_varint(b, v);
}

/* int32 and int64 fields: protobuf sign-extends a negative int32 to 64 bits
 * (ten bytes), so both take the int64 path. Not for sint32/sint64. */
static inline void tr_pb_int64(struct tr_pb *b, uint32_t field, int64_t v)
{
    tr_pb_varint(b, field, (uint64_t)v);
}

/* fixed64 fields: eight bytes, little-endian whatever the host. */
static inline void tr_pb_fixed64(struct tr_pb *b, uint32_t field, uint64_t v)
{
    if (!tr_pb_reserve(b, TR_PB_VARINT_MAX + 8))
        return;
    tr_pb_put_varint(b, (uint64_t)field << 3 | TR_PB_FIXED64);
    for (int i = 0; i < 8; i++)
        b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

/* double fields: the IEEE-754 bits as a fixed64. */
static inline void tr_pb_double(struct tr_pb *b, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    tr_pb_fixed64(b, field, bits);
}

/* bytes and string fields (@n bytes of @data; no terminator). */
void tr_pb_bytes(struct tr_pb *b, uint32_t field, const void *data, size_t n);

static inline void tr_pb_string(struct tr_pb *b, uint32_t field, const char *s)
{
    tr_pb_bytes(b, field, s, strlen(s));
}

/* Opens a nested message as field @field. Returns the mark to pass to
 * tr_pb_end(); the fields written in between form the message. */
size_t tr_pb_begin(struct tr_pb *b, uint32_t field);
/* Closes the message opened at @mark: writes its length in front of it.
 * Messages close in the reverse order they were opened. */
void tr_pb_end(struct tr_pb *b, size_t mark);

#endif
