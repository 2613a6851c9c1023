/* ompt_host.c - OMPT host callbacks -> TR_REC_OMP records (the hot path).
 *
 * These run on every OpenMP thread for every parallel region, loop, barrier
 * and lock, so each is a TLS read, a clock read and one 64-byte record: no
 * lock, no atomic read-modify-write, no syscall. docs/trace-model.md ("Host
 * OpenMP states") is the contract with the writer; record.h lists the fields.
 *
 * Parallel and task ids are tracer's own: the runtime's parallel_data and
 * task_data are ours to fill, and it hands the same storage back at the end
 * and in every callback inside, so no table is needed to pair events. An
 * implicit task's task_data holds its parallel id, which is how its end (and
 * the end of the barrier that closes it, where the runtime passes no
 * parallel_data because the team may already be gone) find it. */
#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include "ompt/ompt_host.h"

#include <link.h>

#include <stdint.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/object_span.h"
#include "core/record.h"
#include "ompt/ompt_phase.h"

/* An id is the thread's index (from 1) above TR_OMP_ID_SHIFT and its own
 * counter (from 1) below: unique in the process without sharing a cache
 * line, and never 0, which stays "none" (the initial task's parallel). 2^22
 * threads of 2^42 ids each. */
#define TR_OMP_ID_SHIFT 42

static uint64_t id_threads;
static __thread uint64_t id_next __attribute__((tls_model("initial-exec")));

/* The rare path: a thread's first id takes its index, the only atomic. */
__attribute__((noinline)) static void id_first(void)
{
    uint64_t index = __atomic_add_fetch(&id_threads, 1, __ATOMIC_RELAXED);
    id_next = index << TR_OMP_ID_SHIFT | 1u;
}

static inline uint64_t id_new(void)
{
    if (__builtin_expect(id_next == 0, 0))
        id_first();
    return id_next++;
}

/* A nest lock's wait opened by mutex_acquire on this thread. A thread that
 * already holds the lock gets no mutex_acquired but a nest_lock begin, which
 * must close the wait; a test_nest_lock opens none. */
static __thread uint64_t nest_wait_id __attribute__((tls_model("initial-exec")));
static __thread int nest_wait_open __attribute__((tls_model("initial-exec")));

/* A host league begun on this thread whose initial task has not begun yet.
 * LLVM 19 hands that task the league's parallel_data when the program's own
 * teams construct forks it, but fresh storage (value 0) when libomptarget's
 * host plugin runs a target teams region; the league id comes from here
 * then, so the task's records still name their league. */
static __thread uint64_t league_pending __attribute__((tls_model("initial-exec")));

/* The reduction this thread is combining (tr_ompt_host_reduction). */
static __thread uint64_t reduction_id __attribute__((tls_model("initial-exec")));
static __thread int reduction_open __attribute__((tls_model("initial-exec")));

/* The parallel id of the team the runtime forked for itself (libomp's
 * hidden helpers; tr_ompt_host_parallel_begin), 0 before it exists. */
static uint64_t runtime_team;

/* Returns 1 when the record was written. */
static inline int put(enum tr_omp_event sub, uint8_t phase, int32_t dev, uint64_t id, uint64_t u0, uint64_t u1,
                      uint64_t u2)
{
    /* The runtime's own team waking up to shut down, after the trace was
     * written: its teardown, not counted as the program's late events. */
    if (__builtin_expect(!tr_buf_recording(), 0) && id &&
        id == __atomic_load_n(&runtime_team, __ATOMIC_RELAXED))
        return 0;
    uint64_t t = tr_clock_ticks();
    tr_record *r = tr_buf_reserve();
    if (!r)
        return 0;
    r->time = t;
    r->type = TR_REC_OMP;
    r->phase = phase;
    r->sub = (uint16_t)sub;
    r->dev = dev;
    r->dev2 = 0;
    r->aux = 0;
    r->id = id;
    r->u[0] = u0;
    r->u[1] = u1;
    r->u[2] = u2;
    r->u[3] = 0;
    tr_buf_commit();
    return 1;
}

/* The parallel region a callback belongs to. Without parallel_data (the end
 * of a join barrier, of a worker's implicit task) the runtime passes the
 * implicit task's task_data, which holds it. */
static inline uint64_t parallel_id(const ompt_data_t *parallel_data, const ompt_data_t *task_data)
{
    if (__builtin_expect(parallel_data != 0, 1))
        return parallel_data->value;
    return task_data ? task_data->value : 0;
}

