/* writer_unit.c - one journal's part of an archive: open it, place it among
 * the archive's ids, run the model's pass with the OTF2 sink (events
 * written as the model finds them), then its MPI_T sources.
 *
 * A journal alone (writer.c) and each rank of an MPI job (job_convert.c,
 * job_part.c) take this same path; only the definitions (tr_defs) are
 * shared between the journals of one archive. The analysis is the model
 * layer's (src/model/model.h); this file joins it to the OTF2 layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/otf2_workers.h"
#include "writer/writer_internal.h"

int tr_unit_open(tr_writer *w, tr_defs *defs, const char *journal, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->defs = defs;
    w->rank = -1;
    int rc = tr_model_open(&w->m, journal, err, errlen);
    if (rc < 0)
        tr_model_free(&w->m);
    return rc;
}

void tr_unit_place(tr_writer *w, uint64_t loc_base, uint32_t group_base, uint32_t win_base)
{
    w->loc_base = loc_base;
    w->group_base = group_base;
    w->win_base = win_base;
}

/* Room for the count of every location the model made. */
static int events_room(tr_writer *w)
{
    if (w->m.nlocations <= w->capwriters)
        return 0;
    uint64_t *e = realloc(w->events, w->m.nlocations * sizeof *e);
    OTF2_EvtWriter **g = realloc(w->writers, w->m.nlocations * sizeof *g);
    if (e)
        w->events = e;
    if (g)
        w->writers = g;
    if (!e || !g)
        return -1;
    memset(e + w->capwriters, 0, (w->m.nlocations - w->capwriters) * sizeof *e);
    memset(g + w->capwriters, 0, (w->m.nlocations - w->capwriters) * sizeof *g);
    w->capwriters = w->m.nlocations;
    return 0;
}

int tr_unit_write_events(tr_writer *w, OTF2_Archive *ar, uint64_t *total)
{
    w->ar = ar;
    w->al = OTF2_AttributeList_New();
    /* Without its threads (they could not start) the write goes on alone. */
    w->workers = w->threads ? tr_workers_start(ar, w->loc_base, w->threads) : 0;
    int rc = w->al ? tr_model_run(&w->m, tr_otf2_sink(w)) : -1;
    if (tr_otf2_sink_close(w))
        rc = -1;
    if (!rc && (events_room(w) || tr_mpit_define_attributes(w)))
        rc = -1;
    for (uint32_t i = 0; !rc && i < w->m.mpit.nlocs; i++)
        if (w->m.mpit.locs[i].has_location)
            rc = tr_events_write_mpit(w, ar, i, &w->events[w->m.mpit.locs[i].location]);
    w->nlocations = w->m.nlocations;
    for (uint64_t l = 0; !rc && l < w->nlocations; l++)
        *total += w->events[l];
    if (w->al)
        OTF2_AttributeList_Delete(w->al);
    w->al = 0;
    w->ar = 0;
    return rc;
}

static int count_event(void *ctx, const tr_mev *e)
{
    (void)ctx, (void)e;
    return 0;
}

int tr_unit_count(tr_writer *w)
{
    int rc = tr_model_run(&w->m, (tr_model_sink){.event = count_event, .ctx = w});
    w->nlocations = w->m.nlocations;
    return rc;
}

void tr_unit_free(tr_writer *w)
{
    tr_model_free(&w->m);
    tr_u64map_free(&w->region_keys);
    tr_u64map_free(&w->kernel_names);
    free(w->mpit_type_attr);
    free(w->mpit_elem_attr);
    free(w->events);
    free(w->writers);
    free(w->clock);
    memset(w, 0, sizeof *w);
}
