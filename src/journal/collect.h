/* collect.h - every thread's records in recording order (times in ns), as
 * the journal gives them back: one stream per location. The product of the
 * journal's decoder (journal_load.h); the model layer reads it. */
#ifndef TR_JOURNAL_COLLECT_H
#define TR_JOURNAL_COLLECT_H

#include <stddef.h>
#include <sys/types.h>

#include "core/record.h"

typedef struct tr_stream {
    uint32_t index; /* the thread's registration order (its journal location) */
    pid_t tid;
    tr_record *rec; /* NULL when the records are read through cursors (tr_journal_load_index) */
    size_t n;
    uint64_t last_time; /* of its last record (ns), 0 without one */
    uint32_t chunked;   /* its stream in the journal's index; TR_STREAM_NO_CHUNKS: a loss alone */
} tr_stream;

#define TR_STREAM_NO_CHUNKS UINT32_MAX

typedef struct tr_collected {
    tr_stream *streams; /* threads with at least one record, by index */
    size_t nstreams;
    size_t records;
} tr_collected;

void tr_collected_free(tr_collected *c);

#endif
