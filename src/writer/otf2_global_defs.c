/* otf2_global_defs.c - the global definition file of an archive: strings,
 * clock, system tree, location groups and locations of every journal in it,
 * regions, attributes, metrics, and the communicators of the RMA windows
 * (and, for an MPI job, of MPI). Written last: it needs each location's
 * event count. A journal alone is written exactly as it always was; a job's
 * ranks follow one another with their own ids (each part's bases). Only
 * descriptions (rank_desc.h) are read, so in a job rank 0 writes this file
 * from what the other ranks sent it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "writer/writer_internal.h"

/* Names of a journal's groups: "process <pid>" alone, "rank <N>" in a job. */
static uint32_t process_name(const tr_global *g, const tr_rank_desc *w)
{
    char buf[64];
    if (g->job)
        snprintf(buf, sizeof buf, TRV_RANK_PREFIX "%d", w->rank);
    else
        snprintf(buf, sizeof buf, "process %llu", (unsigned long long)w->pid);
    return tr_defs_str(g->defs, buf);
}

/* @what: 0 the device's location group, 1 its comm, 2 its window. */
static uint32_t device_name(const tr_global *g, const tr_rank_desc *w, const tr_desc_device *dev, int what)
{
    static const char *const fmt[3] = {TRV_DEVICE_WORD "%d", "host<->device %d", TRV_DEVICE_WORD "%d" TRV_DEVICE_MEMORY_SUFFIX};
    char buf[96], rank[32] = "";
    if (g->job)
        snprintf(rank, sizeof rank, TRV_RANK_PREFIX "%d ", w->rank);
    int n = snprintf(buf, sizeof buf, "%s", rank);
    snprintf(buf + n, sizeof buf - (size_t)n, fmt[what], dev->num);
    return tr_defs_str(g->defs, buf);
}

static uint32_t lane_name(const tr_global *g, const tr_desc_device *dev, uint32_t lane)
{
    char buf[96];
    if (lane == 0)
        snprintf(buf, sizeof buf, "device %d stream", dev->num);
    else
        snprintf(buf, sizeof buf, "device %d stream %u", dev->num, lane);
    return tr_defs_str(g->defs, buf);
}

static uint32_t thread_name(const tr_global *g, size_t i)
{
    char buf[64];
    snprintf(buf, sizeof buf, "host thread %zu", i);
    return tr_defs_str(g->defs, buf);
}

/* A rank's own properties, on its process group: "TRACER::PROCESS" (its
 * pid and host) and its TRACER::MPIT::* (a journal alone has them in the
 * anchor file). With @gw NULL, interns their strings. */
static void rank_properties(const tr_global *g, const tr_rank_desc *w, OTF2_GlobalDefWriter *gw)
{
    char value[320];
    snprintf(value, sizeof value, "pid %llu on %.256s", (unsigned long long)w->pid, w->hostname ? w->hostname : "?");
    OTF2_AttributeValue v;
    uint32_t name = tr_defs_str(g->defs, "TRACER::PROCESS");
    v.stringRef = tr_defs_str(g->defs, value);
    if (gw)
        OTF2_GlobalDefWriter_WriteLocationGroupProperty(gw, w->group_base, name, OTF2_TYPE_STRING, v);
    for (uint32_t i = 0; i < w->nprops; i++) {
        name = tr_defs_str(g->defs, w->props[i].name);
        v.stringRef = tr_defs_str(g->defs, w->props[i].value);
        if (gw)
            OTF2_GlobalDefWriter_WriteLocationGroupProperty(gw, w->group_base, name, OTF2_TYPE_STRING, v);
    }
}

/* Every string must exist before the string definitions are written, so
 * all are interned first, in the order a lone journal always had. */
