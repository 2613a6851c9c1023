/* test_stream_cursor.c - the journal's stream cursors (journal/stream_cursor.h)
 * on a crafted journal whose every stream's content is known in advance:
 *
 *   loc 0  10 chunks of 1023 records (raw, zstd, delta-coded zstd), seq 7
 *          missing, seq 3 twice (a 500-record copy first: the full one is
 *          read), seq 5 twice (equal copies: read once)
 *   loc 1  seqs 2, 3, 4 (corrupt zstd), 6, 7, 10 (corrupt): a gap at the
 *          start, a gap right after a bad chunk (merged), a trailing gap
 *          after the last event (kept, at that event)
 *   loc 2  seqs 1, 2, both corrupt: no event at all, the gap is dropped
 *   loc 3  a chunk ending in an open-gap-like loss record (the next gap
 *          joins it), and a loss record stamped before the event behind it
 *   loc 4  400 chunks of 3 records: peek across hundreds of chunks
 *
 * Ticks are converted with ns = 5000 + (tick - 1000) * 3 (START and CLOCK
 * frames). Checks: tr_journal_load's arrays equal the expected records
 * (built here from the rules, not by the code under test); a cursor's
 * next() over each stream gives the same records; peek(k) is the record k
 * ahead for every k < TR_CURSOR_LOOKAHEAD at sampled positions; cursors on
 * three streams, interleaved, give the same; the damage counts; the
 * cursor's buffers stay within their bound. Prints one line per check and
 * exits 1 if any fails. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "journal/journal_index.h"
#include "journal/journal_load.h"
#include "journal/journal_read.h"
#include "journal/journal_write.h"
#include "journal/record_delta.h"
#include "journal/stream_cursor.h"

static int failures;

static void check(const char *name, int ok, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail);
    failures += !ok;
}

enum { NLOC = 5, BIG = 1023 };

static uint64_t ns_of(uint64_t tick) { return 5000 + (tick - 1000) * 3; }

static uint64_t tick_of(uint32_t loc, uint64_t seq, uint32_t i) { return 2000 + loc * 7 + seq * 2000 + i; }

static tr_record make(uint32_t loc, uint64_t seq, uint32_t i)
{
    return (tr_record){.time = tick_of(loc, seq, i), .type = TR_REC_MPI_CALL, .phase = TR_PHASE_POINT,
                       .dev = (int32_t)loc, .id = seq, .u = {loc * 1000000ull + seq * 10000 + i, i, 0, 0}};
}

/* @zstd: 0 raw, 1 zstd, 2 delta-coded then zstd (as the consumer writes). */
static void chunk(uint32_t loc, uint64_t seq, const tr_record *rec, uint32_t n, int zstd, int corrupt)
{
    tr_frame_header h = {0};
    h.location = loc;
    h.tid = 100 + loc;
    h.seq = seq;
    h.records = n;
    h.raw_bytes = n * sizeof(tr_record);
    h.flags = zstd == 2 && !corrupt ? TR_FRAME_ZSTD_DELTA : zstd || corrupt ? TR_FRAME_ZSTD : TR_FRAME_RAW;
    size_t cap = ZSTD_compressBound(h.raw_bytes);
    unsigned char *z = malloc(cap);
    size_t bytes = h.raw_bytes;
    const void *payload = rec;
    if (corrupt) { /* CRC-valid, but not zstd */
        memset(z, 0xa5, 100);
        bytes = 100;
        payload = z;
    } else if (zstd == 2) {
        tr_record *coded = malloc(h.raw_bytes ? h.raw_bytes : 1);
        tr_records_delta(coded, rec, n);
        bytes = ZSTD_compress(z, cap, coded, h.raw_bytes, 1);
        payload = z;
        free(coded);
    } else if (zstd) {
        bytes = ZSTD_compress(z, cap, rec, h.raw_bytes, 1);
        payload = z;
    }
    tr_journal_append(&h, TR_FRAME_CHUNK, payload, bytes);
    free(z);
}

/* Chunk @seq of @loc, @n records from make(). */
static void plain(uint32_t loc, uint64_t seq, uint32_t n, int zstd)
{
    tr_record *rec = malloc(n * sizeof *rec);
    for (uint32_t i = 0; i < n; i++)
        rec[i] = make(loc, seq, i);
    chunk(loc, seq, rec, n, zstd, 0);
    free(rec);
}

