/* data_op.h - what a TR_REC_DATA_OP record's fields mean, in one place.
 *
 * The optype (r->sub) is OMPT's ompt_target_data_op_t; each synchronous op
 * has an _async twin that means the same to a trace. The host side of an op
 * (the host memory it reads or writes) is needed twice: by the consumer,
 * which journals the global variable at that address, and by the writer,
 * which names it in the trace; both must agree, so the rule is here.
 * Included by journal/ (consumer), the model layer and the OTF2 layer;
 * needs omp-tools.h (the ompt include directory). */
#ifndef TR_JOURNAL_DATA_OP_H
#define TR_JOURNAL_DATA_OP_H

#include <omp-tools.h>
#include <stdint.h>

#include "core/record.h"

static inline int tr_optype_is_to_device(uint16_t t)
{
    return t == ompt_target_data_transfer_to_device || t == ompt_target_data_transfer_to_device_async;
}
static inline int tr_optype_is_from_device(uint16_t t)
{
    return t == ompt_target_data_transfer_from_device || t == ompt_target_data_transfer_from_device_async;
}
static inline int tr_optype_is_alloc(uint16_t t)
{
    return t == ompt_target_data_alloc || t == ompt_target_data_alloc_async;
}
static inline int tr_optype_is_delete(uint16_t t)
{
    return t == ompt_target_data_delete || t == ompt_target_data_delete_async;
}

/* Whether @t is a type OpenMP 5.2 names: its region says which, and its
 * events need no `optype` attribute. */
static inline int tr_data_op_named(uint16_t t)
{
    switch (t) {
    case ompt_target_data_alloc:
    case ompt_target_data_alloc_async:
    case ompt_target_data_transfer_to_device:
    case ompt_target_data_transfer_to_device_async:
    case ompt_target_data_transfer_from_device:
    case ompt_target_data_transfer_from_device_async:
    case ompt_target_data_delete:
    case ompt_target_data_delete_async:
    case ompt_target_data_associate:
    case ompt_target_data_disassociate:
        return 1;
    default:
        return 0;
    }
}

/* The host address a data op's begin (or point) record touches: the
 * destination of a copy from the device, the source of anything else. A
 * delete names only the device address: 0 here (the writer finds the host
 * address through the alloc that produced it). */
static inline uint64_t tr_data_op_host_addr(const tr_record *r)
{
    return tr_optype_is_from_device(r->sub) ? r->u[2] : tr_optype_is_delete(r->sub) ? 0 : r->u[1];
}

#endif
