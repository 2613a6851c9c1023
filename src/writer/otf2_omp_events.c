/* otf2_omp_events.c - host OpenMP states (TR_REC_OMP) on a host thread's
 * location, in the journal's TRACER_MODE. docs/trace-model.md, "Host
 * OpenMP states", is the contract.
 *
 * User mode rebuilds the program's structure on the region stack the other
 * host events use (host_events.h): a worker's implicit task is its
 * `parallel` region, work constructs and critical sections nest inside it,
 * and the runtime's states are artificial regions (<OMP-implicit_barrier>,
 * <OMP-lock_wait>, ...). Two repairs make LLVM's callbacks read like the
 * program:
 * - A worker's join barrier, and its implicit task, end in the runtime only
 *   when the worker is woken for the next parallel region (or at shutdown).
 *   The team really ended when the encountering thread's implicit task did
 *   (omp_model.c): at that time the worker's implicit task is closed, and
 *   <OMP-idle> begins; the late ends are then dropped.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "writer/host_events.h"

/* Metric classes and members; 0 is device memory, 1 MPI_T drops. */
enum { OMP_WORK_METRIC = 2, OMP_WAIT_METRIC = 3 };

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

/* The constructs, named after their source location (KEY_OMP_CONSTRUCT). */
enum construct {
    C_PARALLEL = 1, C_LOOP, C_SECTIONS, C_SINGLE, C_WORKSHARE, C_DISTRIBUTE, C_TASKLOOP, C_SCOPE, C_WORK,
    C_MASKED, C_CRITICAL, C_ORDERED, C_TASK, C_TEAMS
};

static const struct {
    const char *name, *description;
    OTF2_RegionRole role;
} constructs[] = {
    [C_PARALLEL] = {TRV_REGION_PARALLEL, "OpenMP parallel region (a team thread's implicit task)", OTF2_REGION_ROLE_PARALLEL},
    [C_LOOP] = {"loop", "OpenMP worksharing loop", OTF2_REGION_ROLE_LOOP},
    [C_SECTIONS] = {"sections", "OpenMP sections", OTF2_REGION_ROLE_SECTIONS},
    [C_SINGLE] = {"single", "OpenMP single", OTF2_REGION_ROLE_SINGLE},
    [C_WORKSHARE] = {"workshare", "OpenMP workshare", OTF2_REGION_ROLE_WORKSHARE},
    [C_DISTRIBUTE] = {"distribute", "OpenMP distribute", OTF2_REGION_ROLE_LOOP},
    [C_TASKLOOP] = {"taskloop", "OpenMP taskloop", OTF2_REGION_ROLE_LOOP},
    [C_SCOPE] = {"scope", "OpenMP scope", OTF2_REGION_ROLE_CODE},
    [C_WORK] = {"work", "OpenMP work construct of a kind tracer does not know", OTF2_REGION_ROLE_CODE},
    [C_MASKED] = {"masked", "OpenMP masked (master)", OTF2_REGION_ROLE_MASTER},
    [C_CRITICAL] = {"critical", "OpenMP critical section, held", OTF2_REGION_ROLE_CRITICAL},
    [C_ORDERED] = {"ordered", "OpenMP ordered section, held", OTF2_REGION_ROLE_ORDERED},
    [C_TASK] = {"task", "OpenMP explicit task, executing", OTF2_REGION_ROLE_TASK},
    [C_TEAMS] = {TRV_REGION_TEAMS, "OpenMP teams region on the host (a league's initial task)", OTF2_REGION_ROLE_PARALLEL},
};

/* The runtime's states (KEY_OMP_STATE). */
enum state {
    S_NONE, S_IMPLICIT_BARRIER, S_EXPLICIT_BARRIER, S_TASKWAIT, S_TASKGROUP, S_REDUCTION, S_LOCK_WAIT,
    S_CRITICAL_WAIT, S_ORDERED_WAIT, S_ATOMIC_WAIT, S_OVERHEAD, S_IDLE, S_TASK_CREATE
};

