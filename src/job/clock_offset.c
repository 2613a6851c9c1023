/* clock_offset.c - see clock_offset.h. */
#include "job/clock_offset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"

#define ROUNDS 10

/* FNV-1a of the host name: which ranks share a node (and its clock). */
static uint64_t node_id(void)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)host; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

/* Rank 0's side: answer @rounds pings of rank @r. */
static int serve(const tr_mpi_world *w, int r)
{
    int rc = 0;
    for (int k = 0; k < ROUNDS; k++) {
        char ping;
        if (w->recv(&ping, 1, MPI_CHAR, r, TR_MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            rc = -1;
        uint64_t now = tr_clock_mono_ns();
        if (w->send(&now, 1, MPI_UINT64_T, r, TR_MPI_TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
            rc = -1;
    }
    return rc;
}

/* A leader's side: the exchange with the smallest round trip. */
static int ping(const tr_mpi_world *w, uint32_t when, tr_journal_clock_offset *out)
{
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < ROUNDS; k++) {
        char c = 0;
        uint64_t root = 0, t0 = tr_clock_mono_ns();
        if (w->send(&c, 1, MPI_CHAR, 0, TR_MPI_TAG, MPI_COMM_WORLD) != MPI_SUCCESS ||
            w->recv(&root, 1, MPI_UINT64_T, 0, TR_MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            continue;
        uint64_t t1 = tr_clock_mono_ns();
        if (t1 - t0 < best) {
            best = t1 - t0;
            uint64_t mid = t0 + (t1 - t0) / 2;
            *out = (tr_journal_clock_offset){.local_ns = mid, .offset_ns = (int64_t)(root - mid), .rtt_ns = best,
                                            .when = when};
        }
    }
    return best == UINT64_MAX ? -1 : 0;
}

int tr_clock_offset_measure(const tr_mpi_world *w, int rank, int size, uint32_t when, int per_rank,
                            tr_journal_clock_offset *out)
{
    *out = (tr_journal_clock_offset){.local_ns = tr_clock_mono_ns(), .when = when};
    uint64_t *nodes = malloc((size_t)size * sizeof *nodes);
    int64_t *results = malloc((size_t)size * 2 * sizeof *results);
    /* Per rank: every rank is a node of its own. */
    uint64_t me = per_rank ? (uint64_t)rank : node_id();
    if (!nodes || !results) {
        /* 16 bytes per rank could not be had: this rank cannot take part
         * (the others would wait for it; this never happens in practice). */
        free(nodes);
        free(results);
        return -1;
    }
    int rc = 0;
    if (w->allgather(&me, 1, MPI_UINT64_T, nodes, 1, MPI_UINT64_T, MPI_COMM_WORLD) != MPI_SUCCESS)
        rc = -1;
    int leader = rank;
    for (int r = 0; !rc && r < rank; r++)
        if (nodes[r] == me) {
            leader = r;
            break;
        }
    int64_t mine[2] = {0, -1}; /* offset, round trip; -1: not measured */
    if (!rc && rank == 0) {
        for (int r = 1; r < size; r++) {
            int is_leader = nodes[r] != nodes[0];
            for (int q = 1; is_leader && q < r; q++)
                is_leader = nodes[q] != nodes[r];
            if (is_leader && serve(w, r))
                rc = -1;
        }
        mine[1] = 0;
    } else if (!rc && leader == rank && nodes[0] != me) {
        if (ping(w, when, out) == 0) {
            mine[0] = out->offset_ns;
            mine[1] = (int64_t)out->rtt_ns;
        }
    }
    /* Every rank takes part whatever happened before, so none waits forever. */
    if (w->allgather(mine, 2, MPI_INT64_T, results, 2, MPI_INT64_T, MPI_COMM_WORLD) != MPI_SUCCESS)
        rc = -1;
    if (!rc) {
        /* Ranks on rank 0's node share its clock: offset 0 exactly. */
        int from = nodes[0] == me ? 0 : leader;
        if (results[2 * from + 1] < 0) {
            rc = -1;
        } else {
            out->local_ns = from == rank ? out->local_ns : tr_clock_mono_ns();
            out->offset_ns = results[2 * from];
            out->rtt_ns = (uint64_t)results[2 * from + 1];
        }
    }
    free(nodes);
    free(results);
    return rc;
}
