/* Ground truth for test_link.py: a `declare target link` variable whose
 * device storage moves while the device's reference pointer keeps the old
 * address ("stale link pointer").
 *
 * LLVM 19 maps a link variable named in any map clause (target, target data,
 * target enter data) together with its reference pointer <V>_decl_tgt_ref_ptr
 * and rewrites that pointer (an 8-byte transfer to the device) whenever the
 * storage changed, so naming s again never leaves the pointer stale.  A map
 * through a plain pointer (p = s; map(p[0:N])) allocates storage for the same
 * host range without the reference pointer: that is the stale case.
 *
 * s and t have the same unusual size (113 doubles = 904 bytes) so that, in
 * LLVM 19's host plugin (malloc-backed device memory), the storage freed by
 * unmapping s is the next block handed out for t:
 *   P1 target map(tofrom: s)           -> link map s at X, reference pointer
 *                                         written with X; link unmap s at the end
 *   P2 target enter data map(to: t)    -> t (ordinary global) gets X
 *   P3 target enter data map(to: p[0:113]), p = s
 *                                      -> link map s at Y != X, reference
 *                                         pointer not written: stale, ref_value X
 *   P4 target enter data map(to: q[0:7]), q = u (link variable never mapped
 *      by name) -> link map u, stale with ref_value 0;
 *      target exit data map(delete: q[0:7]) -> link unmap u
 *   P5 target update from(s); target exit data map(delete: t)
 *   s stays mapped until the end -> "link unmap" s with incomplete = 1
 * stderr: "addr <phase> ..." lines with the device addresses (the driver
 * derives X and Y from them and checks the precondition X == t's storage).
 * stdout: one deterministic result line. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#define N 113

double s[N];
double t[N];
double u[7];
#pragma omp declare target link(s, u)

#pragma omp declare target
uintptr_t addr_s(void) { return (uintptr_t)&s[0]; }
double bump_s(void)
{
    double sum = 0;
    for (int i = 0; i < N; i++) {
        s[i] += 1.0;
        sum += s[i];
    }
    return sum;
}
#pragma omp end declare target

int main(void)
{
    for (int i = 0; i < N; i++) {
        s[i] = i;
        t[i] = 2 * i;
    }
    fprintf(stderr, "addr host s=%#lx t=%#lx u=%#lx\n", (unsigned long)&s[0],
            (unsigned long)&t[0], (unsigned long)&u[0]);
    uintptr_t x = 0;
    double sum = 0;
    #pragma omp target map(tofrom: s) map(from: x, sum)
    {
        sum = bump_s();
        x = addr_s();
    }
    fprintf(stderr, "addr P1 s=%#lx\n", (unsigned long)x);

    #pragma omp target enter data map(to: t)
    fprintf(stderr, "addr P2 t=%#lx\n", (unsigned long)omp_get_mapped_ptr(&t[0], 0));

    for (int i = 0; i < N; i++)
        s[i] = 3.0;
    double *p = s;
    #pragma omp target enter data map(to: p[0:N])
    fprintf(stderr, "addr P3 s=%#lx\n", (unsigned long)omp_get_mapped_ptr(&s[0], 0));

    double *q = u;
    #pragma omp target enter data map(to: q[0:7])
    fprintf(stderr, "addr P4 u=%#lx\n", (unsigned long)omp_get_mapped_ptr(&u[0], 0));
    #pragma omp target exit data map(delete: q[0:7])

    s[5] = -1.0;
    #pragma omp target update from(s)
    #pragma omp target exit data map(delete: t)
    printf("link_stale: sum=%d s0=%d s5=%d\n", (int)sum, (int)s[0], (int)s[5]);
    return 0;
}
