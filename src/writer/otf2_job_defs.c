/* otf2_job_defs.c - the MPI communicators of a job's archive.
 *
 * tracer records no MPI message, so these say only who the ranks are: a
 * COMM_LOCATIONS group (paradigm MPI) of each rank's first host thread in
 * rank order, MPI_COMM_WORLD over all of them, and - for what MPI_T events
 * were bound to - MPI_COMM_SELF of a rank and "communicator 0x<handle>
 * (rank N)". tracer does not see who else belongs to a communicator a rank
 * created (it does not wrap MPI_Comm_group), so such a communicator lists
 * only the rank whose registrations name it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer_internal.h"

/* Bound registrations name communicators by handle: WORLD and SELF by
 * name, the others by handle alone. Calls @each for every distinct one of
 * @w (handle, is_self) in registration order. */
typedef void (*comm_fn)(const tr_global *g, const tr_writer *w, uint32_t member, uint64_t handle, int self,
                        void *ctx);

static void each_comm(const tr_global *g, const tr_writer *w, uint32_t member, comm_fn each, void *ctx)
{
    const tr_jmpit *m = &w->jd->mpit;
    int self_done = 0;
    for (uint32_t i = 0; i < m->nregs; i++) {
        const tr_jmpit_reg *r = &m->regs[i];
        if (!r->bound || !strcmp(r->object_name, "MPI_COMM_WORLD"))
            continue;
        int self = !strcmp(r->object_name, "MPI_COMM_SELF");
        if (self) {
            if (!self_done)
                each(g, w, member, r->object, 1, ctx);
            self_done = 1;
            continue;
        }
        int seen = 0;
        for (uint32_t k = 0; k < i && !seen; k++)
            seen = m->regs[k].bound && m->regs[k].object == r->object && strcmp(m->regs[k].object_name, "MPI_COMM_SELF") &&
                   strcmp(m->regs[k].object_name, "MPI_COMM_WORLD");
        if (!seen)
            each(g, w, member, r->object, 0, ctx);
    }
}

typedef struct next_ids {
    OTF2_GlobalDefWriter *gw;
    uint32_t group, comm;
} next_ids;

static void one_comm(const tr_global *g, const tr_writer *w, uint32_t member, uint64_t handle, int self, void *vctx)
{
    next_ids *n = vctx;
    char group[128], comm[128];
    if (self) {
        snprintf(comm, sizeof comm, "MPI_COMM_SELF");
        snprintf(group, sizeof group, "MPI_COMM_SELF (rank %d)", w->rank);
    } else {
        snprintf(comm, sizeof comm, "communicator 0x%llx (rank %d)", (unsigned long long)handle, w->rank);
        snprintf(group, sizeof group, "%s", comm);
    }
    uint32_t s_group = tr_defs_str(g->defs, group), s_comm = tr_defs_str(g->defs, comm);
    if (!n->gw)
        return;
    uint64_t members[1] = {member};
    OTF2_GlobalDefWriter_WriteGroup(n->gw, n->group, s_group, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, 1, members);
    OTF2_GlobalDefWriter_WriteComm(n->gw, n->comm, s_comm, n->group, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    n->group++;
    n->comm++;
}

void tr_defs_write_job_comms(const tr_global *g, OTF2_GlobalDefWriter *gw, uint32_t first_group, uint32_t first_comm)
{
    uint32_t s_ranks = tr_defs_str(g->defs, "MPI ranks"), s_world = tr_defs_str(g->defs, "MPI_COMM_WORLD");
    next_ids n = {gw, first_group + 2, first_comm + 1};
    uint64_t *members = gw ? malloc((g->nunits ? g->nunits : 1) * sizeof *members) : 0;
    if (gw && !members)
        return;
    if (gw) {
        for (size_t u = 0; u < g->nunits; u++)
            members[u] = tr_host_location(g->units[u], 0);
        OTF2_GlobalDefWriter_WriteGroup(gw, first_group, s_ranks, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, (uint32_t)g->nunits, members);
        for (size_t u = 0; u < g->nunits; u++)
            members[u] = u;
        OTF2_GlobalDefWriter_WriteGroup(gw, first_group + 1, s_world, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, (uint32_t)g->nunits, members);
        OTF2_GlobalDefWriter_WriteComm(gw, first_comm, s_world, first_group + 1, OTF2_UNDEFINED_COMM,
                                       OTF2_COMM_FLAG_NONE);
    }
    for (size_t u = 0; u < g->nunits; u++)
        each_comm(g, g->units[u], (uint32_t)u, one_comm, &n);
    free(members);
}
