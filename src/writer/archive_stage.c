#define _GNU_SOURCE 1 /* renameat2 */
#include "common/trace_vocab.h"
#include "writer/archive_stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STAGE_PREFIX ".tracer-stage-"

/* The stage being written by this process, for a signal handler
 * (tr_stage_abandon): its own duplicates of the descriptors, which nothing
 * else closes, and the stage's file, to check the number still names it.
 * CREATING: the name is chosen and the directory may exist (fd not yet). */
enum { NO_STAGE, CREATING, LIVE, ABANDONED };
static int live_state = NO_STAGE;
static struct {
    int dir, fd;
    dev_t dev;
    ino_t ino;
    char name[40];
} live = {-1, -1, 0, 0, ""};

/* Before the stage @name is made in @dir. */
static void announce(int dir, const char *name)
{
    if (__atomic_load_n(&live_state, __ATOMIC_ACQUIRE) != NO_STAGE)
        return;
    live.dir = fcntl(dir, F_DUPFD_CLOEXEC, 0);
    live.fd = -1;
    snprintf(live.name, sizeof live.name, "%s", name);
    if (live.dir >= 0)
        __atomic_store_n(&live_state, CREATING, __ATOMIC_RELEASE);
}

/* The stage is made and open. */
static void publish(const tr_stage *s)
{
    struct stat st;
    if (__atomic_load_n(&live_state, __ATOMIC_ACQUIRE) != CREATING || fstat(s->fd, &st))
        return;
    live.dev = st.st_dev;
    live.ino = st.st_ino;
    live.fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
    int expect = CREATING;
    if (live.fd >= 0)
        __atomic_compare_exchange_n(&live_state, &expect, LIVE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Before the stage is committed, discarded or left, or when it could not be
 * made: 0 when a dying process's handler took it (it is being removed:
 * leave it alone). */
static int unpublish(const char *name)
{
    if (strcmp(live.name, name))
        return 1; /* another stage (one joined, not made here) */
    for (int expect = __atomic_load_n(&live_state, __ATOMIC_ACQUIRE); expect == CREATING || expect == LIVE;) {
        if (__atomic_compare_exchange_n(&live_state, &expect, NO_STAGE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            close(live.dir);
            if (live.fd >= 0)
                close(live.fd);
            return 1;
        }
    }
    return __atomic_load_n(&live_state, __ATOMIC_ACQUIRE) != ABANDONED;
}

/* /proc/self/fd/N when it leads to @fd's directory, else @fallback/@name. */
static void stage_path(tr_stage *s, const char *fallback)
{
    snprintf(s->path, sizeof s->path, "/proc/self/fd/%d", s->fd);
    struct stat a, b;
    if (stat(s->path, &a) || fstat(s->fd, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        snprintf(s->path, sizeof s->path, "%s/%s", fallback, s->name);
}

/* Opens @name in s->dir: a directory of this user, reachable by no one else. */
static int open_private(tr_stage *s, const char *name, char *err, size_t size)
{
    snprintf(s->name, sizeof s->name, "%s", name);
    s->fd = openat(s->dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (s->fd < 0 || fstat(s->fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        snprintf(err, size, "the private directory %s for the archive %s", name,
                 s->fd < 0 ? strerror(errno) : "is not private to this user");
        if (s->fd >= 0)
            close(s->fd);
        s->fd = -1;
        return -1;
    }
    return 0;
}

int tr_stage_create(tr_stage *s, int dir, const char *dir_path, char *err, size_t size)
{
    s->dir = dir;
    s->fd = -1;
    char name[sizeof s->name];
    for (int i = 0; i < 100; i++) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
            r = (uint64_t)time(0) * 2654435761u ^ (uint64_t)getpid() << 20 ^ (uint64_t)i * 0x9e3779b97f4a7c15u;
        snprintf(name, sizeof name, STAGE_PREFIX "%012llx", (unsigned long long)(r & 0xffffffffffffull));
        announce(dir, name);
        if (mkdirat(dir, name, 0700) == 0) {
            if (open_private(s, name, err, size)) {
                unpublish(name);
                return -1;
            }
            stage_path(s, dir_path);
            publish(s);
            return 0;
        }
        int e = errno;
        unpublish(name);
        errno = e;
        if (errno != EEXIST)
            break;
    }
    snprintf(err, size, "cannot make a private directory for the archive in %s: %s", dir_path, strerror(errno));
    return -1;
}

int tr_stage_join(tr_stage *s, int dir, const char *dir_path, const char *name, char *err, size_t size)
{
    s->dir = dir;
    s->fd = -1;
    if (strncmp(name, STAGE_PREFIX, sizeof STAGE_PREFIX - 1) || strchr(name, '/')) {
        snprintf(err, size, "%s is not an archive's private directory", name);
        return -1;
    }
    if (open_private(s, name, err, size))
        return -1;
    stage_path(s, dir_path);
    return 0;
}

/* A stream of the directory @fd from its start: a duplicate shares the
 * reading position, which an earlier walk left at the end. */
static DIR *open_dir(int fd)
{
    int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *dp = d >= 0 ? fdopendir(d) : 0;
    if (!dp) {
        if (d >= 0)
            close(d);
        return 0;
    }
    rewinddir(dp);
    return dp;
}

/* Everything in the directory @fd, and in its subdirectories (OTF2 makes
 * one level: traces/), is removed. */
static void remove_all(int fd)
{
    DIR *dp = open_dir(fd);
    if (!dp)
        return;
    for (struct dirent *e; (e = readdir(dp));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (unlinkat(fd, e->d_name, 0) && errno == EISDIR) {
            int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                remove_all(sub);
                close(sub);
            }
            unlinkat(fd, e->d_name, AT_REMOVEDIR);
        }
    }
    closedir(dp);
}

/* No write permission for others, whatever the umask was: the files, and
 * traces/ (which others could otherwise put files in). */
static void not_writable_by_others(int fd, int depth)
{
    DIR *dp = open_dir(fd);
    if (!dp)
        return;
    for (struct dirent *e; (e = readdir(dp));) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
            continue;
        if (S_ISDIR(st.st_mode) && depth == 0) {
            int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                not_writable_by_others(sub, 1);
                close(sub);
            }
        }
        if ((S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) && (st.st_mode & S_IWOTH))
            fchmodat(fd, e->d_name, st.st_mode & 07777 & ~(mode_t)S_IWOTH, 0);
    }
    closedir(dp);
}

/* renameat2(RENAME_NOREPLACE); where the file system cannot (EINVAL: NFS,
 * for one), a check that @to is free, then renameat. */
static int move_new(int from_dir, const char *from, int to_dir, const char *to)
{
    if (renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL)
        return -1;
    struct stat st;
    if (fstatat(to_dir, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        errno = EEXIST;
        return -1;
    }
    return renameat(from_dir, from, to_dir, to);
}

int tr_stage_commit(tr_stage *s, char *err, size_t size)
{
    static const char *const parts[] = {TRV_ARCHIVE_NAME, TRV_ARCHIVE_NAME ".def"};
    enum { NPARTS = sizeof parts / sizeof *parts };
    int moved[NPARTS] = {0};
    if (!unpublish(s->name)) {
        snprintf(err, size, "the process is dying of a signal");
        return -1;
    }
    not_writable_by_others(s->fd, 0);
    const char *failed = 0;
    for (int i = 0; i < NPARTS && !failed; i++) {
        struct stat st;
        if (fstatat(s->fd, parts[i], &st, AT_SYMLINK_NOFOLLOW))
            continue; /* not written: nothing to move */
        if (move_new(s->fd, parts[i], s->dir, parts[i]))
            failed = parts[i];
        else
            moved[i] = 1;
    }
    if (!failed && renameat(s->fd, TRV_ANCHOR_NAME, s->dir, TRV_ANCHOR_NAME))
        failed = TRV_ANCHOR_NAME;
    if (failed) {
        int e = errno;
        snprintf(err, size, "cannot move the archive's %s into place: %s%s", failed, strerror(e),
                 e == EEXIST || e == ENOTEMPTY ? " (something of that name is there, not written by tracer)" : "");
        for (int i = 0; i < NPARTS; i++)
            if (moved[i])
                renameat(s->dir, parts[i], s->fd, parts[i]);
        tr_stage_discard(s);
        return -1;
    }
    unlinkat(s->dir, s->name, AT_REMOVEDIR);
    tr_stage_leave(s);
    return 0;
}

void tr_stage_error(const tr_stage *s, char *err, size_t size, const char *otf2)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", otf2 ? otf2 : "unknown error");
    size_t n = strlen(s->path);
    for (char *p; n && (p = strstr(msg, s->path)) && p[n] == '/';)
        memmove(p, p + n + 1, strlen(p + n + 1) + 1);
    snprintf(err, size, "the archive could not be written: %s", msg);
}

void tr_stage_discard(tr_stage *s)
{
    if (s->fd < 0 || !unpublish(s->name))
        return;
    remove_all(s->fd);
    unlinkat(s->dir, s->name, AT_REMOVEDIR);
    tr_stage_leave(s);
}

void tr_stage_leave(tr_stage *s)
{
    if (s->fd >= 0 && unpublish(s->name))
        close(s->fd);
    s->fd = -1;
}

/* remove_all with system calls only (getdents64: readdir may allocate). */
static void remove_all_raw(int fd, int depth)
{
    char buf[4096] __attribute__((aligned(8)));
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            return;
        for (long off = 0; off < n;) {
            struct {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *e = (void *)(buf + off);
            off += e->reclen;
            if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
                continue;
            if (unlinkat(fd, e->name, 0) && errno == EISDIR && depth < 2) {
                int sub = openat(fd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0) {
                    remove_all_raw(sub, depth + 1);
                    close(sub);
                }
                unlinkat(fd, e->name, AT_REMOVEDIR);
            }
        }
    }
}

int tr_stage_abandon(void)
{
    int was = __atomic_load_n(&live_state, __ATOMIC_ACQUIRE);
    if ((was != CREATING && was != LIVE) ||
        !__atomic_compare_exchange_n(&live_state, &was, ABANDONED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    if (was == CREATING) { /* made just now, if at all: nothing in it yet */
        unlinkat(live.dir, live.name, AT_REMOVEDIR);
        return 1;
    }
    struct stat st;
    if (fstat(live.fd, &st) || st.st_dev != live.dev || st.st_ino != live.ino)
        return 0; /* the program took the number: not ours to empty */
    /* Other threads of this process may still be writing files in it: once
     * the stage is gone from the directory, no new file can be made in it. */
    for (int pass = 0; pass < 16; pass++) {
        remove_all_raw(live.fd, 0);
        if (!unlinkat(live.dir, live.name, AT_REMOVEDIR) || errno == ENOENT)
            break;
    }
    return 1;
}
