/* A large synthetic trace for test_convert.py and bench/convert_throughput.sh,
 * made through the public API (include/tracer.h) only.
 *
 * usage: many_events THREADS ITERATIONS [MARK_EVERY]
 *
 * Region names "solve", "exchange", "update" (R), "inner", "thread"; mark
 * name "tick". Each of THREADS pthreads (after a barrier, so that all are
 * distinct locations) does:
 *   begin(thread)
 *   for i < ITERATIONS:
 *     begin(R[i % 3])
 *     if i % 4 == 0: begin(inner); end(inner)
 *     end(R[i % 3])
 *     if i % MARK_EVERY == 0: mark(tick, t * 10^12 + i)   (MARK_EVERY default 100)
 *   end(thread)
 * Every region and mark is an OTF2 Enter + Leave, so per thread
 *   regions = 1 + ITERATIONS + ceil(ITERATIONS / 4), marks = ceil(ITERATIONS / MARK_EVERY)
 * and the events the program makes are 2 * (regions + marks) per thread.
 *
 * stdout, one line: "many_events: threads T iterations N regions R marks M
 * events E failed F" (R, M, E summed over the threads; F: calls that
 * returned -1 or a register that returned 0; exit status 1 when F > 0).
 * 2 threads x 2,000,000 iterations make 10,080,004 events. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracer.h"

static tracer_region_t reg_r[3], reg_inner, reg_thread, reg_tick;
static long iterations, mark_every;
static pthread_barrier_t barrier;

static void *worker(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg;
    uint64_t bad = 0;
    pthread_barrier_wait(&barrier);
    bad += tracer_region_begin(reg_thread) != 0;
    for (long i = 0; i < iterations; i++) {
        tracer_region_t r = reg_r[i % 3];
        bad += tracer_region_begin(r) != 0;
        if (i % 4 == 0) {
            bad += tracer_region_begin(reg_inner) != 0;
            bad += tracer_region_end(reg_inner) != 0;
        }
        bad += tracer_region_end(r) != 0;
        if (i % mark_every == 0)
            bad += tracer_mark(reg_tick, t * 1000000000000ull + (uint64_t)i) != 0;
    }
    bad += tracer_region_end(reg_thread) != 0;
    return (void *)(uintptr_t)bad;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: many_events THREADS ITERATIONS [MARK_EVERY]\n");
        return 2;
    }
    int k = atoi(argv[1]);
    iterations = atol(argv[2]);
    mark_every = argc > 3 ? atol(argv[3]) : 100;
    if (k < 1 || k > 64 || iterations < 0 || mark_every < 1) {
        fprintf(stderr, "many_events: bad THREADS, ITERATIONS or MARK_EVERY\n");
        return 2;
    }
    static const char *const names[3] = {"solve", "exchange", "update"};
    uint64_t failed = 0;
    for (int j = 0; j < 3; j++)
        failed += (reg_r[j] = tracer_region_register(names[j])) == 0;
    failed += (reg_inner = tracer_region_register("inner")) == 0;
    failed += (reg_thread = tracer_region_register("thread")) == 0;
    failed += (reg_tick = tracer_region_register("tick")) == 0;

    pthread_t th[64];
    pthread_barrier_init(&barrier, NULL, (unsigned)k);
    for (int t = 0; t < k; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0) {
            printf("many_events: pthread_create failed\n");
            return 1;
        }
    for (int t = 0; t < k; t++) {
        void *res;
        pthread_join(th[t], &res);
        failed += (uint64_t)(uintptr_t)res;
    }
    pthread_barrier_destroy(&barrier);

    uint64_t n = (uint64_t)iterations;
    uint64_t regions = (uint64_t)k * (1 + n + (n + 3) / 4);
    uint64_t marks = (uint64_t)k * ((n + (uint64_t)mark_every - 1) / (uint64_t)mark_every);
    printf("many_events: threads %d iterations %llu regions %llu marks %llu events %llu failed %llu\n", k,
           (unsigned long long)n, (unsigned long long)regions, (unsigned long long)marks,
           (unsigned long long)(2 * (regions + marks)), (unsigned long long)failed);
    return failed ? 1 : 0;
}
