/* otf2_mpi.c - see otf2_mpi.h. Every communication context OTF2 hands back
 * is a tr_job_comm: the global one is the caller's, a local one (only made
 * when reading an archive, which tracer does not do collectively) is made
 * and freed here. OTF2 wants every callback but get_size and get_rank to
 * return the same on every rank, so a failure that only one rank could see
 * (an allocation) is agreed on before the collective that needs it. */
#include "job/otf2_mpi.h"

#include <limits.h>
#include <stdlib.h>

static MPI_Datatype mpi_type(OTF2_Type type)
{
    switch (type) {
    case OTF2_TYPE_UINT8: return MPI_UINT8_T;
    case OTF2_TYPE_UINT16: return MPI_UINT16_T;
    case OTF2_TYPE_UINT32: return MPI_UINT32_T;
    case OTF2_TYPE_UINT64: return MPI_UINT64_T;
    case OTF2_TYPE_INT8: return MPI_INT8_T;
    case OTF2_TYPE_INT16: return MPI_INT16_T;
    case OTF2_TYPE_INT32: return MPI_INT32_T;
    case OTF2_TYPE_INT64: return MPI_INT64_T;
    case OTF2_TYPE_FLOAT: return MPI_FLOAT;
    case OTF2_TYPE_DOUBLE: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL; /* OTF2 promises only the above */
    }
}

static OTF2_CallbackCode code(int mpi_rc)
{
    return mpi_rc == MPI_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
}

#define COMM(ctx) ((const tr_job_comm *)(void *)(ctx))

