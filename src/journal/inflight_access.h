/* inflight_access.h - how `tracer recover` opens the in-flight file a
 * journal names (core/inflight.h), and tells whether the run still holds it.
 *
 * The path is in /dev/shm, where anyone may create names: what is there may
 * be a FIFO (an open for reading would block for ever), a device, a link, or
 * a file of another user. So it is opened without blocking and without
 * following a link, and checked before anything is read from it.
 *
 * A living run holds an OFD write lock on its file until the kernel drops it
 * at the process's death; a process that is dying (killed by a launcher that
 * does not wait) or ending (saving its last chunks) still holds it for a
 * moment. Nothing in /proc is asked: recover may run in another pid
 * namespace that shares /dev/shm. */
#ifndef TR_JOURNAL_INFLIGHT_ACCESS_H
#define TR_JOURNAL_INFLIGHT_ACCESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens @path read-only (O_NONBLOCK, O_NOFOLLOW) and keeps it only when it
 * is a regular file of @owner that no one else may write. Returns the
 * descriptor, or -1: errno ENOENT when nothing is there, else @why (of
 * @size bytes) says what is wrong. */
int tr_inflight_open_checked(const char *path, uid_t owner, char *why, size_t size);

/* How long to wait for holders that are dying or ending: one budget for
 * all the files of a recover (a job's ranks), which starts at the first
 * file found held, not before (reading big journals takes none of it). */
typedef struct tr_holder_wait {
    uint64_t budget_ns;
    uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 until a held file starts it */
} tr_holder_wait;

/* Whether a living process still holds @fd's file. Polls until @w's
 * deadline for a holder that is dying or ending to be gone. Returns 0:
 * none (a read lock is then held through @fd, until it is closed), 1:
 * still held at the deadline, -1: cannot tell (errno). *@waited: whether
 * it was held at first (the run may have written to its journal
 * meanwhile). */
int tr_inflight_wait_unheld(int fd, tr_holder_wait *w, int *waited);

#endif
