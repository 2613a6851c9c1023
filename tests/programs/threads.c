/* Ground truth for test_threads.py: 2 host threads, each launches T target
 * regions on device 0 with map(tofrom: buf[t][0:M]) -> per thread T targets,
 * T kernels, T transfers to and T from (M*8 bytes each), T allocs, T deletes. */
#include <omp.h>
#include <stdio.h>

#define NT 2
#define T 20
#define M 128

static double buf[NT][M];

int main(void)
{
    int nthreads = 0;
#pragma omp parallel num_threads(NT)
    {
        int t = omp_get_thread_num();
#pragma omp single
        nthreads = omp_get_num_threads();
        /* implicit barrier: both threads are alive before offloading */
        double *x = buf[t];
        for (int k = 0; k < T; k++) {
#pragma omp target map(tofrom : x[0:M]) /* KERNEL:threads */
            for (int i = 0; i < M; i++)
                x[i] += t + 1;
        }
    }
    if (nthreads != NT) {
        printf("threads: got %d threads, wanted %d\n", nthreads, NT);
        return 98;
    }
    for (int t = 0; t < NT; t++) {
        double s = 0;
        for (int i = 0; i < M; i++)
            s += buf[t][i];
        printf("threads: thread %d sum=%.0f\n", t, s);
    }
    return 0;
}
