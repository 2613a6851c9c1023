/* writer.h - the single path to OTF2: a journal in, an archive out. Used at
 * the end of a run and by `tracer recover`. */
#ifndef TR_WRITER_WRITER_H
#define TR_WRITER_WRITER_H

#include <stddef.h>
#include <stdint.h>

typedef struct tr_convert_report {
    uint64_t events, records, locations, devices, lost;
    uint64_t skipped_bytes, bad_frames;
    int truncated, ended, crashed, crash_signal;
    char error[512]; /* set when the conversion failed */
    char warning[512]; /* set when OTF2 refused something but the archive was written */
} tr_convert_report;

/* Writes @archive_dir/traces.otf2 from the journal at @journal. @archive_dir
 * must exist (the caller created it safely; a path such as /proc/self/fd/N
 * is fine). Returns 0, or -1 with r->error set. Not thread-safe (OTF2's error
 * callback is process-wide while it runs). */
int tr_writer_convert(const char *journal, const char *archive_dir, tr_convert_report *r);

#endif
