/* Ground truth for test_far_end.py: 3 target regions on device 0 whose
 * kernels call tracer_mark INNER[k] times (10, 3000, 10) from device code,
 * which host offload runs on the encountering thread: the second kernel's
 * end lies more than 1024 records (a journal cursor's lookahead) after its
 * begin. tracer_mark comes from the preloaded libtracer (weak, tracer.h's
 * advice). stdout: "far_end: x=3". */
#include <stdio.h>

#include "tracer.h"

#pragma weak tracer_region_register
#pragma weak tracer_mark

#pragma omp declare target
static void mark_many(tracer_region_t r, int n)
{
    for (int i = 0; i < n; i++)
        tracer_mark(r, (uint64_t)i);
}
#pragma omp end declare target

int main(void)
{
    if (!tracer_region_register || !tracer_mark) {
        printf("far_end: run it with libtracer.so preloaded\n");
        return 1;
    }
    tracer_region_t inner = tracer_region_register("inner");
    static const int INNER[3] = {10, 3000, 10};
    int x = 0;
    for (int k = 0; k < 3; k++) {
        int n = INNER[k];
#pragma omp target map(tofrom : x) firstprivate(n, inner)
        {
            mark_many(inner, n);
            x += 1;
        }
    }
    printf("far_end: x=%d\n", x);
    return 0;
}
