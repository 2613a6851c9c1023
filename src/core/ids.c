#include "core/ids.h"

__thread uint64_t tr_ids_next __attribute__((tls_model("initial-exec")));
__thread uint64_t tr_ids_end __attribute__((tls_model("initial-exec")));

static uint64_t global_next = 1;

void tr_ids_refill(void)
{
    tr_ids_next = __atomic_fetch_add(&global_next, TR_IDS_BLOCK, __ATOMIC_RELAXED);
    tr_ids_end = tr_ids_next + TR_IDS_BLOCK;
}
