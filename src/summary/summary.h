/* summary.h - what a tracer OTF2 archive holds, counted for a report.
 *
 * One reader (summary_read.c and the files summary_internal.h lists, on
 * the OTF2 reading layer src/otf2read/) and two printers (summary_print.c),
 * built as the static library tracer_summary: the `tracer summary` command
 * and libtracer.so's end-of-run report (TRACER_SUMMARY=1) use the same code.
 * Counting uses canonical region names, RMA events and the attributes of
 * docs/trace-model.md, never display names, except where a display name is
 * what is reported (kernels, regions, MPI_T event types).
 *
 * Nothing here is thread-safe: one struct tr_summary per caller. The
 * reader installs its own OTF2 error callback while it reads and restores
 * the previous one, so it must not run beside another OTF2 user in the
 * same process. Inside libtracer.so these symbols are hidden.
 */
#ifndef TRACER_SUMMARY_SUMMARY_H
#define TRACER_SUMMARY_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Target-construct kinds, in the order the summary prints them.  Indexes
 * into tr_summary.target_regions; names come from tr_target_kind_name(). */
enum tr_target_kind {
    TR_TARGET,
    TR_TARGET_ENTER_DATA,
    TR_TARGET_EXIT_DATA,
    TR_TARGET_UPDATE,
    TR_TARGET_NOWAIT,
    TR_TARGET_ENTER_DATA_NOWAIT,
    TR_TARGET_EXIT_DATA_NOWAIT,
    TR_TARGET_UPDATE_NOWAIT,
    TR_TARGET_KIND_COUNT
};

/* Where a region ran, in the order the report lists them. A CPU_THREAD
 * location named "MPI_T source ..." is an MPI_T source; other location
 * types (from other writers) are TR_LOC_OTHER. Names: tr_loc_kind_name(). */
enum tr_loc_kind { TR_LOC_HOST, TR_LOC_DEVICE, TR_LOC_MPIT, TR_LOC_OTHER, TR_LOC_KIND_COUNT };

struct tr_kernel_count {
    char *name;     /* display name of the kernel region (owned) */
    uint64_t count; /* Enter events */
};

struct tr_count_bytes {
    uint64_t count;
    uint64_t bytes;
};

/* One region (display name + canonical name) on one kind of location,
 * summed over every location of that kind. Inclusive time counts only the
 * outermost of recursive instances on a location, so it never exceeds the
 * time the locations spent in the region; exclusive time is inclusive time
 * minus the time of regions directly inside it. */
struct tr_region_stat {
    char *name;      /* display name (owned) */
    char *canonical; /* canonical name, the display name when absent (owned) */
    enum tr_loc_kind kind;
    uint64_t count; /* Enter events */
    uint64_t inclusive_ns, exclusive_ns;
};

/* Transfers of one direction: from the data op regions ("transfer to
 * device" / "transfer from device", and their " async" forms). time_ns
 * sums their durations (Enter to Leave on the host thread). */
struct tr_transfer_stat {
    uint64_t count, bytes, time_ns;
};

/* One device: "device <d>", or "rank <N> device <d>" in an MPI job's
 * archive (its location group's name). */
struct tr_device_stat {
    char *name; /* (owned) */
    struct tr_transfer_stat to_device, from_device;
    bool has_memory;      /* the archive has device_memory_in_use values for it */
    uint64_t peak_memory; /* largest device_memory_in_use, bytes */
};

/* MPI_T events of one type from one source (locations "MPI_T source
 * <source>" of every rank together): zero-length regions named after the
 * type, and drops from the "MPI_T events dropped" regions (mpit_dropped,
 * per mpit_event_type). */
struct tr_mpit_type_stat {
    char *type; /* (owned) */
    uint64_t events, dropped;
};

struct tr_mpit_source_stat {
    char *name; /* what follows "MPI_T source " (owned) */
    uint64_t locations;
    uint64_t events;
    /* Sum of the drop regions' counts; when larger, the sum over its
     * locations of the last "MPI_T dropped events" metric value. */
    uint64_t dropped;
    struct tr_mpit_type_stat *types; /* by type name */
    size_t n_types;
};

