/* Ground truth for test_exec.py: a traced process that replaces its image
 * with exec (no fork), possibly several times.
 * usage: exec_image PER I HOW1 HOW2 ...
 * Image I registers the region "image<I>" (tracing starts), records PER
 * marks of it with values 0..PER-1, then execs this program again as image
 * I+1 the way HOW<I> says, or, past the last HOW, prints "images: I" and
 * exits 0. HOW is one of
 *   execve execv execvp execvpe execl execlp execle fexecve execveat
 *            (the p variants find the program on PATH, set to its directory)
 *   fail     first an execv of a file that does not exist (it fails, ENOENT,
 *            and the program says nothing), then PER more marks (values
 *            PER..2PER-1), then execv
 *   silent   no marks in this image, then execv
 *   segvexec its SIGSEGV handler, installed before tracing starts, execs
 *            (execv); the image faults after its marks
 *   badelf   first an execve of ./notelf, an executable file that is not a
 *            program (it fails, ENOEXEC), then PER more marks (values
 *            PER..2PER-1), then execv */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracer.h"

extern char **environ;

static char **args; /* the next image's */

static void exec_on_segv(int sig)
{
    (void)sig;
    execv(args[0], args);
    _exit(6);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long per = atol(argv[1]);
    int image = atoi(argv[2]);
    int nhow = argc - 3;
    const char *how = image <= nhow ? argv[2 + image] : 0;

    /* The next image's arguments: the same, with I+1. */
    char next[16];
    snprintf(next, sizeof next, "%d", image + 1);
    args = calloc((size_t)argc + 1, sizeof *args);
    if (!args)
        return 3;
    for (int i = 0; i < argc; i++)
        args[i] = argv[i];
    args[2] = next;
    if (how && !strcmp(how, "segvexec"))
        signal(SIGSEGV, exec_on_segv);

    char name[32];
    snprintf(name, sizeof name, "image%d", image);
    tracer_region_t mark = tracer_region_register(name); /* tracing starts here */
    if (!how || strcmp(how, "silent"))
        for (long i = 0; i < per; i++)
            tracer_mark(mark, (uint64_t)i);
    if (!how) {
        printf("images: %d\n", image);
        return 0;
    }
    fflush(stdout);
    const char *self = argv[0]; /* an absolute path */
    const char *base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
    if (!strcmp(how, "execvp") || !strcmp(how, "execvpe") || !strcmp(how, "execlp")) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)(base - self - 1), self);
        setenv("PATH", dir, 1);
    }

    if (!strcmp(how, "execve"))
        execve(self, args, environ);
    else if (!strcmp(how, "execv") || !strcmp(how, "silent"))
        execv(self, args);
    else if (!strcmp(how, "execvp"))
        execvp(base, args);
    else if (!strcmp(how, "execvpe"))
        execvpe(base, args, environ);
    else if (!strcmp(how, "execl") || !strcmp(how, "execlp") || !strcmp(how, "execle")) {
        /* this program's arguments (at most 12 HOWs), then the null that
         * ends them; execle takes the environment right after that null */
        char *a[16] = {0};
        for (int i = 0; i < argc && i < 14; i++)
            a[i] = args[i];
        if (argc < 14)
            a[argc + 1] = (char *)environ;
        if (!strcmp(how, "execl"))
            execl(self, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
                  (char *)0);
        else if (!strcmp(how, "execlp"))
            execlp(base, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
                  (char *)0);
        else
            execle(self, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
                  (char *)0, environ);
    } else if (!strcmp(how, "fexecve")) {
        int fd = open(self, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            fexecve(fd, args, environ);
    } else if (!strcmp(how, "execveat")) {
        execveat(AT_FDCWD, self, args, environ, 0);
    } else if (!strcmp(how, "segvexec")) {
        /* a store into a PROT_NONE page: SIGSEGV, no UB for UBSan */
        void *page = mmap(0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        volatile int *volatile p = page == MAP_FAILED ? 0 : (int *)page;
        *p = 1;
    } else if (!strcmp(how, "badelf")) {
        int fd = open("notelf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        if (fd < 0 || write(fd, "\x01\x02\x03\x04", 4) != 4 || close(fd))
            return 5;
        execve("notelf", args, environ);
        unlink("notelf");
        for (long i = per; i < 2 * per; i++)
            tracer_mark(mark, (uint64_t)i);
        execv(self, args);
    } else if (!strcmp(how, "fail")) {
        execv("/nonexistent/exec_image", args);
        for (long i = per; i < 2 * per; i++)
            tracer_mark(mark, (uint64_t)i);
        execv(self, args);
    }
    printf("exec_image: %s failed\n", how);
    return 4;
}
