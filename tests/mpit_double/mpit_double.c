/* mpit_double.c - TEST DOUBLE of an MPI library's MPI_T event provider.
 *
 * TEST DOUBLE: this library stands in for an MPI library that raises MPI_T
 * events (MPI-4.0 section 15.3.8). Debian's MPICH 4.0.2 has the MPI_T event
 * API but raises none, so LD_PRELOAD this library before MPICH (or link it
 * before -lmpich): its MPI_T_source_* / MPI_T_event_* functions replace
 * MPICH's, everything else stays MPICH's. What it implements and what not is
 * listed in mpit_double.h; the catalogue models Open MPI's "MPI_T_Events"
 * documentation page.
 *
 * Sources (MPI_T_source_get_info):
 *   0 "ompi"           MPI_T_SOURCE_ORDERED, ticks_per_second 1000000
 *                      (microseconds), max_ticks 2^40-1: timestamps are
 *                      (CLOCK_MONOTONIC_ns / 1000 + origin0) mod 2^40, so they
 *                      go from max_ticks back to 0. origin0 is 123456789, or
 *                      set by MPIT_DOUBLE_WRAP_AFTER_US=N so that the tick
 *                      wraps N microseconds after the library is loaded.
 *   1 "ompi.unordered" MPI_T_SOURCE_UNORDERED, ticks_per_second 10^9
 *                      (nanoseconds), max_ticks LLONG_MAX: timestamps are
 *                      CLOCK_MONOTONIC_ns + 5000000000000 (a different
 *                      origin, so they are not comparable with source 0's).
 *   Both support MPI_T_source_get_timestamp; on source 1 it first drains the
 *   memory-release sink (as Open MPI does).
 *
 * Event types (index: name, source, level -> verbosity, bind; elements as
 * name:datatype@displacement; payload size):
 *   0 ompi.mpi.initialization       0, 2 USER_DETAIL, NO_OBJECT;
 *       model:INT32_T@0 thread_level:INT32_T@4 world_rank:INT32_T@8
 *       world_size:INT32_T@12 instance_id:UINT64_T@16; 24 bytes
 *   1 ompi.mpi.finalization         0, 2 USER_DETAIL, NO_OBJECT;
 *       model:INT32_T@0 world_rank:INT32_T@4 instance_id:UINT64_T@8; 16
 *   2 ompi.mpi.communicator_created 0, 2 USER_DETAIL, NO_OBJECT;
 *       size:INT32_T@0 handle:UINT64_T@8; 16
 *   3 ompi.mpi.communicator_freed   0, 2 USER_DETAIL, NO_OBJECT;
 *       handle:UINT64_T@0; 8
 *   4 ompi.mpi.communicator_name_set 0, 4 TUNER_BASIC, MPI_T_BIND_MPI_COMM;
 *       handle:UINT64_T@0; 8
 *   5 ompi.mpi.errhandler_invoked   0, 4 TUNER_BASIC, NO_OBJECT;
 *       err_code:INT32_T@0 object_type:INT32_T@4 errhandler_handle:UINT64_T@8
 *       object_handle:UINT64_T@16; 24
 *   6 ompi.mca.memory.patcher.released 1, 4 TUNER_BASIC, NO_OBJECT;
 *       count:UINT64_T@0 bytes:UINT64_T@8; 16
 *   7 double.weird                  0, 9 MPIDEV_ALL, NO_OBJECT;
 *       tag:INT32_T@0 (bytes 4..7 are a hole) count:COUNT@8 aint:AINT@16
 *       offset:OFFSET@24 pair:<weird>@32 (8 bytes); 40
 *       <weird> is MPI_2INT (a valid predefined pair type a tracer is unlikely
 *       to decode), or with MPIT_DOUBLE_WEIRD_TYPE=bogus the made-up handle
 *       0x0badbeef, which is no datatype at all.
 * Levels are Open MPI's 1..9 scale mapped onto MPICH's verbosity enum in its
 * order: verbosity = MPI_T_VERBOSITY_USER_BASIC + level - 1 (1 USER_BASIC,
 * 2 USER_DETAIL, 3 USER_ALL, 4 TUNER_BASIC, ..., 9 MPIDEV_ALL).
 * MPI handles in payloads are the dialect's (see MPIT_DOUBLE_DIALECT below):
 * (uint64_t)(uint32_t) of MPICH's integer handle (MPI_COMM_WORLD ->
 * 0x44000000), or in Open MPI's dialect the handle's object address.
 *
 * Automatic events (unless MPIT_DOUBLE_AUTO=0), from wrappers around MPICH
 * (mpit_double_mpi.c):
 *   MPI_Init / MPI_Init_thread: after MPICH's init, [with
 *     MPIT_DOUBLE_NAME_PREDEFINED=1: communicator_name_set for MPI_COMM_WORLD
 *     and MPI_COMM_SELF, as Open MPI names its predefined communicators,]
 *     then initialization (model WORLD, provided level, rank, size, id),
 *     then the script's @init steps;
 *   MPI_Finalize: the script's @finalize steps, then finalization, then
 *     MPICH's finalize;
 *   MPI_Comm_dup / _dup_with_info / _split / _create: communicator_created
 *     after a successful call that gives a communicator (not MPI_COMM_NULL);
 *   MPI_Comm_free: communicator_freed before MPICH frees it;
 *   MPI_Comm_set_name: communicator_name_set after the name is set;
 *   MPI_Comm_call_errhandler: errhandler_invoked (code, MPI_T_BIND_MPI_COMM,
 *     the communicator's errhandler, the communicator) before the call.
 * Each is wrapped under its MPI_ and PMPI_ name; only the outermost wrapper
 * of a nested chain (a tool's MPI_Comm_dup calling PMPI_Comm_dup) raises.
 *
 * Delivery: synchronous, on the raising thread, in registration order, never
 * under the double's lock. A registration gets an instance if it has a
 * callback at a safety level >= the context level (MPIT_DOUBLE_CB_SAFETY =
 * none (default) | restricted | thread_safe; ASYNC_SIGNAL_SAFE contexts are
 * never used, like Open MPI); it gets the callback of the lowest such level,
 * called with cb_safety = the context level. A registration with no usable
 * callback but a dropped handler gets dropped(1) instead (as Open MPI does
 * for the aggregated memory-release event). Bound event types reach only the
 * registrations bound to the object whose handle is element 0. Instances,
 * and so MPI_T_event_read / _copy / _get_timestamp / _get_source, are valid
 * only inside the callback. Nothing is delivered while MPI_T is not
 * initialized (the raise is still logged, with delivered=0).
 *
 * Environment:
 *   MPIT_DOUBLE_LOG=path  ground truth, appended (O_APPEND, one write per
 *     line; "%p" in the path becomes the pid; opened at the first line, so
 *     a process that raises nothing, such as mpiexec when the double is
 *     preloaded into it, leaves no file). Lines, space-separated
 *     key=value:
 *       raise name=N index=I source=S tick=T mono_ns=M raise_ns=R pid=P
 *             delivered=D values=V1,V2,...
 *         mono_ns: CLOCK_MONOTONIC ns the tick stands for (differs from
 *         raise_ns, the real time of the raise, for the out-of-order burst);
 *         values: int32/COUNT/AINT/OFFSET signed decimal, uint64 unsigned
 *         decimal, the weird element as "x" + its 8 bytes in hex (memory
 *         order);
 *       drop name=N index=I source=S count=C pid=P handlers=H reason=script
 *         (a scripted drop: H dropped handlers called with C each)
 *       drop name=N index=I source=S count=1 pid=P handlers=H reason=nocb
 *         (an instance that went to H dropped handlers of registrations
 *         without a usable callback; it also has a raise line, just before)
 *   MPIT_DOUBLE_SCRIPT=steps  steps separated by ';', run at hook points;
 *     "@tinit", "@init" (the default) or "@finalize" switches the hook the
 *     following steps belong to: @tinit at the first MPI_T_init_thread,
 *     @init after MPI_Init's initialization event, @finalize in MPI_Finalize
 *     before the finalization event. Each hook runs once. Steps (numbers in C
 *     syntax: 12, -3, 0x1f):
 *       init | finalize              raise initialization / finalization
 *                                    with the process's current values
 *       comm_created:SIZE:HANDLE     HANDLE is a number, "world" or "self"
 *       comm_freed:HANDLE
 *       comm_name_set:HANDLE
 *       errhandler:CODE:OBJTYPE:EH:OBJ
 *       released:COUNT:BYTES         add to the memory-release sink
 *       drain                        deliver the sink now
 *       unordered_burst:N            N memory-release events (count i+1,
 *                                    bytes 4096*(i+1)) whose source-1 ticks
 *                                    are out of order: tick_i = now -
 *                                    1000*N + 1000*((2i) mod N) + i
 *       weird[:TAG]                  double.weird, tag TAG (default 7),
 *                                    count -5, aint 0x7fff0000,
 *                                    offset 1<<40, pair {TAG, -TAG}
 *       drop:NAME:N                  N dropped instances of NAME
 *       wrap_in:US                   re-base source 0 so that its tick wraps
 *                                    to 0 US microseconds from now (a jump
 *                                    forward; were it backward, ticks stay
 *                                    at the last one until they catch up)
 *       sleep_us:N
 *     A bad step is reported on stderr and aborts the process.
 *   MPIT_DOUBLE_AUTO=0              no automatic events (script/API only).
 *   MPIT_DOUBLE_NAME_PREDEFINED=1   see MPI_Init above.
 *   MPIT_DOUBLE_EMPTY=1             no sources and no event types (the
 *                                   valid empty set).
 *   MPIT_DOUBLE_WRAP_AFTER_US=N, MPIT_DOUBLE_WEIRD_TYPE=bogus,
 *   MPIT_DOUBLE_CB_SAFETY: above.
 *   MPIT_DOUBLE_DIALECT=ompi        speak Open MPI's dialect of MPI: its
 *     handles are pointers, translated to MPICH's integers at the double's
 *     boundary, so that a tool (tracer) runs its Open MPI paths over
 *     MPICH. In this dialect:
 *     - MPI_Get_library_version says "Open MPI v6.1.0a1 (mpit_double, ...)";
 *     - the library defines Open MPI's predefined objects (ompi_mpi_comm_world,
 *       ompi_mpi_int, ompi_mpi_op_sum, ...; always, unused in the default
 *       dialect; list in mpit_double_internal.h) and their addresses are the
 *       handles MPI_COMM_WORLD, MPI_INT, MPI_SUM, ...; every other handle
 *       MPICH hands out (a new communicator, an error handler) is given the
 *       address of a 64-byte object of the double's own until it is freed
 *       (mpit_double_handles.c);
 *     - MPI_IN_PLACE is (void *)1 and MPI_STATUS_IGNORE is NULL, and a
 *       status is Open MPI's struct, as in Open MPI;
 *     - translated, under their MPI_ and PMPI_ names: every MPI function
 *       tracer calls (MPI_Init, _Init_thread, _Finalize, MPI_Comm_rank,
 *       _size, _dup, _dup_with_info, _split, _free, _set_name,
 *       _call_errhandler, MPI_Send, _Recv, _Bcast, _Barrier, _Allgather,
 *       _Gather, _Gatherv, _Scatter, _Scatterv, _Allreduce, _Exscan);
 *       any other MPI function is MPICH's and must not be given a handle of
 *       this dialect (MPI_Comm_create aborts: groups are not translated;
 *       nor are the session model, MPI_Info objects other than
 *       MPI_INFO_NULL, other constructors such as MPI_Cart_create);
 *       a handle the dialect did not hand out aborts with one line;
 *     - MPI_T: MPI_T_event_get_info writes each element's datatype as the
 *       address of an ompi_mpi_* object (the weird element: &ompi_mpi_2int,
 *       which a tool does not know), verbosities count from Open MPI's 0
 *       (USER_BASIC) and binds from its 0 (NO_OBJECT); MPI_T_event_handle_alloc
 *       reads a communicator binding as a pointer-sized handle; the info
 *       it and MPI_T_event_register_callback take must be
 *       &ompi_mpi_info_null, and info results are &ompi_mpi_info_null; events carry the handles as
 *       pointers (communicator_created's handle is the new communicator's
 *       object address), so a bound type reaches the registrations bound to
 *       that address.
 *     A process in this dialect must itself speak Open MPI's ABI (see
 *     tests/programs/ompi_dialect.c); the calls a tool such as tracer makes
 *     from beneath a wrapper (below the boundary) pass untranslated.
 */
