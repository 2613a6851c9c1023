/* journal_index.c - a journal's chunks by stream, as offsets (journal_index.h). */
#include "journal/journal_index.h"

#include <stdlib.h>
#include <string.h>

void tr_journal_clock_set(tr_journal_clock *c, int tsc, uint64_t tick0, uint64_t ns0, uint64_t num, uint64_t den)
{
    if (!num || !den)
        num = den = 1;
    unsigned __int128 f = ((unsigned __int128)(num % den) << 64) / den;
    *c = (tr_journal_clock){.tsc = tsc, .tick0 = tick0, .ns0 = ns0, .num = num, .den = den, .whole = num / den,
                            .frac = (uint64_t)f};
}

int tr_journal_index_init(tr_journal_index *ix, const char *path)
{
    memset(ix, 0, sizeof *ix);
    tr_journal_clock_set(&ix->clock, 0, 0, 0, 1, 1);
    ix->path = strdup(path);
    return ix->path ? 0 : -1;
}

int tr_journal_index_add(tr_journal_index *ix, const tr_frame_header *h, uint64_t offset)
{
    if (h->type != TR_FRAME_CHUNK || !h->records)
        return 0;
    if (ix->nchunks == ix->capchunks) {
        size_t cap = ix->capchunks ? 2 * ix->capchunks : 64;
        tr_chunk_ref *c = realloc(ix->chunks, cap * sizeof *c);
        if (!c)
            return -1;
        ix->chunks = c;
        ix->capchunks = cap;
    }
    ix->chunks[ix->nchunks++] = (tr_chunk_ref){offset, h->payload_bytes, h->seq, h->location, h->tid, h->records,
                                               h->flags};
    return 0;
}

/* Of two copies of a seq (a crash handler may write a chunk the writer
 * thread was also writing) the one with the most records comes first and
 * is the one read; between equal copies, the first in the file. */
static int by_location_seq(const void *a, const void *b)
{
    const tr_chunk_ref *x = a, *y = b;
    if (x->location != y->location)
        return x->location < y->location ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    if (x->records != y->records)
        return x->records > y->records ? -1 : 1;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

int tr_journal_index_finish(tr_journal_index *ix)
{
    free(ix->streams);
    ix->streams = 0;
    ix->nstreams = 0;
    if (ix->nchunks)
        qsort(ix->chunks, ix->nchunks, sizeof *ix->chunks, by_location_seq);
    size_t n = 0;
    for (size_t i = 0; i < ix->nchunks; i++)
        n += i == 0 || ix->chunks[i].location != ix->chunks[i - 1].location;
    ix->streams = calloc(n ? n : 1, sizeof *ix->streams);
    if (!ix->streams)
        return -1;
    for (size_t i = 0; i < ix->nchunks;) {
        tr_index_stream *s = &ix->streams[ix->nstreams++];
        *s = (tr_index_stream){.location = ix->chunks[i].location, .tid = ix->chunks[i].tid, .first = i};
        size_t j = i;
        for (; j < ix->nchunks && ix->chunks[j].location == s->location; j++) {
            const tr_chunk_ref *c = &ix->chunks[j];
            if (j == i || c->seq != ix->chunks[j - 1].seq) {
                s->max_records += c->records + 1u; /* + the gap that may come before it */
                s->records += c->records;
            }
            if (c->records > s->chunk_records)
                s->chunk_records = c->records;
            if (c->bytes > s->chunk_bytes)
                s->chunk_bytes = c->bytes;
        }
        s->nchunks = j - i;
        i = j;
    }
    return 0;
}

void tr_journal_index_free(tr_journal_index *ix)
{
    free(ix->path);
    free(ix->chunks);
    free(ix->streams);
    tr_code_spans_free(&ix->spans);
    memset(ix, 0, sizeof *ix);
}
