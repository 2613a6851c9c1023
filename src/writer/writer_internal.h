/* writer_internal.h - the OTF2 layer's state: the model's events
 * (src/model/model.h, run by writer_unit.c) -> OTF2 events (otf2_events.c,
 * otf2_mpit.c) and the definitions they name (otf2_defs.c, otf2_regions.c),
 * one journal at a time (writer_unit.c), driven by writer.c (one journal)
 * or job_convert.c (the ranks of an MPI job, one archive). Included by
 * src/writer/ only (and bench/); the model layer never includes it. It does
 * not include writer.h (the public API) so that writer.c, which implements
 * that API with these, is no cycle. */
#ifndef TR_WRITER_INTERNAL_H
#define TR_WRITER_INTERNAL_H

#include <otf2/otf2.h>
#include <stdint.h>

#include "common/strtab.h"
#include "common/u64map.h"
#include "journal/journal_load.h"
#include "model/model.h"
#include "writer/chunk_pool.h"
#include "writer/rank_desc.h"

typedef struct tr_region_def {
    uint32_t name, canonical, description, file;
    uint32_t line;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
} tr_region_def;

/* An attribute beyond the fixed TR_ATTR_*: an MPI_T payload element. */
typedef struct tr_attr_def {
    uint32_t name, description; /* string ids */
    OTF2_Type type;
} tr_attr_def;

/* The definitions of one archive. Every journal written into it (the ranks
 * of an MPI job) shares them, so a string, region or attribute is defined
 * once; each journal keeps its own keys to them (tr_writer.region_keys). */
typedef struct tr_defs {
    tr_strtab strings;
    tr_region_def *regions;
    uint32_t nregions, capregions;
    tr_attr_def *attrs;      /* attribute TR_ATTR_COUNT + k */
    uint32_t nattrs, capattrs;
    /* 1 (several journals): a region or attribute equal in every field to
     * one already defined is that one. 0 (one journal): every key gets its
     * own, as archives were always written. */
    int by_content;
    tr_u64map region_index;  /* content hash -> region id (by_content) */
    tr_u64map attr_index;    /* content hash -> attribute id (by_content) */
} tr_defs;

/* A ClockOffset definition, as OTF2 readers apply it (job_clock.c). */
typedef struct tr_clock_point {
    uint64_t time;   /* the rank's own ns */
    int64_t offset;  /* add to get rank 0's */
    double stddev;
} tr_clock_point;

typedef struct tr_writer {
    tr_defs *defs;         /* the archive's definitions, shared */
    tr_model m;            /* the journal and what it says (model.h) */

    tr_u64map region_keys;   /* this journal's region key (model_event.h) -> region id */
    tr_u64map kernel_names;  /* kernel region: string id of its name -> region id */
    OTF2_Archive *ar;        /* while the events are written */
    OTF2_AttributeList *al;
    OTF2_EvtWriter **writers; /* per location of this journal, open while it has events to come */
    uint64_t capwriters;
    unsigned threads;        /* writing threads beside the model's (0: it writes alone) */
    struct tr_workers *workers; /* while they run */
    uint32_t *mpit_type_attr; /* per m.jd->mpit.types[i]: index of its element 0 in mpit_elem_attr */
    uint32_t *mpit_elem_attr; /* attribute id of each MPI_T type's elements, type by type */
    uint32_t mpit_nelem;

    /* Where this journal's part lies among the archive's ids. Locations are
     * numbered within the journal (host threads, device lanes, MPI_T
     * sources) and placed at loc_base; its process location group is
     * group_base (its devices' groups follow); its devices' RMA windows
     * (and their comms) are win_base + device index. All 0 for one journal. */
    uint64_t loc_base;
    uint32_t group_base, win_base;
    uint64_t nlocations;     /* this journal's locations (after its events are written) */
    uint64_t *events;        /* events written, per location of this journal */
    int rank;                /* MPI rank in a job's archive, -1 alone */
    uint32_t node;           /* its SystemTreeNode */
    tr_clock_point *clock;   /* job: its ClockOffset definitions, by time */
    uint32_t nclock;
} tr_writer;

/* otf2_defs.c */
void tr_defs_init(tr_defs *d, int by_content);
void tr_defs_free(tr_defs *d);
uint32_t tr_defs_str(tr_defs *d, const char *s);
uint32_t tr_defs_string(tr_writer *w, const char *s);
/* The region of this journal's key @k: defined with @def the first time. */
uint32_t tr_defs_region_keyed(tr_writer *w, uint64_t k, const tr_region_def *def);
/* A region by @def alone (equal content: the same one); 0 also out of memory. */
uint32_t tr_defs_region_add(tr_defs *d, const tr_region_def *def);
/* The region of (@tag, @v), made on first use (no source location). */
uint32_t tr_defs_region(tr_writer *w, enum tr_region_key tag, uint64_t v, const char *name, const char *canonical,
                        const char *description, OTF2_RegionRole role, OTF2_Paradigm paradigm);
