/* Ground truth for test_pool_pressure.py: K OpenMP threads each launch one
 * target region per round (map(tofrom: x[0:M]) on the default device) and
 * then record a mark (value t*1000000000 + round), R rounds, with a barrier
 * after each round: between rounds a thread sits idle on a partly filled
 * buffer chunk while the others record.
 * tracer_mark comes from the preloaded libtracer (weak, tracer.h's advice).
 * usage: pool_target K R
 * stdout: one line per thread "thread t: regions X marks X refused Y"
 * (Y: tracer_mark calls that returned -1, lost in drop mode), then
 * "threads K". */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracer.h"

#pragma weak tracer_region_register
#pragma weak tracer_mark

#define MAXT 256
#define M 16

static double buf[MAXT][M];
static long regions[MAXT], refused[MAXT];

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: pool_target K R\n");
        return 2;
    }
    int k = atoi(argv[1]);
    long rounds = atol(argv[2]);
    if (k < 1 || k > MAXT || rounds < 1) {
        fprintf(stderr, "pool_target: bad K or R\n");
        return 2;
    }
    if (!tracer_region_register || !tracer_mark) {
        printf("pool_target: run it with libtracer.so preloaded\n");
        return 1;
    }
    tracer_region_t mark = tracer_region_register("pool round");
    int nthreads = 0;
#pragma omp parallel num_threads(k)
    {
        int t = omp_get_thread_num();
#pragma omp single
        nthreads = omp_get_num_threads();
        double *x = buf[t];
        for (long r = 0; r < rounds; r++) {
#pragma omp target map(tofrom : x[0:M])
            for (int i = 0; i < M; i++)
                x[i] += 1;
            regions[t]++;
            if (tracer_mark(mark, (uint64_t)t * 1000000000ull + (uint64_t)r) != 0)
                refused[t]++;
#pragma omp barrier
        }
    }
    for (int t = 0; t < nthreads; t++)
        printf("thread %d: regions %ld marks %ld refused %ld\n", t, regions[t], rounds, refused[t]);
    printf("threads %d\n", nthreads);
    return 0;
}
