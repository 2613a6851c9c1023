/* chunk_pool.h - the memory OTF2 writes its chunks into, bounded.
 *
 * Left to itself, OTF2 3.0.2 keeps up to 128 MiB of chunks per writer (a
 * location's events, a definitions file) before it writes any: the memory of
 * the end-of-run write grew with the trace. With these callbacks a writer
 * holds at most TR_CHUNK_POOL_PER_WRITER chunks; asking for one more makes
 * OTF2 write its chunks out (a flush) and hand them back. Chunks handed back
 * are kept for the next writer (at most TR_CHUNK_POOL_SPARE of them), so a
 * short run's writers reuse memory already touched instead of faulting in a
 * fresh 4 MiB per location.
 *
 * The pool is the process's; OTF2 calls it from the one thread that writes
 * the archive (writing is never concurrent in tracer). */
#ifndef TR_WRITER_CHUNK_POOL_H
#define TR_WRITER_CHUNK_POOL_H

#include <otf2/otf2.h>

#define TR_CHUNK_POOL_PER_WRITER 1
#define TR_CHUNK_POOL_SPARE 4

/* The callbacks to pass to OTF2_Archive_SetMemoryCallbacks (user data: NULL). */
const OTF2_MemoryCallbacks *tr_chunk_pool_callbacks(void);
/* Frees the spare chunks (the end of a write). */
void tr_chunk_pool_trim(void);

#endif
