/* Ground truth for test_stderr_takeover.py (issue 34 item 8): a program
 * that closes its stderr and opens a file of its own, which gets fd 2.
 * usage: stderr_takeover WHEN N FILE
 *   WHEN after: tracing starts (a region is registered) first, then fd 2
 *          is FILE; before: fd 2 is FILE before tracing starts.
 * Then the line "program line i" for i = 0..9 through fd 2, N marks "step"
 * (values 0..N-1) as fast as it can, and main returns 0. Prints nothing
 * else; FILE must hold exactly its 10 lines. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer.h"

static int take_stderr(const char *file)
{
    close(2);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    return fd == 2 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    int after = !strcmp(argv[1], "after");
    long n = atol(argv[2]);
    if (!after && take_stderr(argv[3]))
        return 3;
    tracer_region_t m = tracer_region_register("step"); /* tracing starts here */
    if (after && take_stderr(argv[3]))
        return 3;
    for (int i = 0; i < 10; i++) {
        char line[64];
        int len = snprintf(line, sizeof line, "program line %d\n", i);
        if (write(2, line, (size_t)len) != len)
            return 4;
    }
    for (long i = 0; i < n; i++)
        tracer_mark(m, (uint64_t)i);
    return 0;
}
