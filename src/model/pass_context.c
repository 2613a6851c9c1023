/* pass_context.c - see pass_context.h: emitting, and looking ahead. */
#include "model/pass_context.h"

void tr_pass_emit(tr_pass_ctx *p, const tr_mev *e)
{
    if (!p->failed && p->sink.event(p->sink.ctx, e))
        p->failed = 1;
}

int tr_pass_find_ahead(tr_pass_ctx *p, size_t stream, int (*want)(const tr_record *, void *),
                       int (*stop)(const tr_record *, void *), void *ctx, tr_record *out)
{
    tr_stream_cursor *cur = tr_pass_cursor(p, stream);
    if (!cur)
        return 0;
    tr_stream_cursor *f = tr_stream_cursor_fork(cur);
    if (!f) {
        p->failed = 1;
        return 0;
    }
    int found = 0;
    for (const tr_record *r; (r = tr_stream_cursor_next(f));) {
        if (want(r, ctx)) {
            *out = *r;
            found = 1;
            break;
        }
        if (stop && stop(r, ctx))
            break;
    }
    tr_stream_cursor_close(f);
    return found;
}

/* How far after a data op's begin its end is looked for in the lookahead;
 * farther, a second cursor goes on to the next data op's begin. */
#define DATA_OP_END_NEAR 64

static int is_end_of(const tr_record *r, void *id)
{
    return r->type == TR_REC_DATA_OP && r->phase == TR_PHASE_END && r->id == *(uint64_t *)id;
}

/* A thread's data ops do not nest: past the next one's begin, or a gap,
 * the end was lost. */
static int ends_search(const tr_record *r, void *id)
{
    (void)id;
    return (r->type == TR_REC_DATA_OP && r->phase != TR_PHASE_END) || r->type == TR_REC_LOSS;
}

const tr_record *tr_pass_data_op_end(tr_pass_ctx *p, size_t stream, const tr_record *r, tr_record *far)
{
    uint64_t id = r->id;
    tr_stream_cursor *cur = tr_pass_cursor(p, stream);
    if (!id || !cur)
        return 0;
    for (size_t k = 0; k < DATA_OP_END_NEAR; k++) {
        const tr_record *e = tr_stream_cursor_peek(cur, k);
        if (!e)
            return 0; /* the stream ends here: no end farther either */
        if (is_end_of(e, &id))
            return e;
        if (ends_search(e, 0))
            return 0;
    }
    return tr_pass_find_ahead(p, stream, is_end_of, ends_search, &id, far) ? far : 0;
}
