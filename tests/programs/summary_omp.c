/* summary_omp.c - host OpenMP states for test_summary (part omp): known
 * imbalance, for `tracer summary`'s work against wait.
 *
 * Region "heavy": 3 teams of 4 threads; thread 0 works 3 * UNIT, the
 * others UNIT, so threads 1-3 wait about 2 * UNIT in the implicit barrier
 * and thread 0 hardly at all. Region "even": 2 teams of 4 threads, every
 * thread works UNIT. A thread's work is to be busy until a deadline on the
 * monotonic clock, sleeping, so that the proportions hold on a machine
 * with fewer cores than threads (run it with OMP_WAIT_POLICY=passive so
 * that the threads waiting in a barrier leave the cores too).
 *
 * Prints its ground truth, one line per region:
 *   summary_omp: heavy line <L> teams 3 threads 4 work 60000000 20000000
 *   summary_omp: even line <L> teams 2 threads 4 work 20000000 20000000
 * (<L>: the line of the `#pragma omp parallel`; work: ns of thread 0, of
 * the others), then "summary_omp: rc=0". Exit status 1 if a team was not
 * 4 threads.
 */
#include <omp.h>
#include <stdio.h>
#include <time.h>

#define UNIT_NS 20000000LL /* 20 ms */
#define THREADS 4

/* Busy for NS nanoseconds of the monotonic clock. */
static void work(long long ns)
{
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += (time_t)(ns / 1000000000LL);
    end.tv_nsec += (long)(ns % 1000000000LL);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) != 0)
        ;
}

int main(void)
{
    int bad = 0;
    int heavy_line = 0, even_line = 0;
    for (int team = 0; team < 3; team++) {
        heavy_line = __LINE__ + 1;
#pragma omp parallel num_threads(THREADS) reduction(+ : bad)
        {
            bad += omp_get_num_threads() != THREADS;
            work(omp_get_thread_num() == 0 ? 3 * UNIT_NS : UNIT_NS);
        }
    }
    for (int team = 0; team < 2; team++) {
        even_line = __LINE__ + 1;
#pragma omp parallel num_threads(THREADS) reduction(+ : bad)
        {
            bad += omp_get_num_threads() != THREADS;
            work(UNIT_NS);
        }
    }
    printf("summary_omp: heavy line %d teams 3 threads %d work %lld %lld\n", heavy_line, THREADS, 3 * UNIT_NS,
           UNIT_NS);
    printf("summary_omp: even line %d teams 2 threads %d work %lld %lld\n", even_line, THREADS, UNIT_NS, UNIT_NS);
    printf("summary_omp: rc=%d\n", bad ? 1 : 0);
    return bad ? 1 : 0;
}
