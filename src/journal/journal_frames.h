/* journal_frames.h - the one encoder of the journal's side frames: the
 * run's start and end, names, clock pairs, the MPI_T catalogue, an MPI
 * rank's frames. Each builds the
 * payload journal_format.h describes and appends it (journal_write.h);
 * nothing outside journal/ lays out a payload. (CHUNK, SYMBOL and VARIABLE
 * frames are the consumer's own, consumer.c; the decoders are the
 * reader's.)
 *
 * Included by the composition root (session/, which hands on what the
 * producers note through core/lifecycle.h), by job/ (rank frames) and by
 * the consumer. Never on the hot path. Each returns 0, or -1 (errno set;
 * EBADF: no journal). */
#ifndef TR_JOURNAL_FRAMES_H
#define TR_JOURNAL_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "core/mpit_note.h"
#include "journal/journal_format.h"

/* START payload builder (fixed storage, no allocation): entries of
 * {u16 key, u16 pad, u32 length, bytes}; one that does not fit is left out. */
typedef struct tr_kv {
    size_t len;
    char data[32768];
} tr_kv;

void tr_kv_add(tr_kv *kv, uint16_t key, const void *value, uint32_t len);
void tr_kv_add_text(tr_kv *kv, uint16_t key, const char *text);

/* START: the entries of @kv. */
int tr_journal_write_start(const tr_kv *kv);

/* A thread's drop-mode loss that it never got to record itself. */
typedef struct tr_journal_lost_thread {
    uint32_t index;
    uint64_t lost, first, last; /* events lost, ticks of the first and last */
} tr_journal_lost_thread;
#define TR_JOURNAL_END_MAX_LOST 1024

/* END: @e, then @nlost threads' losses (at most TR_JOURNAL_END_MAX_LOST;
 * 28 bytes each: u32 index, u64 lost, first, last). */
int tr_journal_write_end(const tr_journal_end *e, const tr_journal_lost_thread *lost, size_t nlost);

/* STRING: a user region's name (@id: its handle, the off bit cleared here)
 * or a text that records refer to by @id (device strings); cut at 4000
 * bytes. */
int tr_journal_write_user_region(uint32_t id, const char *name);
int tr_journal_write_text(uint64_t id, const char *text);

/* MODULES: the objects now loaded (journal/loaded_modules.h), when the
 * loader loaded any since the last call wrote them (and at the first).
 * The session calls it at its start, the consumer thread afterwards (never
 * two threads at once). */
int tr_journal_write_modules(void);

/* CLOCK: the pair (@tick, @ns). The _signal form is async-signal-safe. */
int tr_journal_write_clock(uint64_t tick, uint64_t ns);
int tr_journal_write_clock_signal(uint64_t tick, uint64_t ns);

/* MPIT: one MPI_T fact, as the producer noted it. Thread-safe. */
int tr_journal_write_mpit(const tr_mpit_note *note);

/* MPI_RANK and CLOCK_OFFSET (job/). */
int tr_journal_write_mpi_rank(int32_t rank, int32_t size);
int tr_journal_write_clock_offset(const tr_journal_clock_offset *o);

#endif