#define _GNU_SOURCE 1 /* RTLD_NEXT */
#include "mpit_double.h"
#include "mpit_double_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* ---------------------------------------------------------------- catalogue */

enum { K_I32, K_U64, K_COUNT, K_AINT, K_OFFSET, K_WEIRD };

typedef struct {
    const char *name;
    int kind;
    MPI_Aint disp;
} elem_t;

typedef struct {
    const char *name;
    const char *desc;
    int level; /* Open MPI's 1..9 */
    int bind;
    int source;
    int nelem;
    size_t size;
    elem_t elem[6];
} evtype_t;

enum { EV_INIT, EV_FINI, EV_COMM_CREATED, EV_COMM_FREED, EV_COMM_NAME_SET, EV_ERRHANDLER, EV_RELEASED, EV_WEIRD, NEV };

static const evtype_t catalogue[NEV] = {
    {"ompi.mpi.initialization", "An MPI instance has been initialized (test double)", 2, MPI_T_BIND_NO_OBJECT, 0, 5,
     24,
     {{"model", K_I32, 0},
      {"thread_level", K_I32, 4},
      {"world_rank", K_I32, 8},
      {"world_size", K_I32, 12},
      {"instance_id", K_U64, 16}}},
    {"ompi.mpi.finalization", "An MPI instance is about to be finalized (test double)", 2, MPI_T_BIND_NO_OBJECT, 0, 3,
     16,
     {{"model", K_I32, 0}, {"world_rank", K_I32, 4}, {"instance_id", K_U64, 8}}},
    {"ompi.mpi.communicator_created", "A communicator was created (test double)", 2, MPI_T_BIND_NO_OBJECT, 0, 2, 16,
     {{"size", K_I32, 0}, {"handle", K_U64, 8}}},
    {"ompi.mpi.communicator_freed", "A communicator is being freed (test double)", 2, MPI_T_BIND_NO_OBJECT, 0, 1, 8,
     {{"handle", K_U64, 0}}},
    {"ompi.mpi.communicator_name_set", "The bound communicator's name was set (test double)", 4,
     MPI_T_BIND_MPI_COMM, 0, 1, 8, {{"handle", K_U64, 0}}},
    {"ompi.mpi.errhandler_invoked", "An error handler is invoked (test double)", 4, MPI_T_BIND_NO_OBJECT, 0, 4, 24,
     {{"err_code", K_I32, 0},
      {"object_type", K_I32, 4},
      {"errhandler_handle", K_U64, 8},
      {"object_handle", K_U64, 16}}},
    {"ompi.mca.memory.patcher.released", "Memory returned to the OS, aggregated (test double)", 4,
     MPI_T_BIND_NO_OBJECT, 1, 2, 16, {{"count", K_U64, 0}, {"bytes", K_U64, 8}}},
    {"double.weird", "Test double only: elements of unusual datatypes, with a hole", 9, MPI_T_BIND_NO_OBJECT, 0, 5,
     40,
     {{"tag", K_I32, 0}, {"count", K_COUNT, 8}, {"aint", K_AINT, 16}, {"offset", K_OFFSET, 24}, {"pair", K_WEIRD, 32}}},
};

