#include "core/lifecycle.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/filter.h"
#include "core/fork_guard.h"
#include "core/log.h"

enum { ST_IDLE, ST_ACTIVE, ST_ENDED };
/* How long the end waits for records being written (tr_buf_wait_inflight). */
#define END_WAIT_NS (100 * 1000000ull)

static int state = ST_IDLE;
static int was_active; /* this process really traced (for the late-events line) */
static pthread_mutex_t activate_lock = PTHREAD_MUTEX_INITIALIZER;

/* The composition root's table, or NULL when none was linked in, or in a
 * child of the traced process: its journal and writer thread are the
 * parent's (core/fork_guard.h). */
static const tr_lifecycle_ops *root(void) { return tr_fork_guard_here() ? &tr_lifecycle_root : 0; }

void tr_lifecycle_note_user_region(uint32_t id, const char *name)
{
    if (root() && root()->note_user_region)
        root()->note_user_region(id, name);
}

void tr_lifecycle_note_text(uint64_t id, const char *text)
{
    if (root() && root()->note_text)
        root()->note_text(id, text);
}

void tr_lifecycle_note_mpit(const tr_mpit_note *note)
{
    if (root() && root()->note_mpit)
        root()->note_mpit(note);
}

void tr_lifecycle_set_interval_hook(void (*hook)(void))
{
    if (root() && root()->set_interval_hook)
        root()->set_interval_hook(hook);
}

void tr_lifecycle_set_end_hook(void (*hook)(void))
{
    if (root() && root()->set_end_hook)
        root()->set_end_hook(hook);
}

static int exit_status_known;
static int exit_status;

/* on_exit (not atexit) because it hands us the status the program exits
 * with, including main's return value, for ProgramEnd. */
static void end_at_exit(int status, void *arg)
{
    (void)arg;
    exit_status = status;
    __atomic_store_n(&exit_status_known, 1, __ATOMIC_RELEASE);
    tr_lifecycle_end("exit");
}

int tr_lifecycle_exit_status(int *status)
{
    if (!__atomic_load_n(&exit_status_known, __ATOMIC_ACQUIRE))
        return 0;
    *status = exit_status;
    return 1;
}

/* A forked child must never write into the parent's trace; until the journal
 * gives children their own, a child records nothing. */
static void after_fork_child(void)
{
    tr_buf_reset_after_fork();
    __atomic_store_n(&state, ST_ENDED, __ATOMIC_SEQ_CST);
}

/* A child made without the atfork handlers (glibc's _Fork, a raw clone)
 * finds out here, on its way out or in: its run is over before it began,
 * and its end writes nothing, waits for no thread and counts nothing (the
 * late-events count would read the pool, which it does not have). Its
 * records are refused already (core/buf.h). Nothing else is reset: the
 * buffers' state is its parent's threads', left as it is. */
static int foreign_child(void)
{
    if (tr_fork_guard_here())
        return 0;
    __atomic_store_n(&state, ST_ENDED, __ATOMIC_SEQ_CST);
    __atomic_store_n(&was_active, 0, __ATOMIC_RELAXED);
    return 1;
}

extern char **environ;

/* Prints what the configuration load found; errors say the run is untraced. */
static void report_config(const tr_cfg_report *r)
{
    for (int i = 0; i < r->nmessages; i++) {
        if (strncmp(r->messages[i], "unknown variable", 16) == 0)
            tr_log("%s", r->messages[i]);
        else
            tr_log("%s; this run is not traced", r->messages[i]);
    }
}

/* The launcher's rank variables: known before MPI_Init, in every process.
 * Read once, at activation (before MPI_Init): Open MPI's MPI_Init sets
 * them in a singleton's own environment, which must not make it look
 * launched. */
int tr_lifecycle_launcher_rank(long *rank)
{
    static const char *const vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK",
                                       "SLURM_PROCID"};
    static int known = -1;
    static long known_rank;
    if (__atomic_load_n(&known, __ATOMIC_ACQUIRE) < 0) {
        int found = 0;
        long r = 0;
        for (size_t i = 0; i < sizeof vars / sizeof *vars && !found; i++) {
            const char *v = getenv(vars[i]);
            char *end;
            if (v && *v) {
                r = strtol(v, &end, 10);
                found = !*end && r >= 0;
            }
        }
        known_rank = found ? r : 0;
        __atomic_store_n(&known, found, __ATOMIC_RELEASE);
    }
    *rank = known_rank;
    return known;
}

/* TRACER_STRICT=1: a CI pipeline wants a wrong configuration to stop the
 * job before main, not to produce an untraced run that looks fine. */
__attribute__((constructor)) static void strict_check(void)
{
    const char *s = getenv("TRACER_STRICT");
    if (!s || (strcmp(s, "1") && strcasecmp(s, "yes") && strcasecmp(s, "true") && strcasecmp(s, "on")))
        return;
    static tr_config cfg;
    static tr_cfg_report rep;
    if (tr_cfg_load(&cfg, environ, &rep) == 0 || !cfg.strict)
        return;
    for (int i = 0; i < rep.nmessages; i++)
        tr_log("%s", rep.messages[i]);
    tr_log("TRACER_STRICT=1: configuration errors are fatal; exiting with status 1");
    exit(1);
}

