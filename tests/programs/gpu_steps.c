/* Ground truth for test_fakecuda.py: a GPU-style offload program, built for
 * sm_80, whose data ops the test compares with libomptarget's own log.
 *   gpu_steps [STEPS [KILL_AT]]
 * Each step s (0-based) on device s % omp_get_num_devices():
 *   enter data map(to: gvec)      alloc + to of the named global gvec
 *   target map(tofrom: buf[0:n])   alloc, to, kernel, from, delete of a heap
 *                                  array of n = 256 * (s + 1) doubles
 *   update from(gvec)              from of gvec
 *   exit data map(delete: gvec)    delete of gvec
 * then, when KILL_AT = s, the process kills itself with SIGKILL (a death no
 * handler sees: the test recovers the run's journal). Built with -DWITH_MPI
 * it is an MPI program; rank r's arrays are 64 * r doubles longer.
 * Kernels do not run on the CUDA test double, so values are never checked;
 * stdout is one line per step. */
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef WITH_MPI
#include <mpi.h>
#endif

double gvec[512];

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 4;
    int kill_at = argc > 2 ? atoi(argv[2]) : -1;
    int rank = 0;
#ifdef WITH_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    int devices = omp_get_num_devices();
    if (devices < 1) {
        printf("gpu_steps: no device\n");
        return 1;
    }
    for (int s = 0; s < steps; s++) {
        int dev = s % devices;
        int n = 256 * (s + 1) + 64 * rank;
        double *buf = malloc((size_t)n * sizeof *buf);
        if (!buf)
            return 99;
        for (int i = 0; i < n; i++)
            buf[i] = i;
#pragma omp target enter data map(to : gvec) device(dev)
#pragma omp target map(tofrom : buf[0:n]) device(dev) /* KERNEL:step */
        for (int i = 0; i < n; i++)
            buf[i] += gvec[i % 512];
#pragma omp target update from(gvec) device(dev)
#pragma omp target exit data map(delete : gvec) device(dev)
        free(buf);
        printf("gpu_steps: rank %d step %d device %d\n", rank, s, dev);
        fflush(stdout);
        if (s == kill_at)
            kill(getpid(), SIGKILL);
    }
#ifdef WITH_MPI
    MPI_Finalize();
#endif
    return 0;
}
