/* Ground truth for test_pool_pressure.py: K pthreads record marks in R
 * rounds of N marks each (value t*1000000000 + i, i counting from 0 over all
 * rounds), with a barrier between rounds, so that between rounds each thread
 * sits idle on a partly filled buffer chunk while the others record.
 * usage: pool_marks K R N
 * stdout: one line per thread "thread t: recorded X refused Y" (X calls of
 * tracer_mark, Y of them returned -1: lost in drop mode). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracer.h"

#define MAXT 256

static tracer_region_t mark;
static long rounds, per_round;
static pthread_barrier_t barrier;
static uint64_t refused[MAXT];

static void *worker(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg, i = 0;
    for (long r = 0; r < rounds; r++) {
        for (long k = 0; k < per_round; k++, i++)
            if (tracer_mark(mark, t * 1000000000ull + i) != 0)
                refused[t]++;
        pthread_barrier_wait(&barrier);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: pool_marks K R N\n");
        return 2;
    }
    int k = atoi(argv[1]);
    rounds = atol(argv[2]);
    per_round = atol(argv[3]);
    if (k < 1 || k > MAXT || rounds < 1 || per_round < 1) {
        fprintf(stderr, "pool_marks: bad K, R or N\n");
        return 2;
    }
    mark = tracer_region_register("pool mark");
    if (!mark) {
        printf("pool_marks: register failed\n");
        return 1;
    }
    pthread_t th[MAXT];
    pthread_barrier_init(&barrier, NULL, (unsigned)k);
    for (int t = 0; t < k; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0) {
            printf("pool_marks: pthread_create failed\n");
            return 1;
        }
    for (int t = 0; t < k; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < k; t++)
        printf("thread %d: recorded %ld refused %llu\n", t, rounds * per_round, (unsigned long long)refused[t]);
    pthread_barrier_destroy(&barrier);
    return 0;
}
