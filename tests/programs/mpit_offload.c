/* Ground truth for test_mpit_mpich.py: an MPI + OpenMP offload program run
 * under real MPICH (mpiexec -n 2, and as a singleton). Every rank, with
 * r = its rank in MPI_COMM_WORLD, after MPI_Init:
 *   target #1: map(to: a[0:NA(r)]) map(from: b[0:NA(r)])
 *              alloc a, alloc b, to a (NA*8), kernel, from b (NA*8), delete x2
 *   r + 2 times target #2: map(tofrom: x[0:NX(r)])
 *              alloc x, to x (NX*8), kernel, from x (NX*8), delete x
 *   MPI_Allreduce(SUM) of the rank's checksum, MPI_Finalize.
 * NA(r) = 1000 + 256 r doubles, NX(r) = 128 (r + 1) doubles.
 * Output: one line per rank (the test sorts them) and the world total on
 * rank 0, with the first line of MPI_Get_library_version (the driver
 * expects it in the TRACER::MPIT::STATUS property); the process exits with
 * status 4. With TEST_PID_DIR set, each rank writes its pid to
 * $TEST_PID_DIR/rank<r>.pid. Each line says the rank and the
 * communicator size, so ranks that did not find each other show up as two
 * "size 1" lines. Lines marked KERNEL:<tag> are found by the driver.
 * With TEST_ABORT_RANK=<a> (test_mpi_job.py), every rank does its offload
 * work and meets the others in an MPI_Barrier; then rank a prints
 * "mpit_offload: rank <a> aborts", sleeps 0.5 s (so that with a
 * TRACER_FLUSH_INTERVAL well below that every rank's journal holds its
 * offload work) and calls MPI_Abort(MPI_COMM_WORLD, 5), while the others
 * wait in a second MPI_Barrier that never completes; nothing else is
 * printed and no rank reaches MPI_Allreduce or MPI_Finalize.
 * With TEST_KILL_AFTER_FINALIZE=<k>, rank k, after MPI_Finalize returned,
 * sleeps 0.3 s and kills itself with SIGKILL (a rank that dies between
 * MPI_Finalize and its exit).
 * With TEST_NO_MPI=1 the program never calls MPI: r = $PMI_RANK (0 when
 * unset), size = $PMI_SIZE (1); it does rank r's offload work, prints its
 * line ("rank r of size local=...") and exits with status 4. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NA(r) (1000 + 256 * (r))
#define NX(r) (128 * ((r) + 1))

int main(int argc, char **argv)
{
    const char *no_mpi = getenv("TEST_NO_MPI");
    int use_mpi = !(no_mpi && *no_mpi);
    int rank = -1, size = -1;
    if (use_mpi) {
        if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
            return 98;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    } else {
        const char *r = getenv("PMI_RANK"), *s = getenv("PMI_SIZE");
        rank = r ? atoi(r) : 0;
        size = s ? atoi(s) : 1;
    }
    /* Which archive is whose: the driver maps the "process <pid>" location
     * group of each archive to a rank with these files. */
    const char *pid_dir = getenv("TEST_PID_DIR");
    if (pid_dir && *pid_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank%d.pid", pid_dir, rank);
        FILE *f = fopen(path, "w");
        if (!f)
            return 97;
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }

    int na = NA(rank), nx = NX(rank), reps = rank + 2;
    double *a = malloc(na * sizeof(double));
    double *b = malloc(na * sizeof(double));
    double *x = malloc(nx * sizeof(double));
    if (!a || !b || !x)
        return 99;
    for (int i = 0; i < na; i++) {
        a[i] = i;
        b[i] = -1;
    }
    for (int i = 0; i < nx; i++)
        x[i] = 1;

#pragma omp target map(to : a[0:na]) map(from : b[0:na]) /* KERNEL:first */
    for (int i = 0; i < na; i++)
        b[i] = 2 * a[i];

    for (int k = 0; k < reps; k++) {
#pragma omp target map(tofrom : x[0:nx]) /* KERNEL:second */
        for (int i = 0; i < nx; i++)
            x[i] = x[i] + 1;
    }

    const char *abort_env = getenv("TEST_ABORT_RANK");
    if (use_mpi && abort_env && *abort_env) {
        int abort_rank = atoi(abort_env);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == abort_rank) {
            printf("mpit_offload: rank %d aborts\n", rank);
            fflush(stdout);
            usleep(500000);
            MPI_Abort(MPI_COMM_WORLD, 5);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        return 96; /* not reached: MPI_Abort ends every rank */
    }

    /* sum(b) = na (na - 1); sum(x) = nx (reps + 1) */
    long long local = 0;
    for (int i = 0; i < na; i++)
        local += (long long)b[i];
    for (int i = 0; i < nx; i++)
        local += (long long)x[i];
    if (!use_mpi) {
        printf("mpit_offload: rank %d of %d local=%lld\n", rank, size, local);
        free(a);
        free(b);
        free(x);
        return 4;
    }
    long long total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    printf("mpit_offload: rank %d of %d local=%lld\n", rank, size, local);
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        printf("mpit_offload: total=%lld\n", total);
        printf("mpit_offload: library=%.*s\n", (int)strcspn(lib, "\n"), lib);
    }
    fflush(stdout);
    free(a);
    free(b);
    free(x);
    MPI_Finalize();
    const char *kill_env = getenv("TEST_KILL_AFTER_FINALIZE");
    if (kill_env && *kill_env && atoi(kill_env) == rank) {
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, 0);
        raise(SIGKILL);
    }
    return 4;
}