static OTF2_CallbackCode get_size(void *user, OTF2_CollectiveContext *ctx, uint32_t *size)
{
    (void)user;
    if (!ctx)
        return OTF2_CALLBACK_ERROR;
    *size = (uint32_t)COMM(ctx)->size;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode get_rank(void *user, OTF2_CollectiveContext *ctx, uint32_t *rank)
{
    (void)user;
    if (!ctx)
        return OTF2_CALLBACK_ERROR;
    *rank = (uint32_t)COMM(ctx)->rank;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode barrier(void *user, OTF2_CollectiveContext *ctx)
{
    (void)user;
    if (!ctx)
        return OTF2_CALLBACK_ERROR;
    const tr_job_comm *c = COMM(ctx);
    return code(c->w->barrier(c->comm));
}

static OTF2_CallbackCode bcast(void *user, OTF2_CollectiveContext *ctx, void *data, uint32_t n, OTF2_Type type,
                               uint32_t root)
{
    (void)user;
    MPI_Datatype t = mpi_type(type);
    if (!ctx || t == MPI_DATATYPE_NULL || n > INT_MAX)
        return OTF2_CALLBACK_ERROR;
    const tr_job_comm *c = COMM(ctx);
    return code(c->w->bcast(data, (int)n, t, (int)root, c->comm));
}

static OTF2_CallbackCode gather(void *user, OTF2_CollectiveContext *ctx, const void *in, void *out, uint32_t n,
                                OTF2_Type type, uint32_t root)
{
    (void)user;
    MPI_Datatype t = mpi_type(type);
    if (!ctx || t == MPI_DATATYPE_NULL || n > INT_MAX)
        return OTF2_CALLBACK_ERROR;
    const tr_job_comm *c = COMM(ctx);
    return code(c->w->gather(in, (int)n, t, out, (int)n, t, (int)root, c->comm));
}

static OTF2_CallbackCode scatter(void *user, OTF2_CollectiveContext *ctx, const void *in, void *out, uint32_t n,
                                 OTF2_Type type, uint32_t root)
{
    (void)user;
    MPI_Datatype t = mpi_type(type);
    if (!ctx || t == MPI_DATATYPE_NULL || n > INT_MAX)
        return OTF2_CALLBACK_ERROR;
    const tr_job_comm *c = COMM(ctx);
    return code(c->w->scatter(in, (int)n, t, out, (int)n, t, (int)root, c->comm));
}

/* On @root: MPI's int counts and displacements (in elements) for OTF2's
 * per-rank element counts, in one allocation; NULL when it cannot be made or
 * a count or displacement would not fit an int. Then the root's verdict to
 * every rank, so that all call the collective or none does. */
static int counts_agreed(const tr_job_comm *c, const uint32_t *elements, uint32_t root, int **counts)
{
    int ok = 1;
    *counts = 0;
    if (c->rank == (int)root) {
        ok = 0;
        if (elements && (*counts = malloc(2 * (size_t)c->size * sizeof **counts))) {
            int *displs = *counts + c->size;
            long long at = 0;
            ok = 1;
            for (int i = 0; i < c->size; i++) {
                if (elements[i] > INT_MAX || at > INT_MAX) {
                    ok = 0;
                    break;
                }
                (*counts)[i] = (int)elements[i];
                displs[i] = (int)at;
                at += elements[i];
            }
        }
    }
    if (c->w->bcast(&ok, 1, MPI_INT, (int)root, c->comm) != MPI_SUCCESS || !ok) {
        free(*counts);
        *counts = 0;
        return 0;
    }
    return 1;
}

static OTF2_CallbackCode gatherv(void *user, OTF2_CollectiveContext *ctx, const void *in, uint32_t n_in, void *out,
                                 const uint32_t *n_out, OTF2_Type type, uint32_t root)
{
    (void)user;
    MPI_Datatype t = mpi_type(type);
    if (!ctx || t == MPI_DATATYPE_NULL)
        return OTF2_CALLBACK_ERROR;
    const tr_job_comm *c = COMM(ctx);
    int *counts;
    if (!counts_agreed(c, n_out, root, &counts))
        return OTF2_CALLBACK_ERROR;
    int rc = n_in > INT_MAX ? MPI_ERR_COUNT
                            : c->w->gatherv(in, (int)n_in, t, out, counts, counts ? counts + c->size : 0, t,
                                            (int)root, c->comm);
    free(counts);
    return code(rc);
}

static OTF2_CallbackCode scatterv(void *user, OTF2_CollectiveContext *ctx, const void *in, const uint32_t *n_in,
                                  void *out, uint32_t n_out, OTF2_Type type, uint32_t root)
{
    (void)user;
    MPI_Datatype t = mpi_type(type);
    if (!ctx || t == MPI_DATATYPE_NULL)
        return OTF2_CALLBACK_ERROR;
    const tr_job_comm *c = COMM(ctx);
    int *counts;
    if (!counts_agreed(c, n_in, root, &counts))
        return OTF2_CALLBACK_ERROR;
    int rc = n_out > INT_MAX ? MPI_ERR_COUNT
                             : c->w->scatterv(in, counts, counts ? counts + c->size : 0, t, out, (int)n_out, t,
                                              (int)root, c->comm);
    free(counts);
    return code(rc);
}

/* The ranks writing file @file_number: a split of the global context. */
static OTF2_CallbackCode create_local_comm(void *user, OTF2_CollectiveContext **local, OTF2_CollectiveContext *global,
                                           uint32_t global_rank, uint32_t global_size, uint32_t local_rank,
                                           uint32_t local_size, uint32_t file_number, uint32_t number_of_files)
{
    (void)user, (void)global_size, (void)local_rank, (void)local_size, (void)number_of_files;
    if (!global || file_number > INT_MAX || global_rank > INT_MAX)
        return OTF2_CALLBACK_ERROR;
    const tr_job_comm *g = COMM(global);
    tr_job_comm *l = malloc(sizeof *l);
    MPI_Comm comm = MPI_COMM_NULL;
    int ok = g->w->comm_split(g->comm, l ? (int)file_number : MPI_UNDEFINED, (int)global_rank, &comm) == MPI_SUCCESS;
    if (ok && l) {
        l->w = g->w;
        l->comm = comm;
        ok = comm != MPI_COMM_NULL && g->w->comm_rank(comm, &l->rank) == MPI_SUCCESS &&
             g->w->comm_size(comm, &l->size) == MPI_SUCCESS;
    }
    if (!tr_job_agree(g, ok && l)) {
        if (comm != MPI_COMM_NULL)
            g->w->comm_free(&comm);
        free(l);
        return OTF2_CALLBACK_ERROR;
    }
    *local = (OTF2_CollectiveContext *)(void *)l;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode free_local_comm(void *user, OTF2_CollectiveContext *local)
{
    (void)user;
    tr_job_comm *l = (tr_job_comm *)(void *)local;
    if (!l)
        return OTF2_CALLBACK_SUCCESS;
    int rc = l->w->comm_free(&l->comm);
    free(l);
    return code(rc);
}

/* Both contexts belong to whoever set the callbacks. */
static void release(void *user, OTF2_CollectiveContext *global, OTF2_CollectiveContext *local)
{
    (void)user, (void)global, (void)local;
}

static const OTF2_CollectiveCallbacks callbacks = {
    .otf2_release = release,
    .otf2_get_size = get_size,
    .otf2_get_rank = get_rank,
    .otf2_create_local_comm = create_local_comm,
    .otf2_free_local_comm = free_local_comm,
    .otf2_barrier = barrier,
    .otf2_bcast = bcast,
    .otf2_gather = gather,
    .otf2_gatherv = gatherv,
    .otf2_scatter = scatter,
    .otf2_scatterv = scatterv,
};

const OTF2_CollectiveCallbacks *tr_otf2_mpi_callbacks(void)
{
    return &callbacks;
}
