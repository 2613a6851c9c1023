/* omp_states_overhead.c - the cost of host OpenMP state tracing (issue 9) on
 * fine-grained parallelism. Not a test: bench/omp_states_overhead.sh runs it
 * untraced, with an OMPT tool whose callbacks do nothing
 * (bench/omp_states_noop_tool.c), and with libtracer.so preloaded with host
 * states off and on, and prints the table.
 *
 *   omp_states_overhead [REGIONS (100000)] [ITERS (256)] [PATTERN]
 *
 * Two patterns, each timed with omp_get_wtime after a warm-up region (which
 * starts the team, and the tool):
 *   parallel_for     REGIONS times `#pragma omp parallel for` over ITERS
 *                    iterations of a few flops: fork, an implicit task per
 *                    thread, a loop, its barrier and the join, per region;
 *   for_in_parallel  one parallel region with REGIONS `#pragma omp for`
 *                    loops of ITERS iterations: a loop and its implicit
 *                    barrier per loop, no fork.
 * PATTERN (parallel_for or for_in_parallel) runs that one alone; default both.
 * Output, one line per pattern:
 *   omp_states_overhead: pattern=P threads=T regions=N iters=I seconds=S ns_per_region=X check=C
 * (check: the sum of the array, the same whatever the tracing). Built with
 * LLVM's -fopenmp (libomp). The team size is OMP_NUM_THREADS. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *a;

static void parallel_for(long regions, long iters)
{
    for (long r = 0; r < regions; r++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < iters; i++)
            a[i] = a[i] * 0.5 + 1.0;
    }
}

static void for_in_parallel(long regions, long iters)
{
#pragma omp parallel
    for (long r = 0; r < regions; r++) {
#pragma omp for schedule(static)
        for (long i = 0; i < iters; i++)
            a[i] = a[i] * 0.5 + 1.0;
    }
}

static double checksum(long iters)
{
    double s = 0;
    for (long i = 0; i < iters; i++)
        s += a[i];
    return s;
}

int main(int argc, char **argv)
{
    long regions = argc > 1 ? atol(argv[1]) : 100000;
    long iters = argc > 2 ? atol(argv[2]) : 256;
    const char *only = argc > 3 ? argv[3] : 0;
    if (regions < 1 || iters < 1 ||
        (only && strcmp(only, "parallel_for") && strcmp(only, "for_in_parallel"))) {
        fprintf(stderr, "usage: omp_states_overhead [REGIONS >= 1] [ITERS >= 1] "
                        "[parallel_for|for_in_parallel]\n");
        return 2;
    }
    a = calloc((size_t)iters, sizeof *a);
    if (!a)
        return 1;
    int threads = 0;
#pragma omp parallel
    {
#pragma omp single
        threads = omp_get_num_threads();
    }
    static const struct {
        const char *name;
        void (*fn)(long, long);
    } patterns[] = {{"parallel_for", parallel_for}, {"for_in_parallel", for_in_parallel}};
    for (int p = 0; p < 2; p++) {
        if (only && strcmp(only, patterns[p].name))
            continue;
        for (long i = 0; i < iters; i++)
            a[i] = 0.0;
        patterns[p].fn(regions / 100 + 1, iters); /* warm-up */
        for (long i = 0; i < iters; i++)
            a[i] = 0.0;
        double t0 = omp_get_wtime();
        patterns[p].fn(regions, iters);
        double s = omp_get_wtime() - t0;
        printf("omp_states_overhead: pattern=%s threads=%d regions=%ld iters=%ld seconds=%.6f "
               "ns_per_region=%.1f check=%.6f\n",
               patterns[p].name, threads, regions, iters, s, s * 1e9 / (double)regions, checksum(iters));
    }
    free(a);
    return 0;
}
