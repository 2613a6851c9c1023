/* exec.c - a traced image replaced by exec keeps its trace.
 *
 * exec runs no exit handler: without these wrappers the first image's
 * journal stays unconverted and its claim empty. Each exec function of the
 * C library (execve, execv, execvp, execvpe, execl, execlp, execle, fexecve,
 * execveat) is defined here; before it calls the next definition it ends the
 * run, so the trace is written as at exit, and tells the new image which
 * image of the process it is (__TRACER_EXEC=<pid>.<n> in its environment,
 * only when that environment preloads libtracer), so its trace gets a name
 * of its own (<name>.exec<n>).
 *
 * A file that cannot be run (missing, not executable, not found on PATH) is
 * checked first and ends nothing: the exec fails as it would, and the run
 * goes on traced. Should an exec fail after the run ended (E2BIG, ENOMEM,
 * a bad ELF...), the program carries on untraced and one line says so.
 * A forked or vforked child (it shares the parent's memory) ends nothing.
 * An exec from inside the program's handler of a fatal signal (a crash
 * reporter, a debugger started on a fault) may interrupt malloc: the run
 * is not converted then, the journal is saved as for a crash, with only
 * async-signal-safe calls, and `tracer recover` reads it.
 * posix_spawn, system and popen start other processes and need none of this. */
#define _GNU_SOURCE 1 /* RTLD_NEXT, execvpe */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/lifecycle.h"
#include "session/crash.h"

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static execve_fn next_execve, next_execvpe;
static fexecve_fn next_fexecve;
static execveat_fn next_execveat;

/* Looked up at load: a vforked child must not take the loader's locks. */
__attribute__((constructor)) static void find_next(void)
{
    next_execve = (execve_fn)(uintptr_t)dlsym(RTLD_NEXT, "execve");
    next_execvpe = (execve_fn)(uintptr_t)dlsym(RTLD_NEXT, "execvpe");
    next_fexecve = (fexecve_fn)(uintptr_t)dlsym(RTLD_NEXT, "fexecve");
    next_execveat = (execveat_fn)(uintptr_t)dlsym(RTLD_NEXT, "execveat");
}

/* A regular file this process may execute (an open one with AT_EMPTY_PATH:
 * some execute bit, as faccessat cannot ask about a descriptor everywhere). */
static int runnable_at(int dirfd, const char *path, int flags)
{
    struct stat st;
    if (fstatat(dirfd, path, &st, flags) || !S_ISREG(st.st_mode))
        return 0;
    if ((flags & AT_EMPTY_PATH) && !*path)
        return (st.st_mode & 0111) != 0;
    return !faccessat(dirfd, path, X_OK, AT_EACCESS);
}

static int runnable(const char *path) { return path && *path && runnable_at(AT_FDCWD, path, 0); }

/* execvp's search: a name without '/' is looked up on PATH (glibc's default
 * when unset); found when some entry is a regular executable file. */
static int runnable_on_path(const char *file)
{
    if (!file || !*file)
        return 0;
    if (strchr(file, '/'))
        return runnable(file);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    size_t flen = strlen(file);
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        char buf[4096];
        if (dlen + flen + 2 <= sizeof buf) {
            if (dlen) {
                memcpy(buf, p, dlen);
                buf[dlen] = '/';
                memcpy(buf + dlen + 1, file, flen + 1);
            } else {
                memcpy(buf, file, flen + 1); /* an empty entry is the current directory */
            }
            if (runnable(buf))
                return 1;
        }
        if (!end)
            return 0;
        p = end;
    }
}

/* Appends the decimal digits of @v at @p; returns the end. */
static char *put_decimal(char *p, unsigned long v)
{
    char digits[24];
    int n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        *p++ = digits[--n];
    return p;
}

/* The environment the new image gets: @envp, or a copy with
 * __TRACER_EXEC=<pid>.<n> when @envp preloads libtracer: in static storage
 * when it fits (async-signal-safe), else malloc'ed (*owned, freed by the
 * caller) unless @in_handler. */