#define NSRC 2
static const struct {
    const char *name;
    const char *desc;
    MPI_T_source_order order;
    MPI_Count ticks_per_second;
    MPI_Count max_ticks;
} sources[NSRC] = {
    {"ompi", "Ordered lifecycle events (test double), microseconds, wraps at 2^40", MPI_T_SOURCE_ORDERED, 1000000,
     ((MPI_Count)1 << 40) - 1},
    {"ompi.unordered", "Aggregated, unordered events (test double), nanoseconds", MPI_T_SOURCE_UNORDERED, 1000000000,
     LLONG_MAX},
};

#define ORIGIN1 5000000000000LL

static int weird_bogus;
static int empty;
static int auto_events = 1;
static int name_predefined;
static int ctx_safety = MPI_T_CB_REQUIRE_NONE;
static long long origin0 = 123456789;

/* An element's datatype in Open MPI's dialect: an object's address. */
static void *ompi_kind_type(int kind)
{
    switch (kind) {
    case K_I32:
        return ompi_mpi_int32_t;
    case K_U64:
        return ompi_mpi_uint64_t;
    case K_COUNT:
        return ompi_mpi_count;
    case K_AINT:
        return ompi_mpi_aint;
    case K_OFFSET:
        return ompi_mpi_offset;
    default:
        return ompi_mpi_2int;
    }
}

EXPORT int MPI_Get_library_version(char *version, int *resultlen)
{
    if (md_ompi()) {
        strcpy(version, "Open MPI v6.1.0a1 (mpit_double, Open MPI's MPI_T dialect)");
        *resultlen = (int)strlen(version);
        return MPI_SUCCESS;
    }
    int (*next)(char *, int *) = (int (*)(char *, int *))dlsym(RTLD_NEXT, "MPI_Get_library_version");
    return next ? next(version, resultlen) : MPI_ERR_OTHER;
}

static MPI_Datatype kind_type(int kind)
{
    switch (kind) {
    case K_I32:
        return MPI_INT32_T;
    case K_U64:
        return MPI_UINT64_T;
    case K_COUNT:
        return MPI_COUNT;
    case K_AINT:
        return MPI_AINT;
    case K_OFFSET:
        return MPI_OFFSET;
    default:
        return weird_bogus ? (MPI_Datatype)0x0badbeef : MPI_2INT;
    }
}

static size_t kind_size(int kind)
{
    return kind == K_I32 ? 4 : 8;
}

static int nevents(void)
{
    return empty ? 0 : NEV;
}

static int nsources(void)
{
    return empty ? 0 : NSRC;
}

/* ---------------------------------------------------------------- state */

#define REG_MAGIC 0x6d706974u
#define INST_MAGIC 0x696e7374u
#define NSAFETY 4

struct MPIR_T_event_registration_s {
    unsigned magic;
    int index;
    int bound;          /* for bound types: has an object */
    uint64_t object;    /* the MPI_Comm as events carry it (md_out) */
    int freed;          /* handle_free called */
    int busy;           /* deliveries in flight */
    void *free_user_data;
    MPI_T_event_free_cb_function *free_cb;
    MPI_T_event_cb_function *cb[NSAFETY];
    void *cb_data[NSAFETY];
    MPI_T_event_dropped_cb_function *dropped;
    struct MPIR_T_event_registration_s *next;
};

struct MPIR_T_event_instance_s {
    unsigned magic;
    int index;
    int source;
    MPI_Count tick;
    const unsigned char *payload;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int t_refcount;
static struct MPIR_T_event_registration_s *regs; /* live, in allocation order */
static long long last_tick0 = -1;
static unsigned long long sink_count, sink_bytes;
static uint64_t instance_id;
static int world_rank = -1, world_size = -1, thread_provided = -1;
static int log_fd = -1;
static char log_path[4096]; /* opened at the first line: processes that raise nothing leave no file */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static MPI_Count tick_at(int source, long long ns)
{
    if (source == 0) {
        unsigned long long period = (unsigned long long)sources[0].max_ticks + 1;
        return (MPI_Count)(((unsigned long long)(ns / 1000) + (unsigned long long)origin0) % period);
    }
    return ns + ORIGIN1;
}

/* origin0 such that source 0's tick wraps to 0 @after_us after @now_us. */
static long long origin_for_wrap(long long now_us, long long after_us)
{
    long long period = sources[0].max_ticks + 1;
    return ((period - (now_us + after_us) % period) % period + period) % period;
}

/* ---------------------------------------------------------------- log */

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_line(const char *fmt, ...)
{
    pthread_mutex_lock(&log_lock);
    if (log_fd < 0 && log_path[0]) {
        log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log_fd < 0)
            fprintf(stderr, "mpit_double: cannot open MPIT_DOUBLE_LOG %s: %s\n", log_path, strerror(errno));
        log_path[0] = 0;
    }
    pthread_mutex_unlock(&log_lock);
    if (log_fd < 0)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(log_fd, buf, (size_t)n);
    (void)w;
}