/* The same with a source file and line (NULL, 0: none). */
uint32_t tr_defs_region_full(tr_writer *w, uint64_t k, const char *name, const char *canonical,
                             const char *description, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                             const char *file, uint32_t line);
/* otf2_regions.c: the region of a model's region key (model_event.h),
 * named and defined on first use. */
uint32_t tr_writer_region(tr_writer *w, uint64_t key);
/* An attribute beyond the fixed ones; returns its id. */
uint32_t tr_defs_attribute(tr_defs *d, uint32_t name, uint32_t description, OTF2_Type type);
OTF2_Type tr_defs_attribute_type(const tr_defs *d, uint32_t id);
/* Adds a STRING attribute. */
void tr_defs_attr_string(tr_writer *w, OTF2_AttributeList *al, enum tr_attr a, const char *s);
OTF2_Type tr_defs_attr_type(enum tr_attr a);
const char *tr_defs_attr_name(enum tr_attr a);
const char *tr_defs_attr_description(enum tr_attr a);
/* Adds attribute @a with value @v, converted to the attribute's type. */
void tr_defs_attr(OTF2_AttributeList *al, enum tr_attr a, uint64_t v);

/* otf2_mpit.c */
/* Where properties go: the archive, or a rank's description. */
typedef void (*tr_prop_fn)(void *ctx, const char *name, const char *value);
/* The archive properties of MPI_T, named @prefix + "STATUS", "SOURCE::..."
 * ("TRACER::MPIT::" for one journal), each given to @put. */
void tr_mpit_properties(const tr_writer *w, const char *prefix, tr_prop_fn put, void *ctx);

/* The attributes of the MPI_T payload elements of w->m's catalogue (after
 * the model's pass; nothing when the run had no MPI_T). Returns 0, or -1 out
 * of memory. */
int tr_mpit_define_attributes(tr_writer *w);
int tr_events_write_mpit(tr_writer *w, OTF2_Archive *ar, uint32_t loc, uint64_t *nevents);
/* The drop metric (when @gw is NULL: interns its strings). */
void tr_defs_write_mpit_metric(tr_defs *d, OTF2_GlobalDefWriter *gw);

/* Location ids of a journal: host streams first, then device lanes as
 * the model needed them, then the MPI_T sources; the archive's ids add
 * loc_base. */
static inline uint64_t tr_host_location(const tr_writer *w, size_t stream) { return w->loc_base + stream; }
/* The RMA window (and its comm) of a journal's device @device (its index
 * among the journal's devices, in the order the model found them): each
 * journal's devices have their own windows, from its win_base on. The
 * events and the definitions that name a window must agree, so it is
 * computed here only. */
static inline uint32_t tr_rma_window(uint32_t win_base, size_t device) { return win_base + (uint32_t)device; }

/* otf2_events.c: the model's events -> OTF2, on the locations of @w's
 * journal (from w->loc_base), writers opened as their first event comes;
 * their events counted in w->events. The sink's context is @w; w->ar and
 * w->al must be set. */
tr_model_sink tr_otf2_sink(tr_writer *w);
/* After the pass (or a failed one): waits for the writing threads, closes
 * what is still open; w->events has every location's count. Returns 0, or
 * -1 when OTF2 failed to close a writer. */
int tr_otf2_sink_close(tr_writer *w);
/* otf2_defs.c: the metrics OMP work and OMP wait (when @gw is NULL:
 * interns their strings). */
void tr_defs_write_omp_metrics(tr_defs *d, OTF2_GlobalDefWriter *gw);

/* writer.c: the writing threads to use (tr_writer_set_threads). */
unsigned tr_writer_threads(void);

/* writer_unit.c: one journal's part of an archive. */
/* Opens @journal for its pass, defining into @defs. Returns 0; 1 when the
 * journal holds no event (w->m.jd is loaded, nothing else); -1 with @err
 * (w is then empty). */
int tr_unit_open(tr_writer *w, tr_defs *defs, const char *journal, char *err, size_t errlen);
/* Places it among the archive's ids. */
void tr_unit_place(tr_writer *w, uint64_t loc_base, uint32_t group_base, uint32_t win_base);
/* Runs the model's pass and writes its events (w->events per location);
 * adds their number to *total. Afterwards w->nlocations and the model's
 * devices are final. Returns 0, or -1 (*@err: out of memory, the journal
 * unreadable, or OTF2 failed). */
