/* clock.h - the timestamp source of the hot path.
 *
 * The invariant TSC costs a few ns and never enters the kernel; where the CPU
 * lacks one (or TRACER_CLOCK=monotonic) we fall back to CLOCK_MONOTONIC, which
 * is a vDSO call. Raw ticks are turned into CLOCK_MONOTONIC nanoseconds only
 * by the writer, from two (tick, ns) pairs taken at start and end. */
#ifndef TR_CORE_CLOCK_H
#define TR_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TR_HAVE_TSC 1
#endif

extern int tr_clock_use_tsc;

static inline uint64_t tr_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t tr_clock_ticks(void)
{
#ifdef TR_HAVE_TSC
    if (__builtin_expect(tr_clock_use_tsc, 1))
        return __rdtsc();
#endif
    return tr_clock_mono_ns();
}

/* Chooses the source (enum tr_clock_choice) and takes the first (tick, ns)
 * pair; @calibration_ns is the least span between the two pairs
 * (TRACER_CALIBRATION; 0: no wait). Call once. */
void tr_clock_init(int choice, uint64_t calibration_ns);
/* One (tick, ns) pair: the tick read between two CLOCK_MONOTONIC reads, the
 * tightest of a few tries, ns the midpoint. The writer interpolates between
 * the first and the last pair, so a stamp is as exact as the pairs are
 * (tens of ns), whatever the run's length; a pair whose reads a preemption
 * split would skew every stamp, which the bracket rules out.
 * Async-signal-safe. Without the TSC both are the CLOCK_MONOTONIC read. */
void tr_clock_read_pair(uint64_t *tick, uint64_t *ns);
/* The first (tick, ns) pair. */
void tr_clock_start_pair(uint64_t *tick, uint64_t *ns);
/* Takes the second pair; waits until the calibration span (if any) has
 * passed since the first. */
void tr_clock_calibrate_end(void);
/* Converts raw ticks to CLOCK_MONOTONIC ns (valid after calibrate_end). */
uint64_t tr_clock_to_ns(uint64_t ticks);
/* CLOCK_REALTIME minus CLOCK_MONOTONIC in ns, sampled at init. */
int64_t tr_clock_realtime_offset_ns(void);
/* "tsc" or "monotonic". */
const char *tr_clock_source_name(void);

#endif
