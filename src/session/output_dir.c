#define _GNU_SOURCE 1 /* renameat2 */
#include "session/output_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/lifecycle.h"
#include "core/log.h"

#define MAX_SUFFIX 1000

static void exe_name(char *out, size_t size)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    const char *base = "app";
    if (n > 0) {
        path[n] = 0;
        const char *slash = strrchr(path, '/');
        base = slash ? slash + 1 : path;
    }
    size_t len = strlen(base);
    if (len >= size)
        len = size - 1;
    memcpy(out, base, len);
    out[len] = 0;
}

/* An existing directory is reused only when it is a real directory (not a
 * link) of ours that holds no trace yet: users often mkdir TRACER_OUTPUT
 * ahead of a job. */
static int usable_existing(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return 0;
    static const char *const names[] = {"traces.otf2", "traces.def", "traces"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (lstat(p, &st) == 0 || errno != ENOENT)
            return 0;
    }
    return 1;
}

/* Why an existing BASE was not used, for the one line that names the
 * directory written instead. */
static const char *taken_reason(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st))
        return "cannot be used";
    if (S_ISLNK(st.st_mode))
        return "is a symlink (not followed)";
    if (!S_ISDIR(st.st_mode))
        return "exists and is not a directory";
    if (st.st_uid != geteuid())
        return "is a directory of another user";
    return "already holds a trace";
}

/* Holds the directory open (never through a symlink) and checks it is still
 * ours, so the archive can be written through /proc/self/fd/N: swapping the
 * path for a link after this check cannot redirect the writes. */
static int open_checked(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || st.st_uid != geteuid()) {
        tr_log("writer: %s changed while it was being opened; no trace written", dir);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Claims the directory @fd for this process. The ranks of one MPI job share
 * TRACER_OUTPUT and end at about the same time: one creates the directory,
 * and another, finding it still empty, would reuse it and write into the same
 * files. An empty anchor file created exclusively is the claim (an empty
 * directory with it is no longer "usable"); OTF2 writes the real anchor over
 * it. Returns 0 when the claim is ours. */
static int claim(int fd)
{
    int c = openat(fd, "traces.otf2", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0664);
    if (c < 0)
        return -1;
    close(c);
    return 0;
}

/* open_checked() + claim(): the directory's fd, or -1 with *lost set when
 * another process claimed it first. */
static int open_claimed(const char *dir, int *lost)
{
    int fd = open_checked(dir);
    *lost = 0;
    if (fd < 0 || claim(fd) == 0)
        return fd;
    *lost = errno == EEXIST;
    if (!*lost)
        tr_log("writer: cannot create %s/traces.otf2: %s; no trace written", dir, strerror(errno));
    close(fd);
    return -1;
}

/* Undoes a directory create_whole() made under @tmp: its claim, itself. */
static void remove_new(int fd, const char *tmp)
{
    unlinkat(fd, "traces.otf2", 0);
    close(fd);
    rmdir(tmp);
}

/* Makes @dir with its claim already inside, in one step: the directory is
 * made under a name of this process's own, claimed there, and renamed to
 * @dir only if no @dir exists (RENAME_NOREPLACE). So no process ever sees
 * @dir without its claim. Made in two steps (mkdir, then the claim), two
 * jobs started at once with one TRACER_OUTPUT took each other's fresh
 * directories in between (usable_existing: "empty, ours"): one claimed
 * the directory the other had made, the other went on to a .1, and the one
 * that had not made its directory could not remove it when it joined its
 * job, an empty leftover (issue 34, item 9).
 * Returns the directory's fd; -1 with errno (EEXIST: @dir exists); -2,
 * nothing changed, when it cannot be done so (no temporary directory can
 * be made beside @dir, or the file system has no RENAME_NOREPLACE): the
 * caller then takes the two steps. */
static int create_whole(const char *dir)
{
    static unsigned seq; /* activation and MPI_Init: never at once */
    char tmp[4200];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(tmp, sizeof tmp, "%s.tracer-new-%ld-%u", dir, (long)getpid(), seq++);
        if (mkdir(tmp, 0775) == 0) /* less the umask: never writable by others */
            fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        else if (errno != EEXIST)
            return -2; /* e.g. a parent not writable, @dir made ahead by the user */
    }
    if (fd < 0)
        return -2;
    struct stat st;
    int err = fstat(fd, &st) ? errno : st.st_uid != geteuid() ? EACCES : claim(fd) ? errno : 0;
    if (err) {
        remove_new(fd, tmp);
        errno = err;
        return -1;
    }
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_NOREPLACE) == 0)
        return fd;
    err = errno;
    remove_new(fd, tmp);
    errno = err;
    return err == EINVAL || err == ENOSYS ? -2 : -1;
}