/* One TRACER::CONFIG::<VARIABLE> property: "value (source)". */
struct tr_config_entry {
    char *name;  /* the variable, e.g. TRACER_OUTPUT (owned) */
    char *value; /* e.g. "0-1 (environment)" (owned) */
};

/* Host OpenMP states (docs/trace-model.md, "Host OpenMP states"): one
 * host thread that was in a parallel region or a waiting state, or that
 * has OMP work / OMP wait metric values. Its work and wait are the last
 * values of the OMP work and OMP wait metrics on it (running totals); a
 * thread without both metrics gets them from its regions, by the metrics'
 * definition: wait = the time in the waiting states (<OMP-implicit_barrier>,
 * <OMP-explicit_barrier>, <OMP-taskwait>, <OMP-taskgroup>, <OMP-lock_wait>,
 * <OMP-critical_section_wait>, <OMP-ordered_section_wait>,
 * <OMP-atomic_wait>; nested ones once), work = the time in the outermost
 * `parallel` regions minus the waits inside them. */
struct tr_omp_thread {
    char *location; /* "host thread 3" (owned) */
    char *process;  /* its location group: "process 1234", "rank 2" (owned) */
    uint64_t work_ns, wait_ns;
    bool from_metrics; /* false: from the regions */
};

/* One thread's share of a parallel region: the outermost instances of the
 * region on the thread (Enter count: every instance), their inclusive time
 * minus the waiting states inside them (work) and those waits (wait). */
struct tr_omp_region_thread {
    size_t thread; /* index into tr_summary.omp_threads */
    uint64_t instances;
    uint64_t work_ns, wait_ns;
};

/* A parallel region (role PARALLEL, canonical name "parallel"), by display
 * name: "parallel (<file>:<line>)". work and wait are the sums over its
 * threads; instances: the teams that ran it (a team's first thread enters
 * it just after leaving <OMP-overhead>; at least the most Enters on one
 * thread). Imbalance (printers): the largest work of one of its threads /
 * the mean work over its threads, 1 = balanced. */
struct tr_omp_parallel {
    char *name; /* (owned) */
    uint64_t instances;
    uint64_t work_ns, wait_ns;
    struct tr_omp_region_thread *threads; /* in the order of omp_threads (owned) */
    size_t n_threads;
};

/* Data ops of one advice category at one construct on one variable. */
struct tr_advice_group {
    char *category; /* "duplicate_transfer", "round_trip", ... (owned) */
    char *source;   /* the construct's region, e.g. "target update (app.c:34)"; NULL unknown (owned) */
    char *variable; /* the host variable where tracer knows it, else NULL (owned) */
    int rank;       /* an MPI job's rank ("rank <N>" location group), -1 a single process */
    uint64_t count;   /* flagged ops (an unused allocation counts its alloc) */
    uint64_t bytes;   /* their bytes: moved, or allocated */
    uint64_t time_ns; /* their own time, an unused allocation's delete included: what removing them saves */
};

