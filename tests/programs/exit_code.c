/* Ground truth for test_exit_code.py: one target region (alloc, to, kernel,
 * from, delete of M doubles), then main returns 3. */
#include <stdio.h>

#define M 100

int main(void)
{
    double x[M];
    for (int i = 0; i < M; i++)
        x[i] = i;
#pragma omp target map(tofrom : x[0:M]) /* KERNEL:exit */
    for (int i = 0; i < M; i++)
        x[i] *= 2;
    printf("exit_code: x[%d]=%.0f, returning 3\n", M - 1, x[M - 1]);
    fflush(stdout);
    return 3;
}
