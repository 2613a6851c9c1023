/* Ground truth for test_crash.py (offload part): one complete target region
 * (KERNEL:ok), then, when given an argument, a target region whose kernel,
 * run by the host device, writes through a null pointer: the process dies of
 * SIGSEGV inside the open target region and kernel. Prints nothing. */
#define M 64

int main(int argc, char **argv)
{
    (void)argv;
    double x[M];
    int crash = argc > 1; /* not known at compile time */
    int seen = -1;
    for (int i = 0; i < M; i++)
        x[i] = i;
#pragma omp target map(tofrom : x[0:M]) /* KERNEL:ok */
    for (int i = 0; i < M; i++)
        x[i] *= 2;
#pragma omp target map(tofrom : seen) map(to : crash) /* KERNEL:crash */
    {
        seen = crash;
        if (crash) {
            volatile int *volatile p = 0;
            *p = 1;
        }
    }
    return seen != 0 || x[1] != 2.0;
}
