/* omp_model.h - host OpenMP records (TR_REC_OMP) across threads.
 *
 * A worker thread's own stream does not say which construct its implicit
 * task belongs to, nor when its team really ended: LLVM reports the end of
 * a worker's join barrier, and of its implicit task, only when the thread
 * is woken for the next parallel region (or at shutdown). The encountering
 * thread's stream knows both. The model's pass reads every stream in time
 * order and gives each TR_REC_OMP record here before the threads' states
 * take it (omp_states.c), so what this keeps, per parallel id (the
 * construct's codeptr, the team's end) and per explicit task id (the
 * codeptr that created it), is known as of the record being read: a team's
 * end is known once it is in the past. */
#ifndef TR_MODEL_OMP_MODEL_H
#define TR_MODEL_OMP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"
#include "journal/journal_load.h"

typedef struct tr_omp_parallel {
    uint64_t codeptr;  /* of its TR_OMP_PARALLEL begin; 0 when that was not seen */
    uint64_t team_end; /* the encountering thread's implicit task end (else its parallel end);
                        * UINT64_MAX: neither was seen */
    uint64_t end;      /* its TR_OMP_PARALLEL end; UINT64_MAX when not seen */
    uint32_t stream;   /* the encountering thread's stream; UINT32_MAX when not seen */
    int runtime;       /* forked by the OpenMP runtime's own code (libomp's hidden helpers) */
    int looked_ahead;  /* the rest of the encountering stream was searched for the ends (omp_states.c) */
} tr_omp_parallel;

typedef struct tr_omp_model {
    tr_u64map parallel_index;   /* parallel id -> index in parallels */
    tr_omp_parallel *parallels;
    size_t nparallels, capparallels;
    tr_u64map task_codeptr;     /* explicit task id -> codeptr of its task_create (1 when none) */
} tr_omp_model;

/* TRACER_MODE, from the journal's configuration. */
enum tr_omp_mode { TR_OMP_USER, TR_OMP_MACHINE };

/* TRACER_MODE (enum tr_omp_mode) from @jd's configuration. */
int tr_omp_mode_of(const tr_journal_data *jd);
/* Takes record @r of @stream (any type), in the pass's time order.
 * Returns 0, or -1 out of memory. */
int tr_omp_model_visit(tr_omp_model *m, size_t stream, const tr_record *r);
/* The parallel region of @id, made when it is not known yet (NULL: out of
 * memory). */
tr_omp_parallel *tr_omp_model_parallel_new(tr_omp_model *m, uint64_t id);
void tr_omp_model_free(tr_omp_model *m);
/* The parallel region of @id, or NULL. */
const tr_omp_parallel *tr_omp_model_parallel(const tr_omp_model *m, uint64_t id);
/* Whether @id is an explicit task a task_create announced; *@codeptr its codeptr_ra (0 unknown). */
int tr_omp_model_task(const tr_omp_model *m, uint64_t id, uint64_t *codeptr);

#endif
