/* mpit_events.c - MPI program for tests/test_mpit_events.py: tracer's
 * recording of MPI_T events, driven by the MPI_T provider TEST DOUBLE.
 *
 * TEST DOUBLE: the events come from tests/mpit_double (libmpit_double.so,
 * LD_PRELOADed after libtracer.so), which stands in for an MPI library that
 * raises MPI_T events; Debian's MPICH 4.0.2 raises none. This program is an
 * ordinary MPICH program: it triggers the double's automatic events with
 * real MPI calls and raises the rest through the double's control API
 * (mpit_double.h), found with dlsym(RTLD_DEFAULT) so that the program also
 * runs, unchanged, with or without libtracer.so. What was raised, with which
 * tick and values, and to how many callbacks, is the double's log
 * (MPIT_DOUBLE_LOG): the test compares the trace with that log, not with
 * anything printed here.
 *
 * Usage: mpit_events [main|wrap] [EXIT_CODE]
 *   main (default): MPI_Init; MPI_Comm_dup of MPI_COMM_WORLD, set_name on
 *     it and on MPI_COMM_WORLD (communicator_name_set is bound to
 *     communicators); MPI_Comm_split; control-API raises: every element type
 *     of double.weird, errhandler_invoked normally and once with a negative
 *     source tick offset (an order violation on the ordered source), a
 *     memory release drained from the sink, drops of a bound and an unbound
 *     type; MPI_Comm_free of both; a name_set raise for the freed dup (no
 *     registration left: delivered=0); 2 ms later MPI_Finalize.
 *   wrap: MPI_Init, then double.weird every 20 ms until source 0's tick
 *     has gone back to 0 (the test makes it wrap soon after MPI_T init with
 *     MPIT_DOUBLE_SCRIPT="@tinit;wrap_in:..."), and 5 more after; at most
 *     20 s. 2 ms later MPI_Finalize.
 * stdout: one line per rank, "mpit_events: rank R of N: SCENARIO done" (wrap
 * adds "wrap seen" or "no wrap"). Exit status EXIT_CODE (default 5) when
 * everything ran; 3 when the double's control API is missing; 4 when an MPI
 * call or a control-API call failed.
 */
#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The order violation: errhandler_invoked with this err_code, raised with a
 * source tick VIOLATION_OFFSET_US before the previous raise's (source 0
 * ticks in us). */
#define VIOLATION_ERR_CODE 78
#define VIOLATION_OFFSET_US (-2000LL)

typedef int (*event_index_fn)(const char *);
typedef int (*raise_index_fn)(int, const void *, size_t, long long);
typedef int (*raise_fn)(const char *, ...);
typedef int (*drop_fn)(const char *, long long);
typedef void (*release_fn)(unsigned long long, unsigned long long);
typedef int (*drain_fn)(void);
typedef MPI_Count (*tick_fn)(int);

static struct {
    event_index_fn event_index;
    raise_index_fn raise_index;
    raise_fn raise;
    drop_fn drop;
    release_fn release;
    drain_fn drain;
    tick_fn tick;
} dbl;

static int failed;

