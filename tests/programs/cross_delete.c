/* Ground truth for test_cross_delete.py: device memory allocated on one
 * host thread and freed on another, in a fixed order (barriers between the
 * steps), so that a delete's size and variable can only come from an alloc
 * of the other thread, and a freed device address may be taken again there.
 *   step 1: thread 0 maps g0 and g1 (alloc); step 2: thread 1 deletes both;
 *   step 3: thread 1 maps g2;                 step 4: thread 0 deletes it;
 *   step 5: thread 0 maps and deletes g3;     step 6: thread 1 maps and deletes g0.
 * stdout: "cross_delete: done". */
#include <omp.h>
#include <stdio.h>

double g0[1000], g1[2000], g2[3000], g3[4000];

int main(void)
{
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        if (t == 0) {
#pragma omp target enter data map(alloc : g0, g1)
        }
#pragma omp barrier
        if (t == 1) {
#pragma omp target exit data map(delete : g0, g1)
        }
#pragma omp barrier
        if (t == 1) {
#pragma omp target enter data map(alloc : g2)
        }
#pragma omp barrier
        if (t == 0) {
#pragma omp target exit data map(delete : g2)
        }
#pragma omp barrier
        if (t == 0) {
#pragma omp target enter data map(alloc : g3)
#pragma omp target exit data map(delete : g3)
        }
#pragma omp barrier
        if (t == 1) {
#pragma omp target enter data map(alloc : g0)
#pragma omp target exit data map(delete : g0)
        }
    }
    printf("cross_delete: done\n");
    return 0;
}