/* libomp's own teardown: its threads beginning and ending, and the end of
 * the initial tasks they ran, reported from its destructor or from worker
 * threads after the trace was written (issue 16, item 10). They are never in
 * a trace by design and nothing of the program is missing, so they are not
 * counted among the events that arrived after the end (a line that must mean
 * something is missing). Anything else after the end still is. */
static inline int teardown_after_end(void)
{
    return !tr_buf_recording();
}

/* The OpenMP runtime's mapped range, written once before any callback. */
static uint64_t runtime_lo, runtime_hi;

struct range_of {
    uint64_t addr, lo, hi;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct range_of *r = data;
    return tr_object_holds(info, r->addr) && tr_object_span(info, &r->lo, &r->hi);
}

void tr_ompt_host_set_runtime(const void *inside)
{
    struct range_of r = {(uint64_t)(uintptr_t)inside, 0, 0};
    if (inside && dl_iterate_phdr(find_range, &r)) {
        runtime_lo = r.lo;
        runtime_hi = r.hi;
    }
}

void tr_ompt_host_thread_begin(ompt_thread_t thread_type, ompt_data_t *thread_data)
{
    if (thread_data)
        thread_data->value = (uint64_t)thread_type; /* thread_end is not told */
    if (teardown_after_end())
        return;
    put(TR_OMP_THREAD, TR_PHASE_BEGIN, (int32_t)thread_type, 0, 0, 0, 0);
}

void tr_ompt_host_thread_end(ompt_data_t *thread_data)
{
    if (teardown_after_end())
        return;
    put(TR_OMP_THREAD, TR_PHASE_END, thread_data ? (int32_t)thread_data->value : 0, 0, 0, 0, 0);
}

void tr_ompt_host_parallel_begin(ompt_data_t *encountering_task_data, const ompt_frame_t *encountering_task_frame,
                                 ompt_data_t *parallel_data, unsigned int requested_parallelism, int flags,
                                 const void *codeptr_ra)
{
    (void)encountering_task_data, (void)encountering_task_frame;
    uint64_t id = id_new();
    if (parallel_data)
        parallel_data->value = id;
    if (flags & ompt_parallel_league)
        league_pending = id;
    /* libomp's hidden-helper team is forked from libomp's own code. */
    uint64_t pc = (uintptr_t)codeptr_ra;
    int own = pc >= runtime_lo && pc < runtime_hi;
    if (own)
        __atomic_store_n(&runtime_team, id, __ATOMIC_RELAXED);
    put(TR_OMP_PARALLEL, TR_PHASE_BEGIN, flags, id, pc, requested_parallelism, own);
}

void tr_ompt_host_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data, int flags,
                               const void *codeptr_ra)
{
    (void)encountering_task_data;
    put(TR_OMP_PARALLEL, TR_PHASE_END, flags, parallel_data ? parallel_data->value : 0, (uintptr_t)codeptr_ra, 0,
        0);
}

void tr_ompt_host_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                                ompt_data_t *task_data, unsigned int actual_parallelism, unsigned int index,
                                int flags)
{
    uint64_t id;
    if (endpoint == ompt_scope_begin) {
        /* The program's initial task: nobody set its parallel_data, so 0.
         * A host teams league's initial tasks get the league's id. */
        id = parallel_data ? parallel_data->value : 0;
        if (flags & ompt_task_initial) {
            if (!id)
                id = league_pending;
            league_pending = 0;
        }
        if (task_data)
            task_data->value = id;
    } else {
        if ((flags & ompt_task_initial) && teardown_after_end())
            return;
        /* parallel_data may be NULL at the end: the task_data keeps it. */
        id = task_data ? task_data->value : parallel_id(parallel_data, 0);
    }
    put(TR_OMP_IMPLICIT_TASK, tr_phase_of(endpoint), flags, id, 0, actual_parallelism, index);
}

void tr_ompt_host_work(ompt_work_t work_type, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                       ompt_data_t *task_data, uint64_t count, const void *codeptr_ra)
{
    put(TR_OMP_WORK, tr_phase_of(endpoint), (int32_t)work_type, parallel_id(parallel_data, task_data),
        (uintptr_t)codeptr_ra, count, 0);
}

void tr_ompt_host_masked(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data,
                         const void *codeptr_ra)
{
    put(TR_OMP_MASKED, tr_phase_of(endpoint), 0, parallel_id(parallel_data, task_data), (uintptr_t)codeptr_ra, 0,
        0);
}

