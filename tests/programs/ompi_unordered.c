/* ompi_unordered.c - ground truth for the unordered-source check of
 * test_ompi_events.py (issue 17): Open MPI 6's "ompi.unordered" MPI_T source
 * and its one event type, ompi.mca.memory.patcher.released {count, bytes}.
 *
 * Open MPI b42cc61 registers that source only if its memory hooks are active
 * when ompi_mpit_register_events() runs (ompi/runtime/ompi_mpit_register_events.c:227),
 * i.e. at the first MPI_T_init_thread and early in MPI_Init
 * (ompi/instance/instance.c:346). Nothing opens OPAL's memory framework before
 * then in any build (rcache, common/ucx, common/ofi open it later, inside
 * MPI_Init), so, like Open MPI's own test/util/mca_base_event_test.c:628, this
 * program opens it itself: MPI_T_init_thread (opal_init_util), then
 * mca_base_framework_open(&opal_memory_base_framework, 0) found with dlsym,
 * then MPI_Init. Every rank r then:
 *   registers its own callback on the released event, which keeps every
 *   delivery (count, bytes, tick);
 *   drains the source (MPI_T_source_get_timestamp)              -> tick d0
 *   K times: mmap S bytes, touch them, munmap                   (phase A)
 *   drains                                                      -> tick d1
 *   J times: malloc S bytes (above a fixed mmap threshold), free (phase B)
 *   drains                                                      -> tick d2
 *   frees its registration, MPI_Finalize, MPI_T_finalize.
 * It prints one "open" line, one line per delivery it saw and a "drains"
 * line; tracer's registration was live all along, so the deliveries with
 * ticks in (d0, d2] are exactly the ones tracer must have. Exits 0 (2 if the
 * source is absent). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define K 5
#define J 3
#define S (1u << 20)
#define MAXEV 256

static struct { unsigned long long count, bytes; long long tick; } ev[MAXEV];
static int nev;

/* Deliveries may come from tracer's writer thread too (its clock pairs). */
static void on_released(MPI_T_event_instance e, MPI_T_event_registration h, MPI_T_cb_safety s, void *u)
{
    (void)h; (void)s; (void)u;
    int i = __atomic_fetch_add(&nev, 1, __ATOMIC_RELAXED);
    if (i >= MAXEV)
        return;
    uint64_t c = 0, b = 0;
    MPI_Count t = -1;
    MPI_T_event_read(e, 0, &c);
    MPI_T_event_read(e, 1, &b);
    MPI_T_event_get_timestamp(e, &t);
    ev[i].count = c, ev[i].bytes = b, ev[i].tick = t;
}

static int find_source(const char *want)
{
    int n = 0;
    MPI_T_source_get_num(&n);
    for (int i = 0; i < n; i++) {
        char name[256];
        int nl = sizeof name;
        MPI_T_source_order o;
        MPI_Count tps, mx;
        if (MPI_T_source_get_info(i, name, &nl, NULL, NULL, &o, &tps, &mx, NULL) == MPI_SUCCESS &&
            !strcmp(name, want))
            return i;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    int (*fw_open)(void *, int) = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "mca_base_framework_open");
    void *fw = dlsym(RTLD_DEFAULT, "opal_memory_base_framework");
    int orc = fw_open && fw ? fw_open(fw, 0) : -999;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 98;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int src = find_source("ompi.unordered"), type = -1;
    MPI_T_event_get_index("ompi.mca.memory.patcher.released", &type);
    printf("rank %d: open %d, source %d, type %d\n", rank, orc, src, type);
    if (src < 0 || type < 0) {
        MPI_Finalize();
        MPI_T_finalize();
        return 2;
    }
    MPI_T_event_registration h;
    MPI_T_event_handle_alloc(type, NULL, MPI_INFO_NULL, &h);
    MPI_T_event_register_callback(h, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_released);
    MPI_Count d0, d1, d2;
    MPI_T_source_get_timestamp(src, &d0);
    for (int i = 0; i < K; i++) {
        char *p = mmap(NULL, S, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 97;
        memset(p, i + 1, S);
        munmap(p, S);
    }
    MPI_T_source_get_timestamp(src, &d1);
    mallopt(M_MMAP_THRESHOLD, 256 * 1024); /* fixed: S-byte chunks are mmapped every time */
    for (int i = 0; i < J; i++) {
        char *volatile p = malloc(S);
        if (!p)
            return 96;
        memset(p, i + 1, S);
        free(p);
    }
    MPI_T_source_get_timestamp(src, &d2);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_T_event_handle_free(h, NULL, NULL);
    int n = nev < MAXEV ? nev : MAXEV;
    for (int i = 0; i < n; i++)
        printf("rank %d: released count %llu bytes %llu tick %lld\n", rank, ev[i].count, ev[i].bytes, ev[i].tick);
    printf("rank %d: drains %lld %lld %lld; K %d J %d S %u\n", rank, (long long)d0, (long long)d1, (long long)d2, K,
           J, S);
    MPI_Finalize();
    MPI_T_finalize();
    return 0;
}
