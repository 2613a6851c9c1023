/* pass_context.h - what every part of the model's one pass (model.h) may
 * reach while it takes a record: the model being built, where its events
 * go, each host thread's cursor (to look ahead), the devices' and the
 * OpenMP models. The pass (model_pass.c) owns it and the parts it drives;
 * the parts call down to it, never up to the pass. Internal to src/model/. */
#ifndef TR_MODEL_PASS_CONTEXT_H
#define TR_MODEL_PASS_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "journal/stream_cursor.h"
#include "model/host_slots.h"
#include "model/model.h"

struct tr_device_model;
struct tr_omp_model;

typedef struct tr_pass_ctx {
    tr_model *m;
    tr_model_sink sink;
    tr_stream_cursor **cur;       /* per stream: its cursor, NULL once read (or none: a loss alone) */
    struct tr_device_model *dev;  /* device_model.h */
    struct tr_omp_model *omp;     /* omp_model.h */
    tr_host_slots slots;          /* the host threads' locations (host_slots.h) */
    int failed;                   /* out of memory, or the sink stopped: the pass fails */
} tr_pass_ctx;

/* Hands @e to the sink; a sink's refusal fails the pass. */
void tr_pass_emit(tr_pass_ctx *p, const tr_mev *e);

/* Stream @stream's cursor: its next record is the one after the record the
 * pass takes now from it. NULL when the stream is read. */
static inline tr_stream_cursor *tr_pass_cursor(const tr_pass_ctx *p, size_t stream)
{
    return stream < p->m->nstreams ? p->cur[stream] : 0;
}

/* The end of the data op that record @r (the one stream @stream handles
 * now) begins: in the stream's lookahead, or farther on with a second
 * cursor up to the next data op or gap (a thread's data ops do not nest).
 * NULL when it has none (or no id); *@far holds it when it lay beyond the
 * lookahead. */
const tr_record *tr_pass_data_op_end(tr_pass_ctx *p, size_t stream, const tr_record *r, tr_record *far);

/* The first record of stream @stream after the one it handles now for
 * which @want returns 1, read with a second cursor (the lookahead is not
 * touched); 0 when none comes before the stream's end, or when @stop (NULL:
 * none) returns 1 first. *@out gets it. Slow: for the rare questions whose
 * answer lies beyond every lookahead. */
int tr_pass_find_ahead(tr_pass_ctx *p, size_t stream, int (*want)(const tr_record *, void *),
                       int (*stop)(const tr_record *, void *), void *ctx, tr_record *out);

#endif
