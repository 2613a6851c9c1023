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
 * application's thread; tmpfs pages are never written back.
 *
 * The living process holds an OFD write lock on the whole file from its
 * creation: the lock belongs to the open file description, which the
 * mapping keeps open (a program closing every descriptor does not drop it),
 * and the kernel drops it when the process is gone, whatever killed it. So
 * `tracer recover` tells a live run from a dead one by trying the lock, in
 * any pid namespace that shares /dev/shm (docs/crash-survival.md). A forked
 * child closes its copy of the descriptor (tr_inflight_forget); exec closes
 * it (close-on-exec). */
#ifndef TR_CORE_INFLIGHT_H
#define TR_CORE_INFLIGHT_H

#include <stddef.h>
#include <stdint.h>

#define TR_INFLIGHT_MAGIC "TRINFLT1"
#define TR_INFLIGHT_VERSION 2
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
    uint64_t handed_out;    /* chunks [0, handed_out) may hold records: the pool's high-water
                             * mark, raised (atomically) before a fresh chunk is used, so
                             * recover reads only those (a 1 TiB pool is 16M chunks) */
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
 * the parent's file, nor hold its lock: its copy of the descriptor is
 * closed, so the parent's death is seen even while the child lives on.
 * Async-signal-safe. */
void tr_inflight_forget(void);

#endif
