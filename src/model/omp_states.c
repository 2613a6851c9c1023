/* omp_states.c - host OpenMP states (TR_REC_OMP) on a host thread's
 * location, in the journal's TRACER_MODE. docs/trace-model.md, "Host
 * OpenMP states", is the contract.
 *
 * User mode rebuilds the program's structure on the region stack the other
 * host events use (host_thread.h): a worker's implicit task is its
 * `parallel` region, work constructs and critical sections nest inside it,
 * and the runtime's states are artificial regions (<OMP-implicit_barrier>,
 * <OMP-lock_wait>, ...). Two repairs make LLVM's callbacks read like the
 * program:
 * - A worker's join barrier, and its implicit task, end in the runtime only
 *   when the worker is woken for the next parallel region (or at shutdown).
 *   The team really ended when the encountering thread's implicit task did
 *   (omp_model.h): at that time the worker's implicit task is closed, and
 *   <OMP-idle> begins; the late ends are then dropped. The pass reads the
 *   threads in time order, so the team's end is known by the time a worker
 *   passes it.
 * - An explicit task that runs inside a task scheduling point (a barrier, a
 *   taskwait) nests in that wait; a task suspended by a switch stays open
 *   below the task that runs, so nesting holds.
 * Machine mode writes each record as it came: one region per callback kind.
 *
 * The metrics OMP work and OMP wait come from the user-mode stack in both
 * modes (machine mode runs it without writing): time counts as wait while
 * the innermost classified region open is a waiting state, as work while it
 * is a `parallel` or `task` region. */
#include <omp-tools.h>
#include <stdlib.h>
#include <string.h>

#include "model/omp_model.h"
#include "model/omp_states.h"

/* tr_open_region.kind of the OpenMP regions. */
enum omp_kind {
    OK_PARALLEL = 1, /* a team thread's implicit task */
    OK_OVERHEAD,     /* fork or join on the encountering thread */
    OK_IDLE,
    OK_WORK,
    OK_MASKED,
    OK_WAIT,         /* sync_region_wait */
    OK_REDUCTION,
    OK_MUTEX_WAIT,
    OK_HELD,         /* a critical or ordered section held */
    OK_TASK,
    OK_MACHINE = 32, /* + tr_omp_event: machine mode's regions */
};

static uint64_t region_construct(int k, uint64_t codeptr)
{
    return tr_region_key_make(KEY_OMP_CONSTRUCT, codeptr << 5 | (uint64_t)k);
}

static uint64_t region_state(int s) { return tr_region_key_make(KEY_OMP_STATE, (uint64_t)s); }

static void attr(tr_host *c, enum tr_attr a, uint64_t v) { tr_host_attr(c, a, v); }

/* A Leave that takes no attributes. */
static void leave_plain(tr_host *c, uint64_t t, uint64_t region)
{
    tr_mev e = {.kind = TR_MEV_LEAVE, .region = region};
    tr_host_emit(c, &e, t);
}

static void thread_fork(tr_host *c, const tr_record *r)
{
    tr_mev e = {.kind = TR_MEV_FORK, .value = (uint32_t)r->u[1]};
    tr_host_emit(c, &e, r->time);
}

static void join(tr_host *c, uint64_t t)
{
    tr_mev e = {.kind = TR_MEV_JOIN};
    tr_host_emit(c, &e, t);
}

/* The parallel region @id as the pass knows it now. */
static tr_omp_parallel *parallel(const tr_host *c, uint64_t id)
{
    return (tr_omp_parallel *)tr_omp_model_parallel(c->p->omp, id);
}

/* ---- work and wait ---------------------------------------------------- */

/* Whether a region (@kind, @id) opened now belongs to a team the OpenMP
 * runtime forked for itself (libomp's hidden-helper threads wait in it
 * until the process ends): still open at the end, it is not the
 * program's, and is written with incomplete = 2. The parallel begin that
 * says so comes before any region of its team. */