#define MUST(call)                                                                                                    \
    do {                                                                                                              \
        if ((call) < 0) {                                                                                             \
            fprintf(stderr, "mpit_events: %s failed\n", #call);                                                       \
            failed = 1;                                                                                               \
        }                                                                                                             \
    } while (0)

#define MPI_MUST(call)                                                                                                \
    do {                                                                                                              \
        if ((call) != MPI_SUCCESS) {                                                                                  \
            fprintf(stderr, "mpit_events: %s failed\n", #call);                                                       \
            failed = 1;                                                                                               \
        }                                                                                                             \
    } while (0)

static void *need(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f) {
        fprintf(stderr, "mpit_events: %s not found: preload libmpit_double.so (the MPI_T test double)\n", name);
        exit(3);
    }
    return f;
}

static void find_control_api(void)
{
    dbl.event_index = (event_index_fn)need("mpit_double_event_index");
    dbl.raise_index = (raise_index_fn)need("mpit_double_raise_index");
    dbl.raise = (raise_fn)need("mpit_double_raise");
    dbl.drop = (drop_fn)need("mpit_double_drop");
    dbl.release = (release_fn)need("mpit_double_release");
    dbl.drain = (drain_fn)need("mpit_double_drain");
    dbl.tick = (tick_fn)need("mpit_double_tick");
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* errhandler_invoked laid out as the catalogue says (24 bytes), raised with
 * @offset added to the source tick. */
static void raise_errhandler(int code, uint64_t eh, uint64_t obj, long long offset)
{
    unsigned char p[24];
    int32_t c = code, objtype = MPI_T_BIND_MPI_COMM;
    memcpy(p, &c, 4);
    memcpy(p + 4, &objtype, 4);
    memcpy(p + 8, &eh, 8);
    memcpy(p + 16, &obj, 8);
    MUST(dbl.raise_index(dbl.event_index("ompi.mpi.errhandler_invoked"), p, sizeof p, offset));
}

static void scenario_main(void)
{
    MPI_Comm dup = MPI_COMM_NULL, split = MPI_COMM_NULL;
    int rank = 0;
    MPI_MUST(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_MUST(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_MUST(MPI_Comm_set_name(dup, "mpit_events dup"));
    MPI_MUST(MPI_Comm_set_name(MPI_COMM_WORLD, "mpit_events world"));
    MPI_MUST(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split));
    uint64_t world = (uint64_t)(uint32_t)MPI_COMM_WORLD;
    uint64_t dup_handle = (uint64_t)(uint32_t)dup;

    /* Every element type: INT32, COUNT -5, AINT, OFFSET 1<<40, and the
     * weird MPI_2INT pair {1, -1} (bytes 01000000ffffffff). */
    int32_t pair[2] = {1, -1};
    MUST(dbl.raise("double.weird", 11, -5LL, 0x7fff0000LL, 1LL << 40, (const void *)pair));
    int32_t pair2[2] = {-2, 0x12345678};
    MUST(dbl.raise("double.weird", -12, 9223372036854775807LL, -1LL, 0LL, (const void *)pair2));

    /* The violation's tick is set 2 ms before a tick read before the
     * previous instance, so it is below that instance's tick however long the
     * raise took (a fixed -2 ms was no violation once the previous raise took
     * over 2 ms: ASan build on a loaded machine). */
    MPI_Count before77 = dbl.tick(0);
    raise_errhandler(77, 0x54000000u, world, 0);
    raise_errhandler(VIOLATION_ERR_CODE, 0x54000000u, world, (long long)(before77 - dbl.tick(0)) + VIOLATION_OFFSET_US);
    MUST(dbl.raise("ompi.mpi.errhandler_invoked", 79, MPI_T_BIND_MPI_COMM, 0x54000000ULL, (unsigned long long)world));

    /* Source 1: one aggregated memory release. */
    dbl.release(2, 8192);
    MUST(dbl.drain());

    /* Drops: an unbound type (one handler) and a bound one (one handler per
     * communicator it is bound to). */
    MUST(dbl.drop("ompi.mpi.communicator_created", 3));
    MUST(dbl.drop("ompi.mpi.communicator_name_set", 2));

    MPI_MUST(MPI_Comm_free(&split));
    MPI_MUST(MPI_Comm_free(&dup));
    /* Nobody is bound to the freed communicator any more. */
    MUST(dbl.raise("ompi.mpi.communicator_name_set", (unsigned long long)dup_handle));
}

static const char *scenario_wrap(void)
{
    MPI_Count before = dbl.tick(0), prev = before;
    int after = -1;
    for (int i = 0; i < 1000 && after < 5; i++) {
        MUST(dbl.raise("double.weird", i, (long long)i, 0LL, 0LL, (const void *)&(int32_t[2]){i, -i}));
        MPI_Count now = dbl.tick(0);
        if (after < 0 && now < prev)
            after = 0;
        else if (after >= 0)
            after++;
        prev = now;
        sleep_ms(20);
    }
    if (after >= 0)
        return "wrap seen";
    /* Re-based at MPI_T init to wrap a few seconds later: a tick already in
     * the lower half of the 2^40 period means MPI_Init took that long. */
    return before < ((MPI_Count)1 << 39) ? "no wrap (it came before the loop)" : "no wrap";
}

int main(int argc, char **argv)
{
    const char *scenario = argc > 1 ? argv[1] : "main";
    int exit_code = argc > 2 ? atoi(argv[2]) : 5;
    if (strcmp(scenario, "main") && strcmp(scenario, "wrap")) {
        fprintf(stderr, "usage: mpit_events [main|wrap] [EXIT_CODE]\n");
        return 2;
    }
    find_control_api();
    MPI_MUST(MPI_Init(&argc, &argv));
    int rank = -1, size = -1;
    MPI_MUST(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_MUST(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *extra = "";
    if (!strcmp(scenario, "main"))
        scenario_main();
    else
        extra = scenario_wrap();
    /* The test tells raises before MPI_Finalize from those inside it by the
     * double's CLOCK_MONOTONIC against tracer's stamp of MPI_Finalize's
     * Enter; the two clocks may disagree by a few microseconds, so the last
     * raise (a few microseconds ago) is moved well clear of it. */
    sleep_ms(2);
    MPI_MUST(MPI_Finalize());
    printf("mpit_events: rank %d of %d: %s done%s%s\n", rank, size, scenario, *extra ? ", " : "", extra);
    fflush(stdout);
    return failed ? 4 : exit_code;
}
