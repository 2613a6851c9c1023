/* record_cost.c - what one event costs the recording thread.
 *
 * Times tracer_mark() (one record) and a tracer_region_begin/end pair (two
 * records) in a tight loop, beside the cost of the timestamp read alone, and
 * prints the median ns over several runs. Not a test: it prints numbers.
 * Usage: record_cost [events-per-run] [runs]
 * The trace of the benchmark itself is written at exit to $TRACER_OUTPUT
 * (a fresh temporary directory when unset, removed afterwards). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <x86intrin.h>

#include "tracer.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    long events = argc > 1 ? atol(argv[1]) : 100000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    if (events <= 0 || runs <= 0 || runs > 100) {
        fprintf(stderr, "usage: record_cost [events-per-run] [runs<=100]\n");
        return 2;
    }
    tracer_region_t mark = tracer_region_register("bench mark");
    tracer_region_t region = tracer_region_register("bench region");
    if (!mark || !region) {
        fprintf(stderr, "record_cost: tracing is disabled; nothing to measure\n");
        return 1;
    }
    double t_mark[100], t_pair[100], t_tsc[100], t_mono[100];
    volatile uint64_t sink = 0;
    /* Warm-up: the first chunk of each thread is the slow path. */
    for (long i = 0; i < 10000; i++)
        tracer_mark(mark, (uint64_t)i);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (long i = 0; i < events; i++)
            tracer_mark(mark, (uint64_t)i);
        t_mark[r] = (now_ns() - t0) / events;

        t0 = now_ns();
        for (long i = 0; i < events / 2; i++) {
            tracer_region_begin(region);
            tracer_region_end(region);
        }
        t_pair[r] = (now_ns() - t0) / (events / 2 * 2);

        t0 = now_ns();
        for (long i = 0; i < events; i++)
            sink += __rdtsc();
        t_tsc[r] = (now_ns() - t0) / events;

        t0 = now_ns();
        for (long i = 0; i < events; i++) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            sink += (uint64_t)ts.tv_nsec;
        }
        t_mono[r] = (now_ns() - t0) / events;
    }
    getrusage(RUSAGE_SELF, &ru1);
    /* Until the journal recycles chunks, every 64 events touch a fresh 4 KiB
     * page; in a VM that first touch can dominate, so show it. */
    double faults = (double)(ru1.ru_minflt - ru0.ru_minflt) / ((double)runs * events * 2) * 1000;
    printf("events per run: %ld, runs: %d (median ns per event)\n", events, runs);
    printf("  tracer_mark                     %6.2f ns/event\n", median(t_mark, runs));
    printf("  tracer_region_begin/end         %6.2f ns/event\n", median(t_pair, runs));
    printf("  clock read alone (rdtsc)        %6.2f ns\n", median(t_tsc, runs));
    printf("  clock read alone (clock_gettime)%6.2f ns\n", median(t_mono, runs));
    printf("  minor page faults per 1000 events %.1f (first touch of buffer memory)\n", faults);
    return 0;
}