static int runtime_region(const tr_host *c, int k, uint64_t id)
{
    if (!id)
        return 0;
    /* The kinds whose id is a parallel region's (OK_IDLE's is 0, a task's
     * is the task's). */
    if (k >= OK_MACHINE)
        k = k - OK_MACHINE == TR_OMP_PARALLEL || k - OK_MACHINE == TR_OMP_IMPLICIT_TASK ||
                    k - OK_MACHINE == TR_OMP_WORK || k - OK_MACHINE == TR_OMP_MASKED ||
                    k - OK_MACHINE == TR_OMP_SYNC || k - OK_MACHINE == TR_OMP_SYNC_WAIT ||
                    k - OK_MACHINE == TR_OMP_REDUCTION
                ? OK_PARALLEL
                : 0;
    if (k != OK_PARALLEL && k != OK_OVERHEAD && k != OK_WORK && k != OK_MASKED && k != OK_WAIT &&
        k != OK_REDUCTION)
        return 0;
    tr_omp_parallel *p = parallel(c, id);
    return p && p->runtime;
}

/* What time in a user-mode region counts as: waiting states are wait, a
 * team thread's implicit task and an explicit task are work. */
static uint8_t class_of(int kind)
{
    return kind == OK_WAIT || kind == OK_MUTEX_WAIT ? TR_CLASS_WAIT
           : kind == OK_PARALLEL || kind == OK_TASK ? TR_CLASS_WORK
                                                    : TR_CLASS_NONE;
}

/* Both running totals, as of @t (counted up to there). */
static void write_metrics(tr_host *c, uint64_t t, uint64_t work, uint64_t wait)
{
    tr_host_metric(c, t, TR_METRIC_OMP_WORK, work);
    tr_host_metric(c, t, TR_METRIC_OMP_WAIT, wait);
}

/* ---- user mode --------------------------------------------------------- */

static const tr_open_region *top(const tr_host *c) { return c->depth ? &c->stack[c->depth - 1] : 0; }

static int top_is(const tr_host *c, uint8_t kind, uint64_t id)
{
    const tr_open_region *o = top(c);
    return o && o->type == TR_REC_OMP && o->kind == kind && o->id == id;
}

/* A region opens: <OMP-idle> ends first, and what was open is counted. Call
 * it before adding the Enter's attributes (the idle's Leave would take them). */
static void prepare(tr_host *c, uint64_t t)
{
    if (top_is(c, OK_IDLE, 0))
        tr_host_pop(c, t, 0);
    tr_host_account(c, t);
}

static void open_omp(tr_host *c, enum omp_kind kind, uint64_t id, uint64_t region, uint64_t t)
{
    tr_host_enter(c, t, region);
    tr_host_push(c, (tr_open_region){.type = TR_REC_OMP, .kind = (uint8_t)kind, .id = id, .region = region,
                                     .window = -1, .cls = class_of(kind),
                                     .runtime = (uint8_t)runtime_region(c, kind, id)});
}

/* An idle worker thread (alive, nothing open) is in <OMP-idle>. */
static void settle(tr_host *c, uint64_t t)
{
    if (c->omp.worker && c->omp.alive && c->depth == 0)
        open_omp(c, OK_IDLE, 0, region_state(TR_S_IDLE), t);
}

/* An end whose region is not open: the late end of an implicit task closed
 * at its team's end (expected), or one whose begin was never seen. */
static void unmatched_end(tr_host *c, uint64_t parallel_id)
{
    if (!tr_u64map_get(&c->omp.clipped, parallel_id, 0) && c->emits)
        c->p->m->stray_ends++;
}

/* A worker whose team has ended leaves its implicit task at the team's end
 * (see the top of this file), and what is open in it: the join barrier's
 * wait is complete then; anything else never ended. */
static int is_complete_at_team_end(const tr_open_region *o)
{
    return o->type == TR_REC_OMP && o->kind == OK_WAIT;
}

