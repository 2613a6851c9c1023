/* writer_unit.c - one journal's part of an archive: load, analyse, place
 * among the archive's ids, write its events, let go of its records.
 *
 * A journal alone (writer.c) and each rank of an MPI job (job_convert.c)
 * take this same path; only the definitions (tr_defs) are shared between
 * the journals of one archive. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer_internal.h"

/* MPI_T source locations come after the host threads and device streams. */
static uint64_t mpit_first(const tr_writer *w)
{
    uint64_t loc = w->data.nstreams;
    for (size_t d = 0; d < w->ndevices; d++)
        loc += w->devices[d].nlanes;
    return loc;
}

/* Every OpenMP program begins its initial thread and initial task; alone
 * they say nothing the program did, so a journal with no other record is
 * as empty as one with none (a filter that keeps nothing writes nothing). */
static int only_omp_bookkeeping(const tr_writer *w)
{
    for (size_t s = 0; s < w->data.nstreams; s++) {
        const tr_stream *st = &w->data.streams[s];
        for (size_t i = 0; i < st->n; i++) {
            const tr_record *r = &st->rec[i];
            if (r->type != TR_REC_OMP)
                return 0;
            if (r->sub != TR_OMP_THREAD && !(r->sub == TR_OMP_IMPLICIT_TASK && r->id == 0))
                return 0;
        }
    }
    return 1;
}

int tr_unit_open(tr_writer *w, tr_defs *defs, const char *journal, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->defs = defs;
    w->rank = -1;
    w->jd = calloc(1, sizeof *w->jd);
    if (!w->jd) {
        snprintf(err, errlen, "out of memory while reading %s", journal);
        return -1;
    }
    if (tr_journal_load(journal, w->jd, err, errlen)) {
        tr_journal_data_free(w->jd);
        free(w->jd);
        w->jd = 0;
        return -1;
    }
    w->data = w->jd->data;
    memset(&w->jd->data, 0, sizeof w->jd->data);
    w->t_min = UINT64_MAX;
    w->t_max = w->jd->end_ns;
    if (!w->data.records || only_omp_bookkeeping(w))
        return 1;
    if (tr_model_build(w) || tr_link_model_build(w, &w->links) || tr_mpit_model_build(w, mpit_first(w)) ||
        tr_omp_model_build(w, &w->omp)) {
        snprintf(err, errlen, "out of memory while analysing events of %s", journal);
        return -1;
    }
    if (w->t_min > w->t_max)
        w->t_min = w->t_max;
    return 0;
}

int tr_unit_place(tr_writer *w, uint64_t loc_base, uint32_t group_base, uint32_t win_base)
{
    w->loc_base = loc_base;
    w->group_base = group_base;
    w->win_base = win_base;
    w->nlocations = mpit_first(w) + w->mpit.nlocated;
    free(w->events);
    w->events = calloc(w->nlocations ? w->nlocations : 1, sizeof *w->events);
    return w->events ? 0 : -1;
}

int tr_unit_write_events(tr_writer *w, OTF2_Archive *ar, uint64_t *total)
{
    int rc = 0;
    for (size_t s = 0; !rc && s < w->data.nstreams; s++)
        rc = tr_events_write_host(w, ar, s, &w->events[s]);
    for (size_t d = 0; !rc && d < w->ndevices; d++)
        for (uint32_t l = 0; !rc && l < w->devices[d].nlanes; l++)
            rc = tr_events_write_device(w, ar, d, l, &w->events[w->devices[d].first_location + l]);
    for (uint32_t i = 0; !rc && i < w->mpit.nlocs; i++)
        if (w->mpit.locs[i].has_location)
            rc = tr_events_write_mpit(w, ar, i, &w->events[w->mpit.locs[i].location]);
    for (uint64_t l = 0; l < w->nlocations; l++)
        *total += w->events[l];
    return rc;
}

/* What the definitions still need stays: device numbers and lane counts,
 * the MPI_T sources and their statistics, the journal's metadata. */
void tr_unit_release_events(tr_writer *w)
{
    for (size_t d = 0; d < w->ndevices; d++) {
        free(w->devices[d].items);
        free(w->devices[d].metrics);
        w->devices[d].items = 0;
        w->devices[d].metrics = 0;
        w->devices[d].nitems = w->devices[d].capitems = 0;
        w->devices[d].nmetrics = w->devices[d].capmetrics = 0;
    }
    for (uint32_t i = 0; i < w->mpit.nlocs; i++) {
        free(w->mpit.locs[i].items);
        w->mpit.locs[i].items = 0;
        w->mpit.locs[i].n = w->mpit.locs[i].cap = 0;
    }
    free(w->target_rec);
    w->target_rec = 0;
    w->ntarget_rec = w->captarget_rec = 0;
    tr_u64map_free(&w->targets);
    tr_u64map_free(&w->delete_bytes);
    tr_u64map_free(&w->delete_host);
    tr_link_model_free(&w->links);
    tr_omp_model_free(&w->omp);
    /* Keep the stream list (its count names the host threads), not the records. */
    for (size_t s = 0; s < w->data.nstreams; s++) {
        free(w->data.streams[s].rec);
        w->data.streams[s].rec = 0;
        w->data.streams[s].n = 0;
    }
}

void tr_unit_free(tr_writer *w)
{
    tr_unit_release_events(w);
    free(w->devices);
    tr_u64map_free(&w->region_keys);
    tr_mpit_model_free(&w->mpit);
    tr_collected_free(&w->data);
    free(w->events);
    free(w->clock);
    if (w->jd) {
        tr_journal_data_free(w->jd);
        free(w->jd);
    }
    memset(w, 0, sizeof *w);
}
