/* job_tree.h - the collective steps of writing a job's archive in parallel,
 * over MPI_COMM_WORLD (inside MPI_Finalize, where no message of the
 * application can be in flight; tracer's messages have tags of their own):
 *
 * - a binomial reduction tree that brings every rank's blob to rank 0 in
 *   ceil(log2 size) rounds, each rank merging what its children send into
 *   its own before passing it up - no rank ever receives from more than
 *   log2(size) others, and rank 0 never loops over all ranks;
 * - a broadcast of rank 0's blob;
 * - an exclusive prefix sum (each rank's ids start where the lower ranks'
 *   end);
 * - agreement (every rank ok?), so that all ranks take the same branch and
 *   no rank waits forever for one that gave up.
 *
 * Blobs are sent as an 8-byte header (length, top bit: the sender or one of
 * its subtree failed) and the bytes in pieces of at most 1 GiB. */
#ifndef TR_JOB_JOB_TREE_H
#define TR_JOB_JOB_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "job/mpi_world.h"
#include "common/blob.h"

typedef struct tr_job_comm {
    const tr_mpi_world *w;
    MPI_Comm comm;
    int rank, size;
} tr_job_comm;

typedef struct tr_tree_ops {
    /* Merges a child's blob (its whole subtree) into @ctx: 0, or -1. */
    int (*merge)(void *ctx, const void *blob, size_t len);
    /* Packs @ctx (this rank and the subtrees merged so far) into @out: 0,
     * or -1. */
    int (*pack)(void *ctx, tr_blob *out);
} tr_tree_ops;

/* Every rank calls it, with @ctx holding its own part. Returns 0 when this
 * rank and (on rank 0: every rank) its subtree merged and packed without
 * failure; -1 otherwise. @ok 0 says this rank already failed: it still
 * takes part (so nobody waits for it), and the failure reaches rank 0. */
int tr_job_tree_reduce(const tr_job_comm *c, const tr_tree_ops *ops, void *ctx, int ok);

/* Rank 0's @b to every rank (@b is replaced on the others). An empty blob
 * on rank 0 means failure: every rank then returns -1. */
int tr_job_bcast_blob(const tr_job_comm *c, tr_blob *b);

/* @out[i] = sum of @in[i] over the lower ranks (0 on rank 0). 0 or -1. */
int tr_job_exscan_u64(const tr_job_comm *c, const uint64_t *in, uint64_t *out, int n);

/* 1 when every rank passed @ok nonzero, else 0 (also when MPI failed). */
int tr_job_agree(const tr_job_comm *c, int ok);

#endif
