/* Ground truth for test_advice.py: data mappings with known waste, N times
 * each (argv[1], default 5), in the order below; kernels only read mapped
 * data, so what comes back equals what went out on any device.
 *   dup      enter data map(to: a); update to(a) unchanged [duplicate];
 *            target reads a; exit data map(delete: a)
 *            -> N duplicate_transfer, N-1 repeated_allocation
 *   trip     target map(tofrom: b) reading b
 *            -> N-1 round_trip (b came back unchanged and goes out again),
 *               N-1 repeated_allocation
 *   unused   enter data map(alloc: c); exit data map(release: c)
 *            -> N unused_allocation (allocs; each delete carries it too)
 *   wasted   enter data map(to: d); update to(d) after the host changed d;
 *            target reads d; exit data map(delete: d)
 *            -> N unused_transfer (the first copy, overwritten before the
 *               kernel), N-1 repeated_allocation
 *   link     target map(tofrom: e) reading e, e `declare target link`
 *            -> N-1 round_trip, N-1 repeated_allocation (the reference
 *               pointer's writes are not data of the program's)
 *   nowait   target nowait map(tofrom: f) reading f; taskwait
 *            -> N-1 round_trip, N-1 repeated_allocation
 * Lines marked ADVICE:<tag> are the constructs the report must name.
 * Built with -DWITH_MPI it is an MPI program: every rank does the same. */
#include <stdio.h>
#include <stdlib.h>
#ifdef WITH_MPI
#include <mpi.h>
#endif

#define M 512

double a[M], b[M], c[M], d[M], e[M], f[M];
#pragma omp declare target link(e)

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5;
#ifdef WITH_MPI
    MPI_Init(&argc, &argv);
#endif
    for (int k = 0; k < M; k++)
        a[k] = b[k] = c[k] = d[k] = e[k] = f[k] = k;
    for (int it = 0; it < n; it++) {
#pragma omp target enter data map(to : a) /* ADVICE:a_enter */
#pragma omp target update to(a) /* ADVICE:dup */
#pragma omp target
        {
            volatile double t = a[it % M];
            (void)t;
        }
#pragma omp target exit data map(delete : a)

#pragma omp target map(tofrom : b) /* ADVICE:trip */
        {
            volatile double t = b[0];
            (void)t;
        }

#pragma omp target enter data map(alloc : c) /* ADVICE:unused */
#pragma omp target exit data map(release : c)

#pragma omp target enter data map(to : d) /* ADVICE:wasted */
        d[0] = 1000 + it;
#pragma omp target update to(d)
#pragma omp target
        {
            volatile double t = d[1];
            (void)t;
        }
#pragma omp target exit data map(delete : d)

#pragma omp target map(tofrom : e) /* ADVICE:link */
        {
            volatile double t = e[1];
            (void)t;
        }

#pragma omp target map(tofrom : f) nowait /* ADVICE:nowait */
        {
            volatile double t = f[1];
            (void)t;
        }
#pragma omp taskwait
    }
    printf("advice_patterns: %d iterations\n", n);
#ifdef WITH_MPI
    MPI_Finalize();
#endif
    return 0;
}
