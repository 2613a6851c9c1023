/* Ground truth for test_unload.py: an offload library the program dlopens,
 * runs and dlcloses. lib_first maps the named global lib_table (so the
 * journal's consumer reads the library's symbols while it is loaded);
 * lib_last's kernel is the one recorded just before the dlclose. */
int lib_table[64];

int lib_first(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
#pragma omp target map(tofrom: lib_table[0:64]) /* KERNEL:lib_first */
        for (int j = 0; j < 64; j++)
            lib_table[j] += j;
        sum += lib_table[63];
    }
    return sum;
}

int lib_last(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        int v = i;
#pragma omp target map(tofrom: v) /* KERNEL:lib_last */
        v = v * 3 + 1;
        sum += v;
    }
    return sum;
}
