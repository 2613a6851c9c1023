/* journal_load.h - the journal's decoder: everything the writer's model and
 * OTF2 layers need, read from a journal. journal/ owns the format, so its
 * decoder lives here; the model (src/model/), the OTF2 layer and tests include it.
 *
 * The writer never looks at the live process: records, names, symbols,
 * clock calibration and configuration all come from here, so the end of a
 * run and `tracer recover` of a crashed one take the same path to OTF2. */
#ifndef TR_JOURNAL_JOURNAL_LOAD_H
#define TR_JOURNAL_JOURNAL_LOAD_H

#include <stdint.h>

#include "journal/journal_format.h"
#include "journal/journal_read.h"
#include "journal/collect.h"
#include "journal/mpit_load.h"
#include "journal/journal_index.h"
#include "journal/stream_cursor.h"
#include "common/u64map.h"

typedef struct tr_jsymbol {
    uint64_t codeptr;
    int line, kernel_line;
    const char *function, *file, *kernel; /* NULL when unknown */
} tr_jsymbol;

typedef struct tr_jvariable {
    uint64_t base, size, ref_ptr; /* ref_ptr != 0: declare target link */
    const char *name;
} tr_jvariable;

typedef struct tr_jloss {
    uint32_t location;
    uint64_t count, first, last; /* ticks until converted, then ns */
} tr_jloss;

typedef struct tr_journal_data {
    tr_collected data;     /* streams by location, times in ns */
    uint64_t pid;
    char *hostname;
    char *cmdline;         /* NUL-separated */
    uint64_t cmdline_len;
    char **config;         /* "NAME=raw (source)" */
    uint32_t nconfig;
    int64_t realtime_offset;
    int tsc;
    uint64_t tick0, ns0, tick1, ns1; /* calibration pairs */
    long double ns_per_tick;
    char **strings;        /* owned texts */
    uint32_t nstrings, capstrings;
    tr_u64map user_names;  /* region id -> string index */
    tr_u64map texts;       /* text id -> string index */
    tr_jsymbol *symbols;
    uint32_t nsymbols, capsymbols;
    tr_u64map symbol_index; /* codeptr -> symbols index */
    int ended, crashed, crash_signal;
    tr_journal_end end;
    uint64_t end_ns;       /* the run's end (or last event) in ns */
    tr_jvariable *variables; /* sorted by base after loading */
    uint32_t nvariables, capvariables;
    tr_jloss *losses;      /* pending at the end (drop mode) */
    uint32_t nlosses;
    tr_journal_stats stats;
    tr_jmpit mpit;         /* MPI_T catalogue, registrations, clock pairs (ns) */
    int has_mpi_rank;      /* an MPI_RANK frame was read: the run was a rank of a job */
    tr_journal_mpi_rank mpi_rank; /* the first one */
    tr_journal_clock_offset *clock_offsets; /* CLOCK_OFFSET frames, in journal order */
    uint32_t nclock_offsets;
    tr_journal_index *index; /* where the chunks lie: kept when the records were visited, not kept */
} tr_journal_data;

/* Reads @path, every record kept (data.streams[s].rec). Returns 0, or -1
 * with a reason in @err (jd then holds nothing). */
int tr_journal_load(const char *path, tr_journal_data *jd, char *err, size_t errlen);

/* Called with each record of each stream, stream by stream in index order,
 * records in the order a cursor yields them; @r is valid during the call
 * only. Non-zero stops the load (it fails). */
typedef int (*tr_journal_visit_fn)(void *ctx, size_t stream, const tr_record *r);
/* Reads @path keeping no record: each is given to @visit once, and the
 * streams hold only their counts (rec NULL, n, last_time); the writer reads
 * them again through tr_journal_stream_open. Memory: the journal's metadata
 * and its chunk index, not its records. Returns as tr_journal_load. */
int tr_journal_load_visiting(const char *path, tr_journal_data *jd, tr_journal_visit_fn visit, void *ctx,
                             char *err, size_t errlen);
/* A cursor on stream @st (one of data.streams, which may have been moved
 * out of @jd since) of a journal loaded by tr_journal_load_visiting: it
 * yields the records the visit saw, in the same order. NULL for a stream
 * without chunks (a loss alone), after tr_journal_load, or when out of
 * memory (errno set). */
tr_stream_cursor *tr_journal_stream_open(const tr_journal_data *jd, const tr_stream *st);
void tr_journal_data_free(tr_journal_data *jd);

uint64_t tr_journal_ticks_to_ns(const tr_journal_data *jd, uint64_t ticks);
const tr_jsymbol *tr_journal_find_symbol(const tr_journal_data *jd, uint64_t codeptr);
const char *tr_journal_user_name(const tr_journal_data *jd, uint32_t id);
const char *tr_journal_text(const tr_journal_data *jd, uint64_t id);
/* The named global holding host address @addr, or NULL. */
const tr_jvariable *tr_journal_variable_at(const tr_journal_data *jd, uint64_t addr);

#endif
