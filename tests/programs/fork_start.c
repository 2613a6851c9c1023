/* Ground truth for test_fork_start.py: fork right after tracing starts.
 * The first tracer call starts tracing, and with it tracer's writer thread;
 * the program forks at once, and the child allocates memory of many sizes
 * and starts a thread of its own (a child that inherited a lock held by a
 * thread of the parent, in the allocator or a sanitizer's thread registry,
 * hangs there), then _exit(0)s. The parent waits up to 20 s; a child still
 * running then is killed (nothing is left behind) and reported.
 * usage: fork_start
 * stdout: "fork_start: child status 0", or "fork_start: child hung" (exit 1). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer.h"

static void *child_thread(void *arg)
{
    void *p = malloc(100);
    free(p);
    return arg;
}

int main(void)
{
    tracer_region_t r = tracer_region_register("start"); /* tracing starts here */
    pid_t pid = fork();
    if (pid < 0) {
        printf("fork_start: fork failed\n");
        return 2;
    }
    if (pid == 0) {
        for (size_t size = 8; size <= (1u << 20); size *= 2) {
            void *p = calloc(1, size);
            void *q = malloc(size + 8);
            free(p);
            free(q);
        }
        pthread_t t;
        if (pthread_create(&t, 0, child_thread, 0) == 0)
            pthread_join(t, 0);
        _exit(0);
    }
    int status = 0;
    for (int i = 0;; i++) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (i == 2000) { /* 20 s */
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            printf("fork_start: child hung\n");
            return 1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, 0);
    }
    tracer_mark(r, 1);
    printf("fork_start: child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
