/* Ground truth for test_short_threads.py: N pthreads, started in waves of
 * L, each wave joined before the next; each thread records K marks with
 * values t*1000000 + i (i = 0..K-1) and ends. The threads of a wave are
 * alive together: each waits for the others after its first mark.
 * usage: short_threads N L K
 * stdout: "short_threads: N threads, K marks each, refused R" (R calls of
 * tracer_mark that returned -1). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracer.h"

static tracer_region_t mark;
static long marks;
static _Atomic long refused;
static pthread_barrier_t wave_met;

static void *worker(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg;
    for (long i = 0; i < marks; i++) {
        if (tracer_mark(mark, t * 1000000ull + (uint64_t)i) != 0)
            refused++;
        if (i == 0)
            pthread_barrier_wait(&wave_met);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: short_threads N L K\n");
        return 2;
    }
    long n = atol(argv[1]), live = atol(argv[2]);
    marks = atol(argv[3]);
    if (n < 1 || n > 999999 || live < 1 || live > 1024 || marks < 1 || marks > 999999) {
        fprintf(stderr, "short_threads: bad N, L or K\n");
        return 2;
    }
    mark = tracer_region_register("short mark");
    if (!mark) {
        printf("short_threads: register failed\n");
        return 1;
    }
    pthread_t th[1024];
    for (long t = 0; t < n; t += live) {
        long wave = n - t < live ? n - t : live;
        pthread_barrier_init(&wave_met, 0, (unsigned)wave);
        for (long w = 0; w < wave; w++)
            if (pthread_create(&th[w], 0, worker, (void *)(uintptr_t)(t + w)) != 0) {
                printf("short_threads: pthread_create failed\n");
                return 1;
            }
        for (long w = 0; w < wave; w++)
            pthread_join(th[w], 0);
        pthread_barrier_destroy(&wave_met);
    }
    printf("short_threads: %ld threads, %ld marks each, refused %ld\n", n, marks, (long)refused);
    return 0;
}
