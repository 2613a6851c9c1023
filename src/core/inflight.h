/* inflight.h - the in-flight file: the chunk pool kept in a shared mapping of
 * a file in /dev/shm, so that the records a thread committed outlive its
 * process however it dies (SIGKILL, the OOM killer, exit_group, a launcher's
 * kill after MPI_Abort). `tracer recover` reads it beside the journal
 * (journal/inflight_salvage.h). Why this is safe against a half-written
 * record and a reused chunk: docs/crash-survival.md.
 *
 * File layout: one tr_inflight_header in the first TR_INFLIGHT_HEADER_BYTES,
 * then the pool's chunks (struct tr_chunk, core/buf.h), back to back. The
 * file is sparse: a chunk's pages are reserved (fallocate) when the pool
 * first hands it out, never later on the hot path, so a full /dev/shm can
 * never raise SIGBUS in the application; such a chunk stays private memory
 * instead (only a SIGKILL can lose its records).
 *
 * tmpfs, not the trace directory: a shared mapping of a disk file faults on
 * a page's first store after each write-back (page_mkwrite), on the
 * application's thread; tmpfs pages are never written back. */
#ifndef TR_CORE_INFLIGHT_H
#define TR_CORE_INFLIGHT_H

#include <stddef.h>
#include <stdint.h>

#define TR_INFLIGHT_MAGIC "TRINFLT1"
#define TR_INFLIGHT_VERSION 1
#define TR_INFLIGHT_HEADER_BYTES 4096u
#define TR_INFLIGHT_DIR "/dev/shm"

typedef struct tr_inflight_header {
    char magic[8];          /* TR_INFLIGHT_MAGIC */
    uint32_t version;       /* TR_INFLIGHT_VERSION */
    uint32_t header_bytes;  /* where the first chunk starts */
    uint32_t chunk_bytes;   /* sizeof(struct tr_chunk) */
    uint32_t record_bytes;  /* sizeof(tr_record) */
    uint64_t chunks;        /* the pool's capacity */
    uint64_t pid;           /* the process, as in the journal's START frame */
    uint64_t run_id;        /* random, also in the journal's START frame */
} tr_inflight_header;

/* Creates the file for a pool of @chunks chunks of @chunk_bytes, maps it
 * shared, and returns the address of the first chunk, or NULL (the caller
 * keeps its pool private; one `tracer:` line said why). */
void *tr_inflight_create(uint64_t chunks, size_t chunk_bytes);
/* Makes chunk @i of the pool returned above safe to store into: reserves its
 * pages in the file. When /dev/shm has no room, the chunk is replaced by
 * private memory (its records are then saved on every death but SIGKILL).
 * Called once per chunk, on its first use. */
void tr_inflight_reserve(uint32_t i);
/* The file's path ("" when there is none) and the run id it carries. */
const char *tr_inflight_path(void);
uint64_t tr_inflight_run_id(void);
/* Removes the file (its records are all in the journal). The mapping stays
 * valid. Async-signal-safe. */
void tr_inflight_remove(void);
/* A forked child: it has no mapping (MADV_DONTFORK) and must never remove
 * the parent's file. */
void tr_inflight_forget(void);

#endif
