/* target_dense.c - target-dense offload code for bench/target_overhead.py
 * (issue 19): N target regions (argv[1], default 100000), each mapping one
 * int tofrom, after 100 warm-up regions. Prints the loop's time per region
 * as measured around the loop (the end-of-run write is not in it) and a
 * check value that must not change with tracing. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int x = 0;
    for (int i = 0; i < 100; i++) {
#pragma omp target map(tofrom: x)
        x += 1;
    }
    double t0 = omp_get_wtime();
    for (long i = 0; i < n; i++) {
#pragma omp target map(tofrom: x)
        x += 1;
    }
    double t1 = omp_get_wtime();
    printf("regions=%ld loop_ns_per_region=%.1f check=%d\n", n, (t1 - t0) * 1e9 / (double)n, x);
    return 0;
}
