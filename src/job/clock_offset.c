/* clock_offset.c - see clock_offset.h. */
#include "job/clock_offset.h"

#include <stdint.h>

#include "core/clock.h"

#define ROUNDS 10

int tr_clock_offset_measure(const tr_mpi_world *w, int rank, int size, uint32_t when,
                            tr_journal_clock_offset *out)
{
    *out = (tr_journal_clock_offset){.local_ns = tr_clock_mono_ns(), .when = when};
    int rc = 0;
    if (rank == 0) {
        /* One rank at a time: the answer must not wait behind another's. */
        for (int r = 1; r < size; r++)
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
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < ROUNDS; k++) {
        char ping = 0;
        uint64_t root = 0, t0 = tr_clock_mono_ns();
        if (w->send(&ping, 1, MPI_CHAR, 0, TR_MPI_TAG, MPI_COMM_WORLD) != MPI_SUCCESS ||
            w->recv(&root, 1, MPI_UINT64_T, 0, TR_MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            rc = -1;
            continue;
        }
        uint64_t t1 = tr_clock_mono_ns();
        if (t1 - t0 < best) {
            best = t1 - t0;
            uint64_t mid = t0 + (t1 - t0) / 2;
            *out = (tr_journal_clock_offset){.local_ns = mid, .offset_ns = (int64_t)(root - mid), .rtt_ns = best,
                                            .when = when};
        }
    }
    return best == UINT64_MAX ? -1 : rc;
}
