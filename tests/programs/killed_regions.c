/* Ground truth for test_killed.py (issue 20): target regions, region i
 * mapping (i % 5) + 1 ints tofrom and adding 1 to each on the device, so
 * the archive's sequence of transfer sizes names each region. After region
 * i is complete (its result checked), the line "region i" is written with
 * one write(2): unbuffered, so whatever kills the process, every line on
 * stdout is a region that really ended.
 * usage: killed_regions N [exit|exit_group]
 *   N regions, then main returns 0; with "exit", _exit(3) right after the
 *   last line instead; with "exit_group", the raw exit_group system call
 *   (status 3), which no wrapper sees. A wrong result prints "wrong i" and
 *   exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100;
    int quick_exit = argc > 2 && !strcmp(argv[2], "exit");
    int raw_exit = argc > 2 && !strcmp(argv[2], "exit_group");
    for (long i = 0; i < n; i++) {
        int len = (int)(i % 5) + 1;
        int a[5];
        for (int k = 0; k < len; k++)
            a[k] = (int)i + k;
#pragma omp target map(tofrom : a[0:len])
        for (int k = 0; k < len; k++)
            a[k] += 1;
        char line[48];
        int ok = 1;
        for (int k = 0; k < len; k++)
            ok &= a[k] == (int)i + k + 1;
        int m = snprintf(line, sizeof line, "%s %ld\n", ok ? "region" : "wrong", i);
        if (write(1, line, (size_t)m) != m || !ok)
            return 1;
    }
    if (quick_exit)
        _exit(3);
    if (raw_exit)
        syscall(SYS_exit_group, 3);
    return 0;
}
