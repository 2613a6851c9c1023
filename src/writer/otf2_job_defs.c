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

typedef struct next_ids {
    OTF2_GlobalDefWriter *gw;
    uint32_t group, comm;
} next_ids;

static void one_comm(const tr_global *g, const tr_rank_desc *w, uint32_t member, uint64_t handle, int self,
                     next_ids *n)
{
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
    uint64_t *members = gw ? malloc((g->nparts ? g->nparts : 1) * sizeof *members) : 0;
    if (gw && !members)
        return;
    if (gw) {
        for (size_t u = 0; u < g->nparts; u++)
            members[u] = g->parts[u]->loc_base;
        OTF2_GlobalDefWriter_WriteGroup(gw, first_group, s_ranks, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, (uint32_t)g->nparts, members);
        for (size_t u = 0; u < g->nparts; u++)
            members[u] = u;
        OTF2_GlobalDefWriter_WriteGroup(gw, first_group + 1, s_world, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, (uint32_t)g->nparts, members);
        OTF2_GlobalDefWriter_WriteComm(gw, first_comm, s_world, first_group + 1, OTF2_UNDEFINED_COMM,
                                       OTF2_COMM_FLAG_NONE);
    }
    for (size_t u = 0; u < g->nparts; u++)
        for (uint32_t i = 0; i < g->parts[u]->ncomms; i++)
            one_comm(g, g->parts[u], (uint32_t)u, g->parts[u]->comms[i].handle, g->parts[u]->comms[i].self, &n);
    free(members);
}
