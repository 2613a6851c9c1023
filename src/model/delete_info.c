/* delete_info.c - see delete_info.h. */
#include "model/delete_info.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "journal/data_op.h"

int tr_local_allocs_init(tr_local_allocs *la, const int *nums, size_t ndevices)
{
    la->ndevices = ndevices;
    la->nums = malloc((ndevices ? ndevices : 1) * sizeof *la->nums);
    la->bytes = calloc(ndevices ? ndevices : 1, sizeof *la->bytes);
    la->host = calloc(ndevices ? ndevices : 1, sizeof *la->host);
    if (!la->nums || !la->bytes || !la->host)
        return -1;
    for (size_t i = 0; i < ndevices; i++)
        la->nums[i] = nums[i];
    return 0;
}

void tr_local_allocs_free(tr_local_allocs *la)
{
    for (size_t i = 0; la->bytes && la->host && i < la->ndevices; i++) {
        tr_u64map_free(&la->bytes[i]);
        tr_u64map_free(&la->host[i]);
    }
    free(la->nums);
    free(la->bytes);
    free(la->host);
    memset(la, 0, sizeof *la);
}

/* The device index and address a data op's end names, 0 when it names
 * none the model knows (the memory metric skips those too). */
static int where(const tr_local_allocs *la, const tr_record *r, int alloc, size_t *di, uint64_t *addr)
{
    int num = alloc ? r->dev2 : r->dev;
    *addr = alloc ? r->u[2] : r->u[1];
    for (*di = 0; *di < la->ndevices; (*di)++)
        if (la->nums[*di] == num)
            return *addr != 0;
    return 0;
}

int tr_local_allocs_apply(tr_local_allocs *la, const tr_record *r, tr_delete_answer *freed)
{
    if (freed)
        memset(freed, 0, sizeof *freed);
    if (r->type != TR_REC_DATA_OP || r->phase == TR_PHASE_BEGIN)
        return 0;
    int alloc = tr_optype_is_alloc(r->sub);
    if (!alloc && !tr_optype_is_delete(r->sub))
        return 0;
    size_t di;
    uint64_t addr, v;
    if (!where(la, r, alloc, &di, &addr))
        return 0;
    if (alloc)
        return tr_u64map_put(&la->bytes[di], addr, r->u[3]) ||
                       (r->u[1] && tr_u64map_put(&la->host[di], addr, r->u[1]))
                   ? -1
                   : 0;
    if (tr_u64map_del(&la->bytes[di], addr, &v)) {
        tr_delete_answer a = {.has_bytes = 1, .bytes = v};
        if (tr_u64map_del(&la->host[di], addr, &v))
            a.has_host = 1, a.host = v;
        if (freed)
            *freed = a;
    }
    return 0;
}

tr_delete_answer tr_local_allocs_ask(const tr_local_allocs *la, const tr_record *end)
{
    tr_delete_answer a = {0};
    size_t di;
    uint64_t addr;
    if (!end || !where(la, end, 0, &di, &addr))
        return a;
    a.has_bytes = tr_u64map_get(&la->bytes[di], addr, &a.bytes);
    a.has_host = a.has_bytes && tr_u64map_get(&la->host[di], addr, &a.host);
    return a;
}

static int same(tr_delete_answer a, tr_delete_answer b)
{
    return a.has_bytes == b.has_bytes && (!a.has_bytes || a.bytes == b.bytes) && a.has_host == b.has_host &&
           (!a.has_host || a.host == b.host);
}

static int except(tr_delete_info *di, uint64_t id, tr_delete_answer a)
{
    uint64_t i;
    if (tr_u64map_get(&di->exceptions, id, &i)) {
        di->answers[i] = a;
        return 0;
    }
    if (tr_grow((void **)&di->answers, &di->capanswers, di->nanswers, sizeof *di->answers, 16))
        return -1;
    di->answers[di->nanswers] = a;
    return tr_u64map_put(&di->exceptions, id, di->nanswers++);
}

/* An answer waiting in @map (pending or early); slots are reused. */
static int wait_in(tr_delete_info *di, tr_u64map *map, uint64_t id, tr_delete_answer a)
{
    uint64_t i;
    if (tr_u64map_get(map, id, &i)) {
        di->slots[i] = a;
        return 0;
    }
    if (di->nfree)
        i = di->free_slots[--di->nfree];
    else if (tr_grow((void **)&di->slots, &di->capslots, di->nslots, sizeof *di->slots, 16))
        return -1;
    else
        i = di->nslots++;
    di->slots[i] = a;
    return tr_u64map_put(map, id, i);
}

static int take_from(tr_delete_info *di, tr_u64map *map, uint64_t id, tr_delete_answer *a)
{
    uint64_t i;
    if (!tr_u64map_del(map, id, &i))
        return 0;
    *a = di->slots[i];
    if (!tr_grow((void **)&di->free_slots, &di->capfree, di->nfree, sizeof *di->free_slots, 16))
        di->free_slots[di->nfree++] = (uint32_t)i;
    return 1;
}

int tr_delete_info_begin(tr_delete_info *di, uint64_t id, tr_delete_answer local)
{
    tr_delete_answer global;
    if (!id)
        return 0;
    if (take_from(di, &di->early, id, &global))
        return same(global, local) ? 0 : except(di, id, global);
    return wait_in(di, &di->pending, id, local);
}

int tr_delete_info_end(tr_delete_info *di, uint64_t id, tr_delete_answer global)
{
    tr_delete_answer local;
    if (!id)
        return 0;
    if (take_from(di, &di->pending, id, &local))
        return same(global, local) ? 0 : except(di, id, global);
    return wait_in(di, &di->early, id, global);
}

int tr_delete_info_finish(tr_delete_info *di)
{
    /* A begin whose end the device pass never counted: nothing was freed. */
    for (size_t k = 0; k < di->pending.cap; k++) {
        uint64_t id, i;
        if (tr_u64map_at(&di->pending, k, &id, &i) && !same(di->slots[i], (tr_delete_answer){0}) &&
            except(di, id, (tr_delete_answer){0}))
            return -1;
    }
    tr_u64map_free(&di->pending);
    tr_u64map_free(&di->early);
    free(di->slots);
    free(di->free_slots);
    di->slots = 0;
    di->free_slots = 0;
    di->nslots = di->capslots = di->nfree = di->capfree = 0;
    return 0;
}

tr_delete_answer tr_delete_info_answer(const tr_delete_info *di, uint64_t id, tr_delete_answer local)
{
    uint64_t i;
    if (!id)
        return (tr_delete_answer){0}; /* never looked up by one */
    if (tr_u64map_get(&di->exceptions, id, &i))
        return di->answers[i];
    return local;
}

void tr_delete_info_free(tr_delete_info *di)
{
    tr_u64map_free(&di->pending);
    tr_u64map_free(&di->early);
    free(di->slots);
    free(di->free_slots);
    tr_u64map_free(&di->exceptions);
    free(di->answers);
    memset(di, 0, sizeof *di);
}
