/* Commands of the `tracer` CLI and the counting behind `tracer summary`.
 *
 * The counting is exported (not static) so that tests and future commands
 * can read the same numbers without parsing the text output.
 */
#ifndef TRACER_TOOLS_COMMANDS_H
#define TRACER_TOOLS_COMMANDS_H

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

struct tr_kernel_count {
    char *name;     /* display name of the kernel region (owned) */
    uint64_t count; /* Enter events */
};

struct tr_count_bytes {
    uint64_t count;
    uint64_t bytes;
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
    /* Transfers below TRACER_MIN_BYTES: totals only, from the archive's
     * TRACER::FILTERED::SMALL_TRANSFERS_* properties (0 when absent). */
    struct tr_count_bytes small_to_device;
    struct tr_count_bytes small_from_device;
    /* TRACER::RUN::END: "normal end", "crashed (signal N)", ... ("" when absent). */
    char run_end[128];
    /* declare target link: "link map" events per variable, and stale pointers. */
    struct tr_kernel_count *link_maps; /* name = variable */
    size_t n_link_maps;
    uint64_t stale_link_pointers;
    /* MPI_T: sources the MPI reported, events recorded and drops reported,
     * from the TRACER::MPIT::SOURCE::* properties; locations named
     * "MPI_T source ..." are not host threads. */
    uint64_t mpit_sources, mpit_events, mpit_dropped, mpit_order_violations;
    char mpit_status[256]; /* TRACER::MPIT::STATUS, "" when absent */
};

/* Canonical region name of a target kind ("target enter data nowait"). */
const char *tr_target_kind_name(enum tr_target_kind kind);

/* Read the archive at PATH (trace directory or its traces.otf2) and fill
 * *OUT.  Returns 0 on success; on failure returns -1, leaves *OUT empty and
 * writes a one-line reason (no trailing newline) into ERR. */
int tr_summary_collect(const char *path, struct tr_summary *out, char *err, size_t errlen);

void tr_summary_print_text(FILE *fp, const struct tr_summary *s);
void tr_summary_print_json(FILE *fp, const struct tr_summary *s);
void tr_summary_free(struct tr_summary *s);

/* Entry points of the commands: argv[0] is the command name. */
int cmd_summary(int argc, char **argv);
void cmd_summary_usage(FILE *fp);
int cmd_info(int argc, char **argv);
void cmd_info_usage(FILE *fp);
int cmd_run(int argc, char **argv);
void cmd_run_usage(FILE *fp);

/* tracer recover DIR (cmd_recover.c). */
int cmd_recover(int argc, char **argv);
void cmd_recover_usage(FILE *fp);

/* tracer convert ARCHIVE -o FILE (cmd_convert.c; convert_sink.h). */
int cmd_convert(int argc, char **argv);
void cmd_convert_usage(FILE *fp);

#endif