/* Reads the configuration; returns 1 when this process is to be traced. */
static int configure(void)
{
    int errors = tr_cfg_load(&tr_cfg, environ, &tr_cfg_loaded);
    report_config(&tr_cfg_loaded);
    if (errors || !tr_cfg.enable)
        return 0;
    long rank;
    int launched = tr_lifecycle_launcher_rank(&rank); /* read now, before MPI_Init */
    if (!tr_cfg.ranks.all && launched && !tr_ranges_contains(&tr_cfg.ranks, rank)) {
        if (tr_cfg.verbose)
            tr_log("rank %ld is not in TRACER_RANKS; not traced", rank);
        return 0;
    }
    tr_filter_freeze(&tr_cfg);
    return 1;
}

int tr_lifecycle_activate(const char *why)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s != ST_IDLE)
        return s == ST_ACTIVE && !foreign_child();
    /* Activation is rare and must not race with itself; a lock is fine here. */
    pthread_mutex_lock(&activate_lock);
    if (state == ST_IDLE) {
        if (!configure()) {
            state = ST_ENDED;
        } else {
            tr_clock_init(tr_cfg.clock, tr_cfg.calibration_ns);
            if (tr_cfg.verbose)
                tr_log("tracing pid %ld (started by %s); trace goes to %s", (long)getpid(), why,
                       tr_cfg.output[0] ? tr_cfg.output : "./tracer-<exe>-<date>-<pid>");
        }
        if (state == ST_IDLE)
            tr_fork_guard_claim();
        if (state == ST_IDLE && root() && root()->start && root()->start()) {
            state = ST_ENDED;
        } else if (state == ST_IDLE) {
            tr_log_keep_stderr();
            pthread_atfork(0, 0, after_fork_child);
            if (on_exit(end_at_exit, 0) != 0)
                tr_log("cannot register the exit handler; the trace is written at unload");
            tr_buf_start();
            __atomic_store_n(&was_active, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&state, ST_ACTIVE, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&activate_lock);
    return state == ST_ACTIVE;
}

int tr_lifecycle_active(void)
{
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_ACTIVE && tr_fork_guard_here();
}

static int ended_early; /* at MPI_Finalize: later events are expected, and not in the trace */

/* --- exec ---------------------------------------------------------------
 * An exec keeps the pid, so a second image would take the first one's
 * output name; the exec wrappers tell the new image its number instead. */
#define EXEC_VAR "__TRACER_EXEC"
static pthread_once_t exec_once = PTHREAD_ONCE_INIT;
static unsigned exec_seq;
static pid_t image_pid; /* getpid() of this image: a forked child differs */
static int ended_by_exec;

static void read_exec_var(void)
{
    image_pid = getpid();
    const char *v = getenv(EXEC_VAR);
    if (!v)
        return;
    /* "<pid>.<n>": only the process that exec'd counts it (a stray copy in
     * an environment handed on to another process does not). */
    char *end;
    long pid = strtol(v, &end, 10);
    if (*end == '.' && pid == (long)image_pid) {
        unsigned long n = strtoul(end + 1, &end, 10);
        if (!*end && n > 0 && n < 1000000)
            exec_seq = (unsigned)n;
    }
    unsetenv(EXEC_VAR); /* the program never sees it */
}

/* Before the program's constructors, and before any configuration read. */
__attribute__((constructor)) static void exec_var_at_load(void) { pthread_once(&exec_once, read_exec_var); }

unsigned tr_lifecycle_exec_sequence(void)
{
    pthread_once(&exec_once, read_exec_var);
    return exec_seq;
}

unsigned tr_lifecycle_before_exec(int end)
{
    /* A vforked child shares this memory: it must leave it alone. */
    if (getpid() != __atomic_load_n(&image_pid, __ATOMIC_RELAXED))
        return 0;
    if (end && __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_ACTIVE) {
        tr_lifecycle_end("exec");
        __atomic_store_n(&ended_by_exec, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&was_active, __ATOMIC_RELAXED) || exec_seq ? exec_seq + 1 : 0;
}

void tr_lifecycle_exec_failed(int err)
{
    if (!__atomic_load_n(&ended_by_exec, __ATOMIC_ACQUIRE) ||
        !__atomic_exchange_n(&ended_by_exec, 0, __ATOMIC_ACQ_REL))
        return; /* (a vforked child reads the parent's memory, and writes nothing) */
    ended_early = 1; /* this line says it all; no count of late events follows */
    tr_log("exec failed (%s); the trace was written before it, and this process is no longer traced",
           strerror(err));
}

void tr_lifecycle_end(const char *why)
{
    if (foreign_child())
        return;
    int expect = ST_ACTIVE;
    if (!__atomic_compare_exchange_n(&state, &expect, ST_ENDED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    uint64_t end = tr_clock_ticks();
    ended_early = why && !strcmp(why, "MPI_Finalize");
    tr_buf_stop();
    /* A thread between a reserve and its commit (a worker libomp started
     * just now, writing its first record) would commit after the final
     * flush: its event lost, and reported as late. It takes microseconds,
     * or a scheduler's time slice on a loaded machine; the bound is for a
     * thread that never gets to run again. */
    tr_buf_wait_inflight(END_WAIT_NS);
    if (root() && root()->end)
        root()->end(end);
}

__attribute__((destructor)) static void end_at_unload(void)
{
    tr_lifecycle_end("unload");
    /* Whatever the runtime reported after the archive was written is not in
     * it; say so rather than hide the gap. */
    uint64_t late = __atomic_load_n(&was_active, __ATOMIC_RELAXED) ? tr_buf_refused_total() : 0;
    /* An MPI job's trace ends in MPI_Finalize, as documented: what comes
     * after is no surprise, so it is only reported on request. */
    if (late && (!ended_early || tr_cfg.verbose))
        tr_log("%llu events arrived after the trace was written and are not in it",
               (unsigned long long)late);
}