static void intern_all(const tr_global *g)
{
    tr_defs *d = g->defs;
    tr_defs_str(d, "machine");
    tr_defs_str(d, "node");
    for (uint32_t i = 0; i < g->nnodes; i++)
        tr_defs_str(d, g->nodes[i]);
    for (size_t u = 0; u < g->nparts; u++) {
        const tr_rank_desc *w = g->parts[u];
        process_name(g, w);
        for (size_t i = 0; i < w->nhost; i++)
            thread_name(g, i);
        for (size_t k = 0; k < w->ndevices; k++) {
            for (uint32_t l = 0; l < w->devices[k].nlanes; l++)
                lane_name(g, &w->devices[k], l);
            for (int what = 0; what < 3; what++)
                device_name(g, w, &w->devices[k], what);
        }
    }
    for (int a = 0; a < TR_ATTR_COUNT; a++) {
        tr_defs_str(d, tr_defs_attr_name((enum tr_attr)a));
        tr_defs_str(d, tr_defs_attr_description((enum tr_attr)a));
    }
    tr_defs_str(d, TRV_METRIC_DEVICE_MEMORY);
    tr_defs_str(d, "bytes allocated by the OpenMP runtime on the device, not yet deleted");
    tr_defs_str(d, "bytes");
    tr_defs_str(d, "all locations");
    if (g->job)
        for (size_t u = 0; u < g->nparts; u++)
            rank_properties(g, g->parts[u], 0);
    int mpit = 0;
    for (size_t u = 0; u < g->nparts; u++)
        for (uint32_t i = 0; i < g->parts[u]->nmpit; i++, mpit = 1)
            tr_defs_str(d, g->parts[u]->mpit[i].name);
    int omp = 0;
    for (size_t u = 0; u < g->nparts; u++)
        omp |= g->parts[u]->omp_metrics;
    if (mpit || omp)
        tr_defs_write_mpit_metric(d, 0);
    if (omp)
        tr_defs_write_omp_metrics(d, 0);
    if (g->job)
        tr_defs_write_job_comms(g, 0, 0, 0);
}

static void write_tree_and_locations(const tr_global *g, OTF2_GlobalDefWriter *gw)
{
    tr_defs *d = g->defs;
    uint32_t s_machine = tr_defs_str(d, "machine"), s_node_class = tr_defs_str(d, "node");
    OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, s_machine, s_machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (uint32_t i = 0; i < g->nnodes; i++)
        OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 1 + i, tr_defs_str(d, g->nodes[i]), s_node_class, 0);
    for (size_t u = 0; u < g->nparts; u++) {
        const tr_rank_desc *w = g->parts[u];
        OTF2_GlobalDefWriter_WriteLocationGroup(gw, w->group_base, process_name(g, w), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                g->node[u], OTF2_UNDEFINED_LOCATION_GROUP);
        for (size_t k = 0; k < w->ndevices; k++)
            OTF2_GlobalDefWriter_WriteLocationGroup(gw, (OTF2_LocationGroupRef)(w->group_base + 1 + k),
                                                    device_name(g, w, &w->devices[k], 0),
                                                    OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, g->node[u], w->group_base);
        if (g->job)
            rank_properties(g, w, gw);
    }
    for (size_t u = 0; u < g->nparts; u++) {
        const tr_rank_desc *w = g->parts[u];
        for (size_t i = 0; i < w->nhost; i++)
            OTF2_GlobalDefWriter_WriteLocation(gw, w->loc_base + i, thread_name(g, i),
                                               OTF2_LOCATION_TYPE_CPU_THREAD, w->events[i], w->group_base);
        for (size_t k = 0; k < w->ndevices; k++) {
            const tr_desc_device *dev = &w->devices[k];
            for (uint32_t l = 0; l < dev->nlanes; l++) {
                uint64_t id = dev->lanes[l];
                OTF2_GlobalDefWriter_WriteLocation(gw, w->loc_base + id, lane_name(g, dev, l),
                                                   OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, w->events[id],
                                                   (OTF2_LocationGroupRef)(w->group_base + 1 + k));
            }
        }
        for (uint32_t i = 0; i < w->nmpit; i++)
            OTF2_GlobalDefWriter_WriteLocation(gw, w->loc_base + w->mpit[i].location, tr_defs_str(d, w->mpit[i].name),
                                               OTF2_LOCATION_TYPE_CPU_THREAD, w->events[w->mpit[i].location],
                                               w->group_base);
    }
}

