/* config.h - every TRACER_* variable, parsed once and frozen.
 *
 * tr_cfg_vars[] (config_table.c) is the single source of truth: the parser,
 * the README table, `tracer info --config` and `tracer run`'s options are all
 * derived from it. A value is read once, when tracing starts (never on the
 * hot path); the hot path reads only the frozen tr_filter (filter.h). */
#ifndef TR_CORE_CONFIG_H
#define TR_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

enum tr_cfg_type {
    TR_CFG_BOOL,     /* 1/0, yes/no, true/false, on/off */
    TR_CFG_INT,      /* decimal integer within [min, max] */
    TR_CFG_SIZE,     /* bytes, suffix k, M, G, T (powers of 1024) */
    TR_CFG_DURATION, /* number with unit ns, us, ms, s, min, h */
    TR_CFG_PATH,     /* a file system path */
    TR_CFG_CHOICE,   /* one word of a fixed set */
    TR_CFG_LIST,     /* comma-separated words of a fixed set, or all / none */
    TR_CFG_GLOBS,    /* comma-separated shell patterns; !pattern excludes */
    TR_CFG_RANGES,   /* comma-separated numbers and ranges (0-3,8), or all */
};

#define TR_CFG_MAX_RANGES 64
#define TR_CFG_MAX_GLOBS 32
#define TR_CFG_PATH_MAX 4000

typedef struct tr_ranges {
    int all;
    uint32_t n;
    struct {
        int64_t lo, hi;
    } r[TR_CFG_MAX_RANGES];
} tr_ranges;

typedef struct tr_globs {
    uint32_t n;
    uint16_t off[TR_CFG_MAX_GLOBS]; /* into buf; a leading '!' excludes */
    char buf[1024];
} tr_globs;

/* TRACER_OMPT classes (bits of tr_config.ompt). */
enum {
    TR_OMPT_CONSTRUCTS = 1 << 0,
    TR_OMPT_DATA_OPS = 1 << 1,
    TR_OMPT_KERNELS = 1 << 2,
    TR_OMPT_LINK_MAPS = 1 << 3,
    TR_OMPT_HOST_STATES = 1 << 4,
};

enum tr_clock_choice { TR_CLOCK_AUTO, TR_CLOCK_TSC, TR_CLOCK_MONOTONIC };

typedef struct tr_config {
    int enable, verbose, strict;
    char output[TR_CFG_PATH_MAX + 1]; /* empty: the default directory */
    int clock;                        /* enum tr_clock_choice */
    uint64_t calibration_ns;
    uint32_t ompt;                    /* TR_OMPT_* bits */
    int mode;                         /* enum tr_mode: read by the writer, from the journal */
    tr_ranges devices, ranks;
    uint64_t min_bytes;
    uint64_t hash_max;  /* TRACER_HASH: transfers up to this many bytes are hashed; 0 none */
    tr_globs regions, mpit_events;
    int64_t mpit_level;
    uint64_t buffer_size, max_memory, flush_interval_ns;
    int on_full; /* enum tr_on_full */
    int keep_journal;
    int summary; /* TRACER_SUMMARY: the report of `tracer summary` on stderr at the end */
    int write_at_end;
    int64_t write_threads; /* TRACER_WRITE_THREADS: at most this many beside the model's */
    int job_write;     /* enum tr_job_write */
    int clock_offsets; /* enum tr_clock_offsets */
} tr_config;

/* TRACER_MODE: how host OpenMP states (TR_OMPT_HOST_STATES) become OTF2. */
enum tr_mode { TR_MODE_USER, TR_MODE_MACHINE };

enum tr_clock_offsets { TR_OFFSETS_NODE, TR_OFFSETS_RANK };

enum tr_on_full { TR_ON_FULL_BLOCK, TR_ON_FULL_DROP };

/* TRACER_JOB_WRITE: when an MPI job's archive is written (src/job/job.h). */
enum tr_job_write { TR_JOB_WRITE_EXIT, TR_JOB_WRITE_FINALIZE };

enum tr_cfg_source { TR_CFG_FROM_DEFAULT, TR_CFG_FROM_ENV };

typedef struct tr_cfg_var {
    const char *name;
    enum tr_cfg_type type;
    const char *def;          /* default, in the variable's own syntax */
    const char *help;         /* one line */
    const char *const *words; /* CHOICE / LIST vocabulary, NULL-terminated */
    int64_t min, max;         /* INT bounds; SIZE bounds when max > 0 */
    size_t offset;            /* of the value in tr_config */
} tr_cfg_var;

extern const tr_cfg_var tr_cfg_vars[];
extern const size_t tr_cfg_nvars;

/* What a load found: the value and source of each variable, and the lines
 * (without the "tracer: " prefix) to print. */
#define TR_CFG_MAX_MESSAGES 16
typedef struct tr_cfg_report {
    enum tr_cfg_source source[64];
    const char *raw[64]; /* the text the value came from */
    int errors, warnings;
    int nmessages;
    char messages[TR_CFG_MAX_MESSAGES][512];
} tr_cfg_report;

/* Parses every variable from @envp (a NULL-terminated "NAME=value" array,
 * such as environ) into @cfg; defaults fill the rest. Unknown TRACER_*
 * names are warnings naming the closest known one; malformed values are
 * errors naming the variable, the value and the expected form. Returns the
 * number of errors. Not thread-safe; allocates nothing. */
int tr_cfg_load(tr_config *cfg, char *const *envp, tr_cfg_report *report);

/* Parses @text as variable @var into @out (a tr_config field). Returns 0, or
 * -1 with a message in @err: "expected <form>" style, without the name. */
int tr_cfg_parse(const tr_cfg_var *var, const char *text, void *out, char *err, size_t errlen);

/* The expected form of @var's values, e.g. "a size such as 64M". */
const char *tr_cfg_form(const tr_cfg_var *var);
/* The type's name as the README writes it: "bool", "size", ... */
const char *tr_cfg_type_name(enum tr_cfg_type type);
/* The variable named @name, or NULL. */
const tr_cfg_var *tr_cfg_find(const char *name);

/* Helpers for consumers of the frozen values. */
int tr_ranges_contains(const tr_ranges *r, int64_t v);
int tr_globs_match(const tr_globs *g, const char *s);

/* The configuration frozen at activation (valid once tracing started). */
extern tr_config tr_cfg;
extern tr_cfg_report tr_cfg_loaded;

#endif
