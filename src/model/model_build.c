/* model_build.c - what the records say across threads, once the model's
 * pass over them (model_scan.c) is done.
 *
 * The devices (every number the records name but the host's), then the
 * device pass (device_pass.h): kernels placed on stream lanes and the device
 * memory in use over time, then the link and MPI_T models from the copies
 * the scan kept. Kernels submitted concurrently to one device by different
 * host threads overlap in time; OTF2 needs properly nested regions per
 * location, so overlapping kernels go to extra lanes ("device d stream k"). */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "model/device_pass.h"

static int by_num(const void *a, const void *b)
{
    const tr_device *x = a, *y = b;
    return (x->num > y->num) - (x->num < y->num);
}

/* The devices the pass saw, but the host, by number. */
static int settle_devices(tr_model *m)
{
    const tr_model_scan *sc = &m->scan;
    m->devices = calloc(sc->ndevices ? sc->ndevices : 1, sizeof *m->devices);
    if (!m->devices)
        return -1;
    for (size_t i = 0; i < sc->ndevices; i++)
        if (sc->devices[i] != m->host_device)
            m->devices[m->ndevices++] = (tr_device){.num = sc->devices[i], .nlanes = 1};
    if (m->ndevices)
        qsort(m->devices, m->ndevices, sizeof *m->devices, by_num);
    return 0;
}

/* The model's device pass only counts each device's lanes (the device
 * stream does) and learns what each delete freed, for the host writer; the
 * writer's own pass writes the items (otf2_device_events.c). */
static int no_item(void *ctx, size_t device, uint32_t lane, const tr_record *rec, uint64_t end, uint32_t region,
                   int incomplete)
{
    (void)ctx, (void)device, (void)lane, (void)rec, (void)end, (void)region, (void)incomplete;
    return 0;
}

static int no_metric(void *ctx, size_t device, uint64_t time, uint64_t value)
{
    (void)ctx, (void)device, (void)time, (void)value;
    return 0;
}

int tr_model_build(tr_model *m, const tr_model_labels *labels)
{
    m->data = m->jd->data;
    memset(&m->jd->data, 0, sizeof m->jd->data);
    if (m->jd->end_ns > m->t_max)
        m->t_max = m->jd->end_ns;
    if (!m->kept.streams) { /* no record at all */
        m->kept.streams = calloc(m->data.nstreams ? m->data.nstreams : 1, sizeof *m->kept.streams);
        m->kept.nstreams = m->data.nstreams;
        m->device_records = calloc(m->data.nstreams ? m->data.nstreams : 1, 1);
        if (!m->kept.streams || !m->device_records || tr_omp_model_begin(m->jd, m->data.nstreams, &m->omp))
            return -1;
    }
    const tr_dev_sink count = {.item = no_item, .metric = no_metric, .ctx = m, .model_pass = 1};
    if (tr_model_scan_end(m) || settle_devices(m) || tr_device_pass(m, labels, count))
        return -1;
    uint64_t loc = m->data.nstreams;
    for (size_t i = 0; i < m->ndevices; i++) {
        m->devices[i].first_location = loc;
        loc += m->devices[i].nlanes;
    }
    if (tr_link_model_build(m->jd, &m->kept, &m->links) ||
        tr_mpit_model_build(&m->mpit, m->jd, &m->kept, tr_model_mpit_first(m), &m->t_min, &m->t_max))
        return -1;
    return 0;
}

