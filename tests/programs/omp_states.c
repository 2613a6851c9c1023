/* omp_states.c - host-only OpenMP programs with a known structure, for the
 * host OpenMP states of issue 9 (tests/test_host_states.py).
 *
 *   omp_states CASE [EXIT_CODE]
 *
 * CASE is one of imbalance, barrier, critical, lock, ordered, reduction,
 * counts, tasks, fine, all. Each case prints its ground truth on stdout (team sizes
 * as the program saw them, entries, results); nothing printed depends on
 * timing. The program exits with EXIT_CODE (default 0).
 *
 * The work is a busy loop with a fixed number of iterations (spin), never a
 * sleep, so that a thread that has more of it really runs longer.
 * Source lines the test looks for are marked with comments of the form
 * MARK:<tag> at the end of the line (see TEST_SRC).
 *
 * Built with LLVM's -fopenmp (libomp), whose OMPT interface tracer uses.
 * With OMP_STATES_REGISTRATIONS=1 in the environment the program also writes,
 * on stderr, the OMPT callbacks a preloaded libtracer.so registered
 * (tracer_ompt_registration of include/tracer.h, looked up with dlsym): one
 * line "registration <callback> <result>" each. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One work unit: UNIT iterations of a dependent floating-point chain (about
 * 1 ms on a 3 GHz core at -O1). */
#define UNIT 250000L

static volatile double sink;

static void spin(long units)
{
    double x = 0.0;
    for (long i = 0; i < units * UNIT; i++)
        x = x * 0.999999 + (double)i;
    sink += x * 0.0; /* keeps the loop; the value never matters */
}

/* imbalance: R parallel regions of 4 threads (as many as there are cores
 * when there are fewer, at least 2: with more threads than cores, how long a
 * light thread takes would be the scheduler's choice, and the ordering the
 * test checks with it); thread 0 does 3x the work of the others, which then
 * wait in the region's implicit barrier. The threads first meet in an
 * explicit barrier, so that they all start the work together. */
#define IMB_R 8
#define IMB_WORK 8 /* units of a light thread; thread 0 does 3x */
static int case_imbalance(void)
{
    int teams[IMB_R];
    int nt = omp_get_num_procs();
    nt = nt > 4 ? 4 : nt < 2 ? 2 : nt;
    for (int r = 0; r < IMB_R; r++) {
#pragma omp parallel num_threads(nt) /* MARK:imbalance */
        {
            int t = omp_get_thread_num();
            if (t == 0)
                teams[r] = omp_get_num_threads();
#pragma omp barrier /* MARK:imbalance_start */
            spin(t == 0 ? 3 * IMB_WORK : IMB_WORK);
        }
    }
    printf("imbalance: regions=%d heavy_thread=0 factor=3 teams=", IMB_R);
    for (int r = 0; r < IMB_R; r++)
        printf("%s%d", r ? "," : "", teams[r]);
    printf("\n");
    return 0;
}

/* barrier: unequal work before an explicit barrier, R times. */
#define BAR_R 4
static int case_barrier(void)
{
    int teams[BAR_R], passed[BAR_R];
    for (int r = 0; r < BAR_R; r++) {
        int after = 0;
#pragma omp parallel num_threads(4) /* MARK:barrier_parallel */
        {
            int t = omp_get_thread_num();
            if (t == 0)
                teams[r] = omp_get_num_threads();
            spin(2 * (t + 1));
#pragma omp barrier /* MARK:barrier */
#pragma omp atomic
            after++;
            spin(1);
        }
        passed[r] = after;
    }
    printf("barrier: regions=%d explicit_barriers_per_thread=1 teams=", BAR_R);
    for (int r = 0; r < BAR_R; r++)
        printf("%s%d", r ? "," : "", teams[r]);
    printf(" passed=");
    for (int r = 0; r < BAR_R; r++)
        printf("%s%d", r ? "," : "", passed[r]);
    printf("\n");
    return 0;
}

/* critical: every thread enters the same critical section N times and holds
 * it for 2 units. */
#define CRIT_N 6
static int case_critical(void)
{
    int entries = 0, team = 0;
#pragma omp parallel num_threads(4) /* MARK:critical_parallel */
    {
        if (omp_get_thread_num() == 0)
            team = omp_get_num_threads();
        for (int i = 0; i < CRIT_N; i++) {
#pragma omp critical /* MARK:critical */
            {
                entries++;
                spin(2);
            }
        }
    }
    printf("critical: regions=1 team=%d entries=%d per_thread=%d\n", team, entries, CRIT_N);
    return 0;
}

/* lock: the same with an omp_lock_t. */
#define LOCK_N 6
static int case_lock(void)
{
    omp_lock_t lock;
    int entries = 0, team = 0;
    omp_init_lock(&lock);
#pragma omp parallel num_threads(4) /* MARK:lock_parallel */
    {
        if (omp_get_thread_num() == 0)
            team = omp_get_num_threads();
        for (int i = 0; i < LOCK_N; i++) {
            omp_set_lock(&lock); /* MARK:lock */
            entries++;
            spin(2);
            omp_unset_lock(&lock);
        }
    }
    omp_destroy_lock(&lock);
    printf("lock: regions=1 team=%d entries=%d per_thread=%d\n", team, entries, LOCK_N);
    return 0;
}

/* ordered: an ordered loop, one iteration per thread in turn, with work
 * inside the ordered block; iterations wait for their predecessor. */
