/* omp_teams.c - host teams leagues, for the host OpenMP states of issue 9
 * (tests/test_host_teams.py).
 *
 *   omp_teams teams|target
 *
 * teams:  the program's own `teams` construct on the host, TEAMS teams, each
 *         running a `distribute parallel for` with a reduction;
 * target: R `target teams distribute parallel for` regions with a reduction,
 *         run on a host "device" by libomptarget's host plugin, which forks a
 *         league of its own through libomp.
 * Each prints its ground truth (the teams each league had, as the program saw
 * them, and the sums); nothing printed depends on timing. Source lines the
 * test looks for end in a MARK:<tag> comment.
 *
 * Built with clang -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define TEAMS 2
#define N 20000
#define R 3

static int case_teams(void)
{
    long sum = 0;
    int nteams = 0;
#pragma omp teams num_teams(TEAMS) reduction(+ : sum) /* MARK:teams */
    {
        if (omp_get_team_num() == 0)
            nteams = omp_get_num_teams();
#pragma omp distribute parallel for reduction(+ : sum) num_threads(2)
        for (long i = 0; i < N; i++)
            sum += i;
    }
    printf("teams: leagues=1 teams=%d sum=%ld\n", nteams, sum);
    return sum != (long)N * (N - 1) / 2;
}

static int case_target(void)
{
    int teams[R];
    long sums[R];
    for (int r = 0; r < R; r++) {
        long sum = 0;
        int nteams = 0;
#pragma omp target teams map(tofrom : sum, nteams) reduction(+ : sum) /* MARK:target */
        {
            if (omp_get_team_num() == 0)
                nteams = omp_get_num_teams();
#pragma omp distribute parallel for reduction(+ : sum)
            for (long i = 0; i < N; i++)
                sum += i;
        }
        teams[r] = nteams;
        sums[r] = sum;
    }
    printf("target: leagues=%d teams=", R);
    for (int r = 0; r < R; r++)
        printf("%s%d", r ? "," : "", teams[r]);
    int bad = 0;
    for (int r = 0; r < R; r++)
        bad |= sums[r] != (long)N * (N - 1) / 2;
    printf(" sums=%s\n", bad ? "wrong" : "right");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "teams"))
        return case_teams();
    if (argc > 1 && !strcmp(argv[1], "target"))
        return case_target();
    fprintf(stderr, "usage: omp_teams teams|target\n");
    return 2;
}
