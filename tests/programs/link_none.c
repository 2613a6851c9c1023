/* Ground truth for test_link.py: no `declare target link` variable at all.
 * Ordinary globals g (100 doubles) and gi (int) and a heap buffer h
 * (50 doubles) are mapped:
 *   enter data map(to: g)          alloc g 800, to g 800
 *   target map(tofrom: gi) map(to: h[0:50])
 *                                  alloc gi 4, to gi 4, alloc h 400, to h 400,
 *                                  kernel, from gi 4, delete h, delete gi
 *                                  (g present: no op)
 *   update from(g)                 from g 800
 *   exit data map(delete: g)       delete g
 * Data ops on g and gi carry variable = "g" / "gi"; those on h none; no link
 * event at all.  stdout: one deterministic result line. */
#include <stdio.h>
#include <stdlib.h>

double g[100];
int gi = 3;

int main(void)
{
    double *h = malloc(50 * sizeof(double));
    if (!h)
        return 99;
    for (int i = 0; i < 100; i++)
        g[i] = i;
    for (int i = 0; i < 50; i++)
        h[i] = 1.0;
    #pragma omp target enter data map(to: g)
    #pragma omp target map(tofrom: gi) map(to: h[0:50])
    {
        double s = 0;
        for (int i = 0; i < 50; i++)
            s += h[i] + g[i];
        gi += (int)s;
        g[0] = 42.0;
    }
    g[0] = 0.0;
    #pragma omp target update from(g)
    #pragma omp target exit data map(delete: g)
    printf("link_none: gi=%d g0=%d\n", gi, (int)g[0]);
    free(h);
    return 0;
}
