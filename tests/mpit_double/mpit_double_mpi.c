/* mpit_double_mpi.c - the MPI functions (not MPI_T) the TEST DOUBLE wraps:
 * to raise its automatic events around MPICH's own calls, and, in the Open
 * MPI dialect (MPIT_DOUBLE_DIALECT=ompi), to translate the caller's
 * Open MPI-style handles and constants to MPICH's and back
 * (mpit_double_handles.c). In MPICH's dialect everything passes untouched.
 *
 * Wrapped, each under its MPI_ and PMPI_ name: MPI_Init, MPI_Init_thread,
 * MPI_Finalize; MPI_Comm_rank, _size, _dup, _dup_with_info, _split, _create
 * (MPICH's dialect only: groups are not translated), _free, _set_name,
 * _call_errhandler; MPI_Send, MPI_Recv, MPI_Bcast, MPI_Barrier,
 * MPI_Allgather, MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv,
 * MPI_Allreduce, MPI_Exscan. Together: every MPI call tracer makes
 * (src/job/mpi_world.c, src/mpit/mpit_interpose.c) and those of the
 * tests' programs.
 *
 * No mpi.h here: a handle parameter must take Open MPI's pointer whole
 * (md_word), which MPICH's prototypes (int handles) would not. */
#define _GNU_SOURCE 1 /* RTLD_NEXT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpit_double_internal.h"

#define EXPORT __attribute__((visibility("default")))

static void *next_cached(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        if (!f) {
            fprintf(stderr, "mpit_double: %s not found after the double (is MPICH loaded after it?)\n", name);
            abort();
        }
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

/* MPICH's function @name, for the double's own calls. */
#define MPICH(type, name)                                                                                          \
    ({                                                                                                            \
        static void *slot_;                                                                                       \
        (type)(uintptr_t) next_cached(&slot_, name);                                                              \
    })

/* MPICH's prototypes: int handles. */
typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*void_fn)(void);
typedef int (*int_out_fn)(int, int *);
typedef int (*int_fn)(int);
typedef int (*dup_fn)(int, int *);
typedef int (*dup_info_fn)(int, int, int *);
typedef int (*split_fn)(int, int, int, int *);
typedef int (*create_fn)(int, int, int *);
typedef int (*free_fn)(int *);
typedef int (*set_name_fn)(int, const char *);
typedef int (*call_eh_fn)(int, int);
typedef int (*send_fn)(const void *, int, int, int, int, int);
typedef int (*recv_fn)(void *, int, int, int, int, int, void *);
typedef int (*bcast_fn)(void *, int, int, int, int);
typedef int (*allgather_fn)(const void *, int, int, void *, int, int, int);
typedef int (*gather_fn)(const void *, int, int, void *, int, int, int, int);
typedef int (*gatherv_fn)(const void *, int, int, void *, const int *, const int *, int, int, int);
typedef int (*scatterv_fn)(const void *, const int *, const int *, int, void *, int, int, int, int);
typedef int (*reduce_fn)(const void *, void *, int, int, int, int);
#define CALL(type, f) ((type)(uintptr_t)(f))

/* Calls this thread is forwarding: a wrapper entered meanwhile is called
 * from beneath the boundary (a PMPI tool loaded after the double calling
 * PMPI_), with MPICH's handles, which pass untranslated. */
static _Thread_local int below;

static int translating(void)
{
    return below == 0 && md_ompi();
}

#define FORWARD(expr) ({ below++; rc = (expr); below--; rc; })

/* Nesting depth per kind of event-raising call, so that only the outermost
 * of MPI_X -> (tool) -> PMPI_X raises. */
enum { W_INIT, W_FINI, W_CREATE, W_FREE, W_NAME, W_ERR, NW };
static _Thread_local int depth[NW];

/* Both names of one wrapper: do_NAME does the work with the next
 * definition @f. */