static void format_values(char *out, size_t len, int ev, const unsigned char *p)
{
    const evtype_t *t = &catalogue[ev];
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < t->nelem && used < len; i++) {
        const elem_t *e = &t->elem[i];
        const char *sep = i ? "," : "";
        int n = 0;
        switch (e->kind) {
        case K_I32: {
            int32_t v;
            memcpy(&v, p + e->disp, 4);
            n = snprintf(out + used, len - used, "%s%d", sep, (int)v);
            break;
        }
        case K_U64: {
            uint64_t v;
            memcpy(&v, p + e->disp, 8);
            n = snprintf(out + used, len - used, "%s%llu", sep, (unsigned long long)v);
            break;
        }
        case K_COUNT:
        case K_AINT:
        case K_OFFSET: {
            int64_t v;
            memcpy(&v, p + e->disp, 8);
            n = snprintf(out + used, len - used, "%s%lld", sep, (long long)v);
            break;
        }
        default:
            n = snprintf(out + used, len - used, "%sx", sep);
            for (int b = 0; b < 8 && n >= 0 && used + (size_t)n < len; b++)
                n += snprintf(out + used + n, len - used - n, "%02x", p[e->disp + b]);
            break;
        }
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* ---------------------------------------------------------------- delivery */

typedef struct {
    struct MPIR_T_event_registration_s *reg;
    MPI_T_event_cb_function *cb;
    void *data;
    MPI_T_event_dropped_cb_function *dropped;
} target_t;

/* The callback slot a registration is invoked with in the current context. */
static int pick_slot(const struct MPIR_T_event_registration_s *r)
{
    for (int s = ctx_safety; s < MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE; s++)
        if (r->cb[s])
            return s;
    return -1;
}

/* Under the lock: the live registrations an instance goes to, busy-marked. */
static int collect(int ev, const unsigned char *payload, target_t **out)
{
    int n = 0, cap = 0;
    target_t *t = NULL;
    if (t_refcount == 0)
        return 0;
    uint64_t object = 0;
    int filter = payload && catalogue[ev].bind != MPI_T_BIND_NO_OBJECT; /* drops: every registration */
    if (filter)
        memcpy(&object, payload + catalogue[ev].elem[0].disp, 8);
    for (struct MPIR_T_event_registration_s *r = regs; r; r = r->next) {
        if (r->index != ev || r->freed)
            continue;
        if (filter && (!r->bound || r->object != object))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            target_t *nt = realloc(t, (size_t)cap * sizeof *t);
            if (!nt)
                break;
            t = nt;
        }
        int s = pick_slot(r);
        t[n].reg = r;
        t[n].cb = s >= 0 ? r->cb[s] : NULL;
        t[n].data = s >= 0 ? r->cb_data[s] : NULL;
        t[n].dropped = r->dropped;
        r->busy++;
        n++;
    }
    *out = t;
    return n;
}

static void unlink_reg(struct MPIR_T_event_registration_s *r)
{
    for (struct MPIR_T_event_registration_s **pp = &regs; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            return;
        }
}

static void destroy_reg(struct MPIR_T_event_registration_s *r)
{
    if (r->free_cb)
        r->free_cb(r, (MPI_T_cb_safety)ctx_safety, r->free_user_data);
    r->magic = 0;
    free(r);
}

/* Drops the busy marks; frees registrations whose handle_free came meanwhile. */
static void release_targets(target_t *t, int n)
{
    struct MPIR_T_event_registration_s *dead = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++) {
        struct MPIR_T_event_registration_s *r = t[i].reg;
        if (--r->busy == 0 && r->freed) {
            unlink_reg(r);
            r->next = dead;
            dead = r;
        }
    }
    pthread_mutex_unlock(&lock);
    while (dead) {
        struct MPIR_T_event_registration_s *next = dead->next;
        destroy_reg(dead);
        dead = next;
    }
    free(t);
}

/* Raises one instance whose timestamp stands for CLOCK_MONOTONIC @at_ns. */
static int raise_at(int ev, const unsigned char *payload, long long at_ns, long long tick_offset)
{
    long long now = mono_ns();
    int src = catalogue[ev].source;
    target_t *t = NULL;
    pthread_mutex_lock(&lock);
    MPI_Count tick = tick_at(src, at_ns) + tick_offset;
    if (src == 0 && tick_offset == 0 && last_tick0 >= 0 && tick < last_tick0 &&
        last_tick0 - tick < ((MPI_Count)1 << 39))
        tick = last_tick0; /* ordered: never decreasing, wrap excepted */
    if (src == 0)
        last_tick0 = tick;
    int n = collect(ev, payload, &t);
    pthread_mutex_unlock(&lock);

    int ncb = 0, ndrop = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].cb)
            ncb++;
        else if (t[i].dropped)
            ndrop++;
    }
    char values[1024];
    format_values(values, sizeof values, ev, payload);
    log_line("raise name=%s index=%d source=%d tick=%lld mono_ns=%lld raise_ns=%lld pid=%d delivered=%d values=%s",
             catalogue[ev].name, ev, src, (long long)tick, at_ns, now, (int)getpid(), ncb, values);
    if (ndrop)
        log_line("drop name=%s index=%d source=%d count=1 pid=%d handlers=%d reason=nocb", catalogue[ev].name, ev, src,
                 (int)getpid(), ndrop);

    struct MPIR_T_event_instance_s inst = {INST_MAGIC, ev, src, tick, payload};
    for (int i = 0; i < n; i++) {
        if (t[i].cb)
            t[i].cb(&inst, t[i].reg, (MPI_T_cb_safety)ctx_safety, t[i].data);
        else if (t[i].dropped)
            t[i].dropped(1, t[i].reg, src, (MPI_T_cb_safety)ctx_safety, NULL);
    }
    inst.magic = 0;
    release_targets(t, n);
    return ncb;
}

static int raise_now(int ev, const unsigned char *payload)
{
    return raise_at(ev, payload, mono_ns(), 0);
}

