/* mpit_interpose.c - the MPI functions libtracer.so defines for MPI_T:
 * MPI_Session_init, MPI_Session_finalize, and the communicator constructors
 * and destructors (to bind and unbind communicator-bound MPI_T event types).
 * MPI_Init, MPI_Init_thread and MPI_Finalize are the job's
 * (job/job_interpose.c). No other MPI call is intercepted, so no other call
 * costs anything. Forwarding as mpit/mpi_next.h says.
 *
 * This file does not include mpi.h: handles are passed through as 64-bit
 * words, which is how the x86-64 and AArch64 calling conventions pass both
 * MPICH's int handles and Open MPI's pointer handles, so forwarding is
 * correct whichever MPI the process uses. Only mpit_session.c reads a
 * handle, and only once it has checked the MPI is the one tracer knows. */
#include <stdint.h>

#include "mpit/mpi_next.h"
#include "mpit/mpit_session.h"

typedef tr_mpi_word word; /* an MPI handle of either family, untouched */

#define NEXT TR_MPI_NEXT
#define EXPORT TR_MPI_EXPORT

EXPORT int MPI_Session_init(word info, word errhandler, void *session);
EXPORT int MPI_Session_init(word info, word errhandler, void *session)
{
    NEXT(MPI_Session_init, int (*)(word, word, void *));
    tr_mpit_before_session_init();
    int rc = next(info, errhandler, session);
    tr_mpit_after_session_init(rc);
    return rc;
}

EXPORT int MPI_Session_finalize(void *session);
EXPORT int MPI_Session_finalize(void *session)
{
    NEXT(MPI_Session_finalize, int (*)(void *));
    tr_mpit_before_session_finalize();
    int rc = next(session);
    tr_mpit_after_session_finalize(rc);
    return rc;
}

/* A constructor: forward, then bind the new communicator (last argument). */
#define CONSTRUCTOR(fn, params, args, out)                                                                         \
    EXPORT int fn params;                                                                                         \
    EXPORT int fn params                                                                                          \
    {                                                                                                             \
        NEXT(fn, int(*) params);                                                                                  \
        int rc = next args;                                                                                       \
        if (rc == 0)                                                                                              \
            tr_mpit_comm_created(out);                                                                            \
        return rc;                                                                                                \
    }

CONSTRUCTOR(MPI_Comm_dup, (word comm, void *newcomm), (comm, newcomm), newcomm)
CONSTRUCTOR(MPI_Comm_dup_with_info, (word comm, word info, void *newcomm), (comm, info, newcomm), newcomm)
CONSTRUCTOR(MPI_Comm_split, (word comm, int color, int key, void *newcomm), (comm, color, key, newcomm), newcomm)
CONSTRUCTOR(MPI_Comm_split_type, (word comm, int type, int key, word info, void *newcomm),
            (comm, type, key, info, newcomm), newcomm)
CONSTRUCTOR(MPI_Comm_create, (word comm, word group, void *newcomm), (comm, group, newcomm), newcomm)
CONSTRUCTOR(MPI_Comm_create_group, (word comm, word group, int tag, void *newcomm), (comm, group, tag, newcomm),
            newcomm)
CONSTRUCTOR(MPI_Intercomm_create, (word local, int local_leader, word peer, int remote_leader, int tag, void *out),
            (local, local_leader, peer, remote_leader, tag, out), out)
CONSTRUCTOR(MPI_Intercomm_merge, (word inter, int high, void *out), (inter, high, out), out)
CONSTRUCTOR(MPI_Comm_create_from_group, (word group, const char *tag, word info, word errhandler, void *newcomm),
            (group, tag, info, errhandler, newcomm), newcomm)
CONSTRUCTOR(MPI_Cart_create, (word old, int ndims, const int *dims, const int *periods, int reorder, void *out),
            (old, ndims, dims, periods, reorder, out), out)
CONSTRUCTOR(MPI_Cart_sub, (word comm, const int *remain, void *out), (comm, remain, out), out)
CONSTRUCTOR(MPI_Graph_create, (word old, int nnodes, const int *index, const int *edges, int reorder, void *out),
            (old, nnodes, index, edges, reorder, out), out)
CONSTRUCTOR(MPI_Dist_graph_create_adjacent,
            (word old, int indeg, const int *srcs, const int *srcw, int outdeg, const int *dsts, const int *dstw,
             word info, int reorder, void *out),
            (old, indeg, srcs, srcw, outdeg, dsts, dstw, info, reorder, out), out)
CONSTRUCTOR(MPI_Dist_graph_create,
            (word old, int n, const int *srcs, const int *degs, const int *dsts, const int *wts, word info,
             int reorder, void *out),
            (old, n, srcs, degs, dsts, wts, info, reorder, out), out)

/* A destructor: unbind first, while the handle is still valid. */
#define DESTRUCTOR(fn)                                                                                             \
    EXPORT int fn(void *comm);                                                                                    \
    EXPORT int fn(void *comm)                                                                                     \
    {                                                                                                             \
        NEXT(fn, int (*)(void *));                                                                                \
        tr_mpit_comm_freeing(comm);                                                                               \
        return next(comm);                                                                                        \
    }

DESTRUCTOR(MPI_Comm_free)
DESTRUCTOR(MPI_Comm_disconnect)
