/* filter.h - the configuration as the hot path sees it.
 *
 * Whole event classes (TRACER_OMPT) are decided at registration: a class
 * that is off has no callback at all. What remains per event is a load and a
 * predictable branch: the device bitmap (TRACER_DEVICES) and the transfer
 * size threshold (TRACER_MIN_BYTES). Frozen once, before any callback. */
#ifndef TR_CORE_FILTER_H
#define TR_CORE_FILTER_H

#include <stdint.h>

#include "core/config.h"

typedef struct tr_filter {
    int dev_all;
    uint64_t dev_mask[4]; /* devices 0..255; larger numbers take the slow path */
    uint64_t min_bytes;
    uint64_t hash_max;    /* TRACER_HASH */
    uint32_t ompt;        /* TR_OMPT_* */
} tr_filter;

extern tr_filter tr_flt;

/* A sentinel host_op_id: the begin was filtered, so is the end. */
#define TR_ID_SKIPPED UINT64_MAX

void tr_filter_freeze(const tr_config *cfg);
int tr_filter_device_slow(int device);

/* Nonzero when events of OpenMP device @device are recorded. */
static inline int tr_filter_device(int device)
{
    if (__builtin_expect(tr_flt.dev_all, 1))
        return 1;
    if ((unsigned)device < 256)
        return (int)((tr_flt.dev_mask[(unsigned)device >> 6] >> ((unsigned)device & 63)) & 1);
    return tr_filter_device_slow(device);
}

#endif
