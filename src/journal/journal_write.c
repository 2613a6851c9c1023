#include "journal/journal_write.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"

static tr_fd journal = TR_FD_NONE;
/* Reopening: one thread at a time, and the path it reads. */
static pthread_mutex_t reopen_lock = PTHREAD_MUTEX_INITIALIZER;
static char journal_path[4200];
static int gone; /* could not be reopened: appends fail at once */
/* The writer thread's own descriptor table holds the journal at this number
 * (tr_journal_own_table); -1 on every other thread. */
static __thread int own_fd __attribute__((tls_model("initial-exec"))) = -1;
/* Appends from the program's threads (names, the MPI_T catalogue, clock
 * pairs) between their look at the descriptor and the end of their write:
 * tr_journal_detach waits for them, so that no append ever writes to a
 * number after it was closed and maybe given to another file. */
static int appending;

int tr_journal_open(int dirfd)
{
    int fd = openat(dirfd, TR_JOURNAL_NAME, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0664);
    if (fd < 0 || tr_fd_keep(&journal, fd) < 0)
        return -1;
    gone = 0;
    tr_journal_moved();
    return 0;
}

void tr_journal_moved(void)
{
    pthread_mutex_lock(&reopen_lock);
    int fd = tr_fd_get(&journal);
    if (fd >= 0 && tr_fd_path(fd, journal_path, sizeof journal_path))
        journal_path[0] = 0; /* no /proc: a journal taken is not reopened */
    pthread_mutex_unlock(&reopen_lock);
}

/* The program closed the journal's descriptor or put a file of its own at
 * its number: the journal, reopened by path, or -1 after one line. */
static int reopen(void)
{
    pthread_mutex_lock(&reopen_lock);
    int taken = __atomic_load_n(&journal.fd, __ATOMIC_ACQUIRE);
    int fd = tr_fd_get(&journal);
    if (fd < 0 && taken >= 0 && !gone) {
        fd = tr_fd_reclaim(&journal, journal_path, O_WRONLY | O_APPEND);
        if (fd < 0) {
            int e = errno;
            gone = 1;
            __atomic_store_n(&journal.fd, -1, __ATOMIC_RELEASE); /* the number is the program's */
            tr_log("journal: descriptor %d is no longer the journal (the program closed it or opened its own file "
                   "there) and %s cannot be reopened (%s); events from here on are not recorded",
                   taken, journal_path[0] ? journal_path : TR_JOURNAL_NAME,
                   e == ESTALE ? "another file has its name" : strerror(e));
        } else if (tr_cfg.verbose) {
            tr_log("journal: descriptor %d is no longer the journal (the program closed it or opened its own file "
                   "there); reopened %s, nothing lost", taken, journal_path);
        }
    }
    pthread_mutex_unlock(&reopen_lock);
    if (fd < 0)
        errno = ESTALE;
    return fd;
}

/* One writev per frame: Linux appends it as a unit to an O_APPEND file, so a
 * crash handler writing beside the consumer thread never splits a frame. */
/* Set by a failed append: the journal may lack records that the in-flight
 * file (core/inflight.h) still holds, so that file must then be kept. */
static int write_failed;

int tr_journal_write_failed(void) { return __atomic_load_n(&write_failed, __ATOMIC_ACQUIRE); }

static int append_to(int fd, tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes)
{
    tr_frame_seal(h, type, payload, bytes);
    struct iovec iov[2] = {{h, sizeof *h}, {(void *)payload, (size_t)bytes}};
    size_t total = sizeof *h + (size_t)bytes;
    for (;;) {
        ssize_t n = writev(fd, iov, bytes ? 2 : 1);
        if (n == (ssize_t)total)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n >= 0)
            errno = ENOSPC; /* a short append: the reader drops the torn frame */
        __atomic_store_n(&write_failed, 1, __ATOMIC_RELEASE);
        return -1;
    }
}

int tr_journal_own_table(void)
{
    int fd = tr_fd_get(&journal);
    if (fd < 0 || tr_fd_private_table(fd))
        return -1;
    own_fd = fd;
    return 0;
}

static int append_checked(tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes)
{
    /* The check and the write are two calls: a program thread that swaps
     * the descriptor between them wins the race, but every append looks. */
    if (__atomic_load_n(&journal.fd, __ATOMIC_SEQ_CST) < 0) { /* Dekker with tr_journal_detach */
        errno = gone ? ESTALE : EBADF;
        return -1;
    }
    int fd = tr_fd_get(&journal);
    if (fd < 0 && __atomic_load_n(&journal.fd, __ATOMIC_ACQUIRE) < 0) {
        errno = gone ? ESTALE : EBADF;
        return -1;
    }
    if (fd < 0 && (fd = reopen()) < 0) {
        __atomic_store_n(&write_failed, 1, __ATOMIC_RELEASE);
        return -1;
    }
    return append_to(fd, h, type, payload, bytes);
}

int tr_journal_append(tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes)
{
    if (own_fd >= 0) /* no one else can close it or put a file there */
        return append_to(own_fd, h, type, payload, bytes);
    __atomic_fetch_add(&appending, 1, __ATOMIC_SEQ_CST);
    int rc = append_checked(h, type, payload, bytes);
    int e = errno;
    __atomic_fetch_sub(&appending, 1, __ATOMIC_RELEASE);
    errno = e;
    return rc;
}

int tr_journal_append_signal(tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes)
{
    int fd = own_fd >= 0 ? own_fd : tr_fd_get(&journal);
    if (fd < 0) {
        __atomic_store_n(&write_failed, 1, __ATOMIC_RELEASE);
        errno = EBADF;
        return -1;
    }
    return append_to(fd, h, type, payload, bytes);
}

int tr_journal_is_open(void) { return __atomic_load_n(&journal.fd, __ATOMIC_ACQUIRE) >= 0; }

void tr_journal_detach(tr_fd *out)
{
    pthread_mutex_lock(&reopen_lock);
    *out = journal;
    out->fd = tr_fd_get(&journal);
    /* seq_cst: an append either sees -1 or is counted in appending below */
    __atomic_store_n(&journal.fd, -1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&reopen_lock); /* an append in reopen() needs it */
    /* Appends that looked before: out->fd is closed by the caller, and the
     * number then may go to any file. Such an append is a name or a clock
     * pair, microseconds; 2 s bounds a thread stopped inside one (a signal
     * handler that ends the run on that very thread, a debugger). Then the
     * number stays the journal's for ever (that append lands in the
     * journal, after its end) and the caller gets a copy to read and
     * close. */
    struct timespec start, now, nap = {0, 20000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (__atomic_load_n(&appending, __ATOMIC_SEQ_CST)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 2 || (now.tv_sec - start.tv_sec == 2 && now.tv_nsec >= start.tv_nsec)) {
            if (out->fd >= 0)
                out->fd = fcntl(out->fd, F_DUPFD_CLOEXEC, out->fd);
            return;
        }
        nanosleep(&nap, 0);
    }
}

/* No lock: a forked child calls it, and another thread may have held the
 * lock at the fork. */
void tr_journal_close(void) { tr_fd_release(&journal); }
