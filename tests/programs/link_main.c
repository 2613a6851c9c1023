/* Ground truth for test_link.py (`declare target link`, modelled on GCC's
 * libgomp.c/target-link-1.c): link(a), to(b), link(c, d), used from the
 * orphaned declare-target functions foo, bar and the addr_* helpers.
 *
 * Phases (device 0), each followed by one line on stderr
 *   "addr <phase> <name>=<hex> ..." giving host addresses (&a, ...) and the
 * device addresses of the storage the device code saw through the link
 * reference pointer (&a inside the target region) or that the runtime
 * reports (omp_get_mapped_ptr).  The driver derives the expected link events
 * from these numbers, never from the trace.
 *   P1 target map(to: a, b, c, d) map(from: res ...)  -> link map a, c, d
 *      (reference pointer written), b is `to` (no alloc), unmaps at the end
 *   P2 target enter data map(to: a); target update from(a) -> link map a
 *      (reference pointer NOT written: enter data maps a alone)
 *   P3 target exit data map(delete: a)                 -> link unmap a
 *   P4 target map(tofrom: a)   (a mapped again)        -> link map/unmap a
 *   P5 target data map(tofrom: c) { target map(tofrom: c) }
 *                                                      -> one link map of c
 * stdout: one deterministic result line. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

struct S { int s, t; };

int a = 1, b = 1;
double c[64];
struct S d = { 8888, 8888 };
#pragma omp declare target link (a) to (b) link (c, d)

int foo(void)
{
    return a++ + b++;
}

int bar(int n)
{
    int *p1 = &a;
    int *p2 = &b;
    c[n] += 2.0;
    d.s -= 2;
    d.t -= 2;
    return *p1 + *p2 + d.s + d.t;
}

uintptr_t addr_a(void) { return (uintptr_t)&a; }
uintptr_t addr_c(void) { return (uintptr_t)&c[0]; }
uintptr_t addr_d(void) { return (uintptr_t)&d; }

#pragma omp declare target (foo, bar, addr_a, addr_c, addr_d)

static uintptr_t mapped(void *p)
{
    return (uintptr_t)omp_get_mapped_ptr(p, 0);
}

int main(void)
{
    a = b = 2;
    d.s = 17;
    d.t = 18;
    fprintf(stderr, "addr host a=%#lx b=%#lx c=%#lx d=%#lx\n", (unsigned long)&a,
            (unsigned long)&b, (unsigned long)&c[0], (unsigned long)&d);

    /* P1 */
    int res = 0, n = 10;
    uintptr_t da = 0, dc = 0, dd = 0;
    #pragma omp target map(to: a, b, c, d) map(from: res, da, dc, dd)
    {
        res = foo() + foo();
        c[n] = 3.0;
        res += bar(n);
        da = addr_a();
        dc = addr_c();
        dd = addr_d();
    }
    int r1 = res;
    fprintf(stderr, "addr P1 a=%#lx c=%#lx d=%#lx\n", (unsigned long)da,
            (unsigned long)dc, (unsigned long)dd);

    /* P2 */
    a = 5;
    #pragma omp target enter data map(to: a)
    fprintf(stderr, "addr P2 a=%#lx\n", (unsigned long)mapped(&a));
    a = 0;
    #pragma omp target update from(a)
    int r2 = a;

    /* P3 */
    #pragma omp target exit data map(delete: a)
    int r3 = omp_target_is_present(&a, 0);

    /* P4 */
    a = 7;
    uintptr_t da4 = 0;
    #pragma omp target map(tofrom: a) map(from: res, da4)
    {
        res = foo();
        da4 = addr_a();
    }
    fprintf(stderr, "addr P4 a=%#lx\n", (unsigned long)da4);
    int r4 = res * 100 + a;

    /* P5 */
    uintptr_t dc5 = 0, dc5in = 0;
    c[1] = 1.0;
    #pragma omp target data map(tofrom: c)
    {
        dc5 = mapped(&c[0]);
        #pragma omp target map(tofrom: c) map(from: dc5in)
        {
            c[1] += 40.0;
            dc5in = addr_c();
        }
    }
    fprintf(stderr, "addr P5 c=%#lx in=%#lx\n", (unsigned long)dc5, (unsigned long)dc5in);

    printf("link_main: r1=%d r2=%d r3=%d r4=%d c1=%d b=%d\n", r1, r2, r3, r4,
           (int)c[1], b);
    return 0;
}
