/* Ground truth for test_disk_full.py and test_trace_safety.py: a program
 * that records marks and has output of its own.
 *
 * usage: io_marks N [wait]
 *
 * Under tracer (its public API found with dlsym, so that the untraced run
 * needs no libtracer) N marks "work" with value i = 0..N-1. With "wait", after
 * the first N/2 it prints "waiting", flushes, and reads one line from stdin
 * before the rest (the test does something meanwhile).
 *
 * stdout: "io_marks: line k" for k = 0..999 (buffered: a process that dies
 * at exit loses them), then "io_marks: N marks"; exit status 5. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t (*register_fn)(const char *);
typedef int (*mark_fn)(uint64_t, uint64_t);

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "wait"))) {
        fprintf(stderr, "usage: io_marks N [wait]\n");
        return 2;
    }
    long n = atol(argv[1]);
    register_fn reg = (register_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tracer_region_register");
    mark_fn mark = (mark_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tracer_mark");
    uint64_t work = reg && mark ? reg("work") : 0;
    for (int k = 0; k < 1000; k++)
        printf("io_marks: line %d\n", k);
    for (long i = 0; i < n; i++) {
        if (argc == 3 && i == n / 2) {
            printf("waiting\n");
            fflush(stdout);
            char line[64];
            if (!fgets(line, sizeof line, stdin))
                return 2;
        }
        if (work)
            mark(work, (uint64_t)i);
    }
    printf("io_marks: %ld marks\n", n);
    return 5;
}
