/* stream_cursor.h - one location's records, read from the journal as they
 * are needed: the one decoder of chunk streams (tr_journal_load keeps a
 * stream's records in an array through it; the model's pass merges every
 * thread's cursor in time order, model/model_pass.c).
 *
 * A cursor yields exactly what tr_journal_load puts in the stream's array:
 * the chunks in seq order, a duplicate seq read once (the copy with the
 * most records), each run of missing seqs one loss record (a measurement
 * gap from the event before it to the event after it; a gap with no event
 * on either side is dropped, counted only), a chunk that fails to
 * decompress skipped and counted, times converted to ns and never going
 * back (a loss record's u[1]/u[2] too).
 *
 * Memory: one compressed chunk, one decoded chunk and a ring of
 * TR_CURSOR_LOOKAHEAD + one chunk's records + 2 converted records (about
 * 3 x 64 KiB for the recorder's 64 KiB chunks), whatever the stream's
 * length. Payloads are read with pread on the cursor's own descriptor:
 * cursors on different streams of one index may be open at once. */
#ifndef TR_JOURNAL_STREAM_CURSOR_H
#define TR_JOURNAL_STREAM_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"
#include "journal/journal_index.h"

/* How far peek can look ahead. */
#define TR_CURSOR_LOOKAHEAD 1024u

typedef struct tr_stream_cursor tr_stream_cursor;

/* What a cursor has read so far. Once it is at its end (next returned
 * NULL), records and last_time are the stream's whole count and last stamp,
 * and the damage counts are the stream's: these need that decoding pass. */
typedef struct tr_stream_cursor_stats {
    uint64_t records;        /* yielded by next so far */
    uint64_t last_time;      /* of the last one yielded (ns) */
    int at_end;              /* every chunk decoded, nothing left */
    int trailing_gap_dropped; /* a gap with no event on either side, counted only */
    uint64_t missing_chunks; /* seqs absent */
    uint64_t bad_frames, skipped_bytes; /* chunks that failed to decompress (or to be read) */
    size_t buffer_bytes;     /* held now: compressed + decoded chunk + ring */
    size_t peak_buffered;    /* the most records ever in the ring */
    size_t ring_records;     /* the ring's size */
} tr_stream_cursor_stats;

/* A cursor on @ix's stream @stream (an index into ix->streams); @ix (its
 * chunks and clock) must outlive it. NULL when out of memory or the journal
 * cannot be opened (errno set). */
tr_stream_cursor *tr_stream_cursor_open(const tr_journal_index *ix, size_t stream);
/* The @k-th record ahead (0: the one next returns), NULL past the end or
 * when k >= TR_CURSOR_LOOKAHEAD. Valid until the next call of next. */
const tr_record *tr_stream_cursor_peek(tr_stream_cursor *c, size_t k);
/* The next record, NULL at the end; valid until the next call of next or
 * close on @c (a peek leaves it in place). */
const tr_record *tr_stream_cursor_next(tr_stream_cursor *c);
/* A second cursor at @c's place: it yields what @c would yield from here,
 * and moves on its own (a look farther ahead than peek reaches; the model
 * takes one where an answer lies beyond it). NULL when out of memory or
 * out of descriptors (errno set). */
tr_stream_cursor *tr_stream_cursor_fork(const tr_stream_cursor *c);
void tr_stream_cursor_stats_get(const tr_stream_cursor *c, tr_stream_cursor_stats *out);
void tr_stream_cursor_close(tr_stream_cursor *c);

#endif
