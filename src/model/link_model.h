/* link_model.h - declare-target-link mappings, derived from the data ops.
 *
 * OMPT reports only anonymous allocations and copies. For a link variable
 * the runtime allocates its storage (an alloc whose host range is the
 * variable), copies its data, and writes the new device address into the
 * device's copy of <var>_decl_tgt_ref_ptr (an 8-byte transfer whose value,
 * recorded by the callback, is that address); the delete of the storage ends
 * the mapping. Reading them in time order across threads gives each mapping
 * and whether the device's reference pointer ever learned its storage. */
#ifndef TR_MODEL_LINK_MODEL_H
#define TR_MODEL_LINK_MODEL_H

#include <stdint.h>

#include "common/u64map.h"
#include "journal/collect.h"
#include "journal/journal_load.h"

typedef struct tr_link_map {
    const tr_jvariable *var;
    int device;
    uint32_t stream;          /* the host thread that allocated */
    uint64_t host, storage, bytes;
    uint64_t ref_ptr;         /* device address of the reference pointer's copy, 0 unknown */
    uint64_t ref_value_before; /* what it held when the mapping began, 0 never written */
    uint64_t unmap_op;        /* 0: still open at the end */
    uint8_t ref_written, partial, stale;
} tr_link_map;

typedef struct tr_link_model {
    tr_link_map *maps;
    uint32_t n, cap;
    tr_u64map by_alloc_op;  /* alloc host_op_id -> index */
    tr_u64map by_delete_op; /* delete host_op_id -> index */
} tr_link_model;

/* From @jd's variables and the data ops of @data's streams. Returns 0, or
 * -1 out of memory. Part of the model layer (model.h): no OTF2. */
int tr_link_model_build(const tr_journal_data *jd, const tr_collected *data, tr_link_model *lm);
void tr_link_model_free(tr_link_model *lm);

#endif
