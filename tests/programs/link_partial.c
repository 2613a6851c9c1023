/* Ground truth for test_link.py: a partial mapping of a `declare target link`
 * array.  target map(to: c[10:20]) allocates 20 doubles for c[10..29]
 * (link map c: partial = 1, bytes = 20 * sizeof(double), host_addr = &c[10]).
 * The runtime writes c's reference pointer for this mapping (8-byte transfer
 * right after the section's transfer) with the device address that c[0]
 * would have, i.e. device_addr - 10 * sizeof(double): the device code reads
 * &c[10] through it and gets exactly the new storage (stderr "addr P1"), so
 * the pointer is written and not stale (ref_ptr_written = 1, no "stale link
 * pointer").  Then the same for the whole of e (partial = 0).
 * stderr: "addr ..." lines; stdout: one deterministic result line. */
#include <stdint.h>
#include <stdio.h>

double c[64];
double e[8];
#pragma omp declare target link(c, e)

#pragma omp declare target
double sum_c(int lo, int n)
{
    double r = 0;
    for (int i = lo; i < lo + n; i++)
        r += c[i];
    return r;
}
uintptr_t addr_c10(void) { return (uintptr_t)&c[10]; }
uintptr_t addr_e(void) { return (uintptr_t)&e[0]; }
#pragma omp end declare target

int main(void)
{
    for (int i = 0; i < 64; i++)
        c[i] = i;
    for (int i = 0; i < 8; i++)
        e[i] = 100 + i;
    fprintf(stderr, "addr host c10=%#lx e=%#lx\n", (unsigned long)&c[10], (unsigned long)&e[0]);
    double r = 0;
    uintptr_t dc = 0;
    #pragma omp target map(to: c[10:20]) map(from: r, dc)
    {
        r = sum_c(10, 20);
        dc = addr_c10();
    }
    fprintf(stderr, "addr P1 c10=%#lx\n", (unsigned long)dc);
    double r2 = 0;
    uintptr_t de = 0;
    #pragma omp target map(tofrom: e) map(from: r2, de)
    {
        for (int i = 0; i < 8; i++)
            r2 += e[i]++;
        de = addr_e();
    }
    fprintf(stderr, "addr P2 e=%#lx\n", (unsigned long)de);
    printf("link_partial: sum=%d sum_e=%d e7=%d\n", (int)r, (int)r2, (int)e[7]);
    return 0;
}