static void close_ended_teams(tr_host *c, uint64_t now)
{
    for (;;) {
        size_t i = c->depth;
        while (i > 0 && !(c->stack[i - 1].type == TR_REC_OMP && c->stack[i - 1].kind == OK_PARALLEL))
            i--;
        if (i == 0)
            return;
        uint64_t id = c->stack[i - 1].id;
        tr_omp_parallel *p = parallel(c, id);
        if (!p || p->stream == c->stream || p->team_end == UINT64_MAX || p->team_end >= now)
            return;
        uint64_t t = p->team_end > c->last_time ? p->team_end : c->last_time;
        /* Nothing is written inside a gap: a team that ended in the loss
         * the run ended with ends where that gap does, at the end. */
        if (c->final_gap && t >= c->final_gap)
            t = c->p->m->t_max;
        while (c->depth > i)
            tr_host_pop(c, t, !is_complete_at_team_end(top(c)));
        tr_host_pop(c, t, 0);
        write_metrics(c, t, c->omp.work, c->omp.wait);
        tr_u64map_put(&c->omp.clipped, id, 1);
        settle(c, t);
    }
}

static enum tr_omp_construct work_construct(int32_t kind)
{
    switch (kind) {
    case ompt_work_loop:
    case ompt_work_loop_static:
    case ompt_work_loop_dynamic:
    case ompt_work_loop_guided:
    case ompt_work_loop_other: return TR_C_LOOP;
    case ompt_work_sections: return TR_C_SECTIONS;
    case ompt_work_single_executor:
    case ompt_work_single_other: return TR_C_SINGLE;
    case ompt_work_workshare: return TR_C_WORKSHARE;
    case ompt_work_distribute: return TR_C_DISTRIBUTE;
    case ompt_work_taskloop: return TR_C_TASKLOOP;
    case ompt_work_scope: return TR_C_SCOPE;
    default: return TR_C_WORK;
    }
}

static enum tr_omp_state sync_wait_state(int32_t kind)
{
    switch (kind) {
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_explicit: return TR_S_EXPLICIT_BARRIER;
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_implementation:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implicit_parallel:
    case ompt_sync_region_barrier_teams: return TR_S_IMPLICIT_BARRIER;
    case ompt_sync_region_taskwait: return TR_S_TASKWAIT;
    case ompt_sync_region_taskgroup: return TR_S_TASKGROUP;
    default: return TR_S_NONE;
    }
}

static enum tr_omp_state mutex_wait_state(int32_t kind)
{
    switch (kind) {
    case ompt_mutex_critical: return TR_S_CRITICAL_WAIT;
    case ompt_mutex_ordered: return TR_S_ORDERED_WAIT;
    case ompt_mutex_atomic: return TR_S_ATOMIC_WAIT;
    default: return TR_S_LOCK_WAIT;
    }
}

/* A begin opens (kind, id) as @region with codeptr_ra; an end closes it.
 * A state the runtime reports without codeptr_ra (LLVM: a worker's join
 * barrier, every reduction) is the parallel construct's @fallback. */
static void begin_end(tr_host *c, const tr_record *r, enum omp_kind kind, uint64_t id, int construct_or_state,
                      int is_construct, uint64_t fallback)
{
    if (r->phase == TR_PHASE_BEGIN) {
        prepare(c, r->time);
        uint64_t codeptr = r->u[0] ? r->u[0] : fallback;
        uint64_t region = is_construct ? region_construct(construct_or_state, r->u[0]) : region_state(construct_or_state);
        if (codeptr)
            attr(c, TR_ATTR_CODEPTR, codeptr);
        open_omp(c, kind, id, region, r->time);
    } else if (r->phase == TR_PHASE_END && !tr_host_close(c, TR_REC_OMP, (uint8_t)kind, id, r->time)) {
        unmatched_end(c, r->id);
    }
}

static void user_parallel(tr_host *c, const tr_record *r)
{
    if (r->phase == TR_PHASE_BEGIN) {
        prepare(c, r->time);
        thread_fork(c, r);
        if (r->u[0])
            attr(c, TR_ATTR_CODEPTR, r->u[0]);
        open_omp(c, OK_OVERHEAD, r->id, region_state(TR_S_OVERHEAD), r->time);
        return;
    }
    if (tr_host_close(c, TR_REC_OMP, OK_PARALLEL, r->id, r->time)) /* its implicit task's end was lost */
        write_metrics(c, r->time, c->omp.work, c->omp.wait);
    else if (!tr_host_close(c, TR_REC_OMP, OK_OVERHEAD, r->id, r->time))
        unmatched_end(c, r->id);
    join(c, r->time);
}