static void start_and_clock(void)
{
    unsigned char p[8 + 4 + 8 + 16];
    memset(p, 0, sizeof p);
    uint16_t key = TR_KEY_CLOCK_TSC;
    uint32_t len = 4, one = 1;
    memcpy(p, &key, 2), memcpy(p + 4, &len, 4), memcpy(p + 8, &one, 4);
    key = TR_KEY_CLOCK0, len = 16;
    uint64_t pair[2] = {1000, 5000};
    memcpy(p + 12, &key, 2), memcpy(p + 16, &len, 4), memcpy(p + 20, pair, 16);
    tr_frame_header h = {0};
    tr_journal_append(&h, TR_FRAME_START, p, sizeof p);
    uint64_t pair1[2] = {1000 + 1000000, 5000 + 3000000};
    tr_frame_header c = {0};
    tr_journal_append(&c, TR_FRAME_CLOCK, pair1, sizeof pair1);
}

/* The expected streams, in ns. */
static tr_record *want[NLOC];
static size_t nwant[NLOC];

static void push(uint32_t loc, tr_record r)
{
    want[loc] = realloc(want[loc], (nwant[loc] + 1) * sizeof *want[loc]);
    want[loc][nwant[loc]++] = r;
}

static void push_chunk(uint32_t loc, uint64_t seq, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        tr_record r = make(loc, seq, i);
        r.time = ns_of(r.time);
        push(loc, r);
    }
}

/* A gap of @count chunks from @before to @after (ns). */
static void push_gap(uint32_t loc, uint64_t count, uint64_t before, uint64_t at)
{
    push(loc, (tr_record){.time = at, .type = TR_REC_LOSS, .phase = TR_PHASE_POINT, .u = {0, before, before, count}});
}

static void write_journal(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || tr_journal_open(fd)) {
        perror("journal");
        exit(1);
    }
    close(fd);
    start_and_clock();
    /* loc 0 */
    for (uint64_t seq = 0; seq < 10; seq++) {
        /* loc 4's small chunks interleave with loc 0's */
        for (uint64_t s = seq * 40; s < seq * 40 + 40; s++)
            plain(4, s, 3, 1 + s % 2);
        if (seq == 7)
            continue;
        if (seq == 3)
            plain(0, 3, 500, 0);
        plain(0, seq, BIG, (int)(seq % 3));
        if (seq == 5)
            plain(0, 5, BIG, 0);
    }
    for (uint64_t seq = 0; seq < 10; seq++) {
        if (seq == 7) {
            push_gap(0, 1, ns_of(tick_of(0, 6, BIG - 1)), ns_of(tick_of(0, 8, 0)));
            continue;
        }
        push_chunk(0, seq, BIG);
    }
    for (uint64_t s = 0; s < 400; s++)
        push_chunk(4, s, 3);
    /* loc 1 */
    plain(1, 2, 10, 1);
    plain(1, 3, 10, 0);
    chunk(1, 4, 0, 10, 1, 1);
    plain(1, 6, 10, 2);
    plain(1, 7, 10, 1);
    chunk(1, 10, 0, 10, 1, 1);
    uint64_t first = ns_of(tick_of(1, 2, 0));
    push_gap(1, 2, first, first);
    push_chunk(1, 2, 10);
    push_chunk(1, 3, 10);
    push_gap(1, 2, ns_of(tick_of(1, 3, 9)), ns_of(tick_of(1, 6, 0)));
    push_chunk(1, 6, 10);
    push_chunk(1, 7, 10);
    uint64_t last = ns_of(tick_of(1, 7, 9));
    push_gap(1, 2, last, last);
    /* loc 2 */
    chunk(2, 1, 0, 4, 0, 1);
    chunk(2, 2, 0, 4, 1, 1);
    /* loc 3 */
    tr_record a[5], b[5];
    for (uint32_t i = 0; i < 5; i++)
        a[i] = make(3, 0, i), b[i] = make(3, 2, i);
    a[4] = (tr_record){.time = 0, .type = TR_REC_LOSS, .phase = TR_PHASE_POINT, .u = {0, 0, 0, 7}};
    b[2] = (tr_record){.time = tick_of(3, 2, 2), .type = TR_REC_LOSS, .phase = TR_PHASE_POINT,
                       .u = {5, 1000, 1000, 0}};
    chunk(3, 0, a, 5, 1, 0);
    chunk(3, 2, b, 5, 0, 0);
    push_chunk(3, 0, 4);
    uint64_t at = ns_of(tick_of(3, 2, 0));
    push(3, (tr_record){.time = at, .type = TR_REC_LOSS, .phase = TR_PHASE_POINT, .u = {0, at, at, 8}});
    push_chunk(3, 2, 5);
    tr_record *l = &want[3][nwant[3] - 3]; /* b[2]: raised to the event before it */
    uint64_t prev = ns_of(tick_of(3, 2, 1));
    *l = (tr_record){.time = ns_of(tick_of(3, 2, 2)), .type = TR_REC_LOSS, .phase = TR_PHASE_POINT,
                     .u = {5, prev, prev, 0}};
    tr_journal_close();
}

