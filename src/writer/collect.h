/* collect.h - the consumer side of the thread buffers: every thread's records
 * in recording order, timestamps converted to CLOCK_MONOTONIC ns. */
#ifndef TR_WRITER_COLLECT_H
#define TR_WRITER_COLLECT_H

#include <stddef.h>
#include <sys/types.h>

#include "core/record.h"

typedef struct tr_stream {
    uint32_t index; /* the thread's registration order */
    pid_t tid;
    tr_record *rec;
    size_t n;
} tr_stream;

typedef struct tr_collected {
    tr_stream *streams; /* threads with at least one record, by index */
    size_t nstreams;
    size_t records;
} tr_collected;

/* Recording must be stopped. Returns 0, or -1 when out of memory. */
int tr_collect(tr_collected *c);
void tr_collected_free(tr_collected *c);

#endif
