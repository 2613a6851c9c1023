/* Ground truth for test_hash.py: the program hashes (XXH3, as tracer does)
 * the host bytes of each transfer at the moment they are right, and prints
 * one line per transfer in the order it makes them: "hash <label> <bytes>
 * <XXH3 as unsigned decimal>".
 *   a  enter data map(to: a)            the bytes sent
 *   a  update from(a) after the host    the device's bytes (what was sent,
 *      changed a                         the host's change undone): a hash
 *                                        taken at the copy's end callback
 *                                        on a GPU sees the changed bytes
 *   s  target map(to: s), a double      8 bytes: carried as a value
 *   i  target map(to: i), an int        4 bytes: carried as a value
 *   b  target map(tofrom: b)            sent, then what the kernel left
 *                                        (on the CUDA double kernels do not
 *                                        run: the bytes sent)
 * Built for host offload and for sm_80 (tests/fakecuda). */
#include <stdio.h>
#include <xxhash.h>

#define N 1024

double a[N], b[N];

static void line(const char *label, const void *p, size_t n)
{
    printf("hash %s %zu %llu\n", label, n, (unsigned long long)XXH3_64bits(p, n));
}

int main(void)
{
    double s = 3.5;
    int i = 7;
    for (int k = 0; k < N; k++) {
        a[k] = k;
        b[k] = 2 * k;
    }
    line("a", a, sizeof a);
#pragma omp target enter data map(to : a)
    for (int k = 0; k < N; k++)
        a[k] = -1;
#pragma omp target update from(a)
    line("a", a, sizeof a);
    line("s", &s, sizeof s);
    line("i", &i, sizeof i);
#pragma omp target map(to : s, i)
    {
        a[0] = s + i;
    }
    line("b", b, sizeof b);
#pragma omp target map(tofrom : b)
    for (int k = 0; k < N; k++)
        b[k] += 1;
    line("b", b, sizeof b);
#pragma omp target exit data map(delete : a)
    return 0;
}
