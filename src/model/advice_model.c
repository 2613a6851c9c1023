#include "model/advice_model.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/grow.h"
#include "journal/data_op.h"

static int push(tr_advice_model *am, tr_advice_op op)
{
    if (tr_grow((void **)&am->ops, &am->cap, am->n, sizeof *am->ops, 256))
        return -1;
    am->ops[am->n++] = op;
    return 0;
}

int tr_advice_model_add(tr_advice_model *am, const tr_record *r)
{
    if (r->type == TR_REC_SUBMIT) {
        if (r->phase == TR_PHASE_END)
            return 0;
        return push(am, (tr_advice_op){.time = r->time, .op_id = r->id, .kind = TR_ADV_KERNEL, .device = r->dev});
    }
    if (r->type != TR_REC_DATA_OP)
        return 0;
    uint16_t t = r->sub;
    if (r->phase == TR_PHASE_BEGIN) {
        /* A copy to the device's end may carry its bytes instead of its
         * source: the host side is taken from the begin. */
        if ((tr_optype_is_to_device(t) || tr_optype_is_alloc(t)) && r->id)
            return tr_u64map_put(&am->host_of, r->id, r->u[1]);
        return 0;
    }
    tr_advice_op op = {.time = r->time, .op_id = r->id, .bytes = r->u[3]};
    if (tr_optype_is_alloc(t)) {
        op.kind = TR_ADV_ALLOC;
        op.device = r->dev2;
        if (!r->id || !tr_u64map_del(&am->host_of, r->id, &op.host))
            op.host = r->u[1];
        op.dev_addr = r->u[2];
    } else if (tr_optype_is_to_device(t)) {
        op.kind = TR_ADV_TO;
        op.device = r->dev2;
        op.dev_addr = r->u[2];
        if (!r->id || !tr_u64map_del(&am->host_of, r->id, &op.host))
            op.host = r->u[1];
        if (r->aux & TR_DATA_OP_VALUE && r->u[3] <= 8) {
            op.hash = XXH3_64bits(&r->u[1], r->u[3]);
            op.has_hash = 1;
        }
    } else if (tr_optype_is_from_device(t)) {
        op.kind = TR_ADV_FROM;
        op.device = r->dev;
        op.host = r->u[2];
        op.dev_addr = r->u[1];
    } else if (tr_optype_is_delete(t)) {
        op.kind = TR_ADV_DELETE;
        op.device = r->dev;
        op.dev_addr = r->u[1];
    } else {
        return 0;
    }
    return push(am, op);
}

int tr_advice_model_finish(tr_advice_model *am, const tr_u64map *hashes)
{
    for (size_t i = 0; i < am->n; i++) {
        tr_advice_op *o = &am->ops[i];
        if ((o->kind == TR_ADV_TO || o->kind == TR_ADV_FROM) && !o->has_hash && o->op_id &&
            tr_u64map_get(hashes, o->op_id, &o->hash))
            o->has_hash = 1;
    }
    uint8_t *cat = malloc(am->n ? am->n : 1);
    if (!cat)
        return -1;
    int rc = tr_advice_run(am->ops, am->n, cat);
    for (size_t i = 0; i < am->n && !rc; i++)
        if (cat[i] && am->ops[i].op_id && tr_u64map_put(&am->category, am->ops[i].op_id, cat[i]))
            rc = -1;
    free(cat);
    free(am->ops);
    am->ops = 0;
    am->n = am->cap = 0;
    tr_u64map_free(&am->host_of);
    return rc;
}

int tr_advice_model_category(const tr_advice_model *am, uint64_t op_id)
{
    uint64_t v;
    return op_id && tr_u64map_get(&am->category, op_id, &v) ? (int)v : TR_ADVICE_NONE;
}

void tr_advice_model_free(tr_advice_model *am)
{
    free(am->ops);
    tr_u64map_free(&am->host_of);
    tr_u64map_free(&am->category);
    memset(am, 0, sizeof *am);
}
