/* Ground truth for test_crash_names.py: ROUNDS target regions (one
 * construct, KERNEL:loop, mapping the global g: data operations on a named
 * variable) and ROUNDS in the shared library it links
 * (programs/crash_names_lib.c, KERNEL:lib, mapping lib_g), then at once, by argv[1], the end the test
 * wants: "segv" writes through a null pointer, "term" raises SIGTERM,
 * "exit" calls _exit(3), "kill" raises SIGKILL; no argument returns 0.
 * Nothing in between gives tracer's consumer thread time to name the
 * regions' code addresses. Prints nothing. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 5
#define M 64

double g[M];

void crash_names_work(double *x);

int main(int argc, char **argv)
{
    double x[M];
    for (int i = 0; i < M; i++)
        x[i] = i;
    for (int r = 0; r < ROUNDS; r++) {
#pragma omp target map(tofrom : x[0:M], g) /* KERNEL:loop */
        for (int i = 0; i < M; i++)
            x[i] += 1 + g[i];
        crash_names_work(x);
    }
    const char *how = argc > 1 ? argv[1] : "";
    if (!strcmp(how, "segv")) {
        volatile int *volatile p = 0;
        *p = 1;
    } else if (!strcmp(how, "term")) {
        raise(SIGTERM);
    } else if (!strcmp(how, "exit")) {
        _exit(3);
    } else if (!strcmp(how, "kill")) {
        raise(SIGKILL);
    }
    return x[1] != 1.0 + ROUNDS;
}
