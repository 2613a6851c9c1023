/* unload.h - what runs before the program unloads code that events refer to.
 *
 * Records hold code addresses (codeptr_ra); the journal's consumer names
 * them later, from the process's own memory and its loaded objects. A
 * library the program dlcloses takes that memory with it, so before its
 * offload image is unregistered (libomptarget's __tgt_unregister_lib, which
 * the library's own destructor calls while it is still mapped) the consumer
 * names everything recorded so far. core/ knows no consumer: the consumer
 * installs the hook.
 *
 * The next library the program loads is often mapped where the unloaded one
 * was (a plug-in program loads, runs and unloads one after another): the
 * same address then names other code. So each unload is also noted here,
 * with its time and the address range it frees, and an address is named
 * per *span*: the time since the last unload that freed it (the "since"
 * tick; 0 before any). The consumer names (address, since) pairs, the
 * journal keeps the unloads, and its reader names each record after the
 * pair its time falls in. */
#ifndef TR_CORE_UNLOAD_H
#define TR_CORE_UNLOAD_H

#include <stdint.h>

/* Set by the consumer: writes every committed record, with the names it
 * refers to, and returns when done or after a bounded wait. */
extern void (*tr_unload_hook)(void);

/* Called on the application's thread before code may be unmapped: the
 * object that holds @inside (NULL or an address of no loaded object: any
 * code at all) is about to go. Does nothing when tracing is not active (a
 * forked child, after the end). */
void tr_before_unload(const void *inside);

/* One unload: from tick `tick` on, [lo, hi) may hold other code. */
typedef struct tr_unload {
    uint64_t tick, lo, hi;
} tr_unload;

/* How many unloads were announced so far (cheap: one atomic load). */
uint32_t tr_unload_count(void);

/* Unload @i (< tr_unload_count()), in the order they were announced. */
tr_unload tr_unload_get(uint32_t i);

/* The span of @addr that holds tick @tick: the tick of the latest unload
 * before @tick that freed @addr, 0 if none. *@gone is set to 1 when a later
 * unload of @addr has completed and another object (or none) holds @addr
 * now: the code of that span is no longer mapped, and what the address
 * holds now must not name it. Reads the loader's list (dl_iterate_phdr)
 * when an unload came after @tick. */
uint64_t tr_unload_since(uint64_t addr, uint64_t tick, int *gone);

#endif