/* @dir made and claimed: its fd; -1 with errno (EEXIST: the name is taken,
 * also by a process that claimed it first), or -1 with *told set when a
 * tracer: line said why. */
static int make_claimed(const char *dir, int *told)
{
    *told = 0;
    int fd = create_whole(dir);
    if (fd != -2)
        return fd;
    /* The two steps, each safe alone (mkdir reports a taken name first). */
    if (mkdir(dir, 0775))
        return -1;
    int lost;
    fd = open_claimed(dir, &lost);
    *told = fd < 0 && !lost;
    if (lost)
        errno = EEXIST;
    return fd;
}

static int create(char *dir, size_t size, int *created, int per_rank, char *note, size_t note_size);

/* TRACER_OUTPUT=runs/today/app where runs/today does not exist: made as
 * `mkdir -p` would (each less the umask: never writable by others), so the
 * run is traced instead of failing for want of a parent (issue 35). What
 * cannot be made is left to the create below, which says why. */
static void make_parents(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        int made = mkdir(p, 0775) == 0 || errno == EEXIST;
        *slash = '/';
        if (!made)
            return;
    }
}

int tr_output_dir_create(char *dir, size_t size, int *created, char *note, size_t note_size)
{
    return create(dir, size, created, 1, note, note_size);
}

int tr_output_dir_create_job(char *dir, size_t size, int *created) { return create(dir, size, created, 0, 0, 0); }

static int create(char *dir, size_t size, int *created, int per_rank, char *note, size_t note_size)
{
    if (note && note_size)
        note[0] = 0;
    *created = 0;
    const char *env = tr_cfg.output;
    char base[4096];
    if (env && *env) {
        if (strlen(env) > sizeof base - 16) {
            tr_log("writer: TRACER_OUTPUT is longer than %zu characters; no trace written", sizeof base - 16);
            return -1;
        }
        snprintf(base, sizeof base, "%s", env);
        size_t n = strlen(base);
        while (n > 1 && base[n - 1] == '/')
            base[--n] = 0;
    } else {
        char exe[256], stamp[32];
        exe_name(exe, sizeof exe);
        time_t now = time(0);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(base, sizeof base, "tracer-%s-%s-%ld", exe, stamp, (long)getpid());
    }
    /* Ranks of one job share TRACER_OUTPUT: each gets its own archive,
     * named by its rank, so none takes another's name or a suffix. */
    long rank;
    if (per_rank && tr_lifecycle_launcher_rank(&rank)) {
        size_t n = strlen(base);
        snprintf(base + n, sizeof base - n, ".rank%ld", rank);
    }
    /* An image that replaced a traced one (exec keeps the pid, and often the
     * second): a name of its own, not the first image's taken one. */
    unsigned exec_seq = tr_lifecycle_exec_sequence();
    if (per_rank && exec_seq) {
        size_t n = strlen(base);
        snprintf(base + n, sizeof base - n, ".exec%u", exec_seq);
    }
    make_parents(base);
    const char *why = "already holds a trace";
    for (int i = 0; i < MAX_SUFFIX; i++) {
        if (i == 0)
            snprintf(dir, size, "%s", base);
        else
            snprintf(dir, size, "%s.%d", base, i);
        int lost, told, fd = make_claimed(dir, &told);
        if (fd >= 0) {
            *created = 1;
            if (i > 0 && note && note_size)
                snprintf(note, note_size, "%s %s; writing to %s instead", base, why, dir);
            else if (i > 0)
                tr_log("%s %s; writing to %s instead", base, why, dir);
            return fd;
        }
        if (told)
            return -1;
        int err = errno; /* usable_existing() and taken_reason() call lstat */
        if (err == EEXIST && i == 0) {
            if (usable_existing(dir)) {
                fd = open_claimed(dir, &lost);
                if (!lost)
                    return fd;
                continue; /* claimed by another process: already holds a trace */
            }
            why = taken_reason(dir);
        }
        if (err != EEXIST) {
            tr_log("writer: cannot create %s: %s; no trace written", dir, strerror(err));
            return -1;
        }
    }
    tr_log("writer: %s and %d suffixed names are all taken; no trace written", base, MAX_SUFFIX - 1);
    return -1;
}
