/* journal_index.h - where a journal's chunks lie, not their records: what
 * lets the journal be read one stream at a time (journal/stream_cursor.h)
 * in memory bounded by a constant, not by the trace.
 *
 * Built while the journal is scanned (tr_journal_scan_at): one entry per
 * CHUNK frame with records (its payload's offset and size as stored, ~48 B
 * per 64 KiB chunk), then sorted into streams, one per location. No record
 * is decoded here: a stream's exact record count, its last time and whether
 * a trailing gap is dropped are known only after a decoding pass (a cursor
 * run to its end, see tr_stream_cursor_stats); the index gives bounds. */
#ifndef TR_JOURNAL_JOURNAL_INDEX_H
#define TR_JOURNAL_JOURNAL_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "journal/code_spans.h"
#include "journal/journal_format.h"

typedef struct tr_chunk_ref {
    uint64_t offset;   /* of the payload in the file */
    uint64_t bytes;    /* payload as stored */
    uint64_t seq;
    uint32_t location, tid;
    uint32_t records;
    uint32_t flags;    /* the frame's TR_FRAME_RAW, _ZSTD or _ZSTD_DELTA */
} tr_chunk_ref;

typedef struct tr_index_stream {
    uint32_t location, tid; /* tid: of its first chunk (lowest seq) */
    size_t first, nchunks;  /* chunks[first .. first + nchunks), duplicates included */
    uint64_t max_records;   /* records of a stream: at most this (one gap per chunk included) */
    uint64_t records;       /* in its chunks (each seq once): its records, unless a chunk is damaged */
    uint32_t chunk_records; /* the most records in one of its chunks */
    uint64_t chunk_bytes;   /* the largest payload of one of its chunks */
} tr_index_stream;

/* ns = ns0 + (tick - tick0) * num / den, rounded down, when tsc; else
 * ticks are ns. num / den is the calibration's own ratio (ns between two
 * calibration pairs over their ticks), so the conversion is exact integer
 * arithmetic: the same ns on any machine, and no long double on a path
 * taken for every record. */
typedef struct tr_journal_clock {
    int tsc;
    uint64_t tick0, ns0;
    uint64_t num, den;       /* ns per tick = num / den; den > 0 */
    uint64_t whole, frac;    /* num / den in 64.64 fixed point, rounded down */
} tr_journal_clock;

/* Sets @c: ticks are TSC ticks when @tsc (ns per tick @num / @den; a @den
 * of 0 or a @num of 0 means 1 / 1), else ns. */
void tr_journal_clock_set(tr_journal_clock *c, int tsc, uint64_t tick0, uint64_t ns0, uint64_t num, uint64_t den);

/* floor(d * num / den) for d * num / den < 2^64. */
static inline uint64_t tr_journal_clock_scale(const tr_journal_clock *c, uint64_t d)
{
    unsigned __int128 f = (unsigned __int128)d * c->frac;
    unsigned __int128 q = (unsigned __int128)d * c->whole + (f >> 64);
    /* frac is below num / den's fraction by less than 2^-64, so d * frac
     * is below the exact product by less than d / 2^64: the quotient is one
     * more only when the low word is within d of carrying. */
    if ((uint64_t)f > UINT64_MAX - d && (q + 1) * c->den <= (unsigned __int128)d * c->num)
        q++;
    return (uint64_t)q;
}

static inline uint64_t tr_journal_clock_ns(const tr_journal_clock *c, uint64_t ticks)
{
    if (!c->tsc)
        return ticks;
    if (ticks >= c->tick0)
        return c->ns0 + tr_journal_clock_scale(c, ticks - c->tick0);
    /* Before the first calibration pair: ns0 - ceil(d * num / den), not below 0. */
    uint64_t d = c->tick0 - ticks, back = tr_journal_clock_scale(c, d);
    if ((unsigned __int128)back * c->den < (unsigned __int128)d * c->num)
        back++;
    return back >= c->ns0 ? 0 : c->ns0 - back;
}

typedef struct tr_journal_index {
    char *path;             /* the journal, reopened by each cursor */
    tr_chunk_ref *chunks;   /* after tr_journal_index_finish: by (location, seq, most records, offset) */
    size_t nchunks, capchunks;
    tr_index_stream *streams; /* by location */
    size_t nstreams;
    tr_journal_clock clock; /* set by the caller before cursors are opened */
    tr_code_spans spans;    /* filled by the caller before cursors are opened */
} tr_journal_index;

/* Starts an empty index of @path. Returns 0, or -1 (out of memory). */
int tr_journal_index_init(tr_journal_index *ix, const char *path);
/* Notes a CHUNK frame (@h) whose payload starts at @offset; frames of
 * another type or without records are ignored. Returns 0, or -1 (out of
 * memory). */
int tr_journal_index_add(tr_journal_index *ix, const tr_frame_header *h, uint64_t offset);
/* Sorts the chunks and groups them into streams. Returns 0, or -1. */
int tr_journal_index_finish(tr_journal_index *ix);
void tr_journal_index_free(tr_journal_index *ix);

#endif
