/* omp_model.c - see omp_model.h. */
#include "model/omp_model.h"

#include <omp-tools.h>
#include <stdlib.h>
#include <string.h>


/* "TRACER_MODE=machine (environment)": the journal's configuration says
 * how the run was asked to be shown; a journal without it is user mode. */
int tr_omp_mode_of(const tr_journal_data *jd)
{
    static const char key[] = "TRACER_MODE=";
    for (uint32_t i = 0; i < jd->nconfig; i++) {
        const char *c = jd->config[i];
        if (!c || strncmp(c, key, sizeof key - 1))
            continue;
        const char *v = c + sizeof key - 1;
        size_t n = strcspn(v, " ");
        return n == 7 && !strncmp(v, "machine", 7) ? TR_OMP_MACHINE : TR_OMP_USER;
    }
    return TR_OMP_USER;
}

static tr_omp_parallel *parallel_of(tr_omp_model *m, uint64_t id, int create)
{
    uint64_t i;
    if (tr_u64map_get(&m->parallel_index, id, &i))
        return &m->parallels[i];
    if (!create)
        return 0;
    if (m->nparallels == m->capparallels) {
        size_t cap = m->capparallels ? 2 * m->capparallels : 64;
        tr_omp_parallel *p = realloc(m->parallels, cap * sizeof *p);
        if (!p)
            return 0;
        m->parallels = p;
        m->capparallels = cap;
    }
    if (tr_u64map_put(&m->parallel_index, id, m->nparallels))
        return 0;
    tr_omp_parallel *p = &m->parallels[m->nparallels++];
    *p = (tr_omp_parallel){.team_end = UINT64_MAX, .end = UINT64_MAX, .stream = UINT32_MAX};
    return p;
}

int tr_omp_model_visit(tr_omp_model *m, size_t s, const tr_record *r)
{
    if (r->type != TR_REC_OMP)
        return 0;
    tr_omp_parallel *p;
    switch (r->sub) {
    case TR_OMP_PARALLEL:
        if (!r->id)
            break;
        if (!(p = parallel_of(m, r->id, 1)))
            return -1;
        if (r->phase == TR_PHASE_BEGIN) {
            p->codeptr = r->u[0];
            p->stream = (uint32_t)s;
            p->runtime = r->u[2] == 1;
        } else {
            p->end = r->time;
            if (p->stream == s && p->team_end == UINT64_MAX)
                p->team_end = r->time; /* its implicit task's end was not seen */
        }
        break;
    case TR_OMP_IMPLICIT_TASK:
        /* The encountering thread's own implicit task ends after its
         * join barrier: every thread of the team has arrived. */
        if (r->phase == TR_PHASE_END && r->id && (p = parallel_of(m, r->id, 0)) && p->stream == s &&
            p->team_end == UINT64_MAX)
            p->team_end = r->time;
        break;
    case TR_OMP_TASK_CREATE:
        if ((r->dev & ompt_task_explicit) && r->id &&
            tr_u64map_put(&m->task_codeptr, r->id, r->u[0] ? r->u[0] : 1))
            return -1;
        break;
    default:
        break;
    }
    return 0;
}

void tr_omp_model_free(tr_omp_model *m)
{
    free(m->parallels);
    tr_u64map_free(&m->parallel_index);
    tr_u64map_free(&m->task_codeptr);
    memset(m, 0, sizeof *m);
}

tr_omp_parallel *tr_omp_model_parallel_new(tr_omp_model *m, uint64_t id) { return parallel_of(m, id, 1); }

const tr_omp_parallel *tr_omp_model_parallel(const tr_omp_model *m, uint64_t id)
{
    uint64_t i;
    return id && tr_u64map_get(&m->parallel_index, id, &i) ? &m->parallels[i] : 0;
}

int tr_omp_model_task(const tr_omp_model *m, uint64_t id, uint64_t *codeptr)
{
    uint64_t v;
    if (!id || !tr_u64map_get(&m->task_codeptr, id, &v))
        return 0;
    *codeptr = v == 1 ? 0 : v;
    return 1;
}
