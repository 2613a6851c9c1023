/* mpit_interpose.c - the MPI functions libtracer.so defines: MPI_Init,
 * MPI_Init_thread, MPI_Finalize, MPI_Session_init, MPI_Session_finalize,
 * and the communicator constructors and
 * destructors (to bind and unbind communicator-bound MPI_T event types).
 * No other MPI call is intercepted, so no other call costs anything.
 *
 * Each wrapper forwards to the next definition of the same MPI_ name
 * (RTLD_NEXT): another PMPI tool preloaded after tracer, or the MPI library
 * itself, so tools stack. PMPI_ is the fallback, and when the MPI was
 * dlopen'ed privately (RTLD_LOCAL, as Python's mpi4py does) the loaded
 * objects are searched.
 *
 * This file does not include mpi.h: handles are passed through as 64-bit
 * words, which is how the x86-64 and AArch64 calling conventions pass both
 * MPICH's int handles and Open MPI's pointer handles, so forwarding is
 * correct whichever MPI the process uses. Only mpit_session.c reads a
 * handle, and only once it has checked the MPI is the one tracer knows. */
#define _GNU_SOURCE 1 /* RTLD_NEXT, dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "core/log.h"
#include "job/job.h"
#include "mpit/mpit_session.h"

typedef uint64_t word; /* an MPI handle of either family, untouched */

struct search {
    const char *name;
    void *self, *found;
};

static int search_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct search *s = arg;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *f = dlsym(h, s->name);
    dlclose(h);
    Dl_info di;
    if (f && f != s->self && dladdr(f, &di) && di.dli_fbase != (void *)(uintptr_t)info->dlpi_addr)
        f = 0; /* found through a dependency, not defined here */
    if (f && f != s->self) {
        s->found = f;
        return 1;
    }
    return 0;
}

/* The definition of @name that tracer's own @self wraps, or NULL. */
static void *find_next(const char *name, const char *pname, void *self)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f || f == self)
        f = dlsym(RTLD_NEXT, pname);
    if (!f) {
        struct search s = {pname, self, 0};
        dl_iterate_phdr(search_object, &s);
        f = s.found;
    }
    if (!f)
        tr_log("cannot find the MPI library's %s; returning an error to the application", name);
    return f;
}

#define NEXT(fn, type)                                                                                             \
    static __typeof__(type) next_##fn;                                                                            \
    __typeof__(type) next = __atomic_load_n(&next_##fn, __ATOMIC_ACQUIRE);                                                    \
    if (!next) {                                                                                                  \
        next = (type)find_next(#fn, "P" #fn, (void *)fn);                                                         \
        if (!next)                                                                                                \
            return 16; /* MPI_ERR_OTHER in both families */                                                       \
        __atomic_store_n(&next_##fn, next, __ATOMIC_RELEASE);                                                     \
    }

#define EXPORT __attribute__((visibility("default")))

EXPORT int MPI_Init(int *argc, char ***argv);
EXPORT int MPI_Init(int *argc, char ***argv)
{
    NEXT(MPI_Init, int (*)(int *, char ***));
    int outer = tr_mpit_before_init(TR_MPI_INIT);
    int rc = next(argc, argv);
    if (outer) {
        tr_mpit_after_init(TR_MPI_INIT, rc);
        tr_job_after_init(rc);
    }
    return rc;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    NEXT(MPI_Init_thread, int (*)(int *, char ***, int, int *));
    int outer = tr_mpit_before_init(TR_MPI_INIT_THREAD);
    int rc = next(argc, argv, required, provided);
    if (outer) {
        tr_mpit_after_init(TR_MPI_INIT_THREAD, rc);
        tr_job_after_init(rc);
    }
    return rc;
}

EXPORT int MPI_Finalize(void);
EXPORT int MPI_Finalize(void)
{
    NEXT(MPI_Finalize, int (*)(void));
    tr_mpit_before_finalize();
    tr_job_before_finalize();
    int rc = next();
    tr_mpit_after_finalize(rc);
    return rc;
}

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
