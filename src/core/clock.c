#include "core/clock.h"

#include "core/config.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tr_clock_use_tsc;

static uint64_t tick0, ns0, tick1, ns1;
static int64_t realtime_offset;

/* Both flags mean the TSC runs at a fixed rate through P- and C-states, the
 * only case where a linear tick->ns mapping holds for the whole run. */
static int tsc_is_invariant(void)
{
#ifdef TR_HAVE_TSC
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    }
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

static uint64_t calibration_span;

void tr_clock_init(int choice, uint64_t calibration_ns)
{
    calibration_span = calibration_ns;
    int invariant = choice != TR_CLOCK_MONOTONIC && tsc_is_invariant();
    if (choice == TR_CLOCK_TSC && !invariant)
        tr_log("TRACER_CLOCK=tsc: this CPU has no invariant TSC; using CLOCK_MONOTONIC");
    tr_clock_use_tsc = invariant;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    tr_clock_read_pair(&tick0, &ns0);
    realtime_offset = (int64_t)((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec) - (int64_t)ns0;
}

void tr_clock_read_pair(uint64_t *tick, uint64_t *ns)
{
    if (!tr_clock_use_tsc) {
        *tick = *ns = tr_clock_mono_ns();
        return;
    }
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5 && best > 200; i++) {
        uint64_t a = tr_clock_mono_ns();
        uint64_t t = tr_clock_ticks();
        uint64_t b = tr_clock_mono_ns();
        if (b - a < best) {
            best = b - a;
            *tick = t;
            *ns = a + (b - a) / 2;
        }
    }
}

void tr_clock_calibrate_end(void)
{
    do
        tr_clock_read_pair(&tick1, &ns1);
    while (tr_clock_use_tsc && ns1 - ns0 < calibration_span);
}

uint64_t tr_clock_to_ns(uint64_t ticks)
{
    if (!tr_clock_use_tsc)
        return ticks;
    long double rate = (long double)(ns1 - ns0) / (long double)(tick1 - tick0);
    long double d = ((long double)ticks - (long double)tick0) * rate;
    return (uint64_t)((long double)ns0 + d);
}

int64_t tr_clock_realtime_offset_ns(void) { return realtime_offset; }

void tr_clock_start_pair(uint64_t *tick, uint64_t *ns)
{
    *tick = tick0;
    *ns = ns0;
}

const char *tr_clock_source_name(void) { return tr_clock_use_tsc ? "tsc" : "monotonic"; }
