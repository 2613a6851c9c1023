/* model.c - a journal opened for the model's pass (model_pass.c runs it),
 * the model's accessors and its release. */
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/omp_model.h"

/* An OpenMP program's bookkeeping: its initial thread and initial task. */
static int bookkeeping(const tr_record *r)
{
    return r->type == TR_REC_OMP && (r->sub == TR_OMP_THREAD || (r->sub == TR_OMP_IMPLICIT_TASK && r->id == 0));
}

/* Whether some stream holds a record beyond the bookkeeping: each is read
 * only until its first such record (for any program that did something,
 * within its first chunk). 0 no, 1 yes, -1 unreadable. */
static int beyond_bookkeeping(const tr_journal_data *jd)
{
    for (size_t s = 0; s < jd->data.nstreams; s++) {
        if (jd->data.streams[s].chunked == TR_STREAM_NO_CHUNKS)
            continue;
        tr_stream_cursor *c = tr_journal_stream_open(jd, &jd->data.streams[s]);
        if (!c)
            return -1;
        const tr_record *r;
        while ((r = tr_stream_cursor_next(c)) && bookkeeping(r))
            ;
        tr_stream_cursor_close(c);
        if (r)
            return 1;
    }
    return 0;
}

int tr_model_open(tr_model *m, const char *journal, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->host_device = -2;
    m->t_min = UINT64_MAX;
    m->jd = calloc(1, sizeof *m->jd);
    if (!m->jd) {
        snprintf(err, errlen, "out of memory while reading %s", journal);
        return -1;
    }
    if (tr_journal_load_index(journal, m->jd, err, errlen)) {
        free(m->jd);
        m->jd = 0;
        return -1;
    }
    m->nstreams = m->jd->data.nstreams;
    m->nlocations = m->nstreams;
    m->omp_mode = tr_omp_mode_of(m->jd);
    m->has_omp = calloc(m->nstreams ? m->nstreams : 1, 1);
    if (!m->has_omp) {
        snprintf(err, errlen, "out of memory while reading %s", journal);
        return -1;
    }
    int beyond = beyond_bookkeeping(m->jd);
    if (beyond < 0) {
        snprintf(err, errlen, "cannot read the chunks of %s", journal);
        return -1;
    }
    return beyond ? 0 : 1;
}

tr_device *tr_model_device(const tr_model *m, int num)
{
    for (size_t i = 0; i < m->ndevices; i++)
        if (m->devices[i].num == num)
            return &m->devices[i];
    return 0;
}

uint64_t tr_model_mpit_first(const tr_model *m)
{
    return m->nlocations - m->mpit.nlocated;
}

void tr_model_free(tr_model *m)
{
    for (size_t i = 0; i < m->ndevices; i++)
        free(m->devices[i].lanes);
    free(m->devices);
    free(m->has_omp);
    tr_link_model_free(&m->links);
    tr_u64map_free(&m->hashes);
    tr_advice_model_free(&m->advice);
    tr_mpit_model_free(&m->mpit);
    tr_collected_free(&m->mpit_kept);
    if (m->jd) {
        tr_journal_data_free(m->jd);
        free(m->jd);
    }
    memset(m, 0, sizeof *m);
}
