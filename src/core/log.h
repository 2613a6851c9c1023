/* log.h - one-line diagnostics on stderr, prefixed "tracer:".
 *
 * tracer must never hurt its host, so every failure is reported once and
 * never aborts. Messages are formatted into a stack buffer and written with a
 * single write(2) so lines from several processes do not interleave.
 *
 * "stderr" is the one the program was started with: its file is noted when
 * the library is loaded. A program that closes fd 2 and opens a file of its
 * own there (which then gets fd 2) never finds tracer's lines in it: they go
 * to the duplicate kept since tracing started (tr_log_keep_stderr), or to fd
 * 2 while it still names the original file, or nowhere. A stderr whose
 * reader is gone gives no SIGPIPE. */
#ifndef TR_CORE_LOG_H
#define TR_CORE_LOG_H

void tr_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Like tr_log, but only the first call with the same *once flag prints. */
void tr_log_once(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Like tr_log, for a signal handler: the line is the strings given, in
 * order, up to a NULL; no formatting. Async-signal-safe. */
void tr_log_parts(const char *first, ...) __attribute__((sentinel));

/* Keeps a duplicate of the program's original stderr (when fd 2 still is
 * that file) for the lines to come. At activation; idempotent. */
void tr_log_keep_stderr(void);

/* A descriptor of the original stderr for a report of several lines (the
 * end-of-run summary), or -1: there is none to write to. Not to be closed.
 * Async-signal-safe. */
int tr_log_fd(void);

#endif
