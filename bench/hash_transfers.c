/* hash_transfers.c - transfers of one size for bench/hash_cost.py
 * (issue 37): `target update to` and `update from` of BYTES (argv[1]),
 * REPS times each (argv[2]), on a buffer mapped once. Prints the time per
 * transfer of each direction (omp_get_wtime around each loop). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 4096;
    long reps = argc > 2 ? atol(argv[2]) : 100;
    char *buf = malloc(n);
    if (!buf)
        return 99;
    memset(buf, 1, n);
#pragma omp target enter data map(to : buf[0:n])
    double t0 = omp_get_wtime();
    for (long i = 0; i < reps; i++) {
        buf[i % n] = (char)i;
#pragma omp target update to(buf[0:n])
    }
    double t1 = omp_get_wtime();
    for (long i = 0; i < reps; i++) {
#pragma omp target update from(buf[0:n])
    }
    double t2 = omp_get_wtime();
#pragma omp target exit data map(delete : buf[0:n])
    printf("bytes=%zu to_ns=%.1f from_ns=%.1f\n", n, (t1 - t0) * 1e9 / (double)reps, (t2 - t1) * 1e9 / (double)reps);
    free(buf);
    return 0;
}