static void user_implicit_task(tr_host *c, const tr_record *r)
{
    /* The program's own initial task is not a region; a host league's
     * (a teams construct, a target teams region run by the host plugin) is
     * its team's `teams` region, ended like a parallel region's. */
    if ((r->dev & ompt_task_initial) && !r->id)
        return;
    tr_omp_parallel *p = parallel(c, r->id);
    if (r->phase == TR_PHASE_BEGIN) {
        if (top_is(c, OK_OVERHEAD, r->id))
            tr_host_pop(c, r->time, 0); /* the fork is done */
        prepare(c, r->time);
        uint64_t region = region_construct((r->dev & ompt_task_initial) ? TR_C_TEAMS : TR_C_PARALLEL, p ? p->codeptr : 0);
        if (p && p->codeptr)
            attr(c, TR_ATTR_CODEPTR, p->codeptr);
        attr(c, TR_ATTR_OMP_ID, r->id);
        attr(c, TR_ATTR_OMP_ARG, r->u[1]);
        attr(c, TR_ATTR_OMP_ARG2, r->u[2]);
        open_omp(c, OK_PARALLEL, r->id, region, r->time);
        /* no record of its team survived on the encountering thread */
        c->stack[c->depth - 1].guessed = !p && !(r->dev & ompt_task_initial);
        return;
    }
    if (!tr_host_close(c, TR_REC_OMP, OK_PARALLEL, r->id, r->time)) {
        unmatched_end(c, r->id);
        return;
    }
    write_metrics(c, r->time, c->omp.work, c->omp.wait);
    if (p && p->stream == c->stream) {
        /* The encountering thread joins the team until its parallel end. */
        prepare(c, r->time);
        if (p->codeptr)
            attr(c, TR_ATTR_CODEPTR, p->codeptr);
        open_omp(c, OK_OVERHEAD, r->id, region_state(TR_S_OVERHEAD), r->time);
    }
}

/* A construct or state of parallel region @r->id begins on a thread whose
 * implicit task of it is not open: drop mode lost that begin (a gap the
 * trace marks). The thread is in the team from here, so its `parallel`
 * region begins here (without team size and number, which were lost);
 * otherwise the construct would nest in the fork's overhead or in idle. A
 * team that already ended for this thread (its late ends) is not reopened.
 * A team none of whose records survived on its encountering thread (no
 * codeptr, no end known) is guessed: its region ends at the implicit task's
 * end if that comes, else where this thread's next gap begins
 * (close_unknown_ends). */
static void repair_lost_team(tr_host *c, const tr_record *r)
{
    if (!r->id || r->phase != TR_PHASE_BEGIN || tr_host_find(c, TR_REC_OMP, OK_PARALLEL, r->id) ||
        tr_u64map_get(&c->omp.clipped, r->id, 0))
        return;
    tr_omp_parallel *p = parallel(c, r->id);
    if (p && p->team_end != UINT64_MAX && p->team_end <= r->time)
        return;
    uint64_t codeptr = p ? p->codeptr : 0;
    if (top_is(c, OK_OVERHEAD, r->id))
        tr_host_pop(c, r->time, 0);
    prepare(c, r->time);
    if (codeptr)
        attr(c, TR_ATTR_CODEPTR, codeptr);
    attr(c, TR_ATTR_OMP_ID, r->id);
    open_omp(c, OK_PARALLEL, r->id, region_construct(TR_C_PARALLEL, codeptr), r->time);
    c->stack[c->depth - 1].guessed = !p;
}

/* Whether no record says where open region @o ends: a `parallel` region
 * whose team's end was lost (or all of whose team's records on the
 * encountering thread were: guessed), the fork and join overhead of a
 * parallel region whose end was lost. */
typedef struct team_ends {
    uint64_t id;
    tr_omp_parallel *p;
} team_ends;

/* On the encountering thread's stream: its implicit task's end (the team's
 * end, unless known), then the parallel end, the last of its records. */
