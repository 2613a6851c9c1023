#include "writer/collect.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"

static int by_seq(const void *a, const void *b)
{
    const tr_chunk *x = *(tr_chunk *const *)a, *y = *(tr_chunk *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_index(const void *a, const void *b)
{
    const tr_stream *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

int tr_collect(tr_collected *c)
{
    memset(c, 0, sizeof *c);
    tr_chunk *full = tr_buf_take_full();
    size_t nthreads = 0;
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered)
        nthreads++;
    c->streams = calloc(nthreads ? nthreads : 1, sizeof *c->streams);
    if (!c->streams)
        return -1;
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered) {
        size_t nchunks = 0;
        for (tr_chunk *k = full; k; k = k->next_full)
            nchunks += k->owner == b;
        tr_chunk *cur = __atomic_load_n(&b->cur, __ATOMIC_ACQUIRE);
        nchunks += cur != 0;
        if (!nchunks)
            continue;
        tr_chunk **list = malloc(nchunks * sizeof *list);
        if (!list)
            return -1;
        size_t i = 0, nrec = 0;
        for (tr_chunk *k = full; k; k = k->next_full)
            if (k->owner == b)
                list[i++] = k;
        if (cur)
            list[i++] = cur;
        qsort(list, nchunks, sizeof *list, by_seq);
        for (i = 0; i < nchunks; i++)
            nrec += __atomic_load_n(&list[i]->count, __ATOMIC_ACQUIRE);
        tr_record *rec = nrec ? malloc(nrec * sizeof *rec) : 0;
        if (nrec && !rec) {
            free(list);
            return -1;
        }
        size_t at = 0;
        for (i = 0; i < nchunks; i++) {
            uint32_t n = __atomic_load_n(&list[i]->count, __ATOMIC_ACQUIRE);
            memcpy(rec + at, list[i]->rec, n * sizeof *rec);
            at += n;
        }
        free(list);
        for (i = 0; i < nrec; i++)
            rec[i].time = tr_clock_to_ns(rec[i].time);
        if (!nrec)
            continue;
        c->streams[c->nstreams++] = (tr_stream){b->index, b->tid, rec, nrec};
        c->records += nrec;
    }
    if (c->nstreams)
        qsort(c->streams, c->nstreams, sizeof *c->streams, by_index);
    return 0;
}

void tr_collected_free(tr_collected *c)
{
    for (size_t i = 0; i < c->nstreams; i++)
        free(c->streams[i].rec);
    free(c->streams);
    memset(c, 0, sizeof *c);
}
