/* journal_format.h - the on-disk journal: what a crashed run leaves behind.
 *
 * A journal is a sequence of frames, each a fixed 64-byte header followed by
 * its payload, appended with one write each (O_APPEND), so frames from
 * several writers never interleave. Each header carries its own CRC and the
 * CRC of its payload: a journal cut at any byte, or with flipped bytes, is
 * read up to the damage, and a reader resynchronises on the next valid
 * header. Integers are little-endian (the writing host's order; journals are
 * read on the same kind of machine).
 *
 * Frame types and payloads:
 *   START   key/value entries (tr_journal_kv) describing the process
 *   CHUNK   records of one thread (location), in order: `records` x 64 bytes,
 *           raw, zstd-compressed, or delta-coded then zstd-compressed
 *           (flags; record_delta.h); `seq` orders a location's chunks
 *           and lets a reader drop duplicates (a crash handler may write a
 *           chunk the writer thread was also writing)
 *   STRING  u32 kind, u32 id, then the text (NUL-terminated)
 *   SYMBOL  tr_journal_symbol, then function, file and kernel name, each
 *           NUL-terminated (empty when unknown); the header's seq is the
 *           span the names hold for (core/unload.h): the tick of the
 *           UNLOAD after which the address held this code, 0 before any
 *   CLOCK   u64 tick, u64 ns (CLOCK_MONOTONIC): a calibration pair
 *   END     tr_journal_end: the run ended normally
 *   CRASH   i32 signal, u32 pad, u64 tick: the run died of a signal; a
 *           "signal" of -1..-256, -(S + 1): it ended in _exit(S) (or _Exit);
 *           of -257 or less, TR_CRASH_MPI_ABORT - E: it called
 *           MPI_Abort(comm, E); every chunk saved as for a signal
 *           (tr_run_end_text)
 *   VARIABLE tr_journal_variable, then the name (NUL-terminated): a named
 *           global that data operations touched; the header's seq is its
 *           span, as for SYMBOL
 *   MPIT    u32 kind (enum tr_mpit_frame), u32 pad, then by kind:
 *           STATUS  the text of what MPI_T offered (NUL-terminated)
 *           SOURCE  tr_journal_mpit_source, name, description
 *           TYPE    tr_journal_mpit_type, its elements (tr_journal_mpit_element
 *                   x nelements), name, description, bind name ("none",
 *                   "communicator", ...), then per element its datatype name
 *           REG     tr_journal_mpit_reg: a registration (callback) made
 *           CLOCK   tr_journal_mpit_clock: a source tick between two host ticks
 *           UNREG   tr_journal_mpit_reg: a registration freed (its object was)
 *   MPI_RANK tr_journal_mpi_rank: the process is rank `rank` of an MPI job of
 *           `size` ranks (written after MPI_Init; a journal without one is
 *           not part of a job)
 *   CLOCK_OFFSET tr_journal_clock_offset: this process's CLOCK_MONOTONIC
 *           against rank 0's, measured by ping-pong (minimum round trip)
 *   SALVAGED u64 run id: `tracer recover` appended the chunks that only the
 *           run's in-flight file held (journal/inflight_salvage.h); the file
 *           is then removed, and its absence no longer means a loss
 *   UNLOAD  tr_journal_unload: from `tick` on, code addresses in [lo, hi)
 *           may name other code (a library was unloaded); a record's
 *           address there is named by the SYMBOL (VARIABLE) of its span
 *   MODULES the objects loaded in the process (every one, each time the
 *           loader's count of loads changed): tr_journal_module, then the
 *           file's path (NUL-terminated), repeated; `tracer recover` names
 *           from these files the code addresses the run died before naming
 *           (journal/recover_names.h), when each file is still the same
 */
#ifndef TR_JOURNAL_FORMAT_H
#define TR_JOURNAL_FORMAT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/trace_vocab.h"

#define TR_JOURNAL_NAME TRV_JOURNAL_NAME
#define TR_FRAME_MAGIC 0x4d465254u /* "TRFM" */
#define TR_FRAME_VERSION 1
#define TR_FRAME_MAX_PAYLOAD (16u << 20)

enum tr_frame_type {
    TR_FRAME_START = 1,
    TR_FRAME_CHUNK = 2,
    TR_FRAME_STRING = 3,
    TR_FRAME_SYMBOL = 4,
    TR_FRAME_CLOCK = 5,
    TR_FRAME_END = 6,
    TR_FRAME_CRASH = 7,
    TR_FRAME_VARIABLE = 8,
    TR_FRAME_MPIT = 9,
    TR_FRAME_MPI_RANK = 10,
    TR_FRAME_CLOCK_OFFSET = 11,
    TR_FRAME_SALVAGED = 12,
    TR_FRAME_UNLOAD = 13,
    TR_FRAME_MODULES = 14,
};