static void write_regions_attributes_metrics(const tr_global *g, OTF2_GlobalDefWriter *gw)
{
    tr_defs *d = g->defs;
    for (uint32_t i = 0; i < d->nregions; i++) {
        tr_region_def *r = &d->regions[i];
        OTF2_GlobalDefWriter_WriteRegion(gw, i, r->name, r->canonical, r->description, r->role, r->paradigm,
                                         OTF2_REGION_FLAG_NONE, r->file, r->line, r->line);
    }
    for (int a = 0; a < TR_ATTR_COUNT; a++)
        OTF2_GlobalDefWriter_WriteAttribute(gw, (OTF2_AttributeRef)a, tr_defs_str(d, tr_defs_attr_name((enum tr_attr)a)),
                                            tr_defs_str(d, tr_defs_attr_description((enum tr_attr)a)),
                                            tr_defs_attr_type((enum tr_attr)a));
    OTF2_MetricMemberRef member = 0;
    OTF2_GlobalDefWriter_WriteMetricMember(
        gw, 0, tr_defs_str(d, TRV_METRIC_DEVICE_MEMORY),
        tr_defs_str(d, "bytes allocated by the OpenMP runtime on the device, not yet deleted"), OTF2_METRIC_TYPE_OTHER,
        OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, tr_defs_str(d, "bytes"));
    OTF2_GlobalDefWriter_WriteMetricClass(gw, 0, 1, &member, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                          OTF2_RECORDER_KIND_ABSTRACT);
    for (uint32_t k = 0; k < d->nattrs; k++)
        OTF2_GlobalDefWriter_WriteAttribute(gw, TR_ATTR_COUNT + k, d->attrs[k].name, d->attrs[k].description,
                                            d->attrs[k].type);
    int located = 0, omp = 0;
    for (size_t u = 0; u < g->nparts; u++) {
        located |= g->parts[u]->nmpit != 0;
        omp |= g->parts[u]->omp_metrics;
    }
    /* Metric ids are dense (OTF2 readers index them): OMP work and OMP wait
     * (2 and 3) come with the MPI_T drop metric (1), as device memory (0)
     * is always there. */
    if (located || omp)
        tr_defs_write_mpit_metric(d, gw);
    if (omp)
        tr_defs_write_omp_metrics(d, gw);
}

/* Communicators for the RMA windows: group 0 lists every location of the
 * archive, in id order; group 1 + window holds the device's first stream
 * (its first member: a transfer's remote is 0, known before the number of
 * host locations is) and its journal's host threads. Returns the number of
 * windows. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t write_rma_comms(const tr_global *g, OTF2_GlobalDefWriter *gw, uint64_t nlocations)
{
    uint64_t most = 1;
    for (size_t u = 0; u < g->nparts; u++)
        if (g->parts[u]->nhost + 1 > most)
            most = g->parts[u]->nhost + 1;
    uint64_t *members = malloc((nlocations > most ? nlocations : most) * sizeof *members);
    uint32_t nwins = 0;
    if (!members)
        return 0;
    /* Host numbers no thread needed are no location (host_slots.h). */
    uint64_t n = 0;
    for (size_t u = 0; u < g->nparts; u++) {
        const tr_rank_desc *w = g->parts[u];
        for (uint32_t i = 0; i < w->nhost; i++)
            members[n++] = w->loc_base + i;
        for (size_t k = 0; k < w->ndevices; k++)
            for (uint32_t l = 0; l < w->devices[k].nlanes; l++)
                members[n++] = w->loc_base + w->devices[k].lanes[l];
        for (uint32_t i = 0; i < w->nmpit; i++)
            members[n++] = w->loc_base + w->mpit[i].location;
    }
    qsort(members, n, sizeof *members, cmp_u64);
    OTF2_GlobalDefWriter_WriteGroup(gw, 0, tr_defs_str(g->defs, "all locations"), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                    OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, (uint32_t)n, members);
    for (size_t u = 0; u < g->nparts; u++) {
        const tr_rank_desc *w = g->parts[u];
        for (size_t k = 0; k < w->ndevices; k++) {
            uint32_t nh = w->nhost, win = tr_rma_window(w->win_base, k);
            members[0] = w->loc_base + w->devices[k].lanes[0];
            for (uint32_t i = 0; i < nh; i++)
                members[1 + i] = w->loc_base + i;
            uint32_t s_comm = device_name(g, w, &w->devices[k], 1);
            OTF2_GlobalDefWriter_WriteGroup(gw, (OTF2_GroupRef)(1 + win), s_comm, OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, nh + 1, members);
            OTF2_GlobalDefWriter_WriteComm(gw, (OTF2_CommRef)win, s_comm, (OTF2_GroupRef)(1 + win),
                                           OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
            OTF2_GlobalDefWriter_WriteRmaWin(gw, (OTF2_RmaWinRef)win, device_name(g, w, &w->devices[k], 2),
                                             (OTF2_CommRef)win, OTF2_RMA_WIN_FLAG_NONE);
            nwins++;
        }
    }
    free(members);
    return nwins;
}