static int team_end_ahead(const tr_record *r, void *ctx)
{
    team_ends *te = ctx;
    if (r->type != TR_REC_OMP || r->phase != TR_PHASE_END || r->id != te->id)
        return 0;
    if (r->sub == TR_OMP_IMPLICIT_TASK && te->p->team_end == UINT64_MAX)
        te->p->team_end = r->time;
    if (r->sub != TR_OMP_PARALLEL)
        return 0;
    te->p->end = r->time;
    if (te->p->team_end == UINT64_MAX)
        te->p->team_end = r->time;
    return 1;
}

/* Whether a record, later in the run, ends @p's team or fork: the omp
 * model knows what the pass has read; what lies ahead on the encountering
 * thread's stream is looked for once (a gap met a team whose end has not
 * come yet; rare: drop mode). What it finds is what the model would learn
 * there, earlier: the same times. */
static void look_ahead(tr_host *c, tr_omp_parallel *p, uint64_t id)
{
    if (p->looked_ahead || p->stream == UINT32_MAX || (p->team_end != UINT64_MAX && p->end != UINT64_MAX))
        return;
    p->looked_ahead = 1;
    team_ends te = {id, p};
    tr_record found;
    tr_pass_find_ahead(c->p, p->stream, team_end_ahead, 0, &te, &found);
}

static int end_unknown(tr_host *c, const tr_open_region *o)
{
    if (o->type != TR_REC_OMP || (o->kind != OK_PARALLEL && o->kind != OK_OVERHEAD))
        return 0;
    if (o->guessed)
        return 1;
    tr_omp_parallel *p = parallel(c, o->id);
    if (!p)
        return 0; /* a host league's `teams` */
    look_ahead(c, p, o->id);
    return (o->kind == OK_PARALLEL ? p->team_end : p->end) == UINT64_MAX;
}

/* A gap begins at @t. A team or fork whose end no record gives may have
 * ended in it: it ends where the gap begins, with what is open inside it
 * (records of that team after the gap repair its region again). Else it
 * would stay open to the end of the run, and every later region nest in it. */
static void close_unknown_ends(tr_host *c, uint64_t t)
{
    if (t < c->last_time)
        t = c->last_time;
    size_t i = 0;
    while (i < c->depth && !end_unknown(c, &c->stack[i]))
        i++;
    if (i == c->depth)
        return;
    int team = c->stack[i].kind == OK_PARALLEL;
    while (c->depth > i + 1)
        tr_host_pop(c, t, !is_complete_at_team_end(top(c)));
    tr_host_pop(c, t, 0);
    if (team)
        write_metrics(c, t, c->omp.work, c->omp.wait);
}

static void user_task_create(tr_host *c, const tr_record *r)
{
    if (!c->emits)
        return;
    uint64_t region = region_state(TR_S_TASK_CREATE);
    attr(c, TR_ATTR_TASK_ID, r->id);
    if (r->u[0])
        attr(c, TR_ATTR_CODEPTR, r->u[0]);
    tr_host_enter(c, r->time, region);
    leave_plain(c, r->time, region);
}

/* prior (id) -> next (u0). A task that completes (or is cancelled,
 * detached) closes; one that yields or switches stays open, suspended, below
 * the task that now runs on this thread. */
static void user_task_schedule(tr_host *c, const tr_record *r)
{
    if (r->dev != ompt_task_yield && r->dev != ompt_task_switch && r->id)
        tr_host_close(c, TR_REC_OMP, OK_TASK, r->id, r->time);
    uint64_t next = r->u[0], codeptr;
    if (!tr_omp_model_task(c->p->omp, next, &codeptr) || tr_host_find(c, TR_REC_OMP, OK_TASK, next))
        return;
    prepare(c, r->time);
    uint64_t region = region_construct(TR_C_TASK, codeptr);
    attr(c, TR_ATTR_TASK_ID, next);
    if (codeptr)
        attr(c, TR_ATTR_CODEPTR, codeptr);
    open_omp(c, OK_TASK, next, region, r->time);
}

static uint64_t parallel_codeptr(const tr_host *c, uint64_t parallel_id)
{
    tr_omp_parallel *p = parallel(c, parallel_id);
    return p ? p->codeptr : 0;
}

