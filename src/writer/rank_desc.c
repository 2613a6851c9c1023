/* rank_desc.c - see rank_desc.h. Fields in declaration order; each array
 * as its count and its entries (events: nlocations of them). */
#include "writer/rank_desc.h"

#include <stdlib.h>
#include <string.h>

void tr_rank_desc_pack(const tr_rank_desc *d, tr_blob *b)
{
    tr_blob_u32(b, (uint32_t)d->rank);
    tr_blob_u64(b, d->pid);
    tr_blob_str(b, d->hostname);
    tr_blob_u8(b, d->empty);
    tr_blob_u8(b, d->ended);
    tr_blob_u8(b, d->crashed);
    tr_blob_u8(b, d->truncated);
    tr_blob_u8(b, d->journal_lost);
    tr_blob_u32(b, (uint32_t)d->crash_signal);
    for (int i = 0; i < 2; i++) {
        tr_blob_u64(b, d->small_count[i]);
        tr_blob_u64(b, d->small_bytes[i]);
    }

    tr_blob_u64(b, d->loc_base);
    tr_blob_u32(b, d->group_base);
    tr_blob_u32(b, d->win_base);
    tr_blob_u64(b, d->nlocations);
    for (uint64_t l = 0; l < d->nlocations; l++)
        tr_blob_u64(b, d->events ? d->events[l] : 0);
    tr_blob_u32(b, d->nhost);
    tr_blob_u32(b, d->ndevices);
    for (uint32_t i = 0; i < d->ndevices; i++) {
        tr_blob_u32(b, (uint32_t)d->devices[i].num);
        tr_blob_u32(b, d->devices[i].nlanes);
        for (uint32_t l = 0; l < d->devices[i].nlanes; l++)
            tr_blob_u64(b, d->devices[i].lanes[l]);
    }
    tr_blob_u32(b, d->nmpit);
    for (uint32_t i = 0; i < d->nmpit; i++) {
        tr_blob_u64(b, d->mpit[i].location);
        tr_blob_str(b, d->mpit[i].name);
    }
    tr_blob_u32(b, d->ncomms);
    for (uint32_t i = 0; i < d->ncomms; i++) {
        tr_blob_u64(b, d->comms[i].handle);
        tr_blob_u8(b, d->comms[i].self);
    }
    tr_blob_u8(b, d->omp_metrics);

    tr_blob_u64(b, d->t_min);
    tr_blob_u64(b, d->t_max);
    tr_blob_u64(b, (uint64_t)d->realtime_shift);

    tr_blob_u32(b, d->nprops);
    for (uint32_t i = 0; i < d->nprops; i++) {
        tr_blob_str(b, d->props[i].name);
        tr_blob_str(b, d->props[i].value);
    }
    tr_blob_u32(b, d->nconfig);
    for (uint32_t i = 0; i < d->nconfig; i++)
        tr_blob_str(b, d->config[i]);

    tr_blob_u64(b, d->records);
    tr_blob_u64(b, d->events_total);
    tr_blob_u64(b, d->lost);
    tr_blob_u64(b, d->skipped_bytes);
    tr_blob_u64(b, d->bad_frames);
}

/* A zeroed array of @n entries of @size, each at least @wire bytes in the
 * blob: a count the rest of the blob cannot hold is malformed, and is
 * refused before it becomes a huge allocation. NULL for none (*@ok stays
 * 1), or with *@ok cleared. */
static void *array(tr_blob_reader *r, uint64_t n, size_t size, size_t wire, int *ok)
{
    if (r->bad || n > (r->n - r->at) / wire) {
        *ok = 0;
        return 0;
    }
    if (!n)
        return 0;
    void *p = calloc((size_t)n, size);
    if (!p)
        *ok = 0;
    return p;
}

