/* Ground truth for test_recover_live.py: a run that is still going, or was
 * killed at a known point, while `tracer recover` looks at it.
 *
 * usage: live_marks N
 *
 * Reads commands from stdin, one a line:
 *   mark  N more marks "live" (tracer_mark, found with dlsym: untraced, the
 *         calls are skipped), with values that go on from the last one
 *         (0, 1, 2, ...); then prints "marked T" (T: marks made so far)
 *   fork  forks a child that records nothing and sleeps 60 s, outliving a
 *         parent killed meanwhile; prints "child PID"
 * Every line is flushed at once. At end of input: "done T", exit status 0. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t (*register_fn)(const char *);
typedef int (*mark_fn)(uint64_t, uint64_t);

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: live_marks N\n");
        return 2;
    }
    long n = atol(argv[1]);
    register_fn reg = (register_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tracer_region_register");
    mark_fn mark = (mark_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tracer_mark");
    uint64_t live = reg && mark ? reg("live") : 0;
    uint64_t total = 0;
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (!strcmp(line, "mark\n")) {
            for (long i = 0; i < n; i++, total++)
                if (live && mark(live, total))
                    return 3;
            printf("marked %llu\n", (unsigned long long)total);
        } else if (!strcmp(line, "fork\n")) {
            pid_t pid = fork();
            if (pid == 0) {
                sleep(60);
                _exit(0);
            }
            if (pid < 0)
                return 4;
            printf("child %ld\n", (long)pid);
        } else {
            return 2;
        }
        fflush(stdout);
    }
    printf("done %llu\n", (unsigned long long)total);
    return 0;
}
