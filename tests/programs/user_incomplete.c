/* Ground truth for test_user_incomplete.py (single thread):
 *   begin(a) begin(b) end(a)   -> b closed when a ends, Leave(b) incomplete=1
 *   mark(m, 42)
 *   begin(c), never ended      -> closed at the end, Leave(c) incomplete=1 */
#include <stdio.h>

#include "tracer.h"

int main(void)
{
    tracer_region_t a = tracer_region_register("a");
    tracer_region_t b = tracer_region_register("b");
    tracer_region_t c = tracer_region_register("c");
    tracer_region_t m = tracer_region_register("m");
    int rc = 0;
    rc |= tracer_region_begin(a);
    rc |= tracer_region_begin(b);
    rc |= tracer_region_end(a);
    rc |= tracer_mark(m, 42);
    rc |= tracer_region_begin(c);
    printf("user_incomplete: rc=%d\n", rc);
    return 0;
}
