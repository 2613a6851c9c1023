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

/* Whether a living process still holds @fd's file. Polls until
 * @deadline_ns (CLOCK_MONOTONIC) for a holder that is dying or ending to be
 * gone. Returns 0: none (a read lock is then held through @fd, until it is
 * closed), 1: still held at the deadline, -1: cannot tell (errno).
 * *@waited: whether it was held at first (the run may have written to its
 * journal meanwhile). */
int tr_inflight_wait_unheld(int fd, uint64_t deadline_ns, int *waited);

/* CLOCK_MONOTONIC now, in ns: for deadlines. */
uint64_t tr_inflight_now_ns(void);

#endif
