/* ompt_phase.h - an OMPT scope endpoint as a record phase, for every
 * callback that records one (ompt_callbacks.c, ompt_host.c). */
#ifndef TR_OMPT_PHASE_H
#define TR_OMPT_PHASE_H

#include <omp-tools.h>
#include <stdint.h>

#include "core/record.h"

static inline uint8_t tr_phase_of(ompt_scope_endpoint_t e)
{
    return e == ompt_scope_begin ? TR_PHASE_BEGIN : e == ompt_scope_end ? TR_PHASE_END : TR_PHASE_POINT;
}

#endif