static const struct {
    const char *name, *description;
    OTF2_RegionRole role;
} states[] = {
    [S_IMPLICIT_BARRIER] = {TRV_STATE_IMPLICIT_BARRIER, "waiting in an implicit barrier",
                            OTF2_REGION_ROLE_IMPLICIT_BARRIER},
    [S_EXPLICIT_BARRIER] = {TRV_STATE_EXPLICIT_BARRIER, "waiting in an explicit barrier", OTF2_REGION_ROLE_BARRIER},
    [S_TASKWAIT] = {TRV_STATE_TASKWAIT, "waiting in a taskwait", OTF2_REGION_ROLE_TASK_WAIT},
    [S_TASKGROUP] = {TRV_STATE_TASKGROUP, "waiting at the end of a taskgroup", OTF2_REGION_ROLE_TASK_WAIT},
    [S_REDUCTION] = {TRV_STATE_REDUCTION, "combining a reduction", OTF2_REGION_ROLE_ARTIFICIAL},
    [S_LOCK_WAIT] = {TRV_STATE_LOCK_WAIT, "waiting for an OpenMP lock", OTF2_REGION_ROLE_ARTIFICIAL},
    [S_CRITICAL_WAIT] = {TRV_STATE_CRITICAL_WAIT, "waiting to enter a critical section",
                         OTF2_REGION_ROLE_CRITICAL},
    [S_ORDERED_WAIT] = {TRV_STATE_ORDERED_WAIT, "waiting to enter an ordered section",
                        OTF2_REGION_ROLE_ORDERED},
    [S_ATOMIC_WAIT] = {TRV_STATE_ATOMIC_WAIT, "waiting for an atomic", OTF2_REGION_ROLE_ATOMIC},
    [S_OVERHEAD] = {TRV_STATE_OVERHEAD, "forking or joining a team", OTF2_REGION_ROLE_ARTIFICIAL},
    [S_IDLE] = {TRV_STATE_IDLE, "a worker thread between implicit tasks", OTF2_REGION_ROLE_ARTIFICIAL},
    [S_TASK_CREATE] = {"task create", "an explicit task created", OTF2_REGION_ROLE_TASK_CREATE},
};

static const char *const machine_names[] = {
    [TR_OMP_THREAD] = "ompt thread",
    [TR_OMP_PARALLEL] = "ompt parallel",
    [TR_OMP_IMPLICIT_TASK] = "ompt implicit_task",
    [TR_OMP_WORK] = "ompt work",
    [TR_OMP_MASKED] = "ompt masked",
    [TR_OMP_SYNC] = "ompt sync_region",
    [TR_OMP_SYNC_WAIT] = "ompt sync_region_wait",
    [TR_OMP_REDUCTION] = "ompt reduction",
    [TR_OMP_MUTEX_WAIT] = "ompt mutex_wait",
    [TR_OMP_MUTEX_HELD] = "ompt mutex_held",
    [TR_OMP_TASK_CREATE] = "ompt task_create",
    [TR_OMP_TASK_SCHEDULE] = "ompt task_schedule",
};

static const char *basename_of(const char *path)
{
    const char *s = path ? strrchr(path, '/') : 0;
    return s ? s + 1 : path;
}

