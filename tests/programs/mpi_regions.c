/* Ground truth for test_mpi_defs.py: an MPI program whose user regions and
 * marks (include/tracer.h) differ between ranks, are registered in a
 * rank-dependent order and are used a rank-dependent number of times, so
 * that every rank's local string and region ids differ from the job's
 * unified ones and the archive is right only if the OTF2 mapping tables are.
 *
 * Rank r (of MPI_COMM_WORLD), after MPI_Init:
 *   registers the five names N = {"common A", "common B", "only rank r",
 *   "mark common", "mark rank r"} in the order N[(k + r) % 5], k = 0..4;
 *   even r: mark("mark rank r", 2^40 + r) first;
 *   for it = 0 .. r + 1 (r + 2 iterations), with R = {"common A",
 *   "common B", "only rank r"} and s = (r + it) % 3:
 *     begin R[s]; begin R[(s+1)%3]; end R[(s+1)%3]; end R[s];
 *     if (r + it) is even: begin R[(s+2)%3]; end R[(s+2)%3];
 *     mark("mark common", 1000 r + it);
 *   odd r: mark("mark rank r", 2^40 + r) last;
 *   then MPI_Finalize, exit status 0.
 * Output, one line per rank: "mpi_regions: rank <r> of <n> sequence: " and
 * the Enter events of the rank's user regions and marks in order, joined by
 * "; ", a region as its name, a mark as "<name>=<value>". The sequence is
 * the program's plan, printed the same with or without tracer.
 *
 * The program is not linked with libtracer: it is preloaded (mpiexec -n N
 * env LD_PRELOAD=libtracer.so ./mpi_regions). The API is looked up with
 * dlsym, its types checked against tracer.h at compile time; without
 * tracer the calls are skipped. A call that fails (register gives 0, begin,
 * end or mark gives -1) makes the exit status 3.
 *
 * With TEST_CLOBBER_JOURNAL=<k>, rank k, just before MPI_Finalize, puts a
 * file that is not a journal in place of its journal
 * ($TRACER_OUTPUT/journals/rank<k>.journal; rename, so tracer's open
 * journal is untouched but the path names junk): the job's archive cannot
 * be written, and the test checks that the ranks fail together. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracer.h"

typedef tracer_region_t (*register_fn)(const char *);
typedef int (*region_fn)(tracer_region_t);
typedef int (*mark_fn)(tracer_region_t, uint64_t);

/* The pointer types match the header's prototypes (_Generic does not
 * evaluate its operand: no reference to the symbols is made). */
_Static_assert(_Generic(&tracer_region_register, register_fn : 1, default : 0), "tracer_region_register");
_Static_assert(_Generic(&tracer_region_begin, region_fn : 1, default : 0), "tracer_region_begin");
_Static_assert(_Generic(&tracer_region_end, region_fn : 1, default : 0), "tracer_region_end");
_Static_assert(_Generic(&tracer_mark, mark_fn : 1, default : 0), "tracer_mark");

static register_fn reg_p;
static region_fn begin_p, end_p;
static mark_fn mark_p;
static int failures;

static char seq[16384];
static size_t seq_len;

enum { COMMON_A, COMMON_B, ONLY, MARK_COMMON, MARK_RANK, NNAMES };
static char names[NNAMES][64];
static tracer_region_t handles[NNAMES];

static void add(const char *fmt, const char *name, uint64_t value)
{
    if (seq_len && seq_len < sizeof seq)
        seq_len += (size_t)snprintf(seq + seq_len, sizeof seq - seq_len, "; ");
    if (seq_len < sizeof seq)
        seq_len += (size_t)snprintf(seq + seq_len, sizeof seq - seq_len, fmt, name, (unsigned long long)value);
}

static void begin(int k)
{
    add("%s", names[k], 0);
    if (begin_p && begin_p(handles[k]) != 0)
        failures++;
}

static void end(int k)
{
    if (end_p && end_p(handles[k]) != 0)
        failures++;
}

static void mark(int k, uint64_t value)
{
    add("%s=%llu", names[k], value);
    if (mark_p && mark_p(handles[k], value) != 0)
        failures++;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 98;
    int r = -1, n = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    reg_p = (register_fn)dlsym(RTLD_DEFAULT, "tracer_region_register");
    begin_p = (region_fn)dlsym(RTLD_DEFAULT, "tracer_region_begin");
    end_p = (region_fn)dlsym(RTLD_DEFAULT, "tracer_region_end");
    mark_p = (mark_fn)dlsym(RTLD_DEFAULT, "tracer_mark");

    snprintf(names[COMMON_A], sizeof names[0], "common A");
    snprintf(names[COMMON_B], sizeof names[0], "common B");
    snprintf(names[ONLY], sizeof names[0], "only rank %d", r);
    snprintf(names[MARK_COMMON], sizeof names[0], "mark common");
    snprintf(names[MARK_RANK], sizeof names[0], "mark rank %d", r);
    for (int k = 0; k < NNAMES; k++) {
        int i = (k + r) % NNAMES;
        if (reg_p && (handles[i] = reg_p(names[i])) == 0)
            failures++;
    }

    const uint64_t rank_value = ((uint64_t)1 << 40) + (uint64_t)r;
    if (r % 2 == 0)
        mark(MARK_RANK, rank_value);
    for (int it = 0; it < r + 2; it++) {
        int s = (r + it) % 3;
        int a = s, b = (s + 1) % 3, c = (s + 2) % 3;
        begin(a);
        begin(b);
        end(b);
        end(a);
        if ((r + it) % 2 == 0) {
            begin(c);
            end(c);
        }
        mark(MARK_COMMON, 1000 * (uint64_t)r + (uint64_t)it);
    }
    if (r % 2 == 1)
        mark(MARK_RANK, rank_value);

    printf("mpi_regions: rank %d of %d sequence: %s\n", r, n, seq);
    fflush(stdout);
    const char *clobber = getenv("TEST_CLOBBER_JOURNAL"), *out = getenv("TRACER_OUTPUT");
    if (clobber && *clobber && out && atoi(clobber) == r) {
        char path[4096], junk[4200];
        snprintf(path, sizeof path, "%s/journals/rank%d.journal", out, r);
        snprintf(junk, sizeof junk, "%s.junk", path);
        FILE *f = fopen(junk, "w");
        if (!f || fputs("not a journal\n", f) < 0 || fclose(f) || rename(junk, path))
            failures++;
    }
    MPI_Finalize();
    return failures ? 3 : 0;
}