typedef struct tr_journal_mpi_rank {
    int32_t rank, size;
    uint64_t reserved[2];
} tr_journal_mpi_rank;

/* rank 0's CLOCK_MONOTONIC = local CLOCK_MONOTONIC + offset_ns, at local
 * time local_ns, to within +-rtt_ns / 2. Rank 0's own offset is 0. */
typedef struct tr_journal_clock_offset {
    uint64_t local_ns;
    int64_t offset_ns;
    uint64_t rtt_ns;
    uint32_t when;  /* 1 MPI_Init, 2 MPI_Finalize */
    uint32_t pad;
} tr_journal_clock_offset;

enum tr_mpit_frame {
    TR_MPIT_FRAME_STATUS = 1,
    TR_MPIT_FRAME_SOURCE = 2,
    TR_MPIT_FRAME_TYPE = 3,
    TR_MPIT_FRAME_REG = 4,
    TR_MPIT_FRAME_CLOCK = 5,
    TR_MPIT_FRAME_UNREG = 6,
};

typedef struct tr_journal_mpit_source {
    uint32_t index;
    int32_t ordered, adhoc_timestamps;
    uint32_t pad;
    int64_t ticks_per_second, max_ticks;
} tr_journal_mpit_source;

typedef struct tr_journal_mpit_element {
    int64_t displacement;
    int32_t size, is_signed, is_float, known;
} tr_journal_mpit_element;

typedef struct tr_journal_mpit_type {
    uint32_t index;
    int32_t verbosity_level; /* 1 user basic .. 9 mpidev all, 0 unknown */
    int32_t bind;            /* MPI_T_BIND_* in the process's MPI family's numbering */
    int32_t nelements;
    int32_t registered;      /* 1: selected by TRACER_MPIT_EVENTS / _LEVEL */
    int32_t has_enum;
} tr_journal_mpit_type;

typedef struct tr_journal_mpit_reg {
    uint32_t id, type_index;
    int32_t bound;    /* 1: bound to the object below */
    uint32_t pad;
    uint64_t object;  /* the object's handle (MPICH: the integer) */
    char object_name[64]; /* "MPI_COMM_WORLD", ... or "" */
} tr_journal_mpit_reg;

typedef struct tr_journal_mpit_clock {
    uint32_t source, pad;
    int64_t source_tick;
    uint64_t host_before, host_after; /* host ticks around MPI_T_source_get_timestamp */
} tr_journal_mpit_clock;

/* TR_FRAME_ZSTD_DELTA: CHUNK frames only; the decompressed bytes are the
 * records delta-coded (record_delta.h). Journals written before it have
 * RAW and ZSTD chunks only, and read as before. */
enum { TR_FRAME_RAW = 0, TR_FRAME_ZSTD = 1, TR_FRAME_ZSTD_DELTA = 2 };

/* Whether a frame's payload is zstd-compressed. */
static inline int tr_frame_is_zstd(uint32_t flags)
{
    return flags == TR_FRAME_ZSTD || flags == TR_FRAME_ZSTD_DELTA;
}

typedef struct tr_frame_header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t header_crc;  /* CRC-32 of this header with header_crc = 0 */
    uint32_t payload_crc; /* CRC-32 of the payload as stored */
    uint64_t payload_bytes;
    uint64_t raw_bytes;   /* after decompression */
    uint32_t location;    /* CHUNK: the thread's index */
    uint32_t tid;
    uint64_t seq;
    uint32_t records;
    uint32_t flags;       /* TR_FRAME_RAW, TR_FRAME_ZSTD or TR_FRAME_ZSTD_DELTA */
    uint64_t reserved;
} tr_frame_header;

_Static_assert(sizeof(tr_frame_header) == 64, "frame header is 64 bytes");

/* START payload: entries of {u16 key, u16 pad, u32 length, bytes}. */
enum tr_journal_key {
    TR_KEY_PID = 1,        /* u64 */
    TR_KEY_HOSTNAME,       /* text */
    TR_KEY_CMDLINE,        /* NUL-separated arguments, as /proc/self/cmdline */
    TR_KEY_CONFIG,         /* "NAME=raw (environment|default)" */
    TR_KEY_CLOCK_TSC,      /* u32: 1 when ticks are TSC ticks, 0 when ns */
    TR_KEY_CLOCK0,         /* u64 tick, u64 ns: the first calibration pair */
    TR_KEY_REALTIME_OFFSET, /* i64: CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
    TR_KEY_INFLIGHT,       /* u64 run id, then the in-flight file's path (core/inflight.h):
                            * the chunk pool, which tracer recover reads after a SIGKILL */
};

