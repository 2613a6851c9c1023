/* config_table.c - THE list of TRACER_* variables. Adding a variable here
 * adds it to the parser, `tracer info --config`, `tracer run`'s options and
 * (through the test that checks it) the README. Keep help to one line. */
#include <stddef.h>

#include "core/config.h"

static const char *const clock_words[] = {"auto", "tsc", "monotonic", 0};
static const char *const on_full_words[] = {"block", "drop", 0};
static const char *const offsets_words[] = {"node", "rank", 0};
static const char *const job_write_words[] = {"exit", "finalize", 0};
static const char *const mode_words[] = {"user", "machine", 0};
static const char *const ompt_words[] = {"constructs", "data_ops", "kernels", "link_maps", "host_states", 0};

#define F(field) offsetof(tr_config, field)

const tr_cfg_var tr_cfg_vars[] = {
    {"TRACER_ENABLE", TR_CFG_BOOL, "1", "Turn tracing on (1) or off (0)", 0, 0, 0, F(enable)},
    {"TRACER_OUTPUT", TR_CFG_PATH, "./tracer-<exe>-<date>-<pid>",
     "Directory for the trace (traces.otf2 inside); never overwritten", 0, 0, 0, F(output)},
    {"TRACER_VERBOSE", TR_CFG_BOOL, "0", "Print start-up and end-of-run messages on stderr", 0, 0, 0, F(verbose)},
    {"TRACER_STRICT", TR_CFG_BOOL, "0",
     "Make configuration errors fatal before main (exit status 1), for CI", 0, 0, 0, F(strict)},
    {"TRACER_OMPT", TR_CFG_LIST, "all",
     "OMPT event classes: constructs, data_ops, kernels, link_maps (target regions), host_states (host "
     "OpenMP threads: parallel regions, barriers, locks, tasks)",
     ompt_words, 0, 0, F(ompt)},
    {"TRACER_MODE", TR_CFG_CHOICE, "user",
     "How host OpenMP states appear: user (program structure, runtime states as <OMP-...> regions) or machine "
     "(raw OMPT events)",
     mode_words, 0, 0, F(mode)},
    {"TRACER_DEVICES", TR_CFG_RANGES, "all", "OpenMP device numbers to trace, e.g. 0-3,8", 0, 0, 0, F(devices)},
    {"TRACER_MIN_BYTES", TR_CFG_SIZE, "0",
     "Smaller transfers are counted in totals but not recorded one by one", 0, 0, 0, F(min_bytes)},
    {"TRACER_HASH", TR_CFG_SIZE, "0",
     "Hash the bytes of transfers up to this size (e.g. 1G), attribute content_hash: a transfer of bytes the "
     "device already holds shows as the same hash (0: none; costs about one more read of the bytes)",
     0, 0, 0, F(hash_max)},
    {"TRACER_RANKS", TR_CFG_RANGES, "all", "MPI ranks to trace, e.g. 0,4-7 (rank from the launcher)", 0, 0, 0,
     F(ranks)},
    {"TRACER_REGIONS", TR_CFG_GLOBS, "*", "User regions (tracer.h) to record; !pattern excludes", 0, 0, 0,
     F(regions)},
    {"TRACER_MPIT_EVENTS", TR_CFG_GLOBS, "*", "MPI_T event types to register; !pattern excludes", 0, 0, 0,
     F(mpit_events)},
    {"TRACER_MPIT_LEVEL", TR_CFG_INT, "9",
     "Highest MPI_T verbosity to register: 1 user basic ... 9 mpidev all", 0, 1, 9, F(mpit_level)},
    {"TRACER_BUFFER_SIZE", TR_CFG_SIZE, "4M",
     "Buffer memory one thread may hold before the journal writer catches up (at least 128k)", 0, 131072,
     INT64_MAX, F(buffer_size)},
    {"TRACER_MAX_MEMORY", TR_CFG_SIZE, "64M",
     "Buffer memory of the whole process (at least 128k: two 64k chunks, which idle threads do not keep from "
     "the others)",
     0, 131072, INT64_MAX, F(max_memory)},
    {"TRACER_ON_FULL", TR_CFG_CHOICE, "block",
     "When buffers are full: block (the thread waits, never for ever; nothing lost) or drop (each loss counted "
     "in the trace, on its thread)",
     on_full_words, 0, 0, F(on_full)},
    {"TRACER_FLUSH_INTERVAL", TR_CFG_DURATION, "1s",
     "How often partly filled buffers reach the journal (a SIGKILL loses nothing: tracer recover takes the rest from /dev/shm)", 0, 0, 0,
     F(flush_interval_ns)},
    {"TRACER_KEEP_JOURNAL", TR_CFG_BOOL, "0", "Keep the journal after the OTF2 trace was written from it", 0, 0, 0,
     F(keep_journal)},
    {"TRACER_SUMMARY", TR_CFG_BOOL, "0",
     "After writing the trace, print the report of `tracer summary` on stderr (MPI jobs: the rank that writes it)", 0, 0, 0,
     F(summary)},
    {"TRACER_WRITE_AT_END", TR_CFG_BOOL, "1",
     "Write the OTF2 trace when the program ends (0: keep only the journal, MPI jobs every rank's; tracer "
     "recover writes the trace later, and the program does not wait for it)", 0, 0, 0,
     F(write_at_end)},
    {"TRACER_WRITE_THREADS", TR_CFG_INT, "8",
     "Most threads that write the OTF2 trace beside the one reading the journal; fewer where the process may use "
     "fewer CPUs (0: one thread writes all of it)", 0, 0, 64, F(write_threads)},
    {"TRACER_JOB_WRITE", TR_CFG_CHOICE, "exit",
     "MPI jobs: who writes the job's archive: exit (the last rank to exit, from every rank's journal: nothing "
     "raised in or after MPI_Finalize is lost) or finalize (all ranks together inside MPI_Finalize, in "
     "parallel: what comes later is not in it)",
     job_write_words, 0, 0, F(job_write)},
    {"TRACER_CLOCK_OFFSETS", TR_CFG_CHOICE, "node",
     "MPI jobs: measure the clock offset to rank 0 once per node (its ranks share a clock) or per rank",
     offsets_words, 0, 0, F(clock_offsets)},
    {"TRACER_CLOCK", TR_CFG_CHOICE, "auto", "Timestamp source: auto, tsc or monotonic", clock_words, 0, 0,
     F(clock)},
    {"TRACER_CALIBRATION", TR_CFG_DURATION, "0ms",
     "Least span between the first and last TSC calibration pairs; a shorter run waits at exit for the rest (0ms: "
     "never waits: every stamp lies between two pairs, each exact to tens of ns)", 0, 0, 0, F(calibration_ns)},
};

const size_t tr_cfg_nvars = sizeof tr_cfg_vars / sizeof *tr_cfg_vars;

_Static_assert(sizeof tr_cfg_vars / sizeof *tr_cfg_vars <= 64, "tr_cfg_report holds 64 variables");
