#include "core/lifecycle.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/log.h"

enum { ST_IDLE, ST_ACTIVE, ST_ENDED };

static int state = ST_IDLE;
static tr_end_hook end_hook;
static pthread_mutex_t activate_lock = PTHREAD_MUTEX_INITIALIZER;

void tr_lifecycle_set_end_hook(tr_end_hook hook) { end_hook = hook; }

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

static int env_disabled(void)
{
    const char *e = getenv("TRACER_ENABLE");
    return e && (!strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "no") || !strcmp(e, "false"));
}

int tr_lifecycle_activate(const char *why)
{
    (void)why;
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s != ST_IDLE)
        return s == ST_ACTIVE;
    /* Activation is rare and must not race with itself; a lock is fine here. */
    pthread_mutex_lock(&activate_lock);
    if (state == ST_IDLE) {
        if (env_disabled()) {
            state = ST_ENDED;
        } else {
            tr_clock_init();
            pthread_atfork(0, 0, after_fork_child);
            if (on_exit(end_at_exit, 0) != 0)
                tr_log("cannot register the exit handler; the trace is written at unload");
            __atomic_store_n(&tr_buf_recording, 1, __ATOMIC_RELEASE);
            __atomic_store_n(&state, ST_ACTIVE, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&activate_lock);
    return state == ST_ACTIVE;
}

int tr_lifecycle_active(void)
{
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_ACTIVE;
}

void tr_lifecycle_end(const char *why)
{
    (void)why;
    int expect = ST_ACTIVE;
    if (!__atomic_compare_exchange_n(&state, &expect, ST_ENDED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    uint64_t end = tr_clock_ticks();
    tr_buf_stop();
    if (end_hook)
        end_hook(end);
}

__attribute__((destructor)) static void end_at_unload(void)
{
    tr_lifecycle_end("unload");
    /* Whatever the runtime reported after the archive was written is not in
     * it; say so rather than hide the gap. */
    uint64_t late = tr_buf_refused_total();
    if (late)
        tr_log("%llu events arrived after the trace was written and are not in it",
               (unsigned long long)late);
}
