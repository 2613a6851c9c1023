/* job_clock.c - one timeline for the ranks of a job.
 *
 * Each rank stamps its events with its own CLOCK_MONOTONIC; its journal's
 * CLOCK_OFFSET frames say how far rank 0's clock was from it (at MPI_Init
 * and at MPI_Finalize). The archive keeps every rank's own stamps and puts
 * the offsets in ClockOffset definitions, which OTF2 readers apply: they
 * interpolate linearly between consecutive definitions and extrapolate
 * with the nearest pair's slope - and correct nothing at all with fewer
 * than two. tr_job_clock_correct() is that same computation, so the
 * archive's ClockProperties span exactly the corrected times. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer_internal.h"

static int by_local_time(const void *a, const void *b)
{
    const tr_journal_clock_offset *x = a, *y = b;
    if (x->local_ns != y->local_ns)
        return x->local_ns < y->local_ns ? -1 : 1;
    return (x->rtt_ns > y->rtt_ns) - (x->rtt_ns < y->rtt_ns); /* the best first */
}

int tr_job_clock_points(tr_writer *w)
{
    const tr_journal_data *jd = w->m.jd;
    free(w->clock);
    w->clock = 0;
    w->nclock = 0;
    if (!jd->nclock_offsets)
        return 0;
    tr_journal_clock_offset *o = malloc(jd->nclock_offsets * sizeof *o);
    /* One more than the frames: a single measurement is written twice. */
    w->clock = calloc(jd->nclock_offsets + 1, sizeof *w->clock);
    if (!o || !w->clock) {
        free(o);
        free(w->clock);
        w->clock = 0;
        return -1;
    }
    memcpy(o, jd->clock_offsets, jd->nclock_offsets * sizeof *o);
    qsort(o, jd->nclock_offsets, sizeof *o, by_local_time);
    for (uint32_t i = 0; i < jd->nclock_offsets; i++) {
        /* OTF2 refuses two offsets at one time (an integrity fault). */
        if (w->nclock && o[i].local_ns == w->clock[w->nclock - 1].time)
            continue;
        /* Rank 0's clock is the reference: its offset is 0 by definition. */
        int64_t offset = w->rank == 0 ? 0 : o[i].offset_ns;
        w->clock[w->nclock++] = (tr_clock_point){o[i].local_ns, offset, (double)o[i].rtt_ns / 2};
    }
    free(o);
    /* A rank that died before MPI_Finalize has only the offset of MPI_Init:
     * it holds from there to the rank's end. */
    if (w->nclock == 1) {
        tr_clock_point p = w->clock[0];
        p.time = w->m.t_max > p.time ? w->m.t_max : p.time + 1;
        w->clock[w->nclock++] = p;
    }
    return 0;
}

uint64_t tr_job_clock_correct(const tr_writer *w, uint64_t t)
{
    if (w->nclock < 2)
        return t;
    uint32_t i = 0;
    while (i + 2 < w->nclock && t > w->clock[i + 1].time)
        i++;
    const tr_clock_point *a = &w->clock[i], *b = &w->clock[i + 1];
    double slope = (double)(b->offset - a->offset) / (double)(b->time - a->time);
    double diff = t >= a->time ? (double)(t - a->time) : -(double)(a->time - t);
    int64_t offset = a->offset + (int64_t)rint(slope * diff);
    return t + (uint64_t)offset;
}
