/* Ground truth for test_basic.py (device 0, host offload, N and M doubles):
 *   target #1: alloc a, alloc b, to a (N*8), kernel, from b (N*8), delete x2
 *   enter data map(to:c): alloc c, to c (M*8)
 *   update to(c): to c (M*8)
 *   target #2 (c present): kernel only
 *   update from(c): from c (M*8)
 *   exit data map(delete:c): delete c
 *   enter data map(alloc:d): alloc d (D*8)
 *   exit data map(release:d): delete d (refcount drops to 0)
 * Lines marked KERNEL:<tag> are found by the driver to check kernel names. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000
#define M 256
#define D 64

int main(void)
{
    double *a = malloc(N * sizeof(double));
    double *b = malloc(N * sizeof(double));
    double *c = malloc(M * sizeof(double));
    double *d = malloc(D * sizeof(double));
    if (!a || !b || !c || !d)
        return 99;
    for (int i = 0; i < N; i++) {
        a[i] = i;
        b[i] = -1;
    }
    for (int i = 0; i < M; i++)
        c[i] = 1;

#pragma omp target map(to : a[0:N]) map(from : b[0:N]) /* KERNEL:first */
    for (int i = 0; i < N; i++)
        b[i] = 2 * a[i];

#pragma omp target enter data map(to : c[0:M])

    for (int i = 0; i < M; i++)
        c[i] = i;
#pragma omp target update to(c[0:M])

#pragma omp target map(tofrom : c[0:M]) /* KERNEL:second */
    for (int i = 0; i < M; i++)
        c[i] = c[i] * 3;

#pragma omp target update from(c[0:M])
#pragma omp target exit data map(delete : c[0:M])

#pragma omp target enter data map(alloc : d[0:D])
#pragma omp target exit data map(release : d[0:D])

    double sb = 0, sc = 0;
    for (int i = 0; i < N; i++)
        sb += b[i];
    for (int i = 0; i < M; i++)
        sc += c[i];
    printf("basic: sum(b)=%.0f sum(c)=%.0f b[10]=%.0f c[10]=%.0f\n", sb, sc, b[10], c[10]);
    free(a);
    free(b);
    free(c);
    free(d);
    return 0;
}