static uint32_t region_construct(tr_host_ctx *c, enum construct k, uint64_t codeptr)
{
    tr_writer *w = c->w;
    if (!c->ew)
        return 0; /* a pass that writes nothing defines nothing */
    uint64_t key = (uint64_t)KEY_OMP_CONSTRUCT << 58 | ((codeptr << 5 | k) & ((1ull << 58) - 1));
    uint64_t v;
    if (tr_u64map_get(&w->region_keys, key, &v))
        return (uint32_t)v;
    /* A host construct's codeptr: its function, file and line (the kernel
     * fields of a symbol belong to target constructs). */
    const tr_jsymbol *sym = codeptr ? tr_journal_find_symbol(w->m.jd, codeptr) : 0;
    const char *canonical = constructs[k].name, *file = sym ? sym->file : 0;
    int line = sym ? sym->line : 0;
    char name[512];
    if (file && line)
        snprintf(name, sizeof name, "%s (%s:%d)", canonical, basename_of(file), line);
    else if (sym && sym->function)
        snprintf(name, sizeof name, "%s (%s)", canonical, sym->function);
    else
        snprintf(name, sizeof name, "%s", canonical);
    tr_region_def def = {.line = (uint32_t)line, .role = constructs[k].role, .paradigm = OTF2_PARADIGM_OPENMP};
    def.name = tr_defs_string(w, name);
    def.canonical = tr_defs_string(w, canonical);
    def.description = tr_defs_string(w, constructs[k].description);
    def.file = tr_defs_string(w, file ? file : "");
    return tr_defs_region_keyed(w, key, &def);
}

static uint32_t region_state(tr_host_ctx *c, enum state s)
{
    if (!c->ew)
        return 0;
    return tr_defs_region(c->w, KEY_OMP_STATE, s, states[s].name, states[s].name, states[s].description,
                          states[s].role, OTF2_PARADIGM_OPENMP);
}

static uint32_t region_machine(tr_host_ctx *c, uint16_t sub)
{
    const char *name = sub < sizeof machine_names / sizeof *machine_names && machine_names[sub]
                           ? machine_names[sub]
                           : "ompt (unknown callback)";
    return tr_defs_region(c->w, KEY_OMP_MACHINE, sub, name, name, "an OMPT host callback, as the runtime reported it",
                          OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_OPENMP);
}

static void attr(tr_host_ctx *c, enum tr_attr a, uint64_t v)
{
    if (c->ew)
        tr_defs_attr(c->al, a, v);
}

/* ---- work and wait ---------------------------------------------------- */

static int is_wait(const tr_open_region *o)
{
    return o->type == TR_REC_OMP && (o->kind == OK_WAIT || o->kind == OK_MUTEX_WAIT);
}

void tr_omp_account(tr_host_ctx *c, uint64_t t)
{
    tr_omp_thread *th = &c->omp;
    if (t <= th->acc_time)
        return;
    for (size_t i = c->depth; i > 0; i--) {
        const tr_open_region *o = &c->stack[i - 1];
        if (is_wait(o)) {
            th->wait += t - th->acc_time;
            break;
        }
        if (o->type == TR_REC_OMP && (o->kind == OK_PARALLEL || o->kind == OK_TASK)) {
            th->work += t - th->acc_time;
            break;
        }
    }
    th->acc_time = t;
}

/* Both running totals, as of @t (counted up to there). */
static void write_metrics(tr_host_ctx *c, uint64_t t, uint64_t work, uint64_t wait)
{
    if (!c->ew)
        return;
    OTF2_Type type = OTF2_TYPE_UINT64;
    OTF2_MetricValue v = {.unsigned_int = work};
    OTF2_EvtWriter_Metric(c->ew, 0, t, OMP_WORK_METRIC, 1, &type, &v);
    v.unsigned_int = wait;
    OTF2_EvtWriter_Metric(c->ew, 0, t, OMP_WAIT_METRIC, 1, &type, &v);
}

/* ---- user mode --------------------------------------------------------- */

static const tr_open_region *top(const tr_host_ctx *c) { return c->depth ? &c->stack[c->depth - 1] : 0; }

static int top_is(const tr_host_ctx *c, uint8_t kind, uint64_t id)
{
    const tr_open_region *o = top(c);
    return o && o->type == TR_REC_OMP && o->kind == kind && o->id == id;
}

/* A region opens: <OMP-idle> ends first, and what was open is counted. Call
 * it before adding the Enter's attributes (the idle's Leave would take them). */
