/* advice_model.h - the run's data operations and kernel launches, read from
 * the journal before the pass, given to the data mapping analysis
 * (advice.h); afterwards, the category of each flagged data op by its
 * host_op_id, for the pass to write on the op's events. */
#ifndef TR_MODEL_ADVICE_MODEL_H
#define TR_MODEL_ADVICE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"
#include "core/record.h"
#include "model/advice.h"

typedef struct tr_advice_model {
    tr_advice_op *ops;
    size_t n, cap;
    tr_u64map host_of;   /* host_op_id of a copy to the device -> its source (from its begin) */
    tr_u64map category;  /* host_op_id -> enum tr_advice_category, flagged ops only */
} tr_advice_model;

/* Takes record @r (any type) of one thread's stream, in that stream's
 * order. Returns 0, or -1 out of memory. */
int tr_advice_model_add(tr_advice_model *am, const tr_record *r);
/* Gives each copy its hash from @hashes (host_op_id -> XXH3) or its
 * carried value, runs the analysis and keeps the flagged ops. 0 or -1. */
int tr_advice_model_finish(tr_advice_model *am, const tr_u64map *hashes);
/* The category of data op @op_id, TR_ADVICE_NONE when not flagged. */
int tr_advice_model_category(const tr_advice_model *am, uint64_t op_id);
void tr_advice_model_free(tr_advice_model *am);

#endif
