/* Ground truth for test_unload_reuse.py: one of four offload libraries,
 * built from this file with -DOLIB=1..4. Their code and data differ only in
 * names (olib1_run .. olib4_run, olib1_table .. olib4_table, all of one
 * length), so the program, which loads each after it unloaded the one
 * before, gets each mapped where the one before was: its target region,
 * its parallel region and the global it maps, at the same addresses. */
#ifndef OLIB
#error "build with -DOLIB=<1..4>"
#endif
#define CAT(a, b, c) a##b##c
#define RUN(n) CAT(olib, n, _run)
#define TABLE(n) CAT(olib, n, _table)

int TABLE(OLIB)[64];

int RUN(OLIB)(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
#pragma omp target map(tofrom: TABLE(OLIB)[0:64])
        for (int j = 0; j < 64; j++)
            TABLE(OLIB)[j] += j + OLIB;
        sum += TABLE(OLIB)[63];
    }
    /* A host construct of the library's own, once (one call), in a team of 2. */
#pragma omp parallel num_threads(2) reduction(+: sum)
    sum += 1;
    return sum;
}