void tr_defs_write_global(const tr_global *g, OTF2_GlobalDefWriter *gw)
{
    intern_all(g);
    tr_defs *d = g->defs;
    for (uint32_t i = 0; i < d->strings.count; i++)
        OTF2_GlobalDefWriter_WriteString(gw, i, d->strings.s[i]);
    OTF2_GlobalDefWriter_WriteClockProperties(gw, 1000000000u, g->t_min, g->t_max - g->t_min, g->realtime);
    write_tree_and_locations(g, gw);
    write_regions_attributes_metrics(g, gw);
    uint64_t nlocations = 0;
    for (size_t u = 0; u < g->nparts; u++)
        nlocations += g->parts[u]->nlocations;
    uint32_t nwins = write_rma_comms(g, gw, nlocations);
    if (g->job)
        tr_defs_write_job_comms(g, gw, 1 + nwins, nwins);
}

/* Host names in order of first appearance: one SystemTreeNode each. A
 * host's name is looked up in a hash of the names so far, so many ranks
 * cost no more than one pass. */
static int name_nodes(tr_global *g)
{
    g->nodes = calloc(g->nparts ? g->nparts : 1, sizeof *g->nodes);
    g->node = calloc(g->nparts ? g->nparts : 1, sizeof *g->node);
    if (!g->nodes || !g->node)
        return -1;
    tr_strtab seen = {0};
    int rc = 0;
    for (size_t u = 0; u < g->nparts && !rc; u++) {
        const char *h = g->parts[u]->hostname ? g->parts[u]->hostname : "localhost";
        uint32_t k = tr_strtab_id(&seen, h);
        if (k == UINT32_MAX)
            rc = -1;
        else if (k == g->nnodes)
            g->nodes[g->nnodes++] = h;
        g->node[u] = 1 + k;
    }
    tr_strtab_free(&seen);
    return rc;
}

int tr_global_prepare(tr_global *g)
{
    if (name_nodes(g))
        return -1;
    g->t_min = UINT64_MAX;
    g->t_max = 0;
    for (size_t u = 0; u < g->nparts; u++) {
        if (g->parts[u]->t_min < g->t_min)
            g->t_min = g->parts[u]->t_min;
        if (g->parts[u]->t_max > g->t_max)
            g->t_max = g->parts[u]->t_max;
    }
    if (g->t_min > g->t_max)
        g->t_min = g->t_max;
    /* The first part's realtime at its own corrected time. */
    g->realtime = g->nparts ? (uint64_t)((int64_t)g->t_min + g->parts[0]->realtime_shift) : 0;
    return 0;
}

void tr_global_free(tr_global *g)
{
    free(g->nodes);
    free(g->node);
    g->nodes = 0;
    g->node = 0;
    g->nnodes = 0;
}