static int visit(void *ctx, const tr_frame_header *h, uint64_t offset, const void *payload, uint64_t bytes)
{
    (void)payload, (void)bytes;
    return tr_journal_index_add(ctx, h, offset);
}

static int same(const tr_record *a, const tr_record *b) { return a && b && !memcmp(a, b, sizeof *a); }

/* First index where @got differs from want[loc], or -1. */
static long first_difference(uint32_t loc, const tr_record *got, size_t n)
{
    for (size_t i = 0; i < n && i < nwant[loc]; i++)
        if (!same(&got[i], &want[loc][i]))
            return (long)i;
    return n == nwant[loc] ? -1 : (long)(n < nwant[loc] ? n : nwant[loc]);
}

int main(void)
{
    setvbuf(stdout, 0, _IOLBF, 0);
    char dir[128], path[192], detail[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tr-cursor-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    write_journal(dir);
    snprintf(path, sizeof path, "%s/%s", dir, TR_JOURNAL_NAME);

    tr_journal_data jd;
    char err[256];
    if (tr_journal_load(path, &jd, err, sizeof err)) {
        printf("FAIL load: %s\n", err);
        return 1;
    }
    check("load: one stream per location", jd.data.nstreams == NLOC, "");
    for (uint32_t loc = 0; loc < NLOC && loc < jd.data.nstreams; loc++) {
        const tr_stream *s = &jd.data.streams[loc];
        long d = first_difference(loc, s->rec, s->n);
        snprintf(detail, sizeof detail, "loc %u: %zu records (want %zu), tid %d, first difference at %ld", loc, s->n,
                 nwant[loc], s->tid, d);
        check("load: records as expected", s->index == loc && s->tid == (pid_t)(100 + loc) && d < 0, detail);
    }
    snprintf(detail, sizeof detail, "missing %llu (want 1+6+2+1=10), bad %llu (want 4)",
             (unsigned long long)jd.stats.missing_chunks, (unsigned long long)jd.stats.bad_frames);
    check("load: damage counted", jd.stats.missing_chunks == 10 && jd.stats.bad_frames == 4, detail);

    tr_journal_index ix;
    tr_journal_stats st;
    if (tr_journal_index_init(&ix, path) || tr_journal_scan_at(path, visit, &ix, &st) ||
        tr_journal_index_finish(&ix)) {
        printf("FAIL index\n");
        return 1;
    }
    ix.clock = jd.clock;
    snprintf(detail, sizeof detail, "%zu streams, %zu chunks", ix.nstreams, ix.nchunks);
    check("index: streams and chunks", ix.nstreams == NLOC && ix.nchunks == 9 + 2 + 400 + 6 + 2 + 2, detail);

    /* next() over each stream; the stream's facts at its end */
    for (uint32_t loc = 0; loc < NLOC && loc < ix.nstreams; loc++) {
        tr_stream_cursor *c = tr_stream_cursor_open(&ix, loc);
        size_t n = 0, bad = 0;
        for (const tr_record *r; c && (r = tr_stream_cursor_next(c)); n++)
            bad += n >= nwant[loc] || !same(r, &want[loc][n]);
        tr_stream_cursor_stats cs = {0};
        if (c)
            tr_stream_cursor_stats_get(c, &cs);
        uint64_t last = nwant[loc] ? want[loc][nwant[loc] - 1].time : 0;
        snprintf(detail, sizeof detail,
                 "loc %u: %zu records (want %zu), %zu differ, at_end %d, last %llu (want %llu), dropped %d, "
                 "peak %zu of ring %zu, %zu bytes",
                 loc, n, nwant[loc], bad, cs.at_end, (unsigned long long)cs.last_time, (unsigned long long)last,
                 cs.trailing_gap_dropped, cs.peak_buffered, cs.ring_records, cs.buffer_bytes);
        int ok = c && n == nwant[loc] && !bad && cs.at_end && cs.records == n && cs.last_time == last &&
                 cs.trailing_gap_dropped == (loc == 2);
        check("cursor: next() gives the stream", ok, detail);
        /* one compressed chunk, one decoded, and the lookahead plus a chunk */
        size_t bound = (TR_CURSOR_LOOKAHEAD + 2 * BIG + 2) * sizeof(tr_record) + ZSTD_compressBound(BIG * 64);
        ok = c && cs.ring_records <= TR_CURSOR_LOOKAHEAD + ix.streams[loc].chunk_records + 2 &&
             cs.peak_buffered <= cs.ring_records && cs.buffer_bytes <= bound && bound < 4 * 65536 + 8192;
        check("cursor: buffers within their bound", ok, detail);
        tr_stream_cursor_close(c);
    }

    /* peek(k) == the record k ahead, for every k at sampled positions (and
     * k = 0, 1 and one more everywhere), across chunk boundaries */
    for (uint32_t loc = 0; loc < NLOC && loc < ix.nstreams; loc++) {
        tr_stream_cursor *c = tr_stream_cursor_open(&ix, loc);
        size_t bad = 0, checked = 0;
        for (size_t i = 0; c && i <= nwant[loc]; i++) {
            int all = i % 509 == 0 || i + TR_CURSOR_LOOKAHEAD >= nwant[loc];
            for (size_t k = 0; k < TR_CURSOR_LOOKAHEAD; k++) {
                if (!all && k > 1 && k != (i * 37) % TR_CURSOR_LOOKAHEAD)
                    continue;
                const tr_record *p = tr_stream_cursor_peek(c, k);
                bad += i + k < nwant[loc] ? !same(p, &want[loc][i + k]) : p != 0;
                checked++;
            }
            bad += tr_stream_cursor_peek(c, TR_CURSOR_LOOKAHEAD) != 0;
            const tr_record *r = tr_stream_cursor_next(c);
            bad += i < nwant[loc] ? !same(r, &want[loc][i]) : r != 0;
        }
        tr_stream_cursor_stats cs = {0};
        if (c)
            tr_stream_cursor_stats_get(c, &cs);
        snprintf(detail, sizeof detail, "loc %u: %zu peeks, %zu wrong, peak %zu of ring %zu", loc, checked, bad,
                 cs.peak_buffered, cs.ring_records);
        check("cursor: peek(k) is the record k ahead", c && !bad && cs.peak_buffered <= cs.ring_records, detail);
        tr_stream_cursor_close(c);
    }

    /* three cursors at once, advanced in turn by a fixed pseudo-random rule */
    {
        uint32_t locs[3] = {0, 1, 4};
        tr_stream_cursor *c[3];
        size_t at[3] = {0, 0, 0}, bad = 0;
        for (int j = 0; j < 3; j++)
            c[j] = tr_stream_cursor_open(&ix, locs[j]);
        uint64_t x = 88172645463325252ull;
        int open = c[0] && c[1] && c[2], done = 0;
        while (open && done < 3) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int j = (int)(x % 3);
            uint32_t loc = locs[j];
            if (at[j] > nwant[loc])
                continue;
            size_t k = (size_t)(x >> 8) % 64;
            const tr_record *p = tr_stream_cursor_peek(c[j], k);
            bad += at[j] + k < nwant[loc] ? !same(p, &want[loc][at[j] + k]) : p != 0;
            const tr_record *r = tr_stream_cursor_next(c[j]);
            bad += at[j] < nwant[loc] ? !same(r, &want[loc][at[j]]) : r != 0;
            done += ++at[j] > nwant[loc];
        }
        snprintf(detail, sizeof detail, "%zu + %zu + %zu records, %zu wrong", at[0] - 1, at[1] - 1, at[2] - 1, bad);
        check("cursor: interleaved cursors", open && done == 3 && !bad, detail);
        for (int j = 0; j < 3; j++)
            tr_stream_cursor_close(c[j]);
    }

    tr_journal_index_free(&ix);
    tr_journal_data_free(&jd);
    for (uint32_t loc = 0; loc < NLOC; loc++)
        free(want[loc]);
    unlink(path);
    rmdir(dir);
    return failures ? 1 : 0;
}
