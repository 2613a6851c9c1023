/* device_pass.c - see device_pass.h. */
#include "model/device_pass.h"

#include <stdlib.h>

#include "journal/data_op.h"

int tr_device_pass_reads(const tr_record *r)
{
    switch (r->type) {
    case TR_REC_TARGET:
    case TR_REC_SUBMIT:
    case TR_REC_DEVICE_INIT:
    case TR_REC_DEVICE_FINI:
    case TR_REC_DEVICE_LOAD:
    case TR_REC_DEVICE_UNLOAD:
        return 1;
    case TR_REC_DATA_OP:
        /* a delete's begin too: the model's pass asks its thread's view there */
        return tr_optype_is_delete(r->sub) || (r->phase != TR_PHASE_BEGIN && tr_optype_is_alloc(r->sub));
    default:
        return 0;
    }
}

typedef struct source {
    tr_stream_cursor *cur;
    size_t stream;
    uint64_t pos;     /* of the record next yields */
    uint64_t time;    /* of that record */
} source;

static int before(const source *a, const source *b)
{
    return a->time < b->time || (a->time == b->time && a->stream < b->stream);
}

/* A binary heap of the streams not yet read to their end, earliest first. */
static void sift_down(source *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        if (l < n && before(&h[l], &h[best]))
            best = l;
        if (l + 1 < n && before(&h[l + 1], &h[best]))
            best = l + 1;
        if (best == i)
            return;
        source t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

int tr_device_pass(tr_model *m, const tr_model_labels *labels, tr_dev_sink sink)
{
    if (!m->ndevices)
        return 0;
    tr_device_stream ds;
    source *h = calloc(m->data.nstreams ? m->data.nstreams : 1, sizeof *h);
    int rc = h && !tr_device_stream_init(&ds, m, labels, sink) ? 0 : -1;
    size_t n = 0;
    for (size_t s = 0; !rc && s < m->data.nstreams; s++) {
        if (!m->device_records || !m->device_records[s] || !m->data.streams[s].n)
            continue;
        tr_stream_cursor *c = tr_journal_stream_open(m->jd, &m->data.streams[s]);
        if (!c) {
            rc = -1;
            break;
        }
        const tr_record *r = tr_stream_cursor_peek(c, 0);
        if (!r) {
            tr_stream_cursor_close(c);
            continue;
        }
        h[n++] = (source){c, s, 0, r->time};
    }
    for (size_t i = n / 2; i-- > 0;)
        sift_down(h, n, i);
    while (!rc && n) {
        source *top = &h[0];
        const tr_record *r = tr_stream_cursor_next(top->cur);
        rc = tr_device_stream_record(&ds, top->stream, top->pos++, r, top->cur);
        const tr_record *next = tr_stream_cursor_peek(top->cur, 0);
        if (next) {
            top->time = next->time;
        } else {
            tr_stream_cursor_close(top->cur);
            h[0] = h[--n];
        }
        sift_down(h, n, 0);
    }
    for (size_t i = 0; i < n; i++)
        tr_stream_cursor_close(h[i].cur);
    if (!rc)
        rc = tr_device_stream_finish(&ds);
    if (h)
        tr_device_stream_free(&ds);
    free(h);
    return rc;
}
