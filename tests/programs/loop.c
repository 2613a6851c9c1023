/* Ground truth for test_loop.py: K target regions on device 0, each
 * map(tofrom: x[0:M]) -> per iteration alloc (M*8), to (M*8), kernel,
 * from (M*8), delete. */
#include <stdio.h>

#define K 50
#define M 512

static double x[M];

int main(void)
{
    for (int i = 0; i < M; i++)
        x[i] = i;
    for (int k = 0; k < K; k++) {
#pragma omp target map(tofrom : x[0:M]) /* KERNEL:loop */
        for (int i = 0; i < M; i++)
            x[i] += 1.0;
    }
    double s = 0;
    for (int i = 0; i < M; i++)
        s += x[i];
    printf("loop: K=%d M=%d sum=%.0f x[0]=%.0f\n", K, M, s, x[0]);
    return 0;
}