static int drop_events(int ev, long long count)
{
    target_t *t = NULL;
    pthread_mutex_lock(&lock);
    int n = collect(ev, NULL, &t);
    pthread_mutex_unlock(&lock);
    int nh = 0;
    for (int i = 0; i < n; i++)
        if (t[i].dropped)
            nh++;
    log_line("drop name=%s index=%d source=%d count=%lld pid=%d handlers=%d reason=script", catalogue[ev].name, ev,
             catalogue[ev].source, count, (int)getpid(), nh);
    for (int i = 0; i < n; i++)
        if (t[i].dropped)
            t[i].dropped((MPI_Count)count, t[i].reg, catalogue[ev].source, (MPI_T_cb_safety)ctx_safety, t[i].data);
    release_targets(t, n);
    return nh;
}

static int drain(void)
{
    pthread_mutex_lock(&lock);
    unsigned long long c = sink_count, b = sink_bytes;
    sink_count = sink_bytes = 0;
    pthread_mutex_unlock(&lock);
    if (!c || empty)
        return 0;
    unsigned char p[16];
    memcpy(p, &c, 8);
    memcpy(p + 8, &b, 8);
    return raise_now(EV_RELEASED, p);
}

/* ---------------------------------------------------------------- payloads */

static void put32(unsigned char *p, int32_t v)
{
    memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static void raise_init(void)
{
    unsigned char p[24] = {0};
    put32(p, MPIT_DOUBLE_MODEL_WORLD);
    put32(p + 4, thread_provided);
    put32(p + 8, world_rank);
    put32(p + 12, world_size);
    put64(p + 16, instance_id);
    raise_now(EV_INIT, p);
}

static void raise_fini(void)
{
    unsigned char p[16] = {0};
    put32(p, MPIT_DOUBLE_MODEL_WORLD);
    put32(p + 4, world_rank);
    put64(p + 8, instance_id);
    raise_now(EV_FINI, p);
}

static void raise_comm_created(int size, uint64_t handle)
{
    unsigned char p[16] = {0};
    put32(p, size);
    put64(p + 8, handle);
    raise_now(EV_COMM_CREATED, p);
}

static void raise_u64(int ev, uint64_t handle)
{
    unsigned char p[8];
    put64(p, handle);
    raise_now(ev, p);
}

static void raise_errhandler(int code, int objtype, uint64_t eh, uint64_t obj)
{
    unsigned char p[24];
    put32(p, code);
    put32(p + 4, objtype);
    put64(p + 8, eh);
    put64(p + 16, obj);
    raise_now(EV_ERRHANDLER, p);
}

static void raise_weird(int tag)
{
    unsigned char p[40];
    memset(p, 0xee, sizeof p); /* the hole holds junk, as real padding may */
    put32(p, tag);
    put64(p + 8, (uint64_t)(int64_t)-5);
    put64(p + 16, 0x7fff0000);
    put64(p + 24, (uint64_t)1 << 40);
    put32(p + 32, tag);
    put32(p + 36, -tag);
    raise_now(EV_WEIRD, p);
}

static void unordered_burst(int n)
{
    long long now = mono_ns();
    for (int i = 0; i < n; i++) {
        unsigned char p[16];
        put64(p, (uint64_t)(i + 1));
        put64(p + 8, (uint64_t)(i + 1) * 4096);
        long long at = now - 1000LL * n + 1000LL * ((2LL * i) % n) + i;
        raise_at(EV_RELEASED, p, at, 0);
    }
}

/* ---------------------------------------------------------------- script */

#define MAXARGS 5

static int parse_num(const char *s, long long *v)
{
    if (!strcmp(s, "world")) {
        *v = (long long)md_out((int)MPI_COMM_WORLD);
        return 0;
    }
    if (!strcmp(s, "self")) {
        *v = (long long)md_out((int)MPI_COMM_SELF);
        return 0;
    }
    char *end;
    errno = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        *v = (long long)strtoull(s, &end, 16);
    else
        *v = strtoll(s, &end, 0);
    return (errno || end == s || *end) ? -1 : 0;
}

/* Runs one step (in place-modified copy). Returns 0 or -1. */
static int run_step(char *step)
{
    if (empty)
        return 0; /* nothing to raise; steps are not checked */
    char *argv[MAXARGS + 1];
    int argc = 0;
    for (char *tok = step; tok && argc <= MAXARGS;) {
        argv[argc++] = tok;
        tok = strchr(tok, ':');
        if (tok)
            *tok++ = 0;
    }
    long long a[MAXARGS] = {0};
    const char *cmd = argv[0];
    if (!strcmp(cmd, "drop")) {
        if (argc != 3 || parse_num(argv[2], &a[1]))
            return -1;
        int ev = mpit_double_event_index(argv[1]);
        if (ev < 0)
            return -1;
        drop_events(ev, a[1]);
        return 0;
    }
    for (int i = 1; i < argc; i++)
        if (parse_num(argv[i], &a[i - 1]))
            return -1;
    int nargs = argc - 1;
    if (!strcmp(cmd, "init") && nargs == 0)
        raise_init();
    else if (!strcmp(cmd, "finalize") && nargs == 0)
        raise_fini();
    else if (!strcmp(cmd, "comm_created") && nargs == 2)
        raise_comm_created((int)a[0], (uint64_t)a[1]);
    else if (!strcmp(cmd, "comm_freed") && nargs == 1)
        raise_u64(EV_COMM_FREED, (uint64_t)a[0]);
    else if (!strcmp(cmd, "comm_name_set") && nargs == 1)
        raise_u64(EV_COMM_NAME_SET, (uint64_t)a[0]);
    else if (!strcmp(cmd, "errhandler") && nargs == 4)
        raise_errhandler((int)a[0], (int)a[1], (uint64_t)a[2], (uint64_t)a[3]);
    else if (!strcmp(cmd, "released") && nargs == 2)
        mpit_double_release((unsigned long long)a[0], (unsigned long long)a[1]);
    else if (!strcmp(cmd, "drain") && nargs == 0)
        drain();
    else if (!strcmp(cmd, "unordered_burst") && nargs == 1 && a[0] > 0 && a[0] < 100000)
        unordered_burst((int)a[0]);
    else if (!strcmp(cmd, "weird") && nargs <= 1)
        raise_weird(nargs == 1 ? (int)a[0] : 7);
    else if (!strcmp(cmd, "wrap_in") && nargs == 1 && a[0] >= 0) {
        pthread_mutex_lock(&lock);
        origin0 = origin_for_wrap(mono_ns() / 1000, a[0]);
        pthread_mutex_unlock(&lock);
    } else if (!strcmp(cmd, "sleep_us") && nargs == 1 && a[0] >= 0) {
        struct timespec ts = {(time_t)(a[0] / 1000000), (long)(a[0] % 1000000) * 1000};
        nanosleep(&ts, NULL);
    } else
        return -1;
    return 0;
}

static int run_steps(const char *steps, int allow_hooks, int hook, const char *what)
{
    static const char *hooks[] = {"@tinit", "@init", "@finalize"};
    char *copy = strdup(steps ? steps : "");
    if (!copy)
        return -1;
    int current = 1; /* @init */
    int rc = 0;
    char *save = NULL;
    for (char *s = strtok_r(copy, ";", &save); s; s = strtok_r(NULL, ";", &save)) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        size_t l = strlen(s);
        while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\n'))
            s[--l] = 0;
        if (!*s)
            continue;
        if (*s == '@') {
            int h = -1;
            for (int i = 0; i < 3; i++)
                if (!strcmp(s, hooks[i]))
                    h = i;
            if (!allow_hooks || h < 0) {
                fprintf(stderr, "mpit_double: %s: bad hook '%s'\n", what, s);
                rc = -1;
                break;
            }
            current = h;
            continue;
        }
        if (allow_hooks && current != hook)
            continue;
        char step[256];
        snprintf(step, sizeof step, "%s", s);
        if (run_step(step)) {
            fprintf(stderr, "mpit_double: %s: bad step '%s'\n", what, s);
            rc = -1;
            break;
        }
    }
    free(copy);
    return rc;
}

