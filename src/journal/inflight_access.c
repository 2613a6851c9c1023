/* inflight_access.c - opening the in-flight file safely, and its holder's
 * liveness (inflight_access.h). */
#define _GNU_SOURCE 1 /* F_OFD_SETLK */
#include "journal/inflight_access.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How often a held lock is tried again while waiting. */
#define RETRY_NS 10000000ull

int tr_inflight_open_checked(const char *path, uid_t owner, char *why, size_t size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(why, size, "%s", e == ELOOP ? "a symbolic link, not a file of tracer's" : strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    const char *bad = 0;
    if (fstat(fd, &st))
        bad = "cannot be examined";
    else if (!S_ISREG(st.st_mode))
        bad = "not a regular file (something else was put at its name)";
    else if (st.st_uid != owner)
        bad = "not a file of the journal's owner";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        bad = "writable by others (tracer creates it 0600)";
    if (!bad)
        return fd;
    snprintf(why, size, "%s", bad);
    close(fd);
    errno = EPERM;
    return -1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int tr_inflight_wait_unheld(int fd, tr_holder_wait *w, int *waited)
{
    *waited = 0;
    for (;;) {
        /* A read lock: it conflicts only with the run's write lock. */
        struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
        if (!fcntl(fd, F_OFD_SETLK, &l))
            return 0;
        if (errno != EAGAIN && errno != EACCES && errno != EINTR)
            return -1;
        uint64_t now = now_ns();
        if (!w->deadline_ns)
            w->deadline_ns = now + w->budget_ns;
        if (now >= w->deadline_ns)
            return 1;
        *waited = 1;
        uint64_t step = w->deadline_ns - now < RETRY_NS ? w->deadline_ns - now : RETRY_NS;
        struct timespec ts = {(time_t)(step / 1000000000ull), (long)(step % 1000000000ull)};
        nanosleep(&ts, 0);
    }
}
