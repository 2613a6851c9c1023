/* offload_demo.c - a small OpenMP offload program to try tracer on.
 *
 * It does what real codes do: a persistent device copy of the data (target
 * data), repeated kernels on it, an update in the middle, and a one-off
 * kernel with its own maps. Build (the examples target does it):
 *   clang-19 -O2 -g -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu \
 *            -Wl,-rpath,/usr/lib/llvm-19/lib offload_demo.c -o offload_demo
 * Run under tracer:
 *   OMP_TARGET_OFFLOAD=MANDATORY LD_PRELOAD=libtracer.so ./offload_demo
 */
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 16)
#define STEPS 10

int main(void)
{
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    if (!x || !y)
        return 1;
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 0;
    }

    /* One copy in, STEPS kernels on device-resident data, one copy out. */
#pragma omp target data map(to : x[0 : N]) map(tofrom : y[0 : N])
    {
        for (int s = 0; s < STEPS; s++) {
#pragma omp target teams distribute parallel for
            for (int i = 0; i < N; i++)
                y[i] += 0.5 * x[i];
            if (s == STEPS / 2) {
                /* The host changes x half way; the device needs the new values. */
                for (int i = 0; i < N; i++)
                    x[i] = 2.0 * i;
#pragma omp target update to(x[0 : N])
            }
        }
    }

    double sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(to : y[0 : N])
    for (int i = 0; i < N; i++)
        sum += y[i];

    printf("checksum %.1f\n", sum);
    free(x);
    free(y);
    return 0;
}