enum { HOOK_TINIT, HOOK_INIT, HOOK_FINALIZE };

static void run_hook(int hook)
{
    static int done[3];
    pthread_mutex_lock(&lock);
    int first = !done[hook];
    done[hook] = 1;
    pthread_mutex_unlock(&lock);
    const char *script = getenv("MPIT_DOUBLE_SCRIPT");
    if (!first || !script)
        return;
    if (run_steps(script, 1, hook, "MPIT_DOUBLE_SCRIPT"))
        abort();
}

/* ---------------------------------------------------------------- setup */

__attribute__((constructor)) static void mpit_double_setup(void)
{
    const char *v;
    empty = (v = getenv("MPIT_DOUBLE_EMPTY")) && atoi(v) != 0;
    auto_events = !((v = getenv("MPIT_DOUBLE_AUTO")) && !strcmp(v, "0"));
    name_predefined = (v = getenv("MPIT_DOUBLE_NAME_PREDEFINED")) && atoi(v) != 0;
    weird_bogus = (v = getenv("MPIT_DOUBLE_WEIRD_TYPE")) && !strcmp(v, "bogus");
    if ((v = getenv("MPIT_DOUBLE_CB_SAFETY"))) {
        if (!strcmp(v, "restricted"))
            ctx_safety = MPI_T_CB_REQUIRE_MPI_RESTRICTED;
        else if (!strcmp(v, "thread_safe"))
            ctx_safety = MPI_T_CB_REQUIRE_THREAD_SAFE;
    }
    if ((v = getenv("MPIT_DOUBLE_WRAP_AFTER_US"))) {
        origin0 = origin_for_wrap(mono_ns() / 1000, atoll(v));
    }
    instance_id = 0x1d00000000000000ULL | ((uint64_t)(uint32_t)getpid() << 8) | 1;
    if ((v = getenv("MPIT_DOUBLE_LOG")) && *v) {
        size_t o = 0;
        for (const char *c = v; *c && o < sizeof log_path - 16; c++) {
            if (c[0] == '%' && c[1] == 'p') {
                o += (size_t)snprintf(log_path + o, sizeof log_path - o, "%d", (int)getpid());
                c++;
            } else
                log_path[o++] = *c;
        }
        log_path[o] = 0;
    }
}

/* dlsym(RTLD_NEXT) of a function the double itself defines. */
static void *next_fn(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "mpit_double: %s not found after the double (is MPICH loaded after it?)\n", name);
        abort();
    }
    return f;
}

/* The function after the double, looked up once per call site. */
#define NEXT(type, name, slot) (((union { void *p; type f; }){.p = next_cached(&(slot), (name))}).f)

