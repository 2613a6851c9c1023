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
    const char *task_of; /* a call in a task entry (nowait): the function creating the task; NULL unknown */
} tr_jsymbol;

typedef struct tr_jvariable {
    uint64_t base, size, ref_ptr; /* ref_ptr != 0: declare target link */
    const char *name;
    uint64_t since; /* its span (code_spans.h): the unload before it (ns), 0 none */
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
    tr_journal_clock clock; /* ticks -> ns, from them */
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
    tr_jvariable *variables; /* sorted by span, then base, after loading */
    uint32_t nvariables, capvariables;
    tr_journal_unload *unloads; /* the UNLOAD frames by time, times in ns */
    uint32_t nunloads;
    tr_jloss *losses;      /* pending at the end (drop mode) */
    uint32_t nlosses;
    tr_journal_stats stats;
    tr_jmpit mpit;         /* MPI_T catalogue, registrations, clock pairs (ns) */
    int has_mpi_rank;      /* an MPI_RANK frame was read: the run was a rank of a job */
    tr_journal_mpi_rank mpi_rank; /* the first one */
    tr_journal_clock_offset *clock_offsets; /* CLOCK_OFFSET frames, in journal order */
    uint32_t nclock_offsets;
    tr_journal_index *index; /* where the chunks lie: kept by tr_journal_load_index */
} tr_journal_data;

/* Reads @path, every record kept (data.streams[s].rec). Returns 0, or -1
 * with a reason in @err (jd then holds nothing). */
int tr_journal_load(const char *path, tr_journal_data *jd, char *err, size_t errlen);

/* Reads @path's metadata and where its chunks lie, keeping no record: the
 * streams hold no records and no counts yet; a pass reads them through
 * tr_journal_stream_open, says what it read with tr_journal_stream_done
 * (each stream read to its end) and then tr_journal_streams_done. Memory:
 * the journal's metadata and its chunk index. Until then end_ns is the
 * run's end as its END or CRASH frame gives it (0 without one). Returns as
 * tr_journal_load. */
int tr_journal_load_index(const char *path, tr_journal_data *jd, char *err, size_t errlen);
/* A cursor on stream @st (one of data.streams) of a journal loaded by
 * tr_journal_load_index. NULL for a stream without chunks (a loss alone),
 * after tr_journal_load, or when out of memory (errno set). */
tr_stream_cursor *tr_journal_stream_open(const tr_journal_data *jd, const tr_stream *st);
/* Stream @s was read to its end by a cursor whose statistics are @cs: its
 * count, last stamp and damage join @jd. */
void tr_journal_stream_done(tr_journal_data *jd, size_t s, const tr_stream_cursor_stats *cs);
/* Every stream was: the run's end (end_ns: its END or CRASH frame, or its
 * last event when later) and the drop-mode losses open at it follow. */
void tr_journal_streams_done(tr_journal_data *jd);
void tr_journal_data_free(tr_journal_data *jd);
/* The records the chunks of a journal loaded by tr_journal_load_index
 * hold, before any is read (a gap or a damaged chunk makes the pass's count
 * differ). */
uint64_t tr_journal_records_stored(const tr_journal_data *jd);

uint64_t tr_journal_ticks_to_ns(const tr_journal_data *jd, uint64_t ticks);
/* The symbol of a record's code address as the journal's reader gives it:
 * the address itself, or a key of its span after an unload (code_spans.h);
 * NULL when unnamed. */
const tr_jsymbol *tr_journal_find_symbol(const tr_journal_data *jd, uint64_t codeptr);
/* The code address behind such a key (an address: itself). */
uint64_t tr_journal_code_address(const tr_journal_data *jd, uint64_t key);
const char *tr_journal_user_name(const tr_journal_data *jd, uint32_t id);
const char *tr_journal_text(const tr_journal_data *jd, uint64_t id);
/* The named global holding host address @addr, or NULL. */
/* The named global that held host address @addr at time @t (ns): a library
 * loaded where an unloaded one was has globals of its own there. */
const tr_jvariable *tr_journal_variable_at(const tr_journal_data *jd, uint64_t addr, uint64_t t);

#endif
