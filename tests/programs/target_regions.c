/* Ground truth for test_exit_memory.py: N target regions (argv[1]), each
 * mapping one int tofrom and adding 1 to it on the device, so a run of any
 * length costs the same per region. stdout: "regions=N check=N". */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    int x = 0;
    for (long i = 0; i < n; i++) {
#pragma omp target map(tofrom : x)
        x += 1;
    }
    printf("regions=%ld check=%d\n", n, x);
    return 0;
}
