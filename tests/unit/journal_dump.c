/* journal_dump.c - the C journal reader's view of a journal, as text, for
 * test_journal_decoders.py to compare with tests/lib/journal_frames.py (the
 * second, independent decoder the Python tests use).
 *
 *   journal_dump JOURNAL
 *
 * prints, from tr_journal_scan (journal/journal_read.h), one line per valid
 * frame in file order:
 *   frame TYPE LOCATION SEQ RECORDS TID SUM_TIME SUM_U0
 * (the sums over the frame's decompressed records, modulo 2^64), then
 *   stats FRAMES CHUNKS RECORDS SKIPPED_BYTES BAD_FRAMES TRUNCATED
 * and from tr_journal_load (journal/journal_load.h), one line per stream:
 *   stream INDEX RECORDS
 * Exit status 0, or 1 when the journal cannot be read. */
#include <inttypes.h>
#include <stdio.h>

#include "journal/journal_read.h"
#include "journal/journal_load.h"

static int print_frame(void *ctx, const tr_frame_header *h, const void *payload, uint64_t bytes)
{
    (void)ctx;
    uint64_t sum_time = 0, sum_u0 = 0;
    if (h->type == TR_FRAME_CHUNK) {
        const tr_record *r = payload;
        for (uint64_t i = 0; i < bytes / sizeof *r; i++) {
            sum_time += r[i].time;
            sum_u0 += r[i].u[0];
        }
    }
    printf("frame %u %" PRIu32 " %" PRIu64 " %" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64 "\n", (unsigned)h->type,
           h->location, h->seq, h->records, h->tid, sum_time, sum_u0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s JOURNAL\n", argv[0]);
        return 2;
    }
    tr_journal_stats st;
    if (tr_journal_scan(argv[1], print_frame, 0, &st)) {
        perror(argv[1]);
        return 1;
    }
    printf("stats %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n", st.frames, st.chunks,
           st.records, st.skipped_bytes, st.bad_frames, st.truncated);
    tr_journal_data jd;
    char err[256];
    if (tr_journal_load(argv[1], &jd, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", argv[1], err);
        return 1;
    }
    for (size_t i = 0; i < jd.data.nstreams; i++)
        printf("stream %" PRIu32 " %zu\n", jd.data.streams[i].index, jd.data.streams[i].n);
    tr_journal_data_free(&jd);
    return 0;
}