static void prepare(tr_host_ctx *c, uint64_t t)
{
    if (top_is(c, OK_IDLE, 0))
        tr_host_pop(c, t, 0);
    tr_omp_account(c, t);
}

static void open_omp(tr_host_ctx *c, enum omp_kind kind, uint64_t id, uint32_t region, uint64_t t)
{
    if (c->ew)
        OTF2_EvtWriter_Enter(c->ew, c->al, t, region);
    tr_host_push(c, (tr_open_region){.type = TR_REC_OMP, .kind = (uint8_t)kind, .id = id, .region = region,
                                     .rma_win = -1});
}

/* An idle worker thread (alive, nothing open) is in <OMP-idle>. */
static void settle(tr_host_ctx *c, uint64_t t)
{
    if (c->omp.worker && c->omp.alive && c->depth == 0)
        open_omp(c, OK_IDLE, 0, region_state(c, S_IDLE), t);
}

/* An end whose region is not open: the late end of an implicit task closed
 * at its team's end (expected), or one whose begin was never seen. */
static void unmatched_end(tr_host_ctx *c, uint64_t parallel_id)
{
    if (!tr_u64map_get(&c->omp.clipped, parallel_id, 0) && c->ew)
        c->w->m.stray_ends++;
}

/* A worker whose team has ended leaves its implicit task at the team's end
 * (see the top of this file), and what is open in it: the join barrier's
 * wait is complete then; anything else never ended. */
static int is_complete_at_team_end(const tr_open_region *o)
{
    return o->type == TR_REC_OMP && o->kind == OK_WAIT;
}

static void close_ended_teams(tr_host_ctx *c, uint64_t now)
{
    for (;;) {
        size_t i = c->depth;
        while (i > 0 && !(c->stack[i - 1].type == TR_REC_OMP && c->stack[i - 1].kind == OK_PARALLEL))
            i--;
        if (i == 0)
            return;
        uint64_t id = c->stack[i - 1].id;
        const tr_omp_parallel *p = tr_omp_model_parallel(&c->w->m.omp, id);
        if (!p || p->stream == c->stream || p->team_end == UINT64_MAX || p->team_end >= now)
            return;
        uint64_t t = p->team_end > c->last_time ? p->team_end : c->last_time;
        /* Nothing is written inside a gap: a team that ended in the loss
         * the run ended with ends where that gap does, at the end. */
        if (c->final_gap && t >= c->final_gap)
            t = c->w->m.t_max;
        while (c->depth > i)
            tr_host_pop(c, t, !is_complete_at_team_end(top(c)));
        tr_host_pop(c, t, 0);
        write_metrics(c, t, c->omp.work, c->omp.wait);
        tr_u64map_put(&c->omp.clipped, id, 1);
        settle(c, t);
    }
}

static enum construct work_construct(int32_t kind)
{
    switch (kind) {
    case ompt_work_loop:
    case ompt_work_loop_static:
    case ompt_work_loop_dynamic:
    case ompt_work_loop_guided:
    case ompt_work_loop_other: return C_LOOP;
    case ompt_work_sections: return C_SECTIONS;
    case ompt_work_single_executor:
    case ompt_work_single_other: return C_SINGLE;
    case ompt_work_workshare: return C_WORKSHARE;
    case ompt_work_distribute: return C_DISTRIBUTE;
    case ompt_work_taskloop: return C_TASKLOOP;
    case ompt_work_scope: return C_SCOPE;
    default: return C_WORK;
    }
}

static enum state sync_wait_state(int32_t kind)
{
    switch (kind) {
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_explicit: return S_EXPLICIT_BARRIER;
    case ompt_sync_region_barrier_implicit:
    case ompt_sync_region_barrier_implementation:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implicit_parallel:
    case ompt_sync_region_barrier_teams: return S_IMPLICIT_BARRIER;
    case ompt_sync_region_taskwait: return S_TASKWAIT;
    case ompt_sync_region_taskgroup: return S_TASKGROUP;
    default: return S_NONE;
    }
}

