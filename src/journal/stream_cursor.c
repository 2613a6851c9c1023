/* stream_cursor.c - one location's records from the journal, chunk by
 * chunk (stream_cursor.h). Two steps per chunk: its records join the
 * stream in ticks (gaps placed, as tr_journal_load always did), then each
 * is converted to ns and made non-decreasing into the ring that peek and
 * next read. */
#define _GNU_SOURCE 1
#include "journal/stream_cursor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "journal/record_delta.h"

struct tr_stream_cursor {
    const tr_journal_index *ix;
    const tr_index_stream *s;
    int fd;
    size_t pos;            /* next chunk, in s's chunks */
    uint64_t next_seq;     /* the seq that should come next */
    tr_record held;        /* the last record in ticks, when it is an open gap */
    int has_held;
    int appended;          /* a record (not held) has joined the stream */
    uint64_t last_tick;    /* its time, in ticks: where a gap after it begins */
    uint64_t prev;         /* the last converted time (ns) */
    void *packed;          /* one chunk as stored */
    size_t packed_cap;
    tr_record *decoded;    /* one chunk's records */
    size_t decoded_cap;
    tr_record *ring;       /* converted records not yet taken by next */
    size_t ring_cap, head, count;
    tr_stream_cursor_stats st;
};

/* A thread's chunk seqs have no holes in a whole journal: the consumer
 * writes each thread's chunks in order and every chunk it takes. A hole
 * (the journal was cut, or a chunk damaged, after later chunks went in) is
 * events lost, never silently: a measurement gap from the event before it
 * to the event after it (the time is set when that one is known), counted
 * in missing_chunks. @before: the event before it (0: none). */
static tr_record gap_record(uint64_t chunks, uint64_t before)
{
    return (tr_record){.time = 0, .type = TR_REC_LOSS, .phase = TR_PHASE_POINT, .u = {0, before, before, chunks}};
}

/* A gap whose end is not known yet (no event after it so far). */
static int is_open_gap(const tr_record *r)
{
    return r->type == TR_REC_LOSS && r->u[3] && !r->time;
}

/* The ring slot @k records after the head; no division on a path taken
 * twice per record (k < ring_cap always). */
static inline size_t ring_slot(const tr_stream_cursor *c, size_t k)
{
    size_t i = c->head + k;
    return i >= c->ring_cap ? i - c->ring_cap : i;
}

/* A location's stamps must not go back: OTF2 refuses such an event (and
 * the writer would lose it), so a stamp earlier than the one before it (a
 * loss record of an older journal stamped after the event behind it) is
 * raised to it. */
static void emit(tr_stream_cursor *c, tr_record r)
{
    const tr_journal_clock *k = &c->ix->clock;
    tr_code_spans_rekey(&c->ix->spans, &r); /* by the time in ticks, as the unloads are */
    r.time = tr_journal_clock_ns(k, r.time);
    if (r.type == TR_REC_LOSS) {
        r.u[1] = tr_journal_clock_ns(k, r.u[1]);
        r.u[2] = tr_journal_clock_ns(k, r.u[2]);
        if (r.u[1] < c->prev)
            r.u[1] = c->prev;
        if (r.u[2] < r.u[1])
            r.u[2] = r.u[1];
        if (r.time < r.u[1])
            r.time = r.u[1];
    }
    if (r.time < c->prev)
        r.time = c->prev;
    c->prev = r.time;
    c->ring[ring_slot(c, c->count++)] = r;
    if (c->count > c->st.peak_buffered)
        c->st.peak_buffered = c->count;
}

