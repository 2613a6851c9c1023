/* Ground truth for test_fork.py.
 * usage: fork MODE [PROGRAM ARGS...]
 * The parent records P regions "parent" (each with a mark "pmark", values
 * 0..P-1) before the fork and P more (values P..2P-1) after the child has
 * ended, so its trace holds exactly 2P regions and 2P marks on one location.
 * MODE record: the child records C regions "child" and C marks "cmark" on
 *              its forking thread and on a new thread, then exit(7).
 * MODE segv:   the child records C regions, then dies of SIGSEGV.
 * MODE exec:   the child execs PROGRAM ARGS (a traced program; it starts
 *              afresh and writes a trace of its own).
 * MODE _Fork, clone: the child is made without atfork handlers, by glibc's
 *              _Fork() or the raw clone system call (SIGCHLD only); it
 *              records C regions, registers the region "late" and marks it,
 *              then exit(7)s. With the suffix _exit: _exit(7) instead; with
 *              _term: it dies of SIGTERM (kill to itself); with _idle: it
 *              records nothing and exit(7)s at once.
 * stdout: "fork: child status S" where S is the exit code, or "sig N". */
#define _GNU_SOURCE 1 /* _Fork */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracer.h"

#define P 50
#define C 40

static tracer_region_t child_r, cmark;

static void child_work(void)
{
    for (int i = 0; i < C; i++) {
        tracer_region_begin(child_r);
        tracer_mark(cmark, (uint64_t)i);
        tracer_region_end(child_r);
    }
}

static void *child_thread(void *arg)
{
    (void)arg;
    child_work();
    return NULL;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* A child that runs no atfork handler: only system calls and the tracer
 * API, then its end. */
static void raw_child(const char *mode)
{
    if (ends_with(mode, "_idle"))
        exit(7); /* records nothing: only the end of the run is in question */
    child_work();
    tracer_region_t late = tracer_region_register("late");
    tracer_mark(late, 1);
    if (ends_with(mode, "_term")) {
        kill(getpid(), SIGTERM);
        _exit(8);
    }
    if (ends_with(mode, "_exit"))
        _exit(7);
    exit(7);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    tracer_region_t parent = tracer_region_register("parent");
    tracer_region_t pmark = tracer_region_register("pmark");
    child_r = tracer_region_register("child");
    cmark = tracer_region_register("cmark");
    for (int i = 0; i < P; i++) {
        tracer_region_begin(parent);
        tracer_mark(pmark, (uint64_t)i);
        tracer_region_end(parent);
    }
    fflush(stdout);
    int raw = !strncmp(mode, "_Fork", 5) || !strncmp(mode, "clone", 5);
    pid_t pid = !strncmp(mode, "_Fork", 5)   ? _Fork()
                : !strncmp(mode, "clone", 5) ? (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)
                                             : fork();
    if (pid < 0) {
        printf("fork: fork failed\n");
        return 1;
    }
    if (pid == 0 && raw)
        raw_child(mode);
    if (pid == 0) {
        if (!strcmp(mode, "exec")) {
            if (argc < 3)
                _exit(120);
            execv(argv[2], argv + 2);
            _exit(121);
        }
        child_work();
        if (!strcmp(mode, "segv")) {
            /* a store into a PROT_NONE page: SIGSEGV, no UB for UBSan */
            void *page = mmap(0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            volatile int *volatile p = page == MAP_FAILED ? 0 : (int *)page;
            *p = 1;
        }
        pthread_t th;
        if (pthread_create(&th, NULL, child_thread, NULL) == 0)
            pthread_join(th, NULL);
        exit(7);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    for (int i = P; i < 2 * P; i++) {
        tracer_region_begin(parent);
        tracer_mark(pmark, (uint64_t)i);
        tracer_region_end(parent);
    }
    if (WIFEXITED(status))
        printf("fork: child status %d\n", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("fork: child status sig %d\n", WTERMSIG(status));
    return 0;
}
