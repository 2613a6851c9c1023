/* mpit_callback.c - what one MPI_T event costs: tracer's callback (reading
 * the instance's source, timestamp and payload, and recording it).
 *
 * No Debian MPI raises MPI_T events, so the events come from the MPI_T
 * provider TEST DOUBLE (tests/mpit_double, LD_PRELOADed after libtracer.so),
 * raised synchronously with mpit_double_raise_index(). The bench times N
 * raises of one event type and prints ns per raise. Run it three ways
 * (bench/run_benchmarks.sh does):
 *   tracer      LD_PRELOAD=libtracer.so:libmpit_double.so: tracer's callback
 *   noop        LD_PRELOAD=libmpit_double.so, argument "noop": the bench
 *               registers a callback that does nothing, so the double's own
 *               delivery cost is measured
 * tracer - noop is the callback's cost.
 *
 * Not a test: it prints numbers.
 * Usage: mpit_callback [noop] [event-name] [events] [runs] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void noop(MPI_T_event_instance e, MPI_T_event_registration r, MPI_T_cb_safety s, void *u)
{
    (void)e, (void)r, (void)s, (void)u;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int argi = 1, own = 0;
    if (argi < argc && !strcmp(argv[argi], "noop")) {
        own = 1;
        argi++;
    }
    const char *name = argi < argc ? argv[argi++] : "ompi.mpi.communicator_created";
    long n = argi < argc ? atol(argv[argi++]) : 200000;
    int runs = argi < argc ? atoi(argv[argi++]) : 7;
    int (*index_of)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "mpit_double_event_index");
    int (*raise_index)(int, const void *, size_t, long long) =
        (int (*)(int, const void *, size_t, long long))dlsym(RTLD_DEFAULT, "mpit_double_raise_index");
    size_t (*payload_size)(int) = (size_t(*)(int))dlsym(RTLD_DEFAULT, "mpit_double_payload_size");
    if (!index_of || !raise_index || !payload_size) {
        fprintf(stderr, "mpit_callback: the MPI_T test double is not loaded (LD_PRELOAD libmpit_double.so)\n");
        return 1;
    }
    int provided;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    MPI_Init(&argc, &argv);
    int idx = index_of(name);
    if (idx < 0) {
        fprintf(stderr, "mpit_callback: no event type %s\n", name);
        return 1;
    }
    MPI_T_event_registration reg;
    if (own) {
        MPI_T_event_handle_alloc(idx, 0, MPI_INFO_NULL, &reg);
        MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, 0, noop);
    }
    unsigned char payload[256] = {0};
    size_t bytes = payload_size(idx);
    double *ns = calloc((size_t)runs, sizeof *ns);
    long delivered = 0;
    for (int r = -1; r < runs; r++) { /* run -1 warms up */
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            delivered += raise_index(idx, payload, bytes, 0);
        double per = (now_ns() - t0) / (double)n;
        if (r >= 0)
            ns[r] = per;
    }
    qsort(ns, (size_t)runs, sizeof *ns, cmp);
    printf("mpit_callback mode=%s event=%s events=%ld runs=%d delivered_per_raise=%.2f ns_per_raise_median=%.1f "
           "min=%.1f max=%.1f\n",
           own ? "noop" : "tracer", name, n, runs, (double)delivered / (double)(n * (runs + 1)), ns[runs / 2], ns[0],
           ns[runs - 1]);
    if (own)
        MPI_T_event_handle_free(reg, 0, 0);
    MPI_Finalize();
    if (own)
        MPI_T_finalize();
    return 0;
}
