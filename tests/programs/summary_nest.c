/* Ground truth for test_summary.py (one thread, user regions):
 *   begin(rec) spin begin(rec) spin begin(rec) spin end end end
 *       -> rec: 3 Enters, recursive: inclusive time = the outermost's
 *          duration, exclusive time = the same (only rec inside rec)
 *   begin(work) 4 x (begin(leaf) spin end(leaf)) spin end(work)
 *       -> work: exclusive = inclusive - the 4 leaves
 *   begin(open), never ended: closed at the end of the run (incomplete)
 * spin: at least 20 us of CLOCK_MONOTONIC. Prints one line, exits 0. */
#include <stdio.h>
#include <time.h>

#include "tracer.h"

static void spin(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000);
}

static int rec(tracer_region_t r, int depth)
{
    int rc = tracer_region_begin(r);
    spin();
    if (depth > 1)
        rc |= rec(r, depth - 1);
    return rc | tracer_region_end(r);
}

int main(void)
{
    tracer_region_t r = tracer_region_register("rec");
    tracer_region_t work = tracer_region_register("work");
    tracer_region_t leaf = tracer_region_register("leaf");
    tracer_region_t open = tracer_region_register("open");
    int rc = rec(r, 3);
    rc |= tracer_region_begin(work);
    for (int i = 0; i < 4; i++) {
        rc |= tracer_region_begin(leaf);
        spin();
        rc |= tracer_region_end(leaf);
    }
    spin();
    rc |= tracer_region_end(work);
    rc |= tracer_region_begin(open);
    spin();
    printf("summary_nest: rc=%d\n", rc);
    return 0;
}
