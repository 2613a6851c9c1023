/* Ground truth for test_flood.py: K pthreads each call tracer_mark(flood, v)
 * N times with v = t*1000000000 + i (t = 0..K-1, i = 0..N-1), far more than
 * a small TRACER_MAX_MEMORY holds, as fast as they can.
 * usage: flood K N
 * stdout: one line per thread "thread t: emitted N refused R" (R: calls
 * that returned -1, i.e. events lost in drop mode), then "maxrss_kb=X"
 * (VmHWM of this process before exit, i.e. while recording; the trace
 * is written after this). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracer.h"

static tracer_region_t flood;
static long n_per_thread;
static pthread_barrier_t barrier;

struct result {
    uint64_t refused;
};

static void *worker(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg;
    uint64_t refused = 0;
    pthread_barrier_wait(&barrier);
    for (uint64_t i = 0; i < (uint64_t)n_per_thread; i++)
        if (tracer_mark(flood, t * 1000000000ull + i) != 0)
            refused++;
    return (void *)(uintptr_t)refused;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: flood K N\n");
        return 2;
    }
    int k = atoi(argv[1]);
    n_per_thread = atol(argv[2]);
    if (k < 1 || k > 64 || n_per_thread < 1) {
        fprintf(stderr, "flood: bad K or N\n");
        return 2;
    }
    flood = tracer_region_register("flood");
    if (!flood) {
        printf("flood: register failed\n");
        return 1;
    }
    pthread_t th[64];
    pthread_barrier_init(&barrier, NULL, (unsigned)k);
    for (int t = 0; t < k; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0) {
            printf("flood: pthread_create failed\n");
            return 1;
        }
    for (int t = 0; t < k; t++) {
        void *res;
        pthread_join(th[t], &res);
        printf("thread %d: emitted %ld refused %llu\n", t, n_per_thread,
               (unsigned long long)(uintptr_t)res);
    }
    pthread_barrier_destroy(&barrier);
    /* VmHWM: the peak of this image only (ru_maxrss keeps the parent's
     * peak across fork + exec). */
    long hwm = -1;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &hwm) == 1)
            break;
    if (f)
        fclose(f);
    printf("maxrss_kb=%ld\n", hwm);
    return 0;
}