struct tr_summary {
    char *trace_path; /* the traces.otf2 anchor that was read (owned) */
    uint64_t duration_ns;
    uint64_t processes;
    uint64_t host_threads;
    uint64_t devices;
    uint64_t target_regions[TR_TARGET_KIND_COUNT];
    struct tr_kernel_count *kernels; /* in order of definition */
    size_t n_kernels;
    struct tr_count_bytes transfers_to_device;
    struct tr_count_bytes transfers_from_device;
    struct tr_count_bytes allocations;
    uint64_t deletes;
    uint64_t incomplete;
    /* Gaps (MeasurementOnOff OFF): those of drop mode (TRACER_ON_FULL=drop)
     * with the events they lost, and those of journal chunks lost. */
    uint64_t drop_gaps, dropped_events, missing_gaps;
    /* Regions still open at the end in a team the OpenMP runtime forked for
     * itself (incomplete = 2: libomp's hidden helpers), not the program's. */
    uint64_t runtime_open;
    /* Transfers below TRACER_MIN_BYTES: totals only, from the archive's
     * TRACER::FILTERED::SMALL_TRANSFERS_* properties (0 when absent). */
    struct tr_count_bytes small_to_device;
    struct tr_count_bytes small_from_device;
    /* TRACER::RUN::END: "normal end", "crashed (signal N)", ... ("" when absent). */
    char run_end[128];
    /* declare target link: "link map" events per variable, and stale
     * pointers ("stale link pointer" events, also per variable); by name. */
    struct tr_kernel_count *link_maps; /* name = variable */
    size_t n_link_maps;
    uint64_t stale_link_pointers;
    struct tr_kernel_count *stale_by_variable; /* name = variable ("?" when unnamed) */
    size_t n_stale_by_variable;
    /* Data mapping advice (issue 37): the data ops flagged in the archive
     * (attribute "advice"), grouped; the costliest first. */
    struct tr_advice_group *advice;
    size_t n_advice;
    /* MPI_T: sources the MPI reported, events recorded and drops reported,
     * from the TRACER::MPIT::SOURCE::* properties; locations named
     * "MPI_T source ..." are not host threads. */
    uint64_t mpit_sources, mpit_events, mpit_dropped, mpit_order_violations;
    char mpit_status[256]; /* TRACER::MPIT::STATUS, "" when absent */
    /* Regions with at least one Enter, ordered by kind, then exclusive time
     * (largest first), count (largest first), name, canonical name. */
    struct tr_region_stat *regions;
    size_t n_regions;
    /* Every device location group, plus devices only transfers name, in
     * the order of their groups (rank by rank in a job's archive). */
    struct tr_device_stat *device_stats;
    size_t n_device_stats;
    /* The MPI_T events the archive holds, per source (by name). */
    struct tr_mpit_source_stat *mpit_by_source;
    size_t n_mpit_by_source;
    /* Host OpenMP states: only when a host thread was in a parallel region
     * or a waiting state, or has a nonzero OMP work / OMP wait value.
     * Threads in archive order (by rank, then location); parallel regions
     * by work + wait, largest first, then name. */
    bool has_omp;
    struct tr_omp_thread *omp_threads;
    size_t n_omp_threads;
    struct tr_omp_parallel *omp_parallel;
    size_t n_omp_parallel;
    /* TRACER::CONFIG::* in the archive's order (none: not a tracer archive). */
    struct tr_config_entry *config;
    size_t n_config;
};

/* Canonical region name of a target kind ("target enter data nowait"). */
const char *tr_target_kind_name(enum tr_target_kind kind);

/* "host thread", "device stream", "MPI_T source", "other". */
const char *tr_loc_kind_name(enum tr_loc_kind kind);

/* Read the archive at PATH (trace directory or its traces.otf2) and fill
 * *OUT.  Returns 0 on success; on failure returns -1, leaves *OUT empty and
 * writes a one-line reason (no trailing newline) into ERR. Memory: the
 * definitions, one stack of open regions per location (as deep as the
 * regions nest) and the counts (host OpenMP: one per parallel region and
 * thread that ran it); events are not kept. */
int tr_summary_collect(const char *path, struct tr_summary *out, char *err, size_t errlen);

/* The terminal report. TOP: regions listed per location kind, by exclusive
 * time (0: all). */
#define TR_SUMMARY_DEFAULT_TOP 10
void tr_summary_print_text(FILE *fp, const struct tr_summary *s, size_t top);

/* The same report as one JSON object on one line (every region, whatever
 * the text's top). */
void tr_summary_print_json(FILE *fp, const struct tr_summary *s);

/* Frees what *S owns and empties it; S may be empty (all zero). */
void tr_summary_free(struct tr_summary *s);

/* TRACER_SUMMARY=1 at the end of a run: reads the archive in ARCHIVE_DIR
 * and writes to FD, in one write, the line "tracer: summary of
 * SHOWN_DIR/traces.otf2:" and the text report (default top), or one
 * "tracer: summary: ..." line when the archive cannot be read. Returns 0,
 * or -1 when it could not be read or written. */
int tr_summary_report_fd(int fd, const char *archive_dir, const char *shown_dir);

#endif