static char *const *new_environment(char *const envp[], unsigned seq, int in_handler, char ***owned)
{
    static char var[64];
    static char *fixed[1024];
    *owned = 0;
    if (!seq)
        return envp;
    size_t n = 0;
    int preloads = 0;
    for (; envp && envp[n]; n++)
        if (!strncmp(envp[n], "LD_PRELOAD=", 11) && strstr(envp[n] + 11, "libtracer"))
            preloads = 1;
    if (!preloads)
        return envp;
    char **copy = fixed;
    if (n + 2 > sizeof fixed / sizeof *fixed) {
        if (in_handler || !(copy = malloc((n + 2) * sizeof *copy)))
            return envp;
        *owned = copy;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], "__TRACER_EXEC=", 14))
            copy[k++] = envp[i];
    char *p = var;
    memcpy(p, "__TRACER_EXEC=", 14);
    p = put_decimal(p + 14, (unsigned long)getpid());
    *p++ = '.';
    *put_decimal(p, seq) = 0;
    copy[k++] = var;
    copy[k] = 0;
    return copy;
}

/* Ends the run when the exec can succeed; returns the environment to pass. */
static char *const *before(char *const envp[], int can_run, char ***owned)
{
    *owned = 0;
    if (!can_run)
        return envp; /* it fails as it would have, and changes nothing */
    int sig = tr_crash_chained_signal();
    if (sig)
        tr_crash_save_journal(sig);
    return new_environment(envp, tr_lifecycle_before_exec(!sig), sig, owned);
}

/* Only reached when the exec failed. */
static int after(int rc, char **owned)
{
    int err = errno;
    free(owned);
    tr_lifecycle_exec_failed(err);
    errno = err;
    return rc;
}

static int call_execve(const char *path, char *const argv[], char *const envp[])
{
    if (next_execve)
        return next_execve(path, argv, envp);
    return (int)syscall(SYS_execve, path, argv, envp);
}

__attribute__((visibility("default"))) int execve(const char *path, char *const argv[], char *const envp[])
{
    char **owned;
    char *const *env = before(envp, runnable(path), &owned);
    return after(call_execve(path, argv, env), owned);
}

__attribute__((visibility("default"))) int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execvpe(const char *file, char *const argv[], char *const envp[])
{
    char **owned;
    char *const *env = before(envp, runnable_on_path(file), &owned);
    if (!next_execvpe) {
        errno = ENOSYS;
        return after(-1, owned);
    }
    return after(next_execvpe(file, argv, env), owned);
}

__attribute__((visibility("default"))) int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int fexecve(int fd, char *const argv[], char *const envp[])
{
    char **owned;
    char *const *env = before(envp, runnable_at(fd, "", AT_EMPTY_PATH), &owned);
    if (!next_fexecve) {
        errno = ENOSYS;
        return after(-1, owned);
    }
    return after(next_fexecve(fd, argv, env), owned);
}

__attribute__((visibility("default"))) int execveat(int dirfd, const char *path, char *const argv[],
                                                    char *const envp[], int flags)
{
    char **owned;
    char *const *env = before(envp, runnable_at(dirfd, path, flags & (AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)), &owned);
    int rc = next_execveat ? next_execveat(dirfd, path, argv, env, flags)
                           : (int)syscall(SYS_execveat, dirfd, path, argv, env, flags);
    return after(rc, owned);
}

/* execl, execlp, execle: the argument list as an array on the stack. */
#define COLLECT_ARGS(first, ap, argv)                                                                        \
    size_t argc_ = 1;                                                                                        \
    va_start(ap, first);                                                                                     \
    while (va_arg(ap, char *))                                                                               \
        argc_++;                                                                                             \
    va_end(ap);                                                                                              \
    char *argv[argc_ + 1];                                                                                   \
    argv[0] = (char *)(first);                                                                               \
    va_start(ap, first);                                                                                     \
    for (size_t i_ = 1; i_ <= argc_; i_++)                                                                   \
        argv[i_] = va_arg(ap, char *);

__attribute__((visibility("default"))) int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return execvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
