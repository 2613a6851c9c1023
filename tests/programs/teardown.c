/* Ground truth for test_teardown.py (issue 16, item 10). Correct runs whose
 * only events after the trace is written are libomp's own teardown (worker
 * threads beginning and ending, the end of a league's initial tasks):
 *   host     a host `teams distribute num_teams(1)` (19 of 20 runs printed a
 *            false "events arrived after the trace was written" line)
 *   target   `target teams distribute` (SOLLVE's 4.5/target_teams_distribute)
 *   late     the same as host, then LATE_MARKS marks of tracer's API from
 *            the program's destructor, which runs after the trace is
 *            written (at exit): the program's own events, not in the trace,
 *            so the line must be printed and count them.
 *   nowait   NOWAIT `target nowait depend` regions and a taskwait (issue 16,
 *            item 11): libomp runs them on its hidden-helper team, whose
 *            threads wait in their parallel region until the process ends;
 *            every target operation completes.
 * stdout: one deterministic result line. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { N = 1000, LATE_MARKS = 7, NOWAIT = 4 };
static int a[N];
static int late;

/* tracer's API through dlsym: the program does not link libtracer. */
__attribute__((destructor)) static void late_marks(void)
{
    if (!late)
        return;
    uint32_t (*reg)(const char *) = (uint32_t(*)(const char *))dlsym(RTLD_DEFAULT, "tracer_region_register");
    int (*mark)(uint32_t, uint64_t) = (int (*)(uint32_t, uint64_t))dlsym(RTLD_DEFAULT, "tracer_mark");
    if (!reg || !mark)
        return;
    uint32_t r = reg("late mark");
    for (int i = 0; i < LATE_MARKS; i++)
        mark(r, (uint64_t)i);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "host";
    late = !strcmp(mode, "late");
    if (!strcmp(mode, "nowait")) {
        for (int r = 0; r < NOWAIT; r++) {
#pragma omp target map(tofrom: a) nowait depend(inout: a)
            for (int i = 0; i < N; i++)
                a[i] += i;
        }
#pragma omp taskwait
        for (int i = 0; i < N; i++)
            a[i] = a[i] / NOWAIT * 2;
    } else if (!strcmp(mode, "target")) {
#pragma omp target teams distribute map(tofrom: a)
        for (int i = 0; i < N; i++)
            a[i] = i * 2;
    } else {
#pragma omp teams distribute num_teams(1)
        for (int i = 0; i < N; i++)
            a[i] = i * 2;
    }
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += a[i];
    printf("teardown %s: sum=%ld\n", mode, sum);
    return 0;
}