static void user_record(tr_host *c, const tr_record *r)
{
    enum tr_omp_state s;
    uint64_t pc = r->phase == TR_PHASE_BEGIN && !r->u[0] ? parallel_codeptr(c, r->id) : 0;
    /* these carry the parallel id (a mutex's id is its wait id) */
    if (r->sub == TR_OMP_WORK || r->sub == TR_OMP_MASKED || r->sub == TR_OMP_SYNC_WAIT ||
        r->sub == TR_OMP_REDUCTION)
        repair_lost_team(c, r);
    switch (r->sub) {
    case TR_OMP_THREAD:
        if (r->phase == TR_PHASE_BEGIN) {
            c->omp.worker = r->dev == ompt_thread_worker;
            c->omp.alive = 1;
        } else {
            if (top_is(c, OK_IDLE, 0))
                tr_host_pop(c, r->time, 0);
            c->omp.alive = 0;
        }
        break;
    case TR_OMP_PARALLEL: user_parallel(c, r); break;
    case TR_OMP_IMPLICIT_TASK: user_implicit_task(c, r); break;
    case TR_OMP_WORK: begin_end(c, r, OK_WORK, r->id, work_construct(r->dev), 1, pc); break;
    case TR_OMP_MASKED: begin_end(c, r, OK_MASKED, r->id, TR_C_MASKED, 1, pc); break;
    case TR_OMP_SYNC: break; /* the construct; its wait is what the thread spends */
    case TR_OMP_SYNC_WAIT:
        if ((s = sync_wait_state(r->dev)) != TR_S_NONE)
            begin_end(c, r, OK_WAIT, r->id, s, 0, pc);
        break;
    case TR_OMP_REDUCTION: begin_end(c, r, OK_REDUCTION, r->id, TR_S_REDUCTION, 0, pc); break;
    case TR_OMP_MUTEX_WAIT: begin_end(c, r, OK_MUTEX_WAIT, r->id, mutex_wait_state(r->dev), 0, 0); break;
    case TR_OMP_MUTEX_HELD:
        /* Critical and ordered sections are constructs; a lock held is not. */
        if (r->dev == ompt_mutex_critical)
            begin_end(c, r, OK_HELD, r->id, TR_C_CRITICAL, 1, 0);
        else if (r->dev == ompt_mutex_ordered)
            begin_end(c, r, OK_HELD, r->id, TR_C_ORDERED, 1, 0);
        break;
    case TR_OMP_TASK_CREATE: user_task_create(c, r); break;
    case TR_OMP_TASK_SCHEDULE: user_task_schedule(c, r); break;
    default: break;
    }
}

static void user_before(tr_host *c, const tr_record *r)
{
    /* A loss record (drop mode) writes the measurement off at its first
     * dropped event, earlier than the record: teams that ended in the gap
     * end after it, at the measurement's resumption. */
    close_ended_teams(c, r->type == TR_REC_LOSS ? r->u[1] : r->time);
    if (r->type == TR_REC_LOSS)
        close_unknown_ends(c, r->u[1]);
    /* A region of another kind (a target construct on a worker) ends idle. */
    if (r->type != TR_REC_OMP && r->phase == TR_PHASE_BEGIN && top_is(c, OK_IDLE, 0))
        tr_host_pop(c, r->time, 0);
}

static void user_after(tr_host *c, const tr_record *r)
{
    if (r->time > c->last_time)
        c->last_time = r->time;
    settle(c, r->time);
}

static void user_finish(tr_host *c)
{
    close_ended_teams(c, UINT64_MAX);
    /* Idle until the end is no end missing: it needs none. */
    if (top_is(c, OK_IDLE, 0))
        tr_host_pop(c, c->p->m->t_max, 0);
}

/* ---- machine mode ------------------------------------------------------ */

/* The record's own fields: codeptr_ra (0 where the callback has none or
 * the runtime gave none), the next task of a task_schedule, and dev, id,
 * u1, u2 as they are. */
static void machine_attrs(tr_host *c, const tr_record *r)
{
    int has_codeptr = r->sub != TR_OMP_THREAD && r->sub != TR_OMP_IMPLICIT_TASK && r->sub != TR_OMP_TASK_SCHEDULE;
    attr(c, TR_ATTR_CODEPTR, has_codeptr ? r->u[0] : 0);
    if (r->sub == TR_OMP_TASK_SCHEDULE)
        attr(c, TR_ATTR_TASK_ID, r->u[0]);
    attr(c, TR_ATTR_OMP_KIND, (uint64_t)(int64_t)r->dev);
    attr(c, TR_ATTR_OMP_ID, r->id);
    attr(c, TR_ATTR_OMP_ARG, r->u[1]);
    attr(c, TR_ATTR_OMP_ARG2, r->u[2]);
}

