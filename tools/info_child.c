/* info_child.c - runs a probe of `tracer info` in a forked child.
 *
 * Loading an OpenMP runtime or an MPI library changes a process for good
 * (threads, signal handlers, atexit hooks, a preloaded tool), and a broken
 * library may crash. The child takes all of that; the parent only copies
 * the text the child printed through a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "info.h"

/* libomp registers each process that loads it with a file in /dev/shm,
 * __KMP_REGISTERED_LIB_<pid>_<uid> (LLVM's kmp_runtime.cpp), and removes
 * it only at exit. The probe child ends with _exit, so the file stays:
 * ours to remove, since we made that process. Only a regular file of our
 * own is removed, never what a link points to. */
static void tr_info_remove_runtime_files(pid_t pid)
{
    char name[64];
    snprintf(name, sizeof name, "__KMP_REGISTERED_LIB_%d_%d", (int)pid, (int)getuid());
    int dir = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return;
    struct stat sb;
    if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == getuid())
        unlinkat(dir, name, 0);
    close(dir);
}

int tr_info_in_child(int (*probe)(void *arg, FILE *out), void *arg, FILE *dest, const char *what,
                     unsigned timeout_s)
{
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "tracer: info: cannot probe %s: pipe: %s\n", what, strerror(errno));
        return -1;
    }
    fflush(dest);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "tracer: info: cannot probe %s: fork: %s\n", what, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        /* Runtimes print their own warnings; the probe reports what matters. */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDERR_FILENO);
            close(devnull);
        }
        if (dup2(fds[1], STDOUT_FILENO) < 0)
            _exit(125);
        close(fds[1]);
        alarm(timeout_s); /* a runtime that hangs must not hang `tracer info` */
        int rc = probe(arg, stdout);
        fflush(stdout);
        /* _exit: no atexit hooks of the loaded runtimes (and no trace). */
        _exit(rc & 0x7f);
    }
    close(fds[1]);
    char buf[4096];
    ssize_t n;
    int ended_with_newline = 1;
    while ((n = read(fds[0], buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        fwrite(buf, 1, (size_t)n, dest);
        ended_with_newline = buf[n - 1] == '\n';
    }
    close(fds[0]);
    if (!ended_with_newline)
        fputc('\n', dest);
    fflush(dest);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "tracer: info: cannot probe %s: waitpid: %s\n", what, strerror(errno));
            return -1;
        }
    tr_info_remove_runtime_files(pid);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fprintf(stderr, "tracer: info: the %s probe %s (signal %d, %s); its report above is incomplete\n", what,
                sig == SIGALRM ? "timed out" : "crashed", sig, strsignal(sig));
        return -1;
    }
    return WEXITSTATUS(status);
}
