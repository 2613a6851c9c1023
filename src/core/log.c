#define _GNU_SOURCE 1 /* sigtimedwait */
#include "core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/fd_keep.h"

/* The stderr the program was started with (docs/robustness.md): its file
 * is remembered when the library is loaded, a duplicate of it is kept once
 * tracing starts. A program that closes fd 2 and opens a file of its own
 * there must not find tracer's lines in it. */
static tr_fd original = TR_FD_NONE;
static int original_known; /* dev and ino of original are set */

__attribute__((constructor)) static void note_stderr(void)
{
    struct stat st;
    if (fstat(STDERR_FILENO, &st))
        return; /* no stderr at start: tracer writes nothing */
    original.dev = st.st_dev;
    original.ino = st.st_ino;
    __atomic_store_n(&original_known, 1, __ATOMIC_RELEASE);
}

/* A forked child is not traced: it does not hold a reader of a pipe open
 * (a daemon's parent waiting for the end of its output). */
static void drop_after_fork(void) { tr_fd_release(&original); }

void tr_log_keep_stderr(void)
{
    if (!__atomic_load_n(&original_known, __ATOMIC_ACQUIRE) || tr_fd_get(&original) >= 0 ||
        !tr_fd_names(STDERR_FILENO, &original))
        return; /* no stderr at start, kept already, or fd 2 is the program's file now */
    tr_fd k = original;
    if (tr_fd_keep(&k, fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0)) < 0 || k.dev != original.dev ||
        k.ino != original.ino) {
        tr_fd_release(&k);
        return;
    }
    __atomic_store_n(&original.fd, k.fd, __ATOMIC_RELEASE);
    pthread_atfork(0, 0, drop_after_fork);
}

int tr_log_fd(void)
{
    if (!__atomic_load_n(&original_known, __ATOMIC_ACQUIRE))
        return -1;
    int fd = tr_fd_get(&original);
    if (fd >= 0)
        return fd;
    return tr_fd_names(STDERR_FILENO, &original) ? STDERR_FILENO : -1;
}

/* One write(2) of a whole line, so that lines of several processes do not
 * interleave. A stderr whose reader is gone (app 2>&1 | head) gives EPIPE,
 * never SIGPIPE: the program would die of a line of tracer's. */
static void write_line(const char *buf, size_t len)
{
    int fd = tr_log_fd();
    if (fd < 0)
        return;
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    int was_pending = !sigpending(&pending) && sigismember(&pending, SIGPIPE);
    ssize_t w = write(fd, buf, len);
    if (w < 0 && errno == EPIPE && !was_pending) {
        struct timespec now = {0, 0};
        sigtimedwait(&pipe_only, 0, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old, 0);
}

static void vlog(const char *fmt, va_list ap)
{
    int saved = errno;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "tracer: ");
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    write_line(buf, len);
    errno = saved;
}

void tr_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void tr_log_once(int *once, const char *fmt, ...)
{
    if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED))
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

/* Async-signal-safe: no formatting, one write. */
static size_t append(char *buf, size_t len, size_t size, const char *s)
{
    while (s && *s && len < size)
        buf[len++] = *s++;
    return len;
}

void tr_log_parts(const char *first, ...)
{
    int saved = errno;
    char buf[1024];
    size_t len = append(buf, 0, sizeof buf - 1, "tracer: ");
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        len = append(buf, len, sizeof buf - 1, s);
    va_end(ap);
    buf[len++] = '\n';
    write_line(buf, len);
    errno = saved;
}
