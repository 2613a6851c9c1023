#define _GNU_SOURCE 1 /* O_PATH */
#include "core/fd_keep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Just under the lower of the soft limit and 1024: far above the numbers a
 * program's own opens get (the lowest free ones), and below FD_SETSIZE, so
 * no table beyond select()'s range is grown. */
static int high_floor(void)
{
    long top = 1024;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur < top)
        top = (long)rl.rlim_cur;
    return top > 64 ? (int)(top - 32) : 10;
}

static int move_high(int fd)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, high_floor());
    if (high < 0)
        return fd; /* a low limit: the number stays, the identity check still holds */
    close(fd);
    return high;
}

int tr_fd_keep(tr_fd *k, int fd)
{
    __atomic_store_n(&k->fd, -1, __ATOMIC_RELEASE);
    if (fd < 0)
        return -1;
    fd = move_high(fd);
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    k->dev = st.st_dev;
    k->ino = st.st_ino;
    __atomic_store_n(&k->fd, fd, __ATOMIC_RELEASE);
    return fd;
}

int tr_fd_names(int fd, const tr_fd *k)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == k->dev && st.st_ino == k->ino;
}

int tr_fd_get(const tr_fd *k)
{
    int fd = __atomic_load_n(&k->fd, __ATOMIC_ACQUIRE);
    return tr_fd_names(fd, k) ? fd : -1;
}

int tr_fd_reclaim(tr_fd *k, const char *path, int flags)
{
    int old = __atomic_load_n(&k->fd, __ATOMIC_ACQUIRE);
    if (tr_fd_names(old, k))
        return old;
    if (old < 0) { /* released, or never kept: nothing to reclaim */
        errno = EBADF;
        return -1;
    }
    if (!path || !*path) {
        errno = ENOENT;
        return -1;
    }
    int p = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (p < 0)
        return -1;
    int fd = -1;
    if (tr_fd_names(p, k)) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", p);
        fd = open(proc, flags | O_CLOEXEC); /* the magic link: never O_NOFOLLOW */
        if (fd >= 0 && !tr_fd_names(fd, k)) {
            close(fd);
            fd = -1;
        }
    }
    int e = errno;
    close(p);
    if (fd < 0) {
        errno = e ? e : ESTALE;
        return -1;
    }
    fd = move_high(fd);
    /* Another thread may have reclaimed it meanwhile: one copy stays. */
    if (!__atomic_compare_exchange_n(&k->fd, &old, fd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        close(fd);
        return tr_fd_get(k);
    }
    return fd;
}

void tr_fd_release(tr_fd *k)
{
    int fd = __atomic_exchange_n(&k->fd, -1, __ATOMIC_ACQ_REL);
    if (tr_fd_names(fd, k))
        close(fd);
}

int tr_fd_path(int fd, char *path, size_t size)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, path, size - 1);
    if (n <= 0 || (size_t)n >= size - 1 || path[0] != '/')
        return -1;
    path[n] = 0;
    return strstr(path, " (deleted)") ? -1 : 0;
}

/* Every descriptor of this thread's table but @keep and stderr. */
static void close_others(int keep)
{
    int lo = keep < STDERR_FILENO ? keep : STDERR_FILENO, hi = keep > STDERR_FILENO ? keep : STDERR_FILENO;
    if ((lo == 0 || close_range(0, (unsigned)lo - 1, 0) == 0) &&
        (hi - lo < 2 || close_range((unsigned)lo + 1, (unsigned)hi - 1, 0) == 0) &&
        close_range((unsigned)hi + 1, ~0u, 0) == 0)
        return;
    /* Without close_range (Linux < 5.9): the numbers the table holds. */
    int fds[4096], n = 0;
    DIR *d = opendir("/proc/thread-self/fd");
    for (struct dirent *e; d && (e = readdir(d)) && n < 4096;)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            fds[n++] = atoi(e->d_name);
    if (d)
        closedir(d);
    for (int i = 0; i < n; i++)
        if (fds[i] != keep && fds[i] != STDERR_FILENO)
            close(fds[i]);
}

int tr_fd_private_table(int keep)
{
    if (keep < 0 || unshare(CLONE_FILES))
        return -1;
    close_others(keep);
    /* 0, 1 (and 2 if the program had none) are /dev/null: something
     * printed here goes nowhere, not into a file this thread opened at
     * that number. */
    for (;;) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null > STDERR_FILENO)
            close(null);
        if (null < 0 || null >= STDERR_FILENO)
            break;
    }
    return 0;
}