void tr_ompt_host_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                              ompt_data_t *parallel_data, ompt_data_t *task_data, const void *codeptr_ra)
{
    put(TR_OMP_SYNC, tr_phase_of(endpoint), (int32_t)kind, parallel_id(parallel_data, task_data),
        (uintptr_t)codeptr_ra, 0, 0);
}

void tr_ompt_host_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                                   ompt_data_t *parallel_data, ompt_data_t *task_data, const void *codeptr_ra)
{
    put(TR_OMP_SYNC_WAIT, tr_phase_of(endpoint), (int32_t)kind, parallel_id(parallel_data, task_data),
        (uintptr_t)codeptr_ra, 0, 0);
}

void tr_ompt_host_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                            ompt_data_t *task_data, const void *codeptr_ra)
{
    (void)kind; /* always ompt_sync_region_reduction */
    /* A reduction's end carries its begin's id: in a target teams region
     * run by the host plugin LLVM 19 gives the begin neither parallel_data
     * nor a task_data that holds the team's id, and the end both. A thread
     * combines one reduction at a time, so one slot pairs them. */
    uint64_t id = parallel_id(parallel_data, task_data);
    if (endpoint == ompt_scope_begin) {
        reduction_id = id;
        reduction_open = 1;
    } else if (reduction_open) {
        id = reduction_id;
        reduction_open = 0;
    }
    put(TR_OMP_REDUCTION, tr_phase_of(endpoint), 0, id, (uintptr_t)codeptr_ra, 0, 0);
}

static inline int is_test(ompt_mutex_t kind)
{
    return kind == ompt_mutex_test_lock || kind == ompt_mutex_test_nest_lock;
}

void tr_ompt_host_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id,
                                const void *codeptr_ra)
{
    /* A test does not wait, and a failed one has no mutex_acquired to end
     * a wait: it is seen only when it succeeds (HELD). */
    if (is_test(kind))
        return;
    if (put(TR_OMP_MUTEX_WAIT, TR_PHASE_BEGIN, (int32_t)kind, wait_id, (uintptr_t)codeptr_ra, hint, impl) &&
        kind == ompt_mutex_nest_lock) {
        nest_wait_id = wait_id;
        nest_wait_open = 1;
    }
}

void tr_ompt_host_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra)
{
    if (!is_test(kind))
        put(TR_OMP_MUTEX_WAIT, TR_PHASE_END, (int32_t)kind, wait_id, (uintptr_t)codeptr_ra, 0, 0);
    if (kind == ompt_mutex_nest_lock)
        nest_wait_open = 0;
    put(TR_OMP_MUTEX_HELD, TR_PHASE_BEGIN, (int32_t)kind, wait_id, (uintptr_t)codeptr_ra, 0, 0);
}

void tr_ompt_host_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra)
{
    put(TR_OMP_MUTEX_HELD, TR_PHASE_END, (int32_t)kind, wait_id, (uintptr_t)codeptr_ra, 0, 0);
}

/* A nest lock taken again (begin) or released (end) by the thread that holds
 * it: the outermost HELD goes on, nothing is recorded but the end of the
 * wait mutex_acquire opened. */
void tr_ompt_host_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void *codeptr_ra)
{
    if (endpoint == ompt_scope_begin && nest_wait_open && nest_wait_id == wait_id) {
        nest_wait_open = 0;
        put(TR_OMP_MUTEX_WAIT, TR_PHASE_END, ompt_mutex_nest_lock, wait_id, (uintptr_t)codeptr_ra, 0, 0);
    }
}

void tr_ompt_host_task_create(ompt_data_t *encountering_task_data, const ompt_frame_t *encountering_task_frame,
                              ompt_data_t *new_task_data, int flags, int has_dependences, const void *codeptr_ra)
{
    (void)encountering_task_data, (void)encountering_task_frame, (void)has_dependences;
    uint64_t id = id_new();
    if (new_task_data)
        new_task_data->value = id;
    put(TR_OMP_TASK_CREATE, TR_PHASE_POINT, flags, id, (uintptr_t)codeptr_ra, 0, 0);
}

void tr_ompt_host_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
                                ompt_data_t *next_task_data)
{
    put(TR_OMP_TASK_SCHEDULE, TR_PHASE_POINT, (int32_t)prior_task_status, prior_task_data ? prior_task_data->value : 0,
        next_task_data ? next_task_data->value : 0, 0, 0);
}
