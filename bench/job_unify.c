/* bench/job_unify.c [MAX_RANKS] - the unification of a job's definitions
 * and rank 0's global definitions, simulated in one process for job sizes
 * this machine cannot run as processes (up to 16384 ranks by default).
 *
 * Each simulated rank has what bench/mpi_job's ranks have, plus a little:
 * 40 strings and 12 regions common to all ranks, 2 strings and 1 region of
 * its own, one host thread, one device with one stream, one MPI_T source,
 * 3 properties. The binomial tree of src/job/job_tree.c is replayed level by
 * level with the real code (tr_job_union_pack on the child, _add_blob on the
 * parent); the critical path is rank 0's chain: at level k it packs nothing
 * but waits for child 2^k, which did the same for its own subtree, so the
 * chain costs the sum over levels of (pack of the child's union + merge into
 * rank 0's), transfers excluded. Then rank 0 writes the global definitions
 * of all ranks (tr_job_union_write into a real OTF2 archive, no events).
 * Prints a table; docs/scaling.md quotes it. Not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "writer/defs_codec.h"
#include "writer/job_part.h"
#include "writer/writer_internal.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char config0[] = "TRACER_BUFFER_SIZE=1048576 (default)";

static tr_job_union *one_rank(int r)
{
    tr_defs d;
    tr_defs_init(&d, 1);
    char buf[128];
    /* Ranks meet their definitions in different orders, as real ranks do. */
    for (int i = 0; i < 40; i++) {
        snprintf(buf, sizeof buf, "common string %d", (i + r) % 40);
        tr_defs_str(&d, buf);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(buf, sizeof buf, "rank %d string %d", r, i);
        tr_defs_str(&d, buf);
    }
    for (int i = 0; i < 13; i++) {
        tr_region_def def = {.line = (uint32_t)i, .role = OTF2_REGION_ROLE_FUNCTION, .paradigm = OTF2_PARADIGM_USER};
        if (i < 12)
            snprintf(buf, sizeof buf, "region %d", (i + r) % 12);
        else
            snprintf(buf, sizeof buf, "rank %d region", r);
        def.name = def.canonical = tr_defs_str(&d, buf);
        def.description = def.file = tr_defs_str(&d, "");
        tr_defs_region_add(&d, &def);
    }
    tr_defs_attribute(&d, tr_defs_str(&d, "mpit element"), tr_defs_str(&d, "payload"), OTF2_TYPE_UINT64);

    static uint64_t events[3] = {10002, 40, 10};
    uint64_t lane = 1;
    tr_desc_device dev = {0, 1, &lane};
    char host[64], src[] = "MPI_T source ompi";
    snprintf(host, sizeof host, "node%04d", r / 64);
    tr_desc_mpit mpit = {2, src};
    tr_desc_comm comm = {0x44000000u, 1};
    char pn[3][96], pv[3][96];
    tr_desc_prop props[3];
    for (int i = 0; i < 3; i++) {
        snprintf(pn[i], sizeof pn[i], "TRACER::MPIT::RANK%d::PROP%d", r, i);
        snprintf(pv[i], sizeof pv[i], "name=ompi; events=%d; dropped=0", 100 + i);
        props[i] = (tr_desc_prop){pn[i], pv[i]};
    }
    char *config[1] = {config0};
    tr_rank_desc desc = {.rank = r, .pid = 1000u + (unsigned)r, .hostname = host, .ended = 1,
                         .loc_base = 3u * (unsigned)r, .group_base = 2u * (unsigned)r, .win_base = (uint32_t)r,
                         .nlocations = 3, .events = events, .nhost = 1, .ndevices = 1, .devices = &dev,
                         .nmpit = 1, .mpit = &mpit, .ncomms = 1, .comms = &comm, .t_min = 1000, .t_max = 2000000,
                         .nprops = 3, .props = props, .nconfig = r == 0, .config = config, .records = 10042,
                         .events_total = 10052};
    tr_job_union *u = tr_job_union_new();
    if (!u || tr_job_union_add_desc(u, &d, &desc)) {
        fprintf(stderr, "job_unify: out of memory\n");
        exit(1);
    }
    tr_defs_free(&d);
    return u;
}

static void run(int n, const char *dir)
{
    tr_job_union **u = calloc((size_t)n, sizeof *u);
    for (int r = 0; r < n; r++)
        u[r] = one_rank(r);
    double chain = 0, root_merge = 0;
    size_t root_in = 0;
    for (int mask = 1; mask < n; mask <<= 1) {
        for (int r = 0; r + mask < n; r += 2 * mask) {
            tr_blob b = {0};
            double t0 = now();
            if (tr_job_union_pack(u[r + mask], &b))
                exit(1);
            double t1 = now();
            if (tr_job_union_add_blob(u[r], b.p, b.n))
                exit(1);
            double t2 = now();
            if (r == 0) {
                chain += t2 - t0;
                root_merge += t2 - t1;
                root_in += b.n;
            }
            tr_blob_free(&b);
            tr_job_union_free(u[r + mask]);
            u[r + mask] = 0;
        }
    }
    tr_blob defs = {0};
    double t0 = now();
    tr_job_union_pack_defs(u[0], &defs);
    double pack_defs = now() - t0;
    /* Every rank's map: its own table merged into the broadcast one. */
    tr_job_union *probe = one_rank(n - 1);
    tr_blob_reader rd = tr_blob_read(defs.p, defs.n);
    tr_defs g;
    t0 = now();
    if (tr_defs_unpack(&rd, &g))
        exit(1);
    double unpack = now() - t0;
    tr_defs_free(&g);
    tr_job_union_free(probe);

    char path[4096];
    snprintf(path, sizeof path, "%s/n%d", dir, n);
    mkdir(path, 0777);
    t0 = now();
    OTF2_Archive *ar = tr_job_archive_open(path, "sim", 1);
    if (!ar || OTF2_Archive_OpenEvtFiles(ar) != OTF2_SUCCESS)
        exit(1);
    OTF2_Archive_CloseEvtFiles(ar);
    tr_convert_report rep;
    memset(&rep, 0, sizeof rep);
    if (tr_job_union_write(u[0], ar, n, &rep)) {
        fprintf(stderr, "job_unify: %s\n", rep.error);
        exit(1);
    }
    double global = now() - t0;
    snprintf(path, sizeof path, "%s/n%d/traces.def", dir, n);
    struct stat st;
    long def_kib = stat(path, &st) ? -1 : (long)(st.st_size / 1024);
    printf("| %d | %.2f | %.2f | %zu | %zu | %.3f | %.3f | %.1f | %ld |\n", n, 1e3 * chain, 1e3 * root_merge,
           root_in / 1024, defs.n, 1e3 * pack_defs, 1e3 * unpack, 1e3 * global, def_kib);
    fflush(stdout);
    tr_blob_free(&defs);
    tr_job_union_free(u[0]);
    free(u);
}

int main(int argc, char **argv)
{
    int max = argc > 1 ? atoi(argv[1]) : 16384;
    char dir[] = "/tmp/tracer-job-unify.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    printf("tracer job unification, simulated (bench/job_unify.c), one process\n\n");
    printf("| ranks | rank 0 chain, ms | of which merging, ms | received by rank 0, KiB | unified definitions "
           "(broadcast), bytes | pack them, ms | unpack on a rank, ms | global definitions, ms | traces.def, KiB |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int n = 16; n <= max; n *= 4)
        run(n, dir);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
