/* writer.h - the single path to OTF2: a journal in, an archive out. Used at
 * the end of a run and by `tracer recover`. */
#ifndef TR_WRITER_WRITER_H
#define TR_WRITER_WRITER_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_convert_report {
    uint64_t events, records, locations, devices, lost;
    uint64_t skipped_bytes, bad_frames;
    uint64_t missing_chunks; /* tr_writer_convert: chunks absent from the journal (a gap in a thread) */
    int truncated, ended, crashed, crash_signal;
    char error[512]; /* set when the conversion failed */
    char warning[512]; /* set when OTF2 refused something but the archive was written */
    /* tr_writer_convert_job only (ended: every rank; crashed, crash_signal:
     * the first rank that crashed; truncated: any journal) */
    uint64_t ranks;         /* ranks in the archive */
    uint64_t job_size;      /* ranks the job had (MPI_RANK frames) */
    uint64_t ranks_missing; /* job_size - ranks */
    char missing[256];      /* those ranks, e.g. "2,5-7" ("..." when longer) */
    char ends[512];         /* TRACER::RUN::END of the archive */
    /* Journals that were there but name no rank (cut short before their
     * MPI_RANK frame) or cannot be read: their ranks are in the archive
     * with no events, marked "journal lost"; the others are written. */
    uint64_t ranks_lost;
    char lost_journals[512]; /* each as "rank 1 (PATH: why)" ("..." when longer) */
} tr_convert_report;

/* How many threads beside the model's may write an archive's events
 * (otf2_workers.h): at most @n (TRACER_WRITE_THREADS; the default 8), and
 * at most one per CPU this process may run on beyond the first. The
 * archive is the same whatever the number. */
void tr_writer_set_threads(int n);

/* Writes @archive_dir/traces.otf2 from the journal at @journal. @archive_dir
 * must exist (the caller created it safely; a path such as /proc/self/fd/N
 * is fine). Returns 0, or -1 with r->error set. Not thread-safe (OTF2's error
 * callback is process-wide while it runs). */
int tr_writer_convert(const char *journal, const char *archive_dir, tr_convert_report *r);

/* A journal of at most this many records is written with OTF2's smallest
 * chunks (256 KiB instead of 4 MiB): a short run's end-of-run write then
 * costs about half as much (issue 19). Typical records take 20 - 60 bytes of
 * OTF2; should a file still outgrow 15 such chunks, the archive is written
 * again with 4 MiB chunks, so the choice never changes what is written. */
#define TR_WRITER_SMALL_RECORDS 8192

/* tr_writer_convert with another record limit for small chunks (0: never;
 * UINT64_MAX: always); for tests of both paths. */
int tr_writer_convert_sized(const char *journal, const char *archive_dir, uint64_t small_records,
                            tr_convert_report *r);

/* Writes @archive_dir/traces.otf2 from the journals of the ranks of one MPI
 * job (any order; each names its rank in its MPI_RANK frame): one archive,
 * each rank in its own location group, timestamps corrected to rank 0's
 * clock by ClockOffset definitions. docs/trace-model.md, "An MPI job's
 * archive", is the contract. Fails (-1, r->error) on a whole journal that
 * never named an MPI rank, two journals of one rank, journals of different
 * jobs, or when no journal names its rank. Ranks without a journal are
 * listed, not an error, and so are ranks whose journal is cut short before
 * it names its rank or cannot be read (r->ranks_lost: their rank is the
 * number in the file name rank<N>.journal, else the one rank no other
 * journal names). Serial, like tr_writer_convert; not thread-safe. */
int tr_writer_convert_job(const char *const *journals, size_t n, const char *archive_dir, tr_convert_report *r);

#endif
