/* record_cost.c - what one event costs the recording thread.
 *
 * Times tracer_mark() in a tight loop on 1 thread and on 2 threads at once
 * (each thread's own ns per event), a tracer_region_begin/end pair on 1
 * thread, and the timestamp read alone (rdtsc, clock_gettime), and prints the
 * median of several runs. Runs are long (default 2M events per thread), so
 * chunks go round the pool many times: these are steady-state numbers, not
 * the first-touch cost of fresh buffer memory.
 *
 * Two pool settings, because the default one measures a different thing:
 *   default     TRACER_MAX_MEMORY=64M, TRACER_BUFFER_SIZE=4M, TRACER_ON_FULL
 *               =block (or whatever the environment says): a thread may hold
 *               4 MiB (65k events) before it waits for the journal writer,
 *               so a 2M-event run measures min(producer, consumer) - the
 *               sustained rate, throttled whenever zstd falls behind.
 *   --fit-run   the bench sets TRACER_MAX_MEMORY and TRACER_BUFFER_SIZE
 *               (setenv, before its first tracer call) so that one whole run
 *               of every thread fits in buffer memory; one unmeasured run
 *               first touches that memory, and before each run the bench
 *               waits until the journal writer is idle. This is the cost of
 *               the hot path alone (the writer compresses in the background,
 *               on the other core, while the thread records).
 * Before each run the bench waits until the process uses no CPU (the journal
 * writer has caught up), in both settings.
 *
 * Not a test: it prints numbers.
 * Usage: record_cost [--fit-run] [events-per-thread-per-run] [runs]
 * The benchmark's own trace (tens of millions of events) is not wanted: it
 * ends with _exit(), which skips writing the OTF2 archive; its journal stays
 * in $TRACER_OUTPUT (default ./tracer-record_cost-<date>-<pid>), and
 * `tracer recover` would turn it into a trace. bench/run_benchmarks.sh uses a
 * temporary directory and removes it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "tracer.h"

#define MAX_RUNS 100

static tracer_region_t mark, region;
static long events;

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

static double median(const double *v, int n)
{
    double s[MAX_RUNS];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* Waits (at most 10 s) until the journal writer has caught up: the process
 * used less than 1 ms of CPU in the last 20 ms while this thread slept. */
static void wait_writer_idle(void)
{
    for (int i = 0; i < 500; i++) {
        double c0 = cpu_s();
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, 0);
        if (cpu_s() - c0 < 0.001)
            return;
    }
}

/* ns per event of one tight loop of tracer_mark() on the calling thread. */
static double mark_loop(void)
{
    double t0 = now_ns();
    for (long i = 0; i < events; i++)
        tracer_mark(mark, (uint64_t)i);
    return (now_ns() - t0) / events;
}

/* --- two threads: workers started once, released together per run ------- */

static pthread_barrier_t go, done;
static double worker_ns[2];
static int quit;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&go);
        if (quit)
            return 0;
        worker_ns[id] = mark_loop();
        pthread_barrier_wait(&done);
    }
}

static void two_threads(double out[2])
{
    pthread_barrier_wait(&go);
    pthread_barrier_wait(&done);
    out[0] = worker_ns[0];
    out[1] = worker_ns[1];
}

