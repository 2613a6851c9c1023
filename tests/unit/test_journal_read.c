/* test_journal_read.c - the journal reader (journal/journal_read.h,
 * journal/journal_load.h) on damaged journals: whatever the damage, it is
 * reported in the stats, never crashed on, and every intact frame is still
 * read.
 *
 *   intact    the journal as written: every frame, no damage reported.
 *   cut       the journal cut at every byte near a frame boundary, and at
 *             every 16th byte elsewhere: the frames before the cut are
 *             read, the cut is reported (truncated, skipped bytes), no bad
 *             frame.
 *   flip      one byte flipped, in each frame's header and in its payload:
 *             that frame is reported bad and skipped, every other one read.
 *   garbage   bytes that are no frame between two frames: skipped and
 *             counted, the frames on both sides read.
 *   nothing   an empty file, and a file of garbage alone: no frame, no
 *             crash.
 *   gap       a thread's chunks 0, 1, 3 (chunk 2 lost): tr_journal_load
 *             reports one missing chunk for that thread and none for the
 *             other.
 *
 * Prints one line per check and exits 1 if any fails. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_read.h"
#include "journal/journal_write.h"
#include "journal/journal_load.h"

static int failures;

static void check(const char *name, int ok, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail);
    failures += !ok;
}

static char dir[128];

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* A chunk of @n records of thread @location, numbered from @first. */
static void append_chunk(uint32_t location, uint64_t seq, uint64_t first, uint32_t n)
{
    tr_record rec[16];
    for (uint32_t i = 0; i < n; i++)
        rec[i] = (tr_record){.time = 1000 + first + i, .type = TR_REC_MPI_CALL, .phase = TR_PHASE_POINT,
                             .u = {first + i}};
    tr_frame_header h = {0};
    h.location = location;
    h.tid = 100 + location;
    h.seq = seq;
    h.records = n;
    h.raw_bytes = n * sizeof(tr_record);
    h.flags = TR_FRAME_RAW;
    tr_journal_append(&h, TR_FRAME_CHUNK, rec, h.raw_bytes);
}

/* Creates DIR/tracer.journal; appends go there until tr_journal_close. */
static void write_journal(void)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || tr_journal_open(fd)) {
        perror("journal");
        exit(1);
    }
    close(fd);
}

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(*size ? *size : 1);
    if (!p || fread(p, 1, *size, f) != *size) {
        perror(path);
        exit(1);
    }
    fclose(f);
    return p;
}

