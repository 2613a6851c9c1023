/* Ground truth for test_advice.py: correct mappings that look close to
 * wasteful ones; the report must flag none of them.
 *   one target data around N kernels that change x
 *   update from(x) that the host reads and changes, then update to(x)
 *   a buffer reused with new contents each iteration (kernel between) */
#include <stdio.h>
#include <stdlib.h>

#define M 512

double x[M], y[M];

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5;
    double total = 0;
    for (int k = 0; k < M; k++)
        x[k] = y[k] = k;
#pragma omp target data map(tofrom : x)
    {
        for (int it = 0; it < n; it++) {
#pragma omp target
            for (int k = 0; k < M; k++)
                x[k] += 1;
#pragma omp target update from(x)
            for (int k = 0; k < M; k++) {
                total += x[k];
                x[k] *= 0.5;
            }
#pragma omp target update to(x)
        }
    }
#pragma omp target enter data map(alloc : y)
    for (int it = 0; it < n; it++) {
        for (int k = 0; k < M; k++)
            y[k] = it * k;
#pragma omp target update to(y)
#pragma omp target
        for (int k = 0; k < M; k++)
            y[k] += 1;
    }
#pragma omp target exit data map(from : y)
    printf("advice_clean: %d iterations, total %.0f, y[1] %.0f\n", n, total, y[1]);
    return 0;
}
