/* log.h - one-line diagnostics on stderr, prefixed "tracer:".
 *
 * tracer must never hurt its host, so every failure is reported once and
 * never aborts. Messages are formatted into a stack buffer and written with a
 * single write(2) so lines from several processes do not interleave. */
#ifndef TR_CORE_LOG_H
#define TR_CORE_LOG_H

void tr_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Like tr_log, but only the first call with the same *once flag prints. */
void tr_log_once(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
