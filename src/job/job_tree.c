/* job_tree.c - see job_tree.h.
 *
 * A blob goes from one rank to another as:
 *
 *   sender                              receiver
 *   header (u64: length | failed bit) ->
 *                                     <- go (int), only when length > 0 and
 *                                        the failed bit is clear: 1 to take
 *                                        the bytes, 0 when it cannot
 *   the bytes in pieces (if go)       ->
 *
 * The receiver says whether it wants the bytes (it could allocate them and
 * has not failed itself) before any is sent, so a receiver that cannot take
 * them never has a message left to drain: an MPI receive cannot be shorter
 * than the message it matches, so there is no draining a 1 GiB piece through
 * a small buffer. The round trip costs a few microseconds per edge of the
 * tree, ceil(log2 size) of them on the longest path. */
#include "job/job_tree.h"

#include <stdlib.h>
#include <string.h>

/* The reduction's own tag, so that its messages never match the clock
 * offsets' (TR_MPI_TAG). */
#define TREE_TAG (TR_MPI_TAG + 1)
#define FAILED_BIT (1ull << 63)
#define PIECE ((size_t)1 << 30) /* MPI counts are ints */

static int send_bytes(const tr_job_comm *c, const unsigned char *p, size_t n, int to)
{
    for (size_t at = 0; at < n; at += PIECE) {
        size_t k = n - at < PIECE ? n - at : PIECE;
        if (c->w->send(p + at, (int)k, MPI_BYTE, to, TREE_TAG, c->comm) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

static int recv_bytes(const tr_job_comm *c, unsigned char *p, size_t n, int from)
{
    for (size_t at = 0; at < n; at += PIECE) {
        size_t k = n - at < PIECE ? n - at : PIECE;
        if (c->w->recv(p + at, (int)k, MPI_BYTE, from, TREE_TAG, c->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

/* Sends @ctx packed (or only a failed header, when @failed or packing
 * fails) to @parent. 0 when the whole blob went up without failure. */
static int send_up(const tr_job_comm *c, const tr_tree_ops *ops, void *ctx, int failed, int parent)
{
    tr_blob out = {0};
    if (!failed && (ops->pack(ctx, &out) != 0 || out.oom || (uint64_t)out.n >= FAILED_BIT))
        failed = 1;
    uint64_t header = failed ? FAILED_BIT : (uint64_t)out.n;
    int rc = c->w->send(&header, 1, MPI_UINT64_T, parent, TREE_TAG, c->comm) == MPI_SUCCESS ? 0 : -1;
    if (!rc && !failed && out.n > 0) {
        int go = 0;
        rc = c->w->recv(&go, 1, MPI_INT, parent, TREE_TAG, c->comm, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -1;
        if (!rc && go)
            rc = send_bytes(c, out.p, out.n, parent);
        /* !go: the parent failed or could not take the bytes; it knows */
    }
    tr_blob_free(&out);
    return failed || rc ? -1 : 0;
}

/* Receives @child's blob and merges it into @ctx unless this rank already
 * @failed. 0 when the child's subtree and the merge went without failure. */
static int take_child(const tr_job_comm *c, const tr_tree_ops *ops, void *ctx, int failed, int child)
{
    uint64_t header = FAILED_BIT;
    if (c->w->recv(&header, 1, MPI_UINT64_T, child, TREE_TAG, c->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return -1;
    if (header & FAILED_BIT)
        return -1; /* the child sends nothing more */
    size_t n = (size_t)header;
    if (n == 0) /* nor for an empty blob */
        return failed ? -1 : ops->merge(ctx, "", 0) == 0 ? 0 : -1;
    unsigned char *p = failed || (uint64_t)n != header ? 0 : malloc(n);
    int go = p != 0;
    if (c->w->send(&go, 1, MPI_INT, child, TREE_TAG, c->comm) != MPI_SUCCESS || !go) {
        free(p);
        return -1;
    }
    int rc = recv_bytes(c, p, n, child);
    if (!rc)
        rc = ops->merge(ctx, p, n) == 0 ? 0 : -1;
    free(p);
    return rc;
}

int tr_job_tree_reduce(const tr_job_comm *c, const tr_tree_ops *ops, void *ctx, int ok)
{
    int failed = !ok;
    for (int mask = 1; mask < c->size; mask <<= 1) {
        if (c->rank & mask)
            return send_up(c, ops, ctx, failed, c->rank - mask);
        if (c->rank + mask < c->size && take_child(c, ops, ctx, failed, c->rank + mask) != 0)
            failed = 1;
    }
    return failed ? -1 : 0; /* rank 0 (or a lone rank) */
}

/* Pieces of a broadcast, on every rank alike. */
static int bcast_bytes(const tr_job_comm *c, unsigned char *p, size_t n)
{
    for (size_t at = 0; at < n; at += PIECE) {
        size_t k = n - at < PIECE ? n - at : PIECE;
        if (c->w->bcast(p + at, (int)k, MPI_BYTE, 0, c->comm) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

/* The length first; then every rank says whether it could make room (an
 * MPI_Bcast cannot be drained through a smaller buffer either), and the
 * bytes go only when all could - so every rank returns the same. */
int tr_job_bcast_blob(const tr_job_comm *c, tr_blob *b)
{
    uint64_t len = 0;
    if (c->rank == 0 && !b->oom && (uint64_t)b->n < FAILED_BIT)
        len = b->n;
    if (c->w->bcast(&len, 1, MPI_UINT64_T, 0, c->comm) != MPI_SUCCESS)
        return -1;
    if (len == 0)
        return -1;
    unsigned char *p = 0;
    if (c->rank != 0 && (uint64_t)(size_t)len == len)
        p = malloc((size_t)len);
    int ok = c->rank == 0 || p != 0;
    if (!tr_job_agree(c, ok)) {
        free(p);
        return -1;
    }
    int rc = bcast_bytes(c, c->rank == 0 ? b->p : p, (size_t)len);
    if (c->rank != 0) {
        if (rc) {
            free(p);
            return -1;
        }
        free(b->p);
        b->p = p;
        b->n = b->cap = (size_t)len;
        b->oom = 0;
    }
    return rc;
}

int tr_job_exscan_u64(const tr_job_comm *c, const uint64_t *in, uint64_t *out, int n)
{
    if (n < 0)
        return -1;
    if (n == 0)
        return 0;
    /* MPI forbids aliased buffers; in place, the input is read from @out. */
    const void *send = in == out ? MPI_IN_PLACE : (const void *)in;
    if (c->w->exscan(send, out, n, MPI_UINT64_T, MPI_SUM, c->comm) != MPI_SUCCESS)
        return -1;
    if (c->rank == 0) /* MPI leaves rank 0's result undefined */
        memset(out, 0, (size_t)n * sizeof *out);
    return 0;
}

int tr_job_agree(const tr_job_comm *c, int ok)
{
    int mine = ok != 0, all = 0;
    if (c->w->allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c->comm) != MPI_SUCCESS)
        return 0;
    return all;
}