static enum state mutex_wait_state(int32_t kind)
{
    switch (kind) {
    case ompt_mutex_critical: return S_CRITICAL_WAIT;
    case ompt_mutex_ordered: return S_ORDERED_WAIT;
    case ompt_mutex_atomic: return S_ATOMIC_WAIT;
    default: return S_LOCK_WAIT;
    }
}

/* A begin opens (kind, id) as @region with codeptr_ra; an end closes it.
 * A state the runtime reports without codeptr_ra (LLVM: a worker's join
 * barrier, every reduction) is the parallel construct's @fallback. */
static void begin_end(tr_host_ctx *c, const tr_record *r, enum omp_kind kind, uint64_t id, int construct_or_state,
                      int is_construct, uint64_t fallback)
{
    if (r->phase == TR_PHASE_BEGIN) {
        prepare(c, r->time);
        uint64_t codeptr = r->u[0] ? r->u[0] : fallback;
        uint32_t region = is_construct ? region_construct(c, (enum construct)construct_or_state, r->u[0])
                                       : region_state(c, (enum state)construct_or_state);
        if (codeptr)
            attr(c, TR_ATTR_CODEPTR, codeptr);
        open_omp(c, kind, id, region, r->time);
    } else if (r->phase == TR_PHASE_END && !tr_host_close(c, TR_REC_OMP, (uint8_t)kind, id, r->time)) {
        unmatched_end(c, r->id);
    }
}

static void user_parallel(tr_host_ctx *c, const tr_record *r)
{
    if (r->phase == TR_PHASE_BEGIN) {
        prepare(c, r->time);
        if (c->ew)
            OTF2_EvtWriter_ThreadFork(c->ew, 0, r->time, OTF2_PARADIGM_OPENMP, (uint32_t)r->u[1]);
        if (r->u[0])
            attr(c, TR_ATTR_CODEPTR, r->u[0]);
        open_omp(c, OK_OVERHEAD, r->id, region_state(c, S_OVERHEAD), r->time);
        return;
    }
    if (tr_host_close(c, TR_REC_OMP, OK_PARALLEL, r->id, r->time)) /* its implicit task's end was lost */
        write_metrics(c, r->time, c->omp.work, c->omp.wait);
    else if (!tr_host_close(c, TR_REC_OMP, OK_OVERHEAD, r->id, r->time))
        unmatched_end(c, r->id);
    if (c->ew)
        OTF2_EvtWriter_ThreadJoin(c->ew, 0, r->time, OTF2_PARADIGM_OPENMP);
}