#define WRAP(name, params, args)                                                                                   \
    EXPORT int MPI_##name params;                                                                                 \
    EXPORT int MPI_##name params                                                                                  \
    {                                                                                                             \
        static void *slot;                                                                                        \
        void *f = next_cached(&slot, "MPI_" #name);                                                               \
        return do_##name args;                                                                                    \
    }                                                                                                             \
    EXPORT int PMPI_##name params;                                                                                \
    EXPORT int PMPI_##name params                                                                                 \
    {                                                                                                             \
        static void *slot;                                                                                        \
        void *f = next_cached(&slot, "PMPI_" #name);                                                              \
        return do_##name args;                                                                                    \
    }

/* ---------------------------------------------------------------- init, finalize */

static int init_common(void *f, int thread, int *argc, char ***argv, int required, int *provided)
{
    int rc, outer = depth[W_INIT]++ == 0;
    FORWARD(thread ? CALL(init_thread_fn, f)(argc, argv, required, provided) : CALL(init_fn, f)(argc, argv));
    depth[W_INIT]--;
    if (outer && rc == 0) {
        int world = md_mpich.comm_world, rank = -1, size = -1, level = -1;
        MPICH(int_out_fn, "PMPI_Comm_rank")(world, &rank);
        MPICH(int_out_fn, "PMPI_Comm_size")(world, &size);
        MPICH(int (*)(int *), "PMPI_Query_thread")(&level);
        md_init_done(rank, size, level);
    }
    return rc;
}

static int do_Init(void *f, int *argc, char ***argv)
{
    return init_common(f, 0, argc, argv, 0, 0);
}

static int do_Init_thread(void *f, int *argc, char ***argv, int required, int *provided)
{
    return init_common(f, 1, argc, argv, required, provided);
}

static int do_Finalize(void *f)
{
    int rc;
    if (depth[W_FINI]++ == 0)
        md_finalizing();
    FORWARD(CALL(void_fn, f)());
    depth[W_FINI]--;
    return rc;
}

WRAP(Init, (int *argc, char ***argv), (f, argc, argv))
WRAP(Init_thread, (int *argc, char ***argv, int required, int *provided), (f, argc, argv, required, provided))
WRAP(Finalize, (void), (f))

/* ---------------------------------------------------------------- communicators */

static int do_Comm_rank(void *f, md_word comm, int *rank)
{
    int rc, c = md_in(translating(), comm);
    return FORWARD(CALL(int_out_fn, f)(c, rank));
}

static int do_Comm_size(void *f, md_word comm, int *size)
{
    int rc, c = md_in(translating(), comm);
    return FORWARD(CALL(int_out_fn, f)(c, size));
}

WRAP(Comm_rank, (md_word comm, int *rank), (f, comm, rank))
WRAP(Comm_size, (md_word comm, int *size), (f, comm, size))

/* After a constructor: the new communicator to the caller, and its event. */
static int created(int o, int outer, int rc, int made, void *newcomm)
{
    if (newcomm)
        md_put(o, newcomm, made);
    if (outer && rc == 0 && made != md_mpich.comm_null && md_auto()) {
        int size = -1;
        MPICH(int_out_fn, "PMPI_Comm_size")(made, &size);
        md_created(made, size);
    }
    return rc;
}

static int do_Comm_dup(void *f, md_word comm, void *newcomm)
{
    int rc, o = translating(), outer = depth[W_CREATE]++ == 0, made = md_mpich.comm_null;
    int c = md_in(o, comm);
    FORWARD(CALL(dup_fn, f)(c, newcomm ? &made : 0));
    depth[W_CREATE]--;
    return created(o, outer, rc, made, newcomm);
}

static int do_Comm_dup_with_info(void *f, md_word comm, md_word info, void *newcomm)
{
    int rc, o = translating(), outer = depth[W_CREATE]++ == 0, made = md_mpich.comm_null;
    int c = md_in(o, comm), i = md_in(o, info);
    FORWARD(CALL(dup_info_fn, f)(c, i, newcomm ? &made : 0));
    depth[W_CREATE]--;
    return created(o, outer, rc, made, newcomm);
}

static int do_Comm_split(void *f, md_word comm, int color, int key, void *newcomm)
{
    int rc, o = translating(), outer = depth[W_CREATE]++ == 0, made = md_mpich.comm_null;
    int c = md_in(o, comm);
    FORWARD(CALL(split_fn, f)(c, color, key, newcomm ? &made : 0));
    depth[W_CREATE]--;
    return created(o, outer, rc, made, newcomm);
}

static int do_Comm_create(void *f, md_word comm, md_word group, void *newcomm)
{
    int rc, o = translating(), outer = depth[W_CREATE]++ == 0, made = md_mpich.comm_null;
    if (o) {
        fprintf(stderr, "mpit_double: MPI_Comm_create: groups are not translated in the Open MPI dialect\n");
        abort();
    }
    FORWARD(CALL(create_fn, f)((int)(uint32_t)comm, (int)(uint32_t)group, newcomm ? &made : 0));
    depth[W_CREATE]--;
    return created(o, outer, rc, made, newcomm);
}

WRAP(Comm_dup, (md_word comm, void *newcomm), (f, comm, newcomm))
WRAP(Comm_dup_with_info, (md_word comm, md_word info, void *newcomm), (f, comm, info, newcomm))
WRAP(Comm_split, (md_word comm, int color, int key, void *newcomm), (f, comm, color, key, newcomm))
WRAP(Comm_create, (md_word comm, md_word group, void *newcomm), (f, comm, group, newcomm))

static int do_Comm_free(void *f, void *comm)
{
    int rc, o = translating();
    int c = comm ? md_get(o, comm) : md_mpich.comm_null, after = c;
    if (depth[W_FREE]++ == 0 && comm && c != md_mpich.comm_null && md_auto())
        md_freeing(c);
    FORWARD(CALL(free_fn, f)(comm ? &after : 0));
    depth[W_FREE]--;
    if (comm)
        md_put(o, comm, after);
    if (rc == 0 && after != c)
        md_forget(c);
    return rc;
}

static int do_Comm_set_name(void *f, md_word comm, const char *name)
{
    int rc, o = translating(), outer = depth[W_NAME]++ == 0;
    int c = md_in(o, comm);
    FORWARD(CALL(set_name_fn, f)(c, name));
    depth[W_NAME]--;
    if (outer && rc == 0 && md_auto())
        md_name_set(c);
    return rc;
}

static int do_Comm_call_errhandler(void *f, md_word comm, int code)
{
    int rc, o = translating();
    int c = md_in(o, comm);
    if (depth[W_ERR]++ == 0 && md_auto()) {
        int eh = 0;
        if (MPICH(int_out_fn, "PMPI_Comm_get_errhandler")(c, &eh) == 0) {
            md_errhandler(c, code, eh);
            MPICH(int (*)(int *), "PMPI_Errhandler_free")(&eh); /* get_errhandler took a reference */
        } else
            md_errhandler(c, code, 0);
    }
    FORWARD(CALL(call_eh_fn, f)(c, code));
    depth[W_ERR]--;
    return rc;
}

WRAP(Comm_free, (void *comm), (f, comm))
WRAP(Comm_set_name, (md_word comm, const char *name), (f, comm, name))
WRAP(Comm_call_errhandler, (md_word comm, int code), (f, comm, code))

/* ---------------------------------------------------------------- messages */

static int do_Send(void *f, const void *buf, int count, md_word type, int dest, int tag, md_word comm)
{
    int rc, o = translating();
    int t = md_in(o, type), c = md_in(o, comm);
    return FORWARD(CALL(send_fn, f)(buf, count, t, dest, tag, c));
}

static int do_Recv(void *f, void *buf, int count, md_word type, int source, int tag, md_word comm, void *status)
{
    int rc, o = translating();
    int t = md_in(o, type), c = md_in(o, comm);
    if (!o)
        return FORWARD(CALL(recv_fn, f)(buf, count, t, source, tag, c, status));
    /* Open MPI's MPI_STATUS_IGNORE is NULL; its MPI_Status is laid out
     * differently from MPICH's. */
    union {
        char bytes[64];
        long long align;
    } st;
    if (md_mpich_status_size() > sizeof st.bytes || status == md_mpich.status_ignore) {
        fprintf(stderr, "mpit_double: MPI_Recv: status %p is MPICH's MPI_STATUS_IGNORE, not Open MPI's (NULL)\n",
                status);
        abort();
    }
    FORWARD(CALL(recv_fn, f)(buf, count, t, source, tag, c, status ? (void *)st.bytes : md_mpich.status_ignore));
    if (rc == 0 && status)
        md_status_out(status, st.bytes);
    return rc;
}

static int do_Bcast(void *f, void *buf, int count, md_word type, int root, md_word comm)
{
    int rc, o = translating();
    int t = md_in(o, type), c = md_in(o, comm);
    return FORWARD(CALL(bcast_fn, f)(buf, count, t, root, c));
}

static int do_Barrier(void *f, md_word comm)
{
    int rc, c = md_in(translating(), comm);
    return FORWARD(CALL(int_fn, f)(c));
}

static int do_Allgather(void *f, const void *sbuf, int scount, md_word stype, void *rbuf, int rcount, md_word rtype,
                        md_word comm)
{
    int rc, o = translating();
    int st = md_in(o, stype), rt = md_in(o, rtype), c = md_in(o, comm);
    return FORWARD(
        CALL(allgather_fn, f)(md_buf(o, sbuf), scount, st, (void *)md_buf(o, rbuf), rcount, rt, c));
}

static int do_Gather(void *f, const void *sbuf, int scount, md_word stype, void *rbuf, int rcount, md_word rtype,
                     int root, md_word comm)
{
    int rc, o = translating();
    int st = md_in(o, stype), rt = md_in(o, rtype), c = md_in(o, comm);
    return FORWARD(
        CALL(gather_fn, f)(md_buf(o, sbuf), scount, st, (void *)md_buf(o, rbuf), rcount, rt, root, c));
}

static int do_Scatter(void *f, const void *sbuf, int scount, md_word stype, void *rbuf, int rcount, md_word rtype,
                      int root, md_word comm)
{
    int rc, o = translating();
    int st = md_in(o, stype), rt = md_in(o, rtype), c = md_in(o, comm);
    return FORWARD(
        CALL(gather_fn, f)(md_buf(o, sbuf), scount, st, (void *)md_buf(o, rbuf), rcount, rt, root, c));
}

static int do_Gatherv(void *f, const void *sbuf, int scount, md_word stype, void *rbuf, const int *rcounts,
                      const int *displs, md_word rtype, int root, md_word comm)
{
    int rc, o = translating();
    int st = md_in(o, stype), rt = md_in(o, rtype), c = md_in(o, comm);
    return FORWARD(CALL(gatherv_fn, f)(md_buf(o, sbuf), scount, st, (void *)md_buf(o, rbuf), rcounts, displs, rt,
                                       root, c));
}

static int do_Scatterv(void *f, const void *sbuf, const int *scounts, const int *displs, md_word stype, void *rbuf,
                       int rcount, md_word rtype, int root, md_word comm)
{
    int rc, o = translating();
    int st = md_in(o, stype), rt = md_in(o, rtype), c = md_in(o, comm);
    return FORWARD(CALL(scatterv_fn, f)(md_buf(o, sbuf), scounts, displs, st, (void *)md_buf(o, rbuf), rcount, rt,
                                        root, c));
}

static int do_Allreduce(void *f, const void *sbuf, void *rbuf, int count, md_word type, md_word op, md_word comm)
{
    int rc, o = translating();
    int t = md_in(o, type), p = md_in(o, op), c = md_in(o, comm);
    return FORWARD(CALL(reduce_fn, f)(md_buf(o, sbuf), rbuf, count, t, p, c));
}

static int do_Exscan(void *f, const void *sbuf, void *rbuf, int count, md_word type, md_word op, md_word comm)
{
    int rc, o = translating();
    int t = md_in(o, type), p = md_in(o, op), c = md_in(o, comm);
    return FORWARD(CALL(reduce_fn, f)(md_buf(o, sbuf), rbuf, count, t, p, c));
}

WRAP(Send, (const void *buf, int count, md_word type, int dest, int tag, md_word comm),
     (f, buf, count, type, dest, tag, comm))
WRAP(Recv, (void *buf, int count, md_word type, int source, int tag, md_word comm, void *status),
     (f, buf, count, type, source, tag, comm, status))
WRAP(Bcast, (void *buf, int count, md_word type, int root, md_word comm), (f, buf, count, type, root, comm))
WRAP(Barrier, (md_word comm), (f, comm))
WRAP(Allgather,
     (const void *sbuf, int scount, md_word stype, void *rbuf, int rcount, md_word rtype, md_word comm),
     (f, sbuf, scount, stype, rbuf, rcount, rtype, comm))
WRAP(Gather,
     (const void *sbuf, int scount, md_word stype, void *rbuf, int rcount, md_word rtype, int root, md_word comm),
     (f, sbuf, scount, stype, rbuf, rcount, rtype, root, comm))
WRAP(Scatter,
     (const void *sbuf, int scount, md_word stype, void *rbuf, int rcount, md_word rtype, int root, md_word comm),
     (f, sbuf, scount, stype, rbuf, rcount, rtype, root, comm))
WRAP(Gatherv,
     (const void *sbuf, int scount, md_word stype, void *rbuf, const int *rcounts, const int *displs,
      md_word rtype, int root, md_word comm),
     (f, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm))
WRAP(Scatterv,
     (const void *sbuf, const int *scounts, const int *displs, md_word stype, void *rbuf, int rcount,
      md_word rtype, int root, md_word comm),
     (f, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm))
WRAP(Allreduce, (const void *sbuf, void *rbuf, int count, md_word type, md_word op, md_word comm),
     (f, sbuf, rbuf, count, type, op, comm))
WRAP(Exscan, (const void *sbuf, void *rbuf, int count, md_word type, md_word op, md_word comm),
     (f, sbuf, rbuf, count, type, op, comm))
