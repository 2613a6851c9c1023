/* model.c - the model's accessors and its release; model_scan.c builds it
 * in one pass over the records, model_build.c finishes it. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

tr_device *tr_model_device(tr_model *m, int num)
{
    for (size_t i = 0; i < m->ndevices; i++)
        if (m->devices[i].num == num)
            return &m->devices[i];
    return 0;
}

int *tr_model_device_numbers(const tr_model *m)
{
    int *nums = malloc((m->ndevices ? m->ndevices : 1) * sizeof *nums);
    for (size_t i = 0; nums && i < m->ndevices; i++)
        nums[i] = m->devices[i].num;
    return nums;
}

/* MPI_T source locations come after the host threads and device streams. */
uint64_t tr_model_mpit_first(const tr_model *m)
{
    uint64_t loc = m->data.nstreams;
    for (size_t d = 0; d < m->ndevices; d++)
        loc += m->devices[d].nlanes;
    return loc;
}

void tr_model_release_events(tr_model *m)
{
    for (uint32_t i = 0; i < m->mpit.nlocs; i++) {
        free(m->mpit.locs[i].items);
        m->mpit.locs[i].items = 0;
        m->mpit.locs[i].n = m->mpit.locs[i].cap = 0;
    }
    if (m->far)
        for (size_t s = 0; s < m->kept.nstreams; s++) {
            tr_u64map_free(&m->far[s].by_id);
            tr_u64map_free(&m->far[s].submit_end);
            free(m->far[s].ends);
        }
    free(m->far);
    m->far = 0;
    free(m->device_records);
    m->device_records = 0;
    tr_collected_free(&m->kept);
    free(m->scan.kept_cap);
    m->scan.kept_cap = 0;
    tr_u64map_free(&m->scan.far_ids);
    tr_u64map_free(&m->scan.open_submits);
    tr_delete_info_free(&m->deletes);
    tr_link_model_free(&m->links);
    tr_omp_model_free(&m->omp);
    /* Keep the stream list (its count names the host threads), not the records. */
    for (size_t s = 0; s < m->data.nstreams; s++) {
        free(m->data.streams[s].rec);
        m->data.streams[s].rec = 0;
        m->data.streams[s].n = 0;
    }
}

void tr_model_free(tr_model *m)
{
    tr_model_release_events(m);
    free(m->scan.devices);
    free(m->devices);
    tr_mpit_model_free(&m->mpit);
    tr_collected_free(&m->data);
    if (m->jd) {
        tr_journal_data_free(m->jd);
        free(m->jd);
    }
    memset(m, 0, sizeof *m);
}
