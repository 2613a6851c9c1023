/* journal_write.h - appending frames to a journal. */
#ifndef TR_JOURNAL_WRITE_H
#define TR_JOURNAL_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "journal/journal_format.h"

/* Creates DIR/tracer.journal through @dirfd (O_EXCL, O_NOFOLLOW, O_APPEND,
 * close-on-exec, the user's umask). Returns the fd or -1 (errno set). */
int tr_journal_create(int dirfd);

/* Seals @h (its location, tid, seq, records, flags, raw_bytes are the
 * caller's) and appends it with @payload in one writev. Async-signal-safe.
 * Returns 0, or -1 (errno set). */
int tr_journal_append(int fd, tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes);

/* START payload builder (fixed storage, no allocation). */
typedef struct tr_kv {
    size_t len;
    char data[32768];
} tr_kv;

void tr_kv_add(tr_kv *kv, uint16_t key, const void *value, uint32_t len);
void tr_kv_add_text(tr_kv *kv, uint16_t key, const char *text);

#endif
