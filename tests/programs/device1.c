/* Ground truth for test_device1.py: one target region on device 1 and one on
 * device 0, each map(tofrom: x[0:M]) -> per device 1 target, 1 kernel on that
 * device's stream, 1 transfer each way (M*8 bytes), 1 alloc, 1 delete. */
#include <omp.h>
#include <stdio.h>

#define M 200

static double x[M];

int main(void)
{
    if (omp_get_num_devices() < 2) {
        printf("device1: need >= 2 devices, have %d\n", omp_get_num_devices());
        return 97;
    }
    for (int i = 0; i < M; i++)
        x[i] = i;
#pragma omp target device(1) map(tofrom : x[0:M]) /* KERNEL:dev1 */
    for (int i = 0; i < M; i++)
        x[i] += 10;
#pragma omp target device(0) map(tofrom : x[0:M]) /* KERNEL:dev0 */
    for (int i = 0; i < M; i++)
        x[i] *= 2;
    double s = 0;
    for (int i = 0; i < M; i++)
        s += x[i];
    printf("device1: sum=%.0f\n", s);
    return 0;
}