static int read_all(int fd, void *buf, uint64_t bytes, uint64_t offset)
{
    for (uint64_t done = 0; done < bytes;) {
        ssize_t n = pread(fd, (char *)buf + done, bytes - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (uint64_t)n;
    }
    return 0;
}

/* @ch's records into c->decoded. 0, or -1: not a chunk after all (it
 * passed the CRC, but does not decompress to its records) or unreadable. */
static int decode(tr_stream_cursor *c, const tr_chunk_ref *ch)
{
    size_t want = (size_t)ch->records * sizeof(tr_record);
    if (!tr_frame_is_zstd(ch->flags))
        return read_all(c->fd, c->decoded, want, ch->offset);
    if (read_all(c->fd, c->packed, ch->bytes, ch->offset))
        return -1;
    size_t n = ZSTD_decompress(c->decoded, want, c->packed, ch->bytes);
    if (ZSTD_isError(n) || n != want)
        return -1;
    return 0; /* delta coding is undone as the records join the ring */
}

/* The stream's next chunk (duplicates skipped): its records, and the gap
 * before it, join the ring. Returns 0 when there was none. */
static int take_chunk(tr_stream_cursor *c)
{
    const tr_chunk_ref *all = c->ix->chunks + c->s->first;
    while (c->pos < c->s->nchunks && c->pos && all[c->pos].seq == all[c->pos - 1].seq)
        c->pos++; /* the copy before it has the most records */
    if (c->pos >= c->s->nchunks)
        return 0;
    const tr_chunk_ref *ch = &all[c->pos++];
    if (ch->seq > c->next_seq) {
        uint64_t missing = ch->seq - c->next_seq;
        c->st.missing_chunks += missing;
        if (c->has_held)
            c->held.u[3] += missing; /* a damaged chunk right after a gap */
        else {
            c->held = gap_record(missing, c->appended ? c->last_tick : 0);
            c->has_held = 1;
        }
        c->next_seq = ch->seq;
    }
    if (decode(c, ch)) {
        c->st.bad_frames++; /* CRC-valid but not a chunk: skip it */
        c->st.skipped_bytes += ch->bytes;
        return 1;
    }
    tr_record *rec = c->decoded;
    if (c->has_held) {
        /* A gap ends at the first event after it; one before the first
         * event of the thread begins there too. */
        c->held.time = rec[0].time;
        if (!c->held.u[1])
            c->held.u[1] = c->held.u[2] = c->held.time;
        emit(c, c->held);
        c->has_held = 0;
    }
    uint32_t n = ch->records;
    /* One pass: each record undone from its delta (record_delta.h) and
     * converted straight into the ring. The first is stored as it is. */
    int delta = ch->flags == TR_FRAME_ZSTD_DELTA;
    uint64_t w[TR_RECORD_WORDS] = {0};
    tr_record r;
    for (uint32_t i = 0; i < n; i++) {
        if (delta) {
            const uint64_t *d = (const uint64_t *)(const void *)&rec[i];
            for (size_t k = 0; k < TR_RECORD_WORDS; k++)
                w[k] += d[k];
            memcpy(&r, w, sizeof r);
        } else {
            r = rec[i];
        }
        if (i + 1 < n)
            emit(c, r);
    }
    if (is_open_gap(&r)) {
        c->held = r; /* the next chunk may still close it */
        c->has_held = 1;
    } else {
        emit(c, r);
        c->appended = 1;
        c->last_tick = r.time;
    }
    c->next_seq = ch->seq + 1;
    return 1;
}

/* The stream is read: a gap still open ends the stream at the event
 * before it, or, with none, is dropped (no event on either side to place
 * it at: counted only). */
static void finish(tr_stream_cursor *c)
{
    if (c->has_held) {
        if (c->held.u[1])
            emit(c, c->held);
        else
            c->st.trailing_gap_dropped = 1;
        c->has_held = 0;
    }
    c->st.at_end = 1;
}

/* Ring holds more than @k records, or the stream is read to its end. */
static void fill(tr_stream_cursor *c, size_t k)
{
    while (c->count <= k && !c->st.at_end)
        if (!take_chunk(c))
            finish(c);
}

tr_stream_cursor *tr_stream_cursor_open(const tr_journal_index *ix, size_t stream)
{
    if (stream >= ix->nstreams) {
        errno = EINVAL;
        return 0;
    }
    tr_stream_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return 0;
    c->ix = ix;
    c->s = &ix->streams[stream];
    c->fd = open(ix->path, O_RDONLY | O_CLOEXEC);
    /* Before the ring fills up, at most one chunk and the gap before it
     * join it while it holds fewer than TR_CURSOR_LOOKAHEAD; one slot more
     * keeps the record next returned (just before the head) out of reach
     * of a peek's refill. */
    /* A stream shorter than the lookahead never needs all of it: short
     * threads (thousands of them in some programs) cost what they hold. */
    uint64_t ahead = c->s->max_records < TR_CURSOR_LOOKAHEAD ? c->s->max_records : TR_CURSOR_LOOKAHEAD;
    c->ring_cap = (size_t)ahead + c->s->chunk_records + 2;
    c->decoded_cap = c->s->chunk_records ? c->s->chunk_records : 1;
    c->packed_cap = c->s->chunk_bytes ? c->s->chunk_bytes : 1;
    c->ring = malloc(c->ring_cap * sizeof *c->ring);
    c->decoded = malloc(c->decoded_cap * sizeof *c->decoded);
    c->packed = malloc(c->packed_cap);
    if (c->fd < 0 || !c->ring || !c->decoded || !c->packed) {
        int e = c->fd < 0 ? errno : ENOMEM;
        tr_stream_cursor_close(c);
        errno = e;
        return 0;
    }
    c->st.ring_records = c->ring_cap;
    c->st.buffer_bytes = c->ring_cap * sizeof *c->ring + c->decoded_cap * sizeof *c->decoded + c->packed_cap;
    return c;
}

tr_stream_cursor *tr_stream_cursor_fork(const tr_stream_cursor *c)
{
    tr_stream_cursor *f = malloc(sizeof *f);
    if (!f)
        return 0;
    *f = *c;
    f->fd = fcntl(c->fd, F_DUPFD_CLOEXEC, 0);
    f->ring = malloc(c->ring_cap * sizeof *f->ring);
    f->decoded = malloc(c->decoded_cap * sizeof *f->decoded);
    f->packed = malloc(c->packed_cap);
    if (f->fd < 0 || !f->ring || !f->decoded || !f->packed) {
        int e = f->fd < 0 ? errno : ENOMEM;
        tr_stream_cursor_close(f);
        errno = e;
        return 0;
    }
    for (size_t k = 0; k < c->count; k++)
        f->ring[ring_slot(c, k)] = c->ring[ring_slot(c, k)];
    return f;
}

const tr_record *tr_stream_cursor_peek(tr_stream_cursor *c, size_t k)
{
    if (k >= TR_CURSOR_LOOKAHEAD)
        return 0;
    fill(c, k);
    return k < c->count ? &c->ring[ring_slot(c, k)] : 0;
}

const tr_record *tr_stream_cursor_next(tr_stream_cursor *c)
{
    fill(c, 0);
    if (!c->count)
        return 0;
    const tr_record *r = &c->ring[c->head];
    c->head = ring_slot(c, 1);
    c->count--;
    c->st.records++;
    c->st.last_time = r->time;
    return r;
}

void tr_stream_cursor_stats_get(const tr_stream_cursor *c, tr_stream_cursor_stats *out)
{
    *out = c->st;
    out->at_end = c->st.at_end && !c->count;
}

void tr_stream_cursor_close(tr_stream_cursor *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    free(c->packed);
    free(c->decoded);
    free(c->ring);
    free(c);
}
