/* omp_states.h - host OpenMP states (TR_REC_OMP) on a host thread's
 * location (host_stack.h), in the journal's TRACER_MODE; omp_states.c says
 * how. Internal to src/model/. */
#ifndef TR_MODEL_OMP_STATES_H
#define TR_MODEL_OMP_STATES_H

#include "core/record.h"
#include "model/host_stack.h"

/* The thread's first OpenMP record is near: what its mode needs. Returns 0,
 * or -1 out of memory. */
int tr_omp_host_init(tr_host *h);
/* Around every record of the stream (of any type), once the thread has
 * OpenMP records: before, which closes the implicit tasks of teams that
 * have ended and an <OMP-idle> that a region of another kind interrupts;
 * then the record itself when it is a TR_REC_OMP; then after, which opens
 * <OMP-idle>. */
void tr_omp_host_before(tr_host *h, const tr_record *r);
void tr_omp_host_record(tr_host *h, const tr_record *r);
void tr_omp_host_after(tr_host *h, const tr_record *r);
/* At the end of the stream, before the regions still open are closed. */
void tr_omp_host_finish(tr_host *h);
/* After they are: the last Metric events. */
void tr_omp_host_final_metrics(tr_host *h);
void tr_omp_host_free(tr_host *h);

#endif
