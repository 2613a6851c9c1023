/* job_part.h - the steps of writing an MPI job's archive, shared by the
 * ranks writing it together at MPI_Finalize (src/job/job_write.c) and by
 * the serial merge of `tracer recover` (job_convert.c).
 *
 * 1. Each rank opens its part: its journal, loaded and analysed, with
 *    definitions of its own (tr_job_part_open).
 * 2. Its ids in the archive start where the lower ranks' end and it
 *    writes its own locations' event files with its own string, region and
 *    attribute ids (tr_job_part_write_events). Written rank after rank,
 *    the lower ranks' counts are known when a rank begins; written by the
 *    ranks together, each counts first (tr_job_part_counts, then an
 *    exclusive prefix sum).
 * 3. The parts' definitions and descriptions are gathered into one union
 *    (tr_job_union_*): in a job up a reduction tree, each rank merging its
 *    children's unions into its own, so rank 0 ends with the unified
 *    definitions without ever looping over the ranks' messages.
 * 4. Every rank maps its ids to the unified ones in its locations' local
 *    definitions (tr_job_part_local_defs, after the unified definitions were
 *    broadcast), and rank 0 writes the global definitions and properties
 *    (tr_job_union_write).
 * docs/trace-model.md ("An MPI job's archive") is the contract; docs/
 * scaling.md says what each step costs. */
#ifndef TR_WRITER_JOB_PART_H
#define TR_WRITER_JOB_PART_H

#include <otf2/otf2.h>
#include <stddef.h>
#include <stdint.h>

#include "common/blob.h"
#include "writer/writer.h"

typedef struct tr_job_part tr_job_part;
typedef struct tr_job_union tr_job_union;

/* Opens the job's archive in @dir for writing. @serial: one process writes
 * every part (OTF2's serial collectives are set); otherwise the caller sets
 * the collective callbacks over the ranks - on every rank, once every rank
 * has the archive, because rank 0 creates the directories in that call and
 * the others wait for its answer. NULL on failure. */
OTF2_Archive *tr_job_archive_open(const char *dir, const char *machine, int serial);
/* OTF2's errors are kept for tracer's one line (see archive.c). */
void tr_job_errors_begin(void);
const char *tr_job_errors_end(void);
const char *tr_job_errors_incomplete(void); /* see tr_archive_errors_incomplete */

/* Opens @journal, which must name its MPI rank. @with_config: its
 * description carries the configuration (rank 0's does). @threads: threads
 * beside the caller's that write its events (0: the caller alone; ranks
 * writing together are threads enough). NULL with @err on failure. */
tr_job_part *tr_job_part_open(const char *journal, int with_config, unsigned threads, char *err, size_t errlen);
int32_t tr_job_part_rank(const tr_job_part *p);
/* Its journal holds no event: it has no location. */
int tr_job_part_empty(const tr_job_part *p);
int32_t tr_job_part_size(const tr_job_part *p);
const char *tr_job_part_hostname(const tr_job_part *p); /* NULL: unknown */
/* What it takes of the archive's ids: locations, location groups, RMA
 * windows (all 0 for a journal without events). Known once its events are
 * written; asked before, it runs the model's pass once without writing to
 * count them. Returns 0, or -1 (out of memory, the journal unreadable). */
int tr_job_part_counts(tr_job_part *p, uint64_t counts[3]);
/* Writes its event files into @ar (opened for the job's archive) with its
 * ids starting at @bases (counts of the lower ranks; writing rank after
 * rank, what the ranks before took), then describes itself. Returns 0, or
 * -1 with @err. */
int tr_job_part_write_events(tr_job_part *p, OTF2_Archive *ar, const uint64_t bases[3], char *err, size_t errlen);
/* Its locations' local definitions (between OTF2_Archive_OpenDefFiles and
 * _CloseDefFiles): ClockOffsets and the map of its ids into @global (the
 * unified definitions, unpacked from tr_job_union_pack_defs). 0 or -1. */
int tr_job_part_local_defs(tr_job_part *p, OTF2_Archive *ar, const void *global, size_t len);
void tr_job_part_free(tr_job_part *p);

tr_job_union *tr_job_union_new(void);
/* Adds a part whose events were written (its definitions and description). */
int tr_job_union_add_part(tr_job_union *u, const tr_job_part *p);
/* The same from a description and definitions (NULL: none) made elsewhere
 * (bench/job_unify.c simulates a job's tree with them). */
struct tr_defs;
struct tr_rank_desc;
int tr_job_union_add_desc(tr_job_union *u, const struct tr_defs *defs, const struct tr_rank_desc *desc);
/* Adds what tr_job_union_pack made of another union. 0, or -1 on a
 * malformed blob or out of memory. */
int tr_job_union_add_blob(tr_job_union *u, const void *blob, size_t len);
int tr_job_union_pack(const tr_job_union *u, tr_blob *out);
/* The unified definitions alone, for every rank's tr_job_part_local_defs. */
int tr_job_union_pack_defs(const tr_job_union *u, tr_blob *out);
/* @p's local definitions against the union itself (serial merge). */
int tr_job_union_local_defs(tr_job_union *u, tr_job_part *p, OTF2_Archive *ar);
/* Rank 0: properties of the job of @size ranks, global definitions; closes
 * @ar. Fills @r (events, ranks, missing ...). 0, or -1 with r->error. */
int tr_job_union_write(tr_job_union *u, OTF2_Archive *ar, int32_t size, tr_convert_report *r);
void tr_job_union_free(tr_job_union *u);

#endif