static void user_implicit_task(tr_host_ctx *c, const tr_record *r)
{
    /* The program's own initial task is not a region; a host league's
     * (a teams construct, a target teams region run by the host plugin) is
     * its team's `teams` region, ended like a parallel region's. */
    if ((r->dev & ompt_task_initial) && !r->id)
        return;
    const tr_omp_parallel *p = tr_omp_model_parallel(&c->w->m.omp, r->id);
    if (r->phase == TR_PHASE_BEGIN) {
        if (top_is(c, OK_OVERHEAD, r->id))
            tr_host_pop(c, r->time, 0); /* the fork is done */
        prepare(c, r->time);
        uint32_t region =
            region_construct(c, (r->dev & ompt_task_initial) ? C_TEAMS : C_PARALLEL, p ? p->codeptr : 0);
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
        open_omp(c, OK_OVERHEAD, r->id, region_state(c, S_OVERHEAD), r->time);
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
static void repair_lost_team(tr_host_ctx *c, const tr_record *r)
{
    if (!r->id || r->phase != TR_PHASE_BEGIN || tr_host_find(c, TR_REC_OMP, OK_PARALLEL, r->id) ||
        tr_u64map_get(&c->omp.clipped, r->id, 0))
        return;
    const tr_omp_parallel *p = tr_omp_model_parallel(&c->w->m.omp, r->id);
    if (p && p->team_end != UINT64_MAX && p->team_end <= r->time)
        return;
    uint64_t codeptr = p ? p->codeptr : 0;
    if (top_is(c, OK_OVERHEAD, r->id))
        tr_host_pop(c, r->time, 0);
    prepare(c, r->time);
    if (codeptr)
        attr(c, TR_ATTR_CODEPTR, codeptr);
    attr(c, TR_ATTR_OMP_ID, r->id);
    open_omp(c, OK_PARALLEL, r->id, region_construct(c, C_PARALLEL, codeptr), r->time);
    c->stack[c->depth - 1].guessed = !p;
}

/* Whether no record says where open region @o ends: a `parallel` region
 * whose team's end was lost (or all of whose team's records on the
 * encountering thread were: guessed), the fork and join overhead of a
 * parallel region whose end was lost. */
static int end_unknown(const tr_host_ctx *c, const tr_open_region *o)
{
    if (o->type != TR_REC_OMP || (o->kind != OK_PARALLEL && o->kind != OK_OVERHEAD))
        return 0;
    if (o->guessed)
        return 1;
    const tr_omp_parallel *p = tr_omp_model_parallel(&c->w->m.omp, o->id);
    if (!p)
        return 0; /* a host league's `teams` */
    return (o->kind == OK_PARALLEL ? p->team_end : p->end) == UINT64_MAX;
}

/* A gap begins at @t. A team or fork whose end no record gives may have
 * ended in it: it ends where the gap begins, with what is open inside it
 * (records of that team after the gap repair its region again). Else it
 * would stay open to the end of the run, and every later region nest in it. */
static void close_unknown_ends(tr_host_ctx *c, uint64_t t)
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

static void user_task_create(tr_host_ctx *c, const tr_record *r)
{
    if (!c->ew)
        return;
    uint32_t region = region_state(c, S_TASK_CREATE);
    attr(c, TR_ATTR_TASK_ID, r->id);
    if (r->u[0])
        attr(c, TR_ATTR_CODEPTR, r->u[0]);
    OTF2_EvtWriter_Enter(c->ew, c->al, r->time, region);
    OTF2_EvtWriter_Leave(c->ew, 0, r->time, region);
}

/* prior (id) -> next (u0). A task that completes (or is cancelled,
 * detached) closes; one that yields or switches stays open, suspended, below
 * the task that now runs on this thread. */
static void user_task_schedule(tr_host_ctx *c, const tr_record *r)
{
    if (r->dev != ompt_task_yield && r->dev != ompt_task_switch && r->id)
        tr_host_close(c, TR_REC_OMP, OK_TASK, r->id, r->time);
    uint64_t next = r->u[0], codeptr;
    if (!tr_omp_model_task(&c->w->m.omp, next, &codeptr) || tr_host_find(c, TR_REC_OMP, OK_TASK, next))
        return;
    prepare(c, r->time);
    uint32_t region = region_construct(c, C_TASK, codeptr);
    attr(c, TR_ATTR_TASK_ID, next);
    if (codeptr)
        attr(c, TR_ATTR_CODEPTR, codeptr);
    open_omp(c, OK_TASK, next, region, r->time);
}

static uint64_t parallel_codeptr(const tr_host_ctx *c, uint64_t parallel_id)
{
    const tr_omp_parallel *p = tr_omp_model_parallel(&c->w->m.omp, parallel_id);
    return p ? p->codeptr : 0;
}

static void user_record(tr_host_ctx *c, const tr_record *r)
{
    enum state s;
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
    case TR_OMP_MASKED: begin_end(c, r, OK_MASKED, r->id, C_MASKED, 1, pc); break;
    case TR_OMP_SYNC: break; /* the construct; its wait is what the thread spends */
    case TR_OMP_SYNC_WAIT:
        if ((s = sync_wait_state(r->dev)) != S_NONE)
            begin_end(c, r, OK_WAIT, r->id, s, 0, pc);
        break;
    case TR_OMP_REDUCTION: begin_end(c, r, OK_REDUCTION, r->id, S_REDUCTION, 0, pc); break;
    case TR_OMP_MUTEX_WAIT: begin_end(c, r, OK_MUTEX_WAIT, r->id, mutex_wait_state(r->dev), 0, 0); break;
    case TR_OMP_MUTEX_HELD:
        /* Critical and ordered sections are constructs; a lock held is not. */
        if (r->dev == ompt_mutex_critical)
            begin_end(c, r, OK_HELD, r->id, C_CRITICAL, 1, 0);
        else if (r->dev == ompt_mutex_ordered)
            begin_end(c, r, OK_HELD, r->id, C_ORDERED, 1, 0);
        break;
    case TR_OMP_TASK_CREATE: user_task_create(c, r); break;
    case TR_OMP_TASK_SCHEDULE: user_task_schedule(c, r); break;
    default: break;
    }
}

static void user_before(tr_host_ctx *c, const tr_record *r)
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

static void user_after(tr_host_ctx *c, const tr_record *r)
{
    if (r->time > c->last_time)
        c->last_time = r->time;
    settle(c, r->time);
}

static void user_finish(tr_host_ctx *c)
{
    close_ended_teams(c, UINT64_MAX);
    /* Idle until the end is no end missing: it needs none. */
    if (top_is(c, OK_IDLE, 0))
        tr_host_pop(c, c->w->m.t_max, 0);
}

/* ---- machine mode ------------------------------------------------------ */

/* The record's own fields: codeptr_ra (0 where the callback has none or
 * the runtime gave none), the next task of a task_schedule, and dev, id,
 * u1, u2 as they are. */
static void machine_attrs(tr_host_ctx *c, const tr_record *r)
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

static void machine_record(tr_host_ctx *c, const tr_record *r)
{
    uint8_t kind = (uint8_t)(OK_MACHINE + (r->sub & 0x7f));
    uint32_t region = region_machine(c, r->sub);
    if (r->phase == TR_PHASE_POINT) {
        machine_attrs(c, r);
        OTF2_EvtWriter_Enter(c->ew, c->al, r->time, region);
        OTF2_EvtWriter_Leave(c->ew, 0, r->time, region);
        return;
    }
    if (r->phase == TR_PHASE_BEGIN) {
        machine_attrs(c, r);
        OTF2_EvtWriter_Enter(c->ew, c->al, r->time, region);
        tr_host_push(c, (tr_open_region){.type = TR_REC_OMP, .kind = kind, .id = r->id, .region = region,
                                         .rma_win = -1});
        if (r->sub == TR_OMP_PARALLEL)
            OTF2_EvtWriter_ThreadFork(c->ew, 0, r->time, OTF2_PARADIGM_OPENMP, (uint32_t)r->u[1]);
        return;
    }
    size_t i = tr_host_find(c, TR_REC_OMP, kind, r->id);
    if (!i) {
        c->w->m.stray_ends++;
        return;
    }
    while (c->depth > i)
        tr_host_pop(c, r->time, 1);
    if (r->sub == TR_OMP_PARALLEL)
        OTF2_EvtWriter_ThreadJoin(c->ew, 0, r->time, OTF2_PARADIGM_OPENMP);
    machine_attrs(c, r);
    tr_host_pop(c, r->time, 0);
    if (r->sub == TR_OMP_IMPLICIT_TASK && !((r->dev & ompt_task_initial) && !r->id) && c->omp.dry)
        write_metrics(c, r->time, c->omp.dry->omp.work, c->omp.dry->omp.wait);
}

/* ---- per location ------------------------------------------------------ */

static int machine(const tr_host_ctx *c) { return c->w->m.omp.mode == TR_OMP_MACHINE; }

int tr_omp_runtime_region(const tr_host_ctx *c, const tr_open_region *o)
{
    if (o->type != TR_REC_OMP || !o->id)
        return 0;
    /* The kinds whose id is a parallel region's (OK_IDLE's is 0, a task's
     * is the task's). */
    int k = o->kind;
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
    const tr_omp_parallel *p = tr_omp_model_parallel(&c->w->m.omp, o->id);
    return p && p->runtime;
}

int tr_omp_host_init(tr_host_ctx *c)
{
    if (!machine(c) || !c->w->m.omp.has_omp || !c->w->m.omp.has_omp[c->stream])
        return 0;
    c->omp.dry = calloc(1, sizeof *c->omp.dry);
    if (!c->omp.dry)
        return -1;
    *c->omp.dry = (tr_host_ctx){.w = c->w, .stream = c->stream};
    return 0;
}

void tr_omp_host_before(tr_host_ctx *c, const tr_record *r)
{
    if (!machine(c))
        user_before(c, r);
    else if (c->omp.dry && r->type == TR_REC_OMP)
        user_before(c->omp.dry, r);
}

void tr_omp_host_record(tr_host_ctx *c, const tr_record *r)
{
    if (!machine(c)) {
        user_record(c, r);
        return;
    }
    if (c->omp.dry)
        user_record(c->omp.dry, r); /* first: its totals include this record */
    machine_record(c, r);
}

void tr_omp_host_after(tr_host_ctx *c, const tr_record *r)
{
    if (!machine(c))
        user_after(c, r);
    else if (c->omp.dry && r->type == TR_REC_OMP)
        user_after(c->omp.dry, r);
}

void tr_omp_host_finish(tr_host_ctx *c)
{
    if (!machine(c)) {
        user_finish(c);
    } else if (c->omp.dry) {
        tr_host_ctx *d = c->omp.dry;
        user_finish(d);
        while (d->depth)
            tr_host_pop(d, c->w->m.t_max, 1);
    }
}

void tr_omp_host_final_metrics(tr_host_ctx *c)
{
    const tr_host_ctx *src = machine(c) ? c->omp.dry : c;
    if (!src)
        return;
    write_metrics(c, c->w->m.t_max, src->omp.work, src->omp.wait);
}

void tr_omp_host_free(tr_host_ctx *c)
{
    if (c->omp.dry) {
        tr_omp_host_free(c->omp.dry);
        free(c->omp.dry->stack);
        free(c->omp.dry);
        c->omp.dry = 0;
    }
    tr_u64map_free(&c->omp.clipped);
}

/* ---- definitions ------------------------------------------------------- */

void tr_defs_write_omp_metrics(tr_defs *d, OTF2_GlobalDefWriter *gw)
{
    static const struct {
        uint32_t id;
        const char *name, *description;
    } m[2] = {
        {OMP_WORK_METRIC, TRV_METRIC_OMP_WORK,
         "ns this thread spent in OpenMP parallel and teams regions and explicit tasks, not waiting (running total)"},
        {OMP_WAIT_METRIC, TRV_METRIC_OMP_WAIT,
         "ns this thread spent waiting in the OpenMP runtime: barriers, taskwait, taskgroup, locks, critical, "
         "ordered, atomic (running total)"},
    };
    uint32_t s_unit = tr_defs_str(d, "ns");
    uint32_t s_name[2], s_desc[2];
    for (int i = 0; i < 2; i++) {
        s_name[i] = tr_defs_str(d, m[i].name);
        s_desc[i] = tr_defs_str(d, m[i].description);
    }
    if (!gw)
        return;
    for (int i = 0; i < 2; i++) {
        OTF2_MetricMemberRef member = m[i].id;
        OTF2_GlobalDefWriter_WriteMetricMember(gw, member, s_name[i], s_desc[i], OTF2_METRIC_TYPE_OTHER,
                                               OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL,
                                               0, s_unit);
        OTF2_GlobalDefWriter_WriteMetricClass(gw, m[i].id, 1, &member, OTF2_METRIC_SYNCHRONOUS,
                                              OTF2_RECORDER_KIND_ABSTRACT);
    }
}
