/* host_thread.h - one host thread's records -> the events of its location
 * (host_stack.h): target constructs, data operations (with what only their
 * end reports, and what a delete freed), user regions and marks, MPI calls,
 * drop-mode gaps and declare-target-link mappings; its host OpenMP records
 * go to omp_states.h. Internal to src/model/. */
#ifndef TR_MODEL_HOST_THREAD_H
#define TR_MODEL_HOST_THREAD_H

#include "core/record.h"
#include "model/host_stack.h"

/* Record @r of the thread (any type), in the pass's time order. */
void tr_host_record(tr_host *h, const tr_record *r);
/* The thread's records are all read and the run's end is known (m->t_max):
 * what is still open is closed there. */
void tr_host_finish(tr_host *h);
void tr_host_free(tr_host *h);

#endif