static void machine_record(tr_host *c, const tr_record *r)
{
    uint8_t kind = (uint8_t)(OK_MACHINE + (r->sub & 0x7f));
    uint64_t region = tr_region_key_make(KEY_OMP_MACHINE, r->sub);
    if (r->phase == TR_PHASE_POINT) {
        machine_attrs(c, r);
        tr_host_enter(c, r->time, region);
        leave_plain(c, r->time, region);
        return;
    }
    if (r->phase == TR_PHASE_BEGIN) {
        machine_attrs(c, r);
        tr_host_enter(c, r->time, region);
        tr_host_push(c, (tr_open_region){.type = TR_REC_OMP, .kind = kind, .id = r->id, .region = region,
                                         .window = -1, .runtime = (uint8_t)runtime_region(c, kind, r->id)});
        if (r->sub == TR_OMP_PARALLEL)
            thread_fork(c, r);
        return;
    }
    size_t i = tr_host_find(c, TR_REC_OMP, kind, r->id);
    if (!i) {
        c->p->m->stray_ends++;
        return;
    }
    while (c->depth > i)
        tr_host_pop(c, r->time, 1);
    if (r->sub == TR_OMP_PARALLEL)
        join(c, r->time);
    machine_attrs(c, r);
    tr_host_pop(c, r->time, 0);
    if (r->sub == TR_OMP_IMPLICIT_TASK && !((r->dev & ompt_task_initial) && !r->id) && c->omp.dry)
        write_metrics(c, r->time, c->omp.dry->omp.work, c->omp.dry->omp.wait);
}

/* ---- per location ------------------------------------------------------ */

static int machine(const tr_host *c) { return c->p->m->omp_mode == TR_OMP_MACHINE; }

int tr_omp_host_init(tr_host *c)
{
    if (!machine(c) || !c->p->m->has_omp[c->stream])
        return 0;
    c->omp.dry = calloc(1, sizeof *c->omp.dry);
    if (!c->omp.dry)
        return -1;
    *c->omp.dry = (tr_host){.p = c->p, .stream = c->stream};
    return 0;
}

void tr_omp_host_before(tr_host *c, const tr_record *r)
{
    /* Without an OpenMP region open there is nothing to close. */
    if (!machine(c)) {
        if (c->omp_open)
            user_before(c, r);
    } else if (c->omp.dry && r->type == TR_REC_OMP) {
        user_before(c->omp.dry, r);
    }
}

void tr_omp_host_record(tr_host *c, const tr_record *r)
{
    if (!machine(c)) {
        user_record(c, r);
        return;
    }
    if (c->omp.dry)
        user_record(c->omp.dry, r); /* first: its totals include this record */
    machine_record(c, r);
}

void tr_omp_host_after(tr_host *c, const tr_record *r)
{
    if (!machine(c))
        user_after(c, r);
    else if (c->omp.dry && r->type == TR_REC_OMP)
        user_after(c->omp.dry, r);
}

void tr_omp_host_finish(tr_host *c)
{
    if (!machine(c)) {
        user_finish(c);
    } else if (c->omp.dry) {
        tr_host *d = c->omp.dry;
        user_finish(d);
        while (d->depth)
            tr_host_pop(d, c->p->m->t_max, 1);
    }
}

void tr_omp_host_final_metrics(tr_host *c)
{
    const tr_host *src = machine(c) ? c->omp.dry : c;
    if (!src)
        return;
    write_metrics(c, c->p->m->t_max, src->omp.work, src->omp.wait);
}

void tr_omp_host_free(tr_host *c)
{
    if (c->omp.dry) {
        tr_omp_host_free(c->omp.dry);
        free(c->omp.dry->stack);
        free(c->omp.dry);
        c->omp.dry = 0;
    }
    tr_u64map_free(&c->omp.clipped);
}

