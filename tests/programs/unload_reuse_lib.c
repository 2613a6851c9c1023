/* Ground truth for test_unload_reuse.py: one of four offload libraries,
 * built from this file with -DOLIB=1..4. Their code differs only in the
 * name of the function (olib1_run .. olib4_run, all of one length), so the
 * program, which loads each after it unloaded the one before, gets each
 * mapped where the one before was, its target region at the same address. */
#ifndef OLIB
#error "build with -DOLIB=<1..4>"
#endif
#define CAT(a, b, c) a##b##c
#define NAME(n) CAT(olib, n, _run)

int NAME(OLIB)(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        int v = i;
#pragma omp target map(tofrom: v)
        v = v * 3 + OLIB;
        sum += v;
    }
    return sum;
}
