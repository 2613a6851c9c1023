/* writer_unit.c - one journal's part of an archive: load, analyse, place
 * among the archive's ids, write its events, let go of its records.
 *
 * A journal alone (writer.c) and each rank of an MPI job (job_convert.c)
 * take this same path; only the definitions (tr_defs) are shared between
 * the journals of one archive. The analysis is the model layer's
 * (src/model/model.h); this file joins it to the OTF2 layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer_internal.h"

/* The model labels device items with their OTF2 regions, defined as it
 * finds them. */
static uint32_t label_kernel(void *w, uint64_t target_codeptr) { return tr_defs_region_kernel(w, target_codeptr); }
static uint32_t label_device_event(void *w, uint8_t rec_type) { return tr_defs_region_device_event(w, rec_type); }

tr_model_labels tr_unit_labels(tr_writer *w)
{
    return (tr_model_labels){.kernel = label_kernel, .device_event = label_device_event, .ctx = w};
}

int tr_unit_open(tr_writer *w, tr_defs *defs, const char *journal, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->defs = defs;
    w->rank = -1;
    tr_journal_data *jd = calloc(1, sizeof *jd);
    if (!jd) {
        snprintf(err, errlen, "out of memory while reading %s", journal);
        return -1;
    }
    /* One pass over the records builds what the model needs of them; the
     * events are read again, a stream at a time, when they are written. */
    tr_model_begin(&w->m, jd);
    if (tr_journal_load_visiting(journal, jd, tr_model_visit, &w->m, err, errlen)) {
        tr_model_free(&w->m);
        return -1;
    }
    const tr_model_labels labels = tr_unit_labels(w);
    int built = tr_model_build(&w->m, &labels);
    /* Every OpenMP program begins its initial thread and initial task; alone
     * they say nothing the program did, so a journal with no other record is
     * as empty as one with none (a filter that keeps nothing writes nothing). */
    if (!built && (!w->m.data.records || !w->m.beyond_bookkeeping))
        return 1;
    if (built || tr_mpit_define_attributes(w)) {
        snprintf(err, errlen, "out of memory while analysing events of %s", journal);
        return -1;
    }
    if (w->m.t_min > w->m.t_max)
        w->m.t_min = w->m.t_max;
    return 0;
}

int tr_unit_place(tr_writer *w, uint64_t loc_base, uint32_t group_base, uint32_t win_base)
{
    w->loc_base = loc_base;
    w->group_base = group_base;
    w->win_base = win_base;
    w->nlocations = tr_model_mpit_first(&w->m) + w->m.mpit.nlocated;
    free(w->events);
    w->events = calloc(w->nlocations ? w->nlocations : 1, sizeof *w->events);
    return w->events ? 0 : -1;
}

int tr_unit_write_events(tr_writer *w, OTF2_Archive *ar, uint64_t *total)
{
    int rc = 0;
    for (size_t s = 0; !rc && s < w->m.data.nstreams; s++)
        rc = tr_events_write_host(w, ar, s, &w->events[s]);
    if (!rc)
        rc = tr_events_write_devices(w, ar);
    for (uint32_t i = 0; !rc && i < w->m.mpit.nlocs; i++)
        if (w->m.mpit.locs[i].has_location)
            rc = tr_events_write_mpit(w, ar, i, &w->events[w->m.mpit.locs[i].location]);
    for (uint64_t l = 0; l < w->nlocations; l++)
        *total += w->events[l];
    return rc;
}

/* What the definitions still need stays: device numbers and lane counts,
 * the MPI_T sources and their statistics, the journal's metadata. */
void tr_unit_release_events(tr_writer *w) { tr_model_release_events(&w->m); }

void tr_unit_free(tr_writer *w)
{
    tr_model_free(&w->m);
    tr_u64map_free(&w->region_keys);
    free(w->mpit_type_attr);
    free(w->mpit_elem_attr);
    free(w->events);
    free(w->clock);
    memset(w, 0, sizeof *w);
}
