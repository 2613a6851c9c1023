/* unload.h - what runs before the program unloads code that events refer to.
 *
 * Records hold code addresses (codeptr_ra); the journal's consumer names
 * them later, from the process's own memory and its loaded objects. A
 * library the program dlcloses takes that memory with it, so before its
 * offload image is unregistered (libomptarget's __tgt_unregister_lib, which
 * the library's own destructor calls while it is still mapped) the consumer
 * names everything recorded so far. core/ knows no consumer: the consumer
 * installs the hook. */
#ifndef TR_CORE_UNLOAD_H
#define TR_CORE_UNLOAD_H

/* Set by the consumer: writes every committed record, with the names it
 * refers to, and returns when done or after a bounded wait. */
extern void (*tr_unload_hook)(void);

/* Called on the application's thread before code may be unmapped. Does
 * nothing when tracing is not active (a forked child, after the end). */
void tr_before_unload(void);

#endif
