/* journal_read.h - reading a journal back, however it ended.
 *
 * The reader walks the frames, checking each header's and payload's CRC.
 * Where it finds damage (a cut, flipped bytes, a torn append) it skips
 * forward to the next valid header, and counts what it skipped. Chunks that
 * appear twice (same location and seq) are merged: the copy with the most
 * records wins. Nothing here trusts the file: every size is bounded. */
#ifndef TR_JOURNAL_READ_H
#define TR_JOURNAL_READ_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"
#include "journal/journal_format.h"

typedef struct tr_journal_stats {
    uint64_t frames, chunks, records;
    uint64_t skipped_bytes, bad_frames; /* damage */
    int truncated;                      /* ended inside a frame */
    uint64_t missing_chunks;            /* tr_journal_load: seqs absent between a thread's chunks */
    int ended, crashed, crash_signal;
} tr_journal_stats;

/* Called for every valid frame, in file order, with the decompressed payload
 * (valid during the call). Return nonzero to stop. */
typedef int (*tr_journal_visit)(void *ctx, const tr_frame_header *h, const void *payload, uint64_t bytes);

/* Returns 0, or -1 when the file cannot be opened or read (errno set). */
int tr_journal_scan(const char *path, tr_journal_visit visit, void *ctx, tr_journal_stats *stats);

/* As tr_journal_scan, but CHUNK payloads reach @visit as stored (zstd when
 * h->flags says so, checked by CRC only): a reader that decompresses them
 * later need not hold every record twice. */
int tr_journal_scan_stored(const char *path, tr_journal_visit visit, void *ctx, tr_journal_stats *stats);

/* As tr_journal_scan_stored, and @visit is also told where the payload
 * lies in the file (@offset: its first byte): a reader can note where a
 * chunk is and pread it when it needs it (journal/journal_index.h) instead
 * of copying it. */
typedef int (*tr_journal_visit_at)(void *ctx, const tr_frame_header *h, uint64_t offset, const void *payload,
                                   uint64_t bytes);
int tr_journal_scan_at(const char *path, tr_journal_visit_at visit, void *ctx, tr_journal_stats *stats);

#endif