static void *next_cached(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = next_fn(name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

/* ---------------------------------------------------------------- control API */

EXPORT int mpit_double_event_index(const char *name)
{
    for (int i = 0; name && i < nevents(); i++)
        if (!strcmp(catalogue[i].name, name))
            return i;
    return -1;
}

EXPORT size_t mpit_double_payload_size(int event_index)
{
    return event_index >= 0 && event_index < nevents() ? catalogue[event_index].size : 0;
}

EXPORT int mpit_double_raise_index(int event_index, const void *payload, size_t bytes, long long source_tick_offset)
{
    if (event_index < 0 || event_index >= nevents() || !payload || bytes != catalogue[event_index].size)
        return -1;
    return raise_at(event_index, payload, mono_ns(), source_tick_offset);
}

EXPORT int mpit_double_raise(const char *name, ...)
{
    int ev = mpit_double_event_index(name);
    if (ev < 0)
        return -1;
    unsigned char p[64] = {0};
    va_list ap;
    va_start(ap, name);
    for (int i = 0; i < catalogue[ev].nelem; i++) {
        const elem_t *e = &catalogue[ev].elem[i];
        switch (e->kind) {
        case K_I32:
            put32(p + e->disp, (int32_t)va_arg(ap, int));
            break;
        case K_U64:
            put64(p + e->disp, (uint64_t)va_arg(ap, unsigned long long));
            break;
        case K_COUNT:
        case K_AINT:
        case K_OFFSET:
            put64(p + e->disp, (uint64_t)va_arg(ap, long long));
            break;
        default:
            memcpy(p + e->disp, va_arg(ap, const void *), kind_size(e->kind));
            break;
        }
    }
    va_end(ap);
    return raise_now(ev, p);
}

EXPORT int mpit_double_drop(const char *name, long long count)
{
    int ev = mpit_double_event_index(name);
    return ev < 0 ? -1 : drop_events(ev, count);
}

EXPORT void mpit_double_release(unsigned long long count, unsigned long long bytes)
{
    pthread_mutex_lock(&lock);
    sink_count += count;
    sink_bytes += bytes;
    pthread_mutex_unlock(&lock);
}

EXPORT int mpit_double_drain(void)
{
    return drain();
}

EXPORT int mpit_double_run(const char *steps)
{
    return run_steps(steps, 0, 0, "mpit_double_run");
}

EXPORT MPI_Count mpit_double_tick(int source_index)
{
    if (source_index < 0 || source_index >= nsources())
        return -1;
    return tick_at(source_index, mono_ns());
}

/* ---------------------------------------------------------------- MPI_T */

static void copy_str(char *dst, int *len, const char *src)
{
    if (!len)
        return;
    int need = (int)strlen(src) + 1;
    if (!dst || *len <= 0) {
        *len = need;
        return;
    }
    int n = need <= *len ? need - 1 : *len - 1;
    memcpy(dst, src, (size_t)n);
    dst[n] = 0;
    *len = n + 1;
}

#define CHECK_INIT()                                                                                                  \
    do {                                                                                                              \
        if (t_refcount_get() == 0)                                                                                    \
            return MPI_T_ERR_NOT_INITIALIZED;                                                                         \
    } while (0)

static int t_refcount_get(void)
{
    pthread_mutex_lock(&lock);
    int n = t_refcount;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Under the lock: is @r a live registration? */
static int reg_valid(const struct MPIR_T_event_registration_s *r)
{
    for (const struct MPIR_T_event_registration_s *p = regs; p; p = p->next)
        if (p == r)
            return !p->freed && p->magic == REG_MAGIC;
    return 0;
}

static int inst_valid(MPI_T_event_instance e)
{
    return e && e->magic == INST_MAGIC;
}

typedef int (*t_init_fn)(int, int *);
typedef int (*t_fini_fn)(void);

EXPORT int MPI_T_init_thread(int required, int *provided)
{
    static void *next;
    int rc = NEXT(t_init_fn, "PMPI_T_init_thread", next)(required, provided);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&lock);
    t_refcount++;
    pthread_mutex_unlock(&lock);
    run_hook(HOOK_TINIT);
    return MPI_SUCCESS;
}

EXPORT int MPI_T_finalize(void)
{
    struct MPIR_T_event_registration_s *dead = NULL;
    pthread_mutex_lock(&lock);
    if (t_refcount == 0) {
        pthread_mutex_unlock(&lock);
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if (--t_refcount == 0) {
        /* All handles become invalid; free callbacks are not called. */
        for (struct MPIR_T_event_registration_s **pp = &regs; *pp;) {
            struct MPIR_T_event_registration_s *r = *pp;
            if (r->busy) {
                r->freed = 1;
                r->free_cb = NULL;
                pp = &r->next;
            } else {
                *pp = r->next;
                r->next = dead;
                dead = r;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    while (dead) {
        struct MPIR_T_event_registration_s *next = dead->next;
        dead->magic = 0;
        free(dead);
        dead = next;
    }
    static void *next;
    return NEXT(t_fini_fn, "PMPI_T_finalize", next)();
}

EXPORT int MPI_T_source_get_num(int *num_sources)
{
    CHECK_INIT();
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = nsources();
    return MPI_SUCCESS;
}

EXPORT int MPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                                 MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                                 MPI_Info *info)
{
    CHECK_INIT();
    if (source_index < 0 || source_index >= nsources())
        return MPI_T_ERR_INVALID_INDEX;
    copy_str(name, name_len, sources[source_index].name);
    copy_str(desc, desc_len, sources[source_index].desc);
    if (ordering)
        *ordering = sources[source_index].order;
    if (ticks_per_second)
        *ticks_per_second = sources[source_index].ticks_per_second;
    if (max_ticks)
        *max_ticks = sources[source_index].max_ticks;
    if (info)
        md_put(md_ompi(), info, (int)MPI_INFO_NULL); /* 8 bytes in Open MPI's dialect */
    return MPI_SUCCESS;
}

EXPORT int MPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    CHECK_INIT();
    if (source_index < 0 || source_index >= nsources())
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    if (source_index == 1)
        drain();
    pthread_mutex_lock(&lock);
    MPI_Count t = tick_at(source_index, mono_ns());
    if (source_index == 0 && last_tick0 >= 0 && t < last_tick0 && last_tick0 - t < ((MPI_Count)1 << 39))
        t = last_tick0;
    pthread_mutex_unlock(&lock);
    *timestamp = t;
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_get_num(int *num_events)
{
    CHECK_INIT();
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = nevents();
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                                MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                                int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc, int *desc_len,
                                int *bind)
{
    CHECK_INIT();
    if (event_index < 0 || event_index >= nevents())
        return MPI_T_ERR_INVALID_INDEX;
    const evtype_t *t = &catalogue[event_index];
    copy_str(name, name_len, t->name);
    copy_str(desc, desc_len, t->desc);
    int ompi = md_ompi();
    if (verbosity)
        *verbosity = (ompi ? 0 : MPI_T_VERBOSITY_USER_BASIC) + t->level - 1;
    if (num_elements) {
        int room = *num_elements;
        for (int i = 0; i < t->nelem && i < room; i++) {
            if (array_of_datatypes && ompi)
                ((void **)(void *)array_of_datatypes)[i] = ompi_kind_type(t->elem[i].kind);
            else if (array_of_datatypes)
                array_of_datatypes[i] = kind_type(t->elem[i].kind);
            if (array_of_displacements)
                array_of_displacements[i] = t->elem[i].disp;
        }
        *num_elements = t->nelem;
    }
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (info)
        md_put(md_ompi(), info, (int)MPI_INFO_NULL); /* 8 bytes in Open MPI's dialect */
    if (bind)
        *bind = ompi ? t->bind - MPI_T_BIND_NO_OBJECT : t->bind;
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_get_index(const char *name, int *event_index)
{
    CHECK_INIT();
    if (!name || !event_index)
        return MPI_T_ERR_INVALID;
    int i = mpit_double_event_index(name);
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *event_index = i;
    return MPI_SUCCESS;
}

/* In Open MPI's dialect the only info a caller may pass is MPI_INFO_NULL,
 * &ompi_mpi_info_null (MPICH's prototype gives the double its low 32 bits:
 * enough to tell it from MPICH's 0x1c000000). */
static void info_in(const char *fn, MPI_Info info)
{
    if (md_ompi() && (uint32_t)info != (uint32_t)(uintptr_t)ompi_mpi_info_null) {
        fprintf(stderr, "mpit_double: %s: info 0x%x is not the Open MPI dialect's MPI_INFO_NULL\n", fn,
                (unsigned)info);
        abort();
    }
}

EXPORT int MPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                    MPI_T_event_registration *event_registration)
{
    info_in("MPI_T_event_handle_alloc", info);
    CHECK_INIT();
    if (event_index < 0 || event_index >= nevents())
        return MPI_T_ERR_INVALID_INDEX;
    if (!event_registration)
        return MPI_T_ERR_INVALID;
    int bound = catalogue[event_index].bind != MPI_T_BIND_NO_OBJECT;
    if (bound && !obj_handle)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_event_registration_s *r = calloc(1, sizeof *r);
    if (!r)
        return MPI_T_ERR_MEMORY;
    r->magic = REG_MAGIC;
    r->index = event_index;
    if (bound) {
        r->bound = 1;
        /* The handle as events carry it: Open MPI's is pointer-sized. */
        if (md_ompi())
            memcpy(&r->object, obj_handle, sizeof r->object);
        else
            r->object = (uint32_t)*(const MPI_Comm *)obj_handle;
    }
    pthread_mutex_lock(&lock);
    struct MPIR_T_event_registration_s **pp = &regs;
    while (*pp)
        pp = &(*pp)->next;
    *pp = r;
    pthread_mutex_unlock(&lock);
    *event_registration = r;
    drain();
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                                   MPI_T_event_free_cb_function free_cb_function)
{
    CHECK_INIT();
    drain();
    pthread_mutex_lock(&lock);
    if (!reg_valid(event_registration)) {
        pthread_mutex_unlock(&lock);
        return MPI_T_ERR_INVALID_HANDLE;
    }
    struct MPIR_T_event_registration_s *r = event_registration;
    r->freed = 1;
    r->free_cb = free_cb_function;
    r->free_user_data = user_data;
    int now = r->busy == 0;
    if (now)
        unlink_reg(r);
    pthread_mutex_unlock(&lock);
    if (now)
        destroy_reg(r); /* else the last delivery in flight does it */
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                         MPI_Info info, void *user_data, MPI_T_event_cb_function event_cb_function)
{
    info_in("MPI_T_event_register_callback", info);
    CHECK_INIT();
    if ((int)cb_safety < MPI_T_CB_REQUIRE_NONE || (int)cb_safety > MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&lock);
    int ok = reg_valid(event_registration);
    if (ok) {
        event_registration->cb[cb_safety] = event_cb_function; /* NULL deregisters */
        event_registration->cb_data[cb_safety] = user_data;
    }
    pthread_mutex_unlock(&lock);
    return ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

EXPORT int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                           MPI_T_event_dropped_cb_function dropped_cb_function)
{
    CHECK_INIT();
    pthread_mutex_lock(&lock);
    int ok = reg_valid(event_registration);
    if (ok)
        event_registration->dropped = dropped_cb_function;
    pthread_mutex_unlock(&lock);
    return ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

EXPORT int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    CHECK_INIT();
    if (!inst_valid(event_instance))
        return MPI_T_ERR_INVALID_HANDLE;
    const evtype_t *t = &catalogue[event_instance->index];
    if (element_index < 0 || element_index >= t->nelem)
        return MPI_T_ERR_INVALID_INDEX;
    if (!buffer)
        return MPI_T_ERR_INVALID;
    memcpy(buffer, event_instance->payload + t->elem[element_index].disp, kind_size(t->elem[element_index].kind));
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    CHECK_INIT();
    if (!inst_valid(event_instance))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buffer)
        return MPI_T_ERR_INVALID;
    memcpy(buffer, event_instance->payload, catalogue[event_instance->index].size);
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    CHECK_INIT();
    if (!inst_valid(event_instance))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!event_timestamp)
        return MPI_T_ERR_INVALID;
    *event_timestamp = event_instance->tick;
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    CHECK_INIT();
    if (!inst_valid(event_instance))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!source_index)
        return MPI_T_ERR_INVALID;
    *source_index = event_instance->source;
    return MPI_SUCCESS;
}

/* Info stubs: no hints are kept. */
EXPORT int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    CHECK_INIT();
    pthread_mutex_lock(&lock);
    int ok = reg_valid(event_registration);
    pthread_mutex_unlock(&lock);
    if (!ok)
        return MPI_T_ERR_INVALID_HANDLE;
    if (info_used)
        md_put(md_ompi(), info_used, (int)MPI_INFO_NULL);
    return MPI_SUCCESS;
}

EXPORT int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)info;
    CHECK_INIT();
    pthread_mutex_lock(&lock);
    int ok = reg_valid(event_registration);
    pthread_mutex_unlock(&lock);
    return ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

