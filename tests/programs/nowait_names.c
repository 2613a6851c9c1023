/* Ground truth for test_nowait_names.py (issue 35, item 2): constructs
 * with nowait, which LLVM 19 reports under the plain kinds and calls from
 * task entry functions of Clang's own (.omp_task_entry..<n>).
 *   ROUNDS x  target nowait in main              (KERNEL:nowait)
 *   ROUNDS x  target update nowait in refresh()  (UPDATE:refresh)
 *   1 x       target depend, no nowait, in main  (KERNEL:depend)
 * Prints the result; a wrong one shows. */
#include <stdio.h>

#define ROUNDS 3
#define N 256

__attribute__((noinline)) static void refresh(double *a)
{
#pragma omp target update from(a[0:N]) nowait /* UPDATE:refresh */
#pragma omp taskwait
}

int main(void)
{
    static double a[N];
#pragma omp target enter data map(to : a)
    for (int r = 0; r < ROUNDS; r++) {
#pragma omp target nowait /* KERNEL:nowait */
        for (int i = 0; i < N; i++)
            a[i] += 1;
#pragma omp taskwait
        refresh(a);
    }
#pragma omp target depend(inout : a) /* KERNEL:depend */
    a[0] += 1;
#pragma omp target exit data map(from : a)
    printf("nowait_names: %g %g\n", a[0], a[N - 1]);
    return 0;
}
