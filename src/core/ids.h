/* ids.h - process-unique operation ids (target ids, host op ids) without a
 * shared cache line on every call: each thread takes a block of ids at once. */
#ifndef TR_CORE_IDS_H
#define TR_CORE_IDS_H

#include <stdint.h>

#define TR_IDS_BLOCK 1024u

extern __thread uint64_t tr_ids_next __attribute__((tls_model("initial-exec")));
extern __thread uint64_t tr_ids_end __attribute__((tls_model("initial-exec")));

void tr_ids_refill(void);

/* Never returns 0, so 0 can mean "no id". */
static inline uint64_t tr_ids_new(void)
{
    if (__builtin_expect(tr_ids_next == tr_ids_end, 0))
        tr_ids_refill();
    return tr_ids_next++;
}

#endif