#define ORD_N 16
static int case_ordered(void)
{
    int order[ORD_N], k = 0, team = 0;
#pragma omp parallel num_threads(4) /* MARK:ordered_parallel */
    {
        if (omp_get_thread_num() == 0)
            team = omp_get_num_threads();
#pragma omp for ordered schedule(static, 1) /* MARK:ordered_for */
        for (int i = 0; i < ORD_N; i++) {
            spin(1);
#pragma omp ordered /* MARK:ordered */
            {
                order[k++] = i;
                spin(2);
            }
        }
    }
    printf("ordered: regions=1 team=%d iterations=%d order=", team, ORD_N);
    for (int i = 0; i < ORD_N; i++)
        printf("%s%d", i ? "," : "", order[i]);
    printf("\n");
    return 0;
}

/* reduction: a parallel loop with reduction(+:sum) (integer, so the result
 * is exact), in a team of 8. LLVM's libomp reports ompt_callback_reduction
 * only when it combines the partial results itself: the tree method (teams of
 * more than 4 threads on x86_64 Linux) or the critical one. A team of at most
 * 4 with an operator the compiler made an atomic variant for (every built-in
 * one) uses atomics, and the runtime then reports no reduction at all. */
#define RED_N 4000
static int case_reduction(void)
{
    long sum = 0;
    int team = 0;
#pragma omp parallel num_threads(8) reduction(+ : sum) /* MARK:reduction_parallel */
    {
        if (omp_get_thread_num() == 0)
            team = omp_get_num_threads();
#pragma omp for /* MARK:reduction_for */
        for (int i = 0; i < RED_N; i++) {
            sum += i;
            if (i % 1000 == 0)
                spin(1);
        }
    }
    printf("reduction: regions=1 team=%d sum=%ld\n", team, sum);
    return 0;
}

/* counts: K parallel regions of one construct with team sizes 2, 3, 4, 2,
 * 3, 4, ..., each with a worksharing loop and a single. */
#define CNT_K 6
#define CNT_ITER 12
static int case_counts(void)
{
    int teams[CNT_K], singles = 0, iterations = 0;
    for (int k = 0; k < CNT_K; k++) {
        int nt = 2 + k % 3;
#pragma omp parallel num_threads(nt) /* MARK:counts_parallel */
        {
#pragma omp for /* MARK:counts_for */
            for (int i = 0; i < CNT_ITER; i++) {
#pragma omp atomic
                iterations++;
            }
#pragma omp single /* MARK:counts_single */
            {
                teams[k] = omp_get_num_threads();
                singles++;
            }
        }
    }
    printf("counts: regions=%d teams=", CNT_K);
    for (int k = 0; k < CNT_K; k++)
        printf("%s%d", k ? "," : "", teams[k]);
    printf(" iterations=%d singles=%d\n", iterations, singles);
    return 0;
}

/* tasks: one thread of a team of 2 creates T explicit tasks, then waits for
 * them in a taskwait. */
#define TASK_T 4
static int case_tasks(void)
{
    int done = 0, team = 0;
#pragma omp parallel num_threads(2) /* MARK:tasks_parallel */
    {
#pragma omp single
        {
            team = omp_get_num_threads();
            for (int i = 0; i < TASK_T; i++) {
#pragma omp task shared(done) /* MARK:task */
                {
                    spin(2);
#pragma omp atomic
                    done++;
                }
            }
#pragma omp taskwait /* MARK:taskwait */
        }
    }
    printf("tasks: regions=1 team=%d tasks=%d done=%d\n", team, TASK_T, done);
    return 0;
}

/* fine: FINE_R parallel regions of 2 threads, each a loop of a few
 * iterations: the records come faster than a small pool takes them, for
 * drop mode (test_host_states_drop.py). */
#define FINE_R 100000
static int case_fine(void)
{
    long sum = 0;
    for (int r = 0; r < FINE_R; r++) {
#pragma omp parallel for num_threads(2) reduction(+ : sum) /* MARK:fine */
        for (int i = 0; i < 8; i++)
            sum += i;
    }
    printf("fine: regions=%d sum=%ld\n", FINE_R, sum);
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(void);
} cases[] = {
    {"imbalance", case_imbalance}, {"barrier", case_barrier}, {"critical", case_critical},
    {"lock", case_lock},           {"ordered", case_ordered}, {"reduction", case_reduction},
    {"counts", case_counts},       {"tasks", case_tasks},     {"fine", case_fine},
};
#define NCASES (sizeof cases / sizeof cases[0])

static void print_registrations(void)
{
    typedef int (*reg_fn)(unsigned, const char **, int *);
    reg_fn reg = (reg_fn)dlsym(RTLD_DEFAULT, "tracer_ompt_registration");
    if (!reg) {
        fprintf(stderr, "registration none\n");
        return;
    }
    const char *name;
    int result;
    for (unsigned i = 0; reg(i, &name, &result) == 0; i++)
        fprintf(stderr, "registration %s %d\n", name, result);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: omp_states CASE [EXIT_CODE]\n");
        return 2;
    }
    int rc = argc > 2 ? atoi(argv[2]) : 0, found = 0;
    for (size_t i = 0; i < NCASES; i++)
        if (!strcmp(argv[1], "all") || !strcmp(argv[1], cases[i].name)) {
            found = 1;
            if (cases[i].fn())
                rc = 1;
        }
    if (!found) {
        fprintf(stderr, "omp_states: unknown case %s\n", argv[1]);
        return 2;
    }
    fflush(stdout);
    if (getenv("OMP_STATES_REGISTRATIONS"))
        print_registrations();
    return rc;
}
