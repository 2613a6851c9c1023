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
 * The pool is the process's; OTF2 calls it from every thread that writes
 * the archive (otf2_workers.h): a lock guards the spare chunks. */
#ifndef TR_WRITER_CHUNK_POOL_H
#define TR_WRITER_CHUNK_POOL_H

#include <otf2/otf2.h>

#define TR_CHUNK_POOL_PER_WRITER 1
#define TR_CHUNK_POOL_SPARE 4

/* A bound on the chunks one writer (one file of the archive) may take over
 * its whole life; 0: none. Asking for one more sets @exceeded: from then on
 * the archive's writers get memory without bound and write nothing more
 * (archive.c's pre-flush callback), and the archive is to be written again.
 * With chunks smaller than OTF2's 4 MiB file buffer this is what keeps every
 * file under that buffer's size (archive.c says why that matters). */
typedef struct tr_chunk_budget {
    uint32_t max_chunks_per_file;
    _Atomic int exceeded; /* set by any writing thread */
} tr_chunk_budget;

/* The callbacks to pass to OTF2_Archive_SetMemoryCallbacks; their user data
 * is a tr_chunk_budget (also the flush callbacks' user data), or NULL for no
 * bound. */
const OTF2_MemoryCallbacks *tr_chunk_pool_callbacks(void);
/* Frees the spare chunks (the end of a write). */
void tr_chunk_pool_trim(void);

#endif