EXPORT int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                         MPI_Info *info_used)
{
    (void)cb_safety;
    return MPI_T_event_handle_get_info(event_registration, info_used);
}

EXPORT int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                         MPI_Info info)
{
    (void)cb_safety;
    return MPI_T_event_handle_set_info(event_registration, info);
}

/* The PMPI_T_ names are the same functions. (PMPI_T_init_thread and
 * PMPI_T_finalize are MPICH's: the double forwards to them.) */
#define ALIAS(name) EXPORT __typeof__(name) P##name __attribute__((alias(#name)));
ALIAS(MPI_T_source_get_num)
ALIAS(MPI_T_source_get_info)
ALIAS(MPI_T_source_get_timestamp)
ALIAS(MPI_T_event_get_num)
ALIAS(MPI_T_event_get_info)
ALIAS(MPI_T_event_get_index)
ALIAS(MPI_T_event_handle_alloc)
ALIAS(MPI_T_event_handle_free)
ALIAS(MPI_T_event_register_callback)
ALIAS(MPI_T_event_set_dropped_handler)
ALIAS(MPI_T_event_read)
ALIAS(MPI_T_event_copy)
ALIAS(MPI_T_event_get_timestamp)
ALIAS(MPI_T_event_get_source)
ALIAS(MPI_T_event_handle_get_info)
ALIAS(MPI_T_event_handle_set_info)
ALIAS(MPI_T_event_callback_get_info)
ALIAS(MPI_T_event_callback_set_info)

/* ---------------------------------------------------------------- automatic events */

/* Called from the wrappers of mpit_double_mpi.c, with MPICH's handles; the
 * events carry the dialect's (md_out). */

int md_auto(void)
{
    return auto_events && !empty;
}

void md_init_done(int rank, int size, int provided)
{
    world_rank = rank;
    world_size = size;
    thread_provided = provided;
    if (md_auto()) {
        if (name_predefined) {
            raise_u64(EV_COMM_NAME_SET, md_out((int)MPI_COMM_WORLD));
            raise_u64(EV_COMM_NAME_SET, md_out((int)MPI_COMM_SELF));
        }
        raise_init();
    }
    if (!empty)
        run_hook(HOOK_INIT);
}

void md_finalizing(void)
{
    if (empty)
        return;
    run_hook(HOOK_FINALIZE);
    if (auto_events)
        raise_fini();
}

void md_created(int comm, int size)
{
    raise_comm_created(size, md_out(comm));
}

void md_freeing(int comm)
{
    raise_u64(EV_COMM_FREED, md_out(comm));
}

void md_name_set(int comm)
{
    raise_u64(EV_COMM_NAME_SET, md_out(comm));
}

void md_errhandler(int comm, int code, int errhandler)
{
    raise_errhandler(code, MPI_T_BIND_MPI_COMM, errhandler ? md_out(errhandler) : 0, md_out(comm));
}
