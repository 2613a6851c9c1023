/* journal_frames.h - the one encoder of the journal's side frames: names,
 * clock pairs, the MPI_T catalogue, an MPI rank's frames. Each builds the
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

#include <stdint.h>

#include "core/mpit_note.h"
#include "journal/journal_format.h"

/* STRING: @kind (enum tr_string_kind), @id, then, when @id64 is not NULL,
 * the 64-bit id, then @text (cut at 4000 bytes). */
int tr_journal_write_string(uint32_t kind, uint32_t id, const uint64_t *id64, const char *text);

/* CLOCK: the pair (@tick, @ns). The _signal form is async-signal-safe. */
int tr_journal_write_clock(uint64_t tick, uint64_t ns);
int tr_journal_write_clock_signal(uint64_t tick, uint64_t ns);

/* MPIT: one MPI_T fact, as the producer noted it. Thread-safe. */
int tr_journal_write_mpit(const tr_mpit_note *note);

/* MPI_RANK and CLOCK_OFFSET (job/). */
int tr_journal_write_mpi_rank(int32_t rank, int32_t size);
int tr_journal_write_clock_offset(const tr_journal_clock_offset *o);

#endif