/* Walks the entries of a START payload (@p, @n bytes) from *@off: sets
 * *@key, *@value and *@len, moves *@off past the entry and returns 1; 0 at
 * the end, or at an entry that runs past the payload. */
static inline int tr_kv_next(const unsigned char *p, uint64_t n, uint64_t *off, uint16_t *key,
                             const unsigned char **value, uint32_t *len)
{
    if (*off + 8 > n)
        return 0;
    memcpy(key, p + *off, 2);
    memcpy(len, p + *off + 4, 4);
    if (*len > n - *off - 8)
        return 0;
    *value = p + *off + 8;
    *off += 8 + (uint64_t)*len;
    return 1;
}

enum tr_string_kind {
    TR_STRING_USER_REGION = 1, /* id = tracer_region_t (without the off bit) */
    TR_STRING_TEXT = 2,        /* id referenced by records (device strings) */
};

typedef struct tr_journal_symbol {
    uint64_t codeptr;
    int32_t line;        /* of codeptr, 0 unknown */
    int32_t kernel_line; /* from the kernel symbol, 0 unknown */
} tr_journal_symbol;

/* The SYMBOL payload: @s, then @texts (function, file, kernel, task_of;
 * each cut to @max - 1 bytes) NUL-terminated, into @buf (at least
 * sizeof *s + 4 * @max bytes). Returns its size. The fourth text came
 * later: readers before it stop at three. */
static inline size_t tr_journal_symbol_encode(char *buf, const tr_journal_symbol *s, const char *const texts[4],
                                              size_t max)
{
    size_t n = sizeof *s;
    memcpy(buf, s, n);
    for (int i = 0; i < 4; i++) {
        size_t len = texts[i] ? strnlen(texts[i], max - 1) : 0;
        memcpy(buf + n, texts[i] ? texts[i] : "", len);
        buf[n + len] = 0;
        n += len + 1;
    }
    return n;
}

/* A loaded object in a MODULES frame: its load bias (dlpi_addr), the range
 * its PT_LOAD segments cover, and the identity of its file when the frame
 * was written (st_dev, st_ino, st_size, st_mtim in ns): a file replaced
 * since (rebuilt, copied over) is another, and names nothing. */
typedef struct tr_journal_module {
    uint64_t bias, lo, hi;
    uint64_t dev, ino, size;
    int64_t mtime_ns;
} tr_journal_module;

typedef struct tr_journal_unload {
    uint64_t tick, lo, hi;
} tr_journal_unload;

typedef struct tr_journal_variable {
    uint64_t base, size;
    uint64_t ref_ptr; /* declare target link: host address of <name>_decl_tgt_ref_ptr; 0 otherwise */
} tr_journal_variable;

typedef struct tr_journal_end {
    uint64_t end_tick;
    int32_t has_status, status;
    uint64_t small_count[2], small_bytes[2]; /* TRACER_MIN_BYTES totals */
} tr_journal_end;

uint32_t tr_crc32(uint32_t crc, const void *data, uint64_t len);

/* Fills magic, version, type and both CRCs (async-signal-safe). */
void tr_frame_seal(tr_frame_header *h, uint16_t type, const void *payload, uint64_t payload_bytes);

/* The CRASH frame's "signal" of a run that called MPI_Abort(comm, E):
 * TR_CRASH_MPI_ABORT - E, E = errorcode & 0xffffff (what an exit status
 * can carry and more). */
#define TR_CRASH_MPI_ABORT (-257)
static inline int tr_crash_mpi_abort(int errorcode) { return TR_CRASH_MPI_ABORT - (errorcode & 0xffffff); }
static inline int tr_crash_is_mpi_abort(int crash_signal) { return crash_signal <= TR_CRASH_MPI_ABORT; }
static inline int tr_crash_is_exit(int crash_signal) { return crash_signal < 0 && crash_signal > TR_CRASH_MPI_ABORT; }

/* How a run that did not end normally ended, from its CRASH frame's
 * signal field: "crashed (signal N)", "ended in _exit(S)" or "ended in
 * MPI_Abort(E)". */
static inline void tr_run_end_text(char *out, unsigned long size, int crash_signal)
{
    if (tr_crash_is_mpi_abort(crash_signal))
        snprintf(out, size, "ended in MPI_Abort(%d)", TR_CRASH_MPI_ABORT - crash_signal);
    else if (crash_signal < 0)
        snprintf(out, size, "ended in _exit(%d)", -(crash_signal + 1));
    else
        snprintf(out, size, "crashed (signal %d)", crash_signal);
}

#endif