int tr_rank_desc_unpack(tr_blob_reader *r, tr_rank_desc *d)
{
    int ok = 1;
    memset(d, 0, sizeof *d);
    d->rank = (int32_t)tr_blob_get_u32(r);
    d->pid = tr_blob_get_u64(r);
    d->hostname = tr_blob_get_str(r);
    d->empty = tr_blob_get_u8(r);
    d->ended = tr_blob_get_u8(r);
    d->crashed = tr_blob_get_u8(r);
    d->truncated = tr_blob_get_u8(r);
    d->journal_lost = tr_blob_get_u8(r);
    d->crash_signal = (int32_t)tr_blob_get_u32(r);
    for (int i = 0; i < 2; i++) {
        d->small_count[i] = tr_blob_get_u64(r);
        d->small_bytes[i] = tr_blob_get_u64(r);
    }

    d->loc_base = tr_blob_get_u64(r);
    d->group_base = tr_blob_get_u32(r);
    d->win_base = tr_blob_get_u32(r);
    /* Each count is set once its array exists, so that a failure part way
     * leaves something tr_rank_desc_free can free. */
    uint64_t nloc = tr_blob_get_u64(r);
    d->events = array(r, nloc, sizeof *d->events, 8, &ok);
    if (!ok)
        goto bad;
    d->nlocations = nloc;
    for (uint64_t l = 0; l < nloc; l++)
        d->events[l] = tr_blob_get_u64(r);
    d->nhost = tr_blob_get_u32(r);

    uint32_t n = tr_blob_get_u32(r);
    d->devices = array(r, n, sizeof *d->devices, 16, &ok);
    if (!ok)
        goto bad;
    d->ndevices = n;
    for (uint32_t i = 0; i < n; i++) {
        d->devices[i].num = (int32_t)tr_blob_get_u32(r);
        uint32_t nlanes = tr_blob_get_u32(r);
        d->devices[i].lanes = array(r, nlanes, sizeof *d->devices[i].lanes, 8, &ok);
        if (!ok)
            goto bad;
        d->devices[i].nlanes = nlanes;
        for (uint32_t l = 0; l < nlanes; l++)
            d->devices[i].lanes[l] = tr_blob_get_u64(r);
    }
    n = tr_blob_get_u32(r);
    d->mpit = array(r, n, sizeof *d->mpit, 12, &ok);
    if (!ok)
        goto bad;
    d->nmpit = n;
    for (uint32_t i = 0; i < n; i++) {
        d->mpit[i].location = tr_blob_get_u64(r);
        d->mpit[i].name = tr_blob_get_str(r);
    }
    n = tr_blob_get_u32(r);
    d->comms = array(r, n, sizeof *d->comms, 9, &ok);
    if (!ok)
        goto bad;
    d->ncomms = n;
    for (uint32_t i = 0; i < n; i++) {
        d->comms[i].handle = tr_blob_get_u64(r);
        d->comms[i].self = tr_blob_get_u8(r);
    }
    d->omp_metrics = tr_blob_get_u8(r);

    d->t_min = tr_blob_get_u64(r);
    d->t_max = tr_blob_get_u64(r);
    d->realtime_shift = (int64_t)tr_blob_get_u64(r);

    n = tr_blob_get_u32(r);
    d->props = array(r, n, sizeof *d->props, 8, &ok);
    if (!ok)
        goto bad;
    d->nprops = n;
    for (uint32_t i = 0; i < n; i++) {
        d->props[i].name = tr_blob_get_str(r);
        d->props[i].value = tr_blob_get_str(r);
    }
    n = tr_blob_get_u32(r);
    d->config = array(r, n, sizeof *d->config, 4, &ok);
    if (!ok)
        goto bad;
    d->nconfig = n;
    for (uint32_t i = 0; i < n; i++)
        d->config[i] = tr_blob_get_str(r);

    d->records = tr_blob_get_u64(r);
    d->events_total = tr_blob_get_u64(r);
    d->lost = tr_blob_get_u64(r);
    d->skipped_bytes = tr_blob_get_u64(r);
    d->bad_frames = tr_blob_get_u64(r);
    if (!r->bad)
        return 0;
bad:
    tr_rank_desc_free(d);
    return -1;
}

void tr_rank_desc_free(tr_rank_desc *d)
{
    free(d->hostname);
    free(d->events);
    for (uint32_t i = 0; d->devices && i < d->ndevices; i++)
        free(d->devices[i].lanes);
    free(d->devices);
    for (uint32_t i = 0; i < d->nmpit; i++)
        free(d->mpit[i].name);
    free(d->mpit);
    free(d->comms);
    for (uint32_t i = 0; i < d->nprops; i++) {
        free(d->props[i].name);
        free(d->props[i].value);
    }
    free(d->props);
    for (uint32_t i = 0; i < d->nconfig; i++)
        free(d->config[i]);
    free(d->config);
    memset(d, 0, sizeof *d);
}
