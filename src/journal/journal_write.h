/* journal_write.h - appending frames to the run's journal.
 *
 * The journal's descriptor is kept as core/fd_keep.h says: at a high number,
 * and checked before every append to still be the journal, because the
 * program may close it or put its own file (or its stdout) at that number.
 * When it is not, tracer reopens the journal by the path the kernel gave it
 * (the same file, or nothing) and goes on; when that fails, the journal ends
 * there, with one tracer: line, and nothing is ever written to the
 * program's descriptor. */
#ifndef TR_JOURNAL_WRITE_H
#define TR_JOURNAL_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/fd_keep.h"
#include "journal/journal_format.h"

/* Creates DIR/tracer.journal through @dirfd (O_EXCL, O_NOFOLLOW, O_APPEND,
 * close-on-exec; mode 0664 less the umask, so never writable by others) and
 * makes it the journal that appends go to. Returns 0 or -1 (errno set). */
int tr_journal_open(int dirfd);

/* The journal was renamed (an MPI rank's journal moves into the job's
 * directory): the path to reopen it from is read again. */
void tr_journal_moved(void);

/* On the journal's writer thread: gives it a descriptor table of its own
 * holding the journal (tr_fd_private_table), so that its appends, which are
 * nearly all of them, and the files it reads symbols from are out of the
 * program's reach. Returns 0, or -1 (not possible: appends stay checked). */
int tr_journal_own_table(void);

/* Seals @h (its location, tid, seq, records, flags, raw_bytes are the
 * caller's) and appends it with @payload in one writev, after checking the
 * descriptor (reopening the journal if the program took it). Thread-safe.
 * Returns 0, or -1 (errno set; EBADF: no journal). */
int tr_journal_append(tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes);

/* The same for a signal handler: async-signal-safe, never reopens. */
int tr_journal_append_signal(tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes);

/* 1 while there is a journal to append to. */
int tr_journal_is_open(void);
/* Nonzero once an append failed (a full disk, the journal gone): some
 * records may then be only in memory, or in the in-flight file. */
int tr_journal_write_failed(void);

/* Ends appending: the journal's descriptor moves to *@out (the caller reads
 * the journal through it and releases it with tr_fd_release); out->fd is -1
 * when the journal is gone. Returns once no append from another thread is
 * still writing (at most 2 s; past that, the old number is never closed
 * and *@out holds a copy), so closing out->fd never lets a late append
 * write into a file that reuses the number. */
void tr_journal_detach(tr_fd *out);

/* Ends appending and closes the journal (a descriptor that is no longer the
 * journal is left alone). */
void tr_journal_close(void);

#endif