int tr_unit_write_events(tr_writer *w, OTF2_Archive *ar, uint64_t *total);
/* The pass without writing anything: how many locations, devices and
 * windows the journal takes (for ranks that must agree on their ids before
 * any of them writes). Returns 0, or -1. */
int tr_unit_count(tr_writer *w);
void tr_unit_free(tr_writer *w);

/* writer_describe.c: a journal's part, as the global definitions and the
 * properties need it (after its events were written). @with_config: it
 * carries the configuration. Returns 0, or -1 out of memory. */
int tr_describe(const tr_writer *w, int with_config, tr_rank_desc *d);
/* A journal without events: who it was and how it ended. */
int tr_describe_empty(const tr_journal_data *jd, int32_t rank, int with_config, tr_rank_desc *d);

/* What the global definition file describes (otf2_global_defs.c). */
typedef struct tr_global {
    tr_defs *defs;                    /* every part's, unified */
    const tr_rank_desc *const *parts; /* with events: a journal alone, or a job's ranks in rank order */
    size_t nparts;
    int job;                          /* 1: the ranks of an MPI job */
    uint64_t t_min, t_max;            /* the archive's time span (rank 0's clock in a job) */
    uint64_t realtime;                /* CLOCK_REALTIME ns at t_min */
    const char **nodes;               /* host names: SystemTreeNode 1 + i */
    uint32_t nnodes;
    uint32_t *node;                   /* per part: its SystemTreeNode */
} tr_global;
/* Fills nodes, node, t_min, t_max and realtime from the parts. Returns 0,
 * or -1 out of memory. */
int tr_global_prepare(tr_global *g);
void tr_global_free(tr_global *g);
void tr_defs_write_global(const tr_global *g, OTF2_GlobalDefWriter *gw);
/* otf2_job_defs.c: MPI_COMM_WORLD, _SELF and the communicators MPI_T
 * registrations were bound to; with @gw NULL, interns their strings. */
void tr_defs_write_job_comms(const tr_global *g, OTF2_GlobalDefWriter *gw, uint32_t first_group,
                             uint32_t first_comm);

/* archive.c: the parts of writing an archive every driver shares. */
/* A one-process archive; @small (NULL: none) asks for OTF2's smallest
 * chunks, under a budget that keeps every file below 4 MiB: when
 * small->exceeded is set after the write, the archive is incomplete and must
 * be written again without it. */
OTF2_Archive *tr_archive_open(const char *dir, const char *machine, tr_chunk_budget *small);
/* OTF2's error messages are kept, not printed: the first one since begin. */
void tr_archive_errors_begin(void);
const char *tr_archive_errors_end(void); /* NULL when there was none */
/* After tr_archive_errors_end: the first error that leaves the archive's
 * files incomplete (the system's: a full disk, I/O; memory), or NULL. OTF2
 * may return success after one (it does not check every write). */
const char *tr_archive_errors_incomplete(void);
void tr_archive_config_properties(OTF2_Archive *ar, char *const *config, uint32_t nconfig);
void tr_archive_filtered_properties(OTF2_Archive *ar, const uint64_t count[2], const uint64_t bytes[2]);
/* A tr_prop_fn that sets an archive property (ctx: the OTF2_Archive). */
void tr_archive_put_property(void *ar, const char *name, const char *value);
/* The local definitions of a part's locations (between OpenDefFiles and
 * CloseDefFiles): its ClockOffsets and, when @map is not NULL, the mapping
 * of its ids to the global ones. */
struct tr_defs_map;
void tr_archive_local_defs(OTF2_Archive *ar, const tr_writer *w, const struct tr_defs_map *map);
/* Writes the global definitions and closes the archive. */
int tr_archive_global_defs(OTF2_Archive *ar, const tr_global *g);

/* job_clock.c: a rank's CLOCK_OFFSET frames as ClockOffset definitions,
 * and a time corrected the way OTF2 readers correct it with them. */
int tr_job_clock_points(tr_writer *w);
uint64_t tr_job_clock_correct(const tr_writer *w, uint64_t t);

/* job_properties.c: TRACER::CONFIG (the first part that carries it),
 * ::FILTERED (summed), ::RUN::END, ::JOB::RANKS, ::JOB::MISSING_RANKS of
 * @parts (every rank that has a journal, in rank order, empty ones
 * included); fills r->missing and r->ends. */
struct tr_convert_report;
int tr_job_properties(OTF2_Archive *ar, const tr_rank_desc *const *parts, size_t n, int32_t size,
                      struct tr_convert_report *r);

#endif
