/* inflight_salvage.h - what `tracer recover` takes from the in-flight file
 * (core/inflight.h) of a run that died without saving its chunks (SIGKILL,
 * the OOM killer, exit_group, a launcher's kill after MPI_Abort).
 *
 * The journal's START frame names the file and the run id it must carry.
 * Every chunk in the file whose committed records are more than the
 * journal's copy of the same (thread, seq) holds is appended to the journal
 * as one more CHUNK frame: the journal reader already keeps the fullest copy
 * of each seq, so nothing is counted twice, and the journal alone is then
 * the whole record (the file can go). Why no torn or stale record is taken:
 * docs/crash-survival.md. Nothing in the file is trusted: a file of another
 * run, another user, another layout, or a chunk with an impossible header is
 * skipped and counted; what is at the path is opened and checked as
 * journal/inflight_access.h says (a FIFO planted there never blocks). Only
 * the chunks the pool ever handed out are read (the header's high-water
 * mark). A file its run still holds (the process lives, or is dying or
 * ending) is never read nor removed. */
#ifndef TR_JOURNAL_INFLIGHT_SALVAGE_H
#define TR_JOURNAL_INFLIGHT_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

#include "journal/inflight_access.h"

enum tr_salvage_state {
    TR_SALVAGE_NONE,  /* the journal names no file: /dev/shm was unusable, or a journal before it */
    TR_SALVAGE_GONE,  /* named, but removed: the run saved every chunk in the journal itself */
    TR_SALVAGE_ELSEWHERE, /* named, absent, and the run ran on another host (host): its
                           * /dev/shm is there; recover there takes it */
    TR_SALVAGE_LOST,  /* named, absent, and the run saved nothing at its end (a reboot, the
                       * file removed): events after the last flush interval may be missing */
    TR_SALVAGE_LIVE,  /* the process still runs (it holds the file's lock): nothing taken, and
                       * nothing may be written from the journal it still appends to */
    TR_SALVAGE_BAD,   /* present but unusable (problem says why): nothing taken */
    TR_SALVAGE_TAKEN, /* read: chunks_added chunks appended */
};

typedef struct tr_salvage_thread {
    uint32_t location, tid;
    uint64_t journal_records;  /* the fullest copy of each of its chunks in the journal */
    uint64_t inflight_records; /* records only the in-flight file held */
    uint64_t gaps, missing;    /* places where chunks are missing, and how many chunks */
    uint64_t first_gap_seq;    /* the seq of the first missing chunk */
} tr_salvage_thread;

typedef struct tr_salvage_report {
    int state;                 /* enum tr_salvage_state */
    char path[128];            /* the in-flight file named by the journal */
    char host[256];            /* where the run ran (the journal's START frame) */
    char problem[256];         /* TR_SALVAGE_BAD, or why appending failed */
    uint64_t chunks_added, records_added, bad_chunks;
    uint64_t dev, ino;          /* the file read (TR_SALVAGE_TAKEN): only it is removed */
    tr_salvage_thread *threads; /* by location */
    size_t nthreads;
} tr_salvage_report;

/* Reads @journal's in-flight file and appends to @journal what only that
 * file holds (a torn frame at the journal's end is cut off first: no reader
 * could use it, and it would hide what follows). A run that holds the file
 * is waited for as @w allows: one that is dying or saving its end lets go
 * within it; one still holding it then is TR_SALVAGE_LIVE. Fills @r, also on failure. Returns 0, or -1
 * when the journal cannot be read or appended to. */
int tr_inflight_salvage(const char *journal, tr_holder_wait *w, tr_salvage_report *r);
/* Removes the file once an archive holds its records (TR_SALVAGE_TAKEN only). */
void tr_inflight_salvage_remove(const tr_salvage_report *r);
void tr_salvage_report_free(tr_salvage_report *r);

#endif
