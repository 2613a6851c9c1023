/* consumer.h - the journal's writer thread: takes full chunks off the
 * application threads, compresses each into one frame, appends it, recycles
 * the chunk. Also writes the names and symbols the records refer to, and
 * every flush interval the committed part of each thread's current chunk. */
#ifndef TR_JOURNAL_CONSUMER_H
#define TR_JOURNAL_CONSUMER_H

#include <stdint.h>

/* Called on the writer thread at every flush interval, if set (MPI_T clock
 * pairs). It may record events (an MPI library may deliver callbacks from
 * inside it), so the writer thread never blocks for a buffer: see
 * tr_buf_never_block. */
extern void (*tr_consumer_interval_hook)(void);

/* Starts the thread on the journal (journal_write.h), and returns once it
 * runs (a fork straight after must not find it half set up). Around every
 * fork from then on, the thread is parked between two rounds of work
 * (pthread_atfork). Returns 0, or -1 (errno set). */
int tr_consumer_start(uint64_t flush_interval_ns);
/* Writes everything still in memory (full and partly filled chunks), a final
 * clock pair, then ends the thread. Recording must be stopped. */
void tr_consumer_stop(void);
/* Writes every record committed so far, with the names it refers to, and
 * returns once written (at most 2 s later). For the application's threads,
 * before code the records point into may go away (core/unload.h). */
void tr_consumer_sync(void);
/* Wakes the thread (a producer is waiting for a free chunk). */
void tr_consumer_wake(void);
/* Async-signal-safe: appends, uncompressed, every chunk not yet written
 * (full, being written, current), a clock pair and a CRASH frame with
 * @sig: the signal, or -(S + 1) for _exit(S) (journal_format.h). */
void tr_consumer_crash_flush(int sig);

#endif