static void write_all(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* Frame boundaries of the intact journal: end[i] = offset after frame i. */
static size_t ends[64];
static int nframes;

static int visit_count(void *ctx, const tr_frame_header *h, const void *payload, uint64_t bytes)
{
    (void)payload, (void)bytes;
    uint64_t *records = ctx;
    if (h->type == TR_FRAME_CHUNK)
        *records += h->records;
    return 0;
}

static tr_journal_stats scan_bytes(const unsigned char *p, size_t n, uint64_t *records)
{
    char path[192];
    path_of(path, sizeof path, "damaged.journal");
    write_all(path, p, n);
    tr_journal_stats st;
    uint64_t dummy = 0;
    if (tr_journal_scan(path, visit_count, records ? records : &dummy, &st)) {
        perror(path);
        exit(1);
    }
    return st;
}

static void describe(char *out, size_t n, const tr_journal_stats *st)
{
    snprintf(out, n, "frames %llu, records %llu, bad %llu, skipped %llu, truncated %d",
             (unsigned long long)st->frames, (unsigned long long)st->records, (unsigned long long)st->bad_frames,
             (unsigned long long)st->skipped_bytes, st->truncated);
}

int main(void)
{
    setvbuf(stdout, 0, _IOLBF, 0);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tr-journal-read-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[192], detail[512];

    /* 3 threads x 3 chunks of 1..9 records, and a CLOCK frame. */
    write_journal();
    uint64_t total = 0, serial = 1;
    for (uint32_t seq = 0; seq < 3; seq++)
        for (uint32_t loc = 0; loc < 3; loc++) {
            uint32_t n = 1 + (seq * 3 + loc);
            append_chunk(loc, seq, serial, n);
            serial += n;
            total += n;
        }
    uint64_t pair[2] = {1, 2};
    tr_frame_header ch = {0};
    ch.raw_bytes = sizeof pair;
    ch.flags = TR_FRAME_RAW;
    tr_journal_append(&ch, TR_FRAME_CLOCK, pair, sizeof pair);
    tr_journal_close();
    path_of(path, sizeof path, TR_JOURNAL_NAME);
    size_t size;
    unsigned char *good = read_all(path, &size);
    for (size_t off = 0; off + sizeof(tr_frame_header) <= size && nframes < 64;) {
        tr_frame_header h;
        memcpy(&h, good + off, sizeof h);
        off += sizeof h + h.payload_bytes;
        ends[nframes++] = off;
    }

    /* intact */
    uint64_t records = 0;
    tr_journal_stats st = scan_bytes(good, size, &records);
    describe(detail, sizeof detail, &st);
    check("intact: every frame read, no damage", nframes == 10 && ends[nframes - 1] == size && st.frames == 10 &&
          st.chunks == 9 && st.records == total && records == total && !st.bad_frames && !st.skipped_bytes &&
          !st.truncated, detail);

    /* cut at every byte near a frame boundary (in the header, at the start
     * of the payload, just before the end), at every 16th elsewhere: each
     * cut is a file written and read, and a slow disk makes 3500 of them
     * take seconds */
    int cut_ok = 1, cuts = 0;
    for (size_t cut = 0; cut < size && cut_ok; cut++) {
        int near = cut < 80;
        for (int f = 0; f < nframes && !near; f++)
            near = cut + 8 >= ends[f] && cut < ends[f] + 80;
        if (!near && cut % 16)
            continue;
        cuts++;
        int whole = 0;
        size_t boundary = 0;
        while (whole < nframes && ends[whole] <= cut)
            boundary = ends[whole++];
        st = scan_bytes(good, cut, 0);
        cut_ok = st.frames == (uint64_t)whole && !st.bad_frames && st.truncated == (cut != boundary) &&
                 st.skipped_bytes == cut - boundary;
        if (!cut_ok) {
            describe(detail, sizeof detail, &st);
            printf("# cut at %zu (%d whole frames, last ends at %zu): %s\n", cut, whole, boundary, detail);
        }
    }
    snprintf(detail, sizeof detail, "%d cuts of %zu bytes", cuts, size);
    check("cut: the frames before the cut are read, the cut is reported", cut_ok, detail);

    /* one byte flipped in each frame's header, then in its payload (the
     * last frame's damage runs to the end of the file: the reader may also
     * call that a cut) */
    unsigned char *bad = malloc(size + 4096);
    int flip_ok = 1;
    for (int f = 0; f < nframes && flip_ok; f++) {
        size_t start = f ? ends[f - 1] : 0;
        size_t where[2] = {start + 20, start + sizeof(tr_frame_header) + (ends[f] - start - sizeof(tr_frame_header)) / 2};
        for (int w = 0; w < 2 && flip_ok; w++) {
            if (where[w] >= ends[f])
                continue;
            memcpy(bad, good, size);
            bad[where[w]] ^= 0x40;
            st = scan_bytes(bad, size, 0);
            flip_ok = st.frames == (uint64_t)nframes - 1 && st.bad_frames == 1 &&
                      st.skipped_bytes == ends[f] - start && (!st.truncated || f == nframes - 1);
            if (!flip_ok) {
                describe(detail, sizeof detail, &st);
                printf("# frame %d, byte %zu flipped: %s\n", f, where[w], detail);
            }
        }
    }
    check("flip: a damaged frame is reported and skipped, every other one read", flip_ok, "");

    /* garbage between frames 4 and 5 */
    size_t at = ends[4], junk = 1000;
    memcpy(bad, good, at);
    for (size_t i = 0; i < junk; i++)
        bad[at + i] = (unsigned char)(i * 37 + 11);
    memcpy(bad + at + junk, good + at, size - at);
    records = 0;
    st = scan_bytes(bad, size + junk, &records);
    describe(detail, sizeof detail, &st);
    check("garbage: skipped and counted, the frames around it read",
          st.frames == (uint64_t)nframes && records == total && st.bad_frames == 1 && st.skipped_bytes == junk &&
          !st.truncated, detail);

    /* nothing to read */
    st = scan_bytes(bad, 0, 0);
    int empty_ok = !st.frames && !st.truncated && !st.skipped_bytes;
    st = scan_bytes(bad + at, junk, 0);
    describe(detail, sizeof detail, &st);
    check("nothing: an empty file, and garbage alone, hold no frame", empty_ok && !st.frames && st.bad_frames == 1 &&
          st.skipped_bytes == junk, detail);
    free(bad);
    free(good);

    /* gap: thread 0 has chunks 0, 1, 3; thread 1 has 0, 1, 2 */
    unlink(path);
    write_journal();
    serial = 1;
    uint64_t seqs0[] = {0, 1, 3};
    for (int i = 0; i < 3; i++) {
        append_chunk(0, seqs0[i], serial, 2);
        serial += 2;
        append_chunk(1, (uint64_t)i, serial, 2);
        serial += 2;
    }
    tr_journal_close();
    tr_journal_data jd;
    char err[256] = "";
    if (tr_journal_load(path, &jd, err, sizeof err)) {
        check("gap: the journal loads", 0, err);
    } else {
        int gaps[2] = {0, 0};
        for (size_t s = 0; s < jd.data.nstreams && s < 2; s++)
            for (size_t i = 0; i < jd.data.streams[s].n; i++)
                gaps[s] += jd.data.streams[s].rec[i].type == TR_REC_LOSS;
        snprintf(detail, sizeof detail, "missing_chunks %llu, streams %zu, gaps %d and %d",
                 (unsigned long long)jd.stats.missing_chunks, (size_t)jd.data.nstreams, gaps[0], gaps[1]);
        check("gap: a missing chunk is reported, for its thread only",
              jd.stats.missing_chunks == 1 && jd.data.nstreams == 2 && gaps[0] + gaps[1] == 1, detail);
        tr_journal_data_free(&jd);
    }

    path_of(path, sizeof path, TR_JOURNAL_NAME);
    unlink(path);
    path_of(path, sizeof path, "damaged.journal");
    unlink(path);
    if (!failures)
        rmdir(dir);
    return failures ? 1 : 0;
}