int main(int argc, char **argv)
{
    int fit = 0, a = 1;
    if (a < argc && strcmp(argv[a], "--fit-run") == 0) {
        fit = 1;
        a++;
    }
    events = a < argc ? atol(argv[a++]) : 2000000;
    int runs = a < argc ? atoi(argv[a++]) : 5;
    if (events <= 0 || runs <= 0 || runs > MAX_RUNS || a < argc) {
        fprintf(stderr, "usage: record_cost [--fit-run] [events-per-thread-per-run] [runs<=%d]\n", MAX_RUNS);
        return 2;
    }
    char pool[32], per_thread[32];
    if (fit) {
        /* One run of one thread, plus a chunk's slack for each started and
         * each partly filled chunk; the pool holds two threads' runs. */
        long long chunks = events / 1023 + 4;
        snprintf(per_thread, sizeof per_thread, "%lldk", chunks * 64);
        snprintf(pool, sizeof pool, "%lldk", 2 * chunks * 64 + 1024);
        setenv("TRACER_BUFFER_SIZE", per_thread, 1);
        setenv("TRACER_MAX_MEMORY", pool, 1);
    }
    /* Tracing starts here: the configuration is read now, so the setenv()
     * above counts. */
    mark = tracer_region_register("bench mark");
    region = tracer_region_register("bench region");
    if (tracer_mark(mark, 0) != 0) {
        fprintf(stderr, "record_cost: tracing is disabled; nothing to measure\n");
        return 1;
    }
    const char *mm = getenv("TRACER_MAX_MEMORY"), *bs = getenv("TRACER_BUFFER_SIZE"),
               *of = getenv("TRACER_ON_FULL");
    printf("pool: TRACER_MAX_MEMORY=%s TRACER_BUFFER_SIZE=%s TRACER_ON_FULL=%s (%s)\n", mm ? mm : "64M (default)",
           bs ? bs : "4M (default)", of ? of : "block (default)",
           fit ? "--fit-run: a whole run fits in buffer memory" : "sustained: throttled by the journal writer");
    printf("%ld events per thread per run, %d runs, median ns per event\n", events, runs);

    pthread_t w[2];
    pthread_barrier_init(&go, 0, 3);
    pthread_barrier_init(&done, 0, 3);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&w[i], 0, worker, (void *)(intptr_t)i)) {
            fprintf(stderr, "record_cost: cannot start a thread\n");
            return 1;
        }

    /* Unmeasured first run of every phase: registers the threads and, with
     * --fit-run, touches all the buffer memory a run needs. */
    double warm[2];
    wait_writer_idle();
    mark_loop();
    wait_writer_idle();
    two_threads(warm);

    double t_one[MAX_RUNS], t_two[2][MAX_RUNS], t_two_wall[MAX_RUNS], t_pair[MAX_RUNS], t_tsc[MAX_RUNS],
        t_mono[MAX_RUNS];
    long flt_one = 0, flt_two = 0, flt_pair = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < runs; r++) {
        wait_writer_idle();
        long f0 = minflt();
        t_one[r] = mark_loop();
        flt_one += minflt() - f0;

        wait_writer_idle();
        f0 = minflt();
        double t0 = now_ns(), two[2];
        two_threads(two);
        t_two_wall[r] = (now_ns() - t0) / (2.0 * events);
        t_two[0][r] = two[0];
        t_two[1][r] = two[1];
        flt_two += minflt() - f0;

        wait_writer_idle();
        f0 = minflt();
        t0 = now_ns();
        for (long i = 0; i < events / 2; i++) {
            tracer_region_begin(region);
            tracer_region_end(region);
        }
        t_pair[r] = (now_ns() - t0) / (events / 2 * 2);
        flt_pair += minflt() - f0;

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
    quit = 1;
    pthread_barrier_wait(&go);
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], 0);

    /* Page faults of the whole process (the journal writer's too) per 1000
     * events recorded. */
    double per = (double)runs * events / 1000;
    printf("  tracer_mark, 1 thread                   %7.2f ns/event   %6.2f minor faults/1000 events\n",
           median(t_one, runs), flt_one / per);
    printf("  tracer_mark, 2 threads: thread 1        %7.2f ns/event\n", median(t_two[0], runs));
    printf("                          thread 2        %7.2f ns/event\n", median(t_two[1], runs));
    printf("                          together        %7.2f ns/event   %6.2f minor faults/1000 events\n",
           median(t_two_wall, runs), flt_two / (2 * per));
    printf("  tracer_region_begin+end, 1 thread       %7.2f ns/record  %6.2f minor faults/1000 records\n",
           median(t_pair, runs), flt_pair / per);
    printf("  clock read alone (rdtsc)                %7.2f ns\n", median(t_tsc, runs));
    printf("  clock read alone (clock_gettime)        %7.2f ns\n", median(t_mono, runs));
    printf("  (2 threads \"together\": wall time / events of both, i.e. 1 / combined rate)\n");
    fflush(stdout);
    _exit(0); /* skips the OTF2 conversion of this process's own trace */
}
