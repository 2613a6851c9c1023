/* throughput.c - sustained recording rate, and the memory it takes.
 *
 * THREADS threads each call tracer_mark() EVENTS times as fast as they can,
 * with the values 0, 1, 2, ... (bench/trace_count checks them in the trace:
 * in block mode nothing may be missing). Prints one line of key=value pairs
 * for bench/run_benchmarks.sh:
 *   threads, events        what was emitted (events = all threads together)
 *   seconds, events_per_s  from the first thread's start to the last one's end
 *   vmhwm_kb, vmrss_kb     peak and current resident memory when the threads
 *                          are done (before the OTF2 archive is written at exit)
 *   minflt                 minor page faults during the flood
 * Configure the tracer through the environment (TRACER_MAX_MEMORY,
 * TRACER_ON_FULL, TRACER_ENABLE=0 for a baseline without tracing, ...).
 * Not a test: it prints numbers.
 * Usage: throughput [threads] [events-per-thread] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tracer.h"

static tracer_region_t mark;
static long per_thread;
static pthread_barrier_t start;
static double t_begin[64], t_end[64];
static long failed[64];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *flood(void *arg)
{
    long id = (long)(intptr_t)arg;
    long bad = 0;
    pthread_barrier_wait(&start);
    t_begin[id] = now_s();
    for (long i = 0; i < per_thread; i++)
        bad += tracer_mark(mark, (uint64_t)i) != 0;
    t_end[id] = now_s();
    failed[id] = bad;
    return 0;
}

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':')
            kb = atol(line + n + 1);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    per_thread = argc > 2 ? atol(argv[2]) : 10000000;
    if (threads < 1 || threads > 64 || per_thread < 1) {
        fprintf(stderr, "usage: throughput [threads<=64] [events-per-thread]\n");
        return 2;
    }
    mark = tracer_region_register("bench mark");
    pthread_t tid[64];
    pthread_barrier_init(&start, 0, (unsigned)threads);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    for (long i = 0; i < threads; i++)
        if (pthread_create(&tid[i], 0, flood, (void *)(intptr_t)i)) {
            fprintf(stderr, "throughput: cannot start thread %ld\n", i);
            return 1;
        }
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], 0);
    getrusage(RUSAGE_SELF, &ru1);
    double b = t_begin[0], e = t_end[0];
    long bad = 0;
    for (int i = 0; i < threads; i++) {
        b = t_begin[i] < b ? t_begin[i] : b;
        e = t_end[i] > e ? t_end[i] : e;
        bad += failed[i];
    }
    long total = per_thread * threads;
    printf("threads=%d events=%ld seconds=%.3f events_per_s=%.0f refused=%ld vmhwm_kb=%ld vmrss_kb=%ld "
           "minflt=%ld\n",
           threads, total, e - b, total / (e - b), bad, status_kb("VmHWM"), status_kb("VmRSS"),
           ru1.ru_minflt - ru0.ru_minflt);
    fflush(stdout);
    return 0;
}
