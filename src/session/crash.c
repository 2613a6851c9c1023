/* crash.c - what a dying process leaves: on SIGSEGV, SIGBUS, SIGFPE, SIGILL
 * and SIGABRT, and on every other signal whose default action ends the
 * process: those that end it from outside (SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT, SIGXCPU: a batch system's time limit, Ctrl-C, a launcher cleaning
 * up after MPI_Abort; SIGPIPE: app | head; SIGALRM, SIGVTALRM, SIGPROF: a
 * timer nobody handles; SIGUSR1, SIGUSR2, ...), append every unwritten
 * chunk to the journal (async-signal-safe code only), say in one line where
 * the journal is and how to make the trace of it, then let the signal take
 * its course unchanged. A signal during the end of the run, while the trace
 * is being written from the complete journal, removes the half-written
 * archive's stage and says the same.
 *
 * The real-time signals (SIGRTMIN..SIGRTMAX) are left alone, though their
 * default action ends the process: libraries look for a free one by its
 * disposition being SIG_DFL (timers, AIO), and a handler of tracer's there
 * would take it from them.
 *
 * A signal from outside that the program ignores when tracing starts is
 * left alone: a handler would change what an ignored signal does (it would
 * interrupt system calls, and a program exec'd from this one would no longer
 * inherit the ignoring, as under nohup). The program's handler keeps its
 * SA_RESTART and SA_ONSTACK.
 *
 * A signal is the end of the run only when it is fatal. When the program had
 * a handler of its own for it before tracing started, that handler runs
 * first, as if tracer were not there (its mask, SA_NODEFER, SA_RESETHAND and
 * SA_SIGINFO honoured), and may recover (siglongjmp, a fixed mapping): the
 * run goes on and nothing is written. The journal is saved only when the
 * process is about to die of it: the handler returned and left the default
 * action to come, or it ends the process with _exit, or the signal meets the
 * default action directly. _exit and _Exit are interposed: they end the run,
 * and save it, wherever they are called. A handler the program installs
 * after tracing started replaces tracer's, which then sees nothing.
 *
 * None of this happens in a child of the traced process, however it was
 * made (core/fork_guard.h): its parent's journal is not its own. */
#define _GNU_SOURCE 1 /* RTLD_NEXT, sigorset */
#include "session/crash.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/fork_guard.h"
#include "core/inflight.h"
#include "core/log.h"
#include "journal/consumer.h"
#include "journal/journal_format.h"
#include "journal/journal_write.h"
#include "writer/archive_stage.h"

/* Every signal whose default action ends the process, but the real-time
 * ones (above), with its name for the line that says so. */
static const struct {
    int sig;
    const char *name;
} handled[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},       {SIGFPE, "SIGFPE"},       {SIGILL, "SIGILL"},
    {SIGABRT, "SIGABRT"}, {SIGTERM, "SIGTERM"},     {SIGINT, "SIGINT"},       {SIGHUP, "SIGHUP"},
    {SIGQUIT, "SIGQUIT"}, {SIGXCPU, "SIGXCPU"},     {SIGXFSZ, "SIGXFSZ"},     {SIGPIPE, "SIGPIPE"},
    {SIGALRM, "SIGALRM"}, {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},     {SIGUSR1, "SIGUSR1"},
    {SIGUSR2, "SIGUSR2"}, {SIGIO, "SIGIO"},         {SIGSTKFLT, "SIGSTKFLT"}, {SIGPWR, "SIGPWR"},
    {SIGSYS, "SIGSYS"},   {SIGTRAP, "SIGTRAP"},
};
#define NSIG_HANDLED (sizeof handled / sizeof *handled)

/* A fault repeats when its handler returns; every other signal was sent
 * (by the kernel too: SIGXCPU, a terminal's SIGHUP) and happens once. */
static int is_fault(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL; }

static struct sigaction previous[NSIG_HANDLED];
static int armed; /* cleared in a forked child: the journal is the parent's */
static pid_t owner; /* the process whose journal it is: not a vfork child */
static int flushed;

/* For the line a death prints: the run's directory as the user named it
 * (set once, before the handlers), and whether this run says anything (the
 * ranks of an MPI job do not: the launcher ends them all at once, and says
 * so itself). */
static char dir_shown[4096];
static int told, quiet;
static int ending; /* the journal is complete, the trace is being written from it */

/* The signal whose program handler this thread is running (0: none), and
 * the frame it was called from: _exit below that frame ends the process
 * from inside the handler. A handler that siglongjmps away leaves them set,
 * but the stack then is above the frame again. */
static __thread int chained_sig __attribute__((tls_model("initial-exec")));
static __thread uintptr_t chained_frame __attribute__((tls_model("initial-exec")));

typedef void (*exit_fn)(int);
static exit_fn next_exit, next_Exit;

__attribute__((constructor)) static void find_exits(void)
{
    /* Looked up here: dlsym is not async-signal-safe, _exit is. */
    next_exit = (exit_fn)(uintptr_t)dlsym(RTLD_NEXT, "_exit");
    next_Exit = (exit_fn)(uintptr_t)dlsym(RTLD_NEXT, "_Exit");
}

static int slot(int sig)
{
    for (size_t i = 0; i < NSIG_HANDLED; i++)
        if (handled[i].sig == sig)
            return (int)i;
    return -1;
}

/* The process that started tracing, not a vfork child (same memory, other
 * pid) nor a child made without atfork handlers. */
static int is_owner(void)
{
    return tr_fork_guard_here() && (pid_t)syscall(SYS_getpid) == owner;
}

static int is_handler(const struct sigaction *sa)
{
    return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static void save_journal(int sig)
{
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) && is_owner() &&
        !__atomic_exchange_n(&flushed, 1, __ATOMIC_ACQ_REL)) {
        int journal_open = tr_journal_is_open();
        tr_consumer_crash_flush(sig);
        /* Every chunk is in the journal now: the in-flight file is needed
         * only if an append failed (or there was no journal to append to). */
        if (journal_open && !tr_journal_write_failed())
            tr_inflight_remove();
    }
}

/* The process dies of @sig (or ends in its handler): the journal is saved,
 * a half-written archive removed, and one line says where the journal is
 * and what makes the trace of it. */
static void dying(int sig)
{
    int saving = __atomic_load_n(&armed, __ATOMIC_ACQUIRE) && is_owner();
    save_journal(sig);
    int writing = __atomic_load_n(&ending, __ATOMIC_ACQUIRE) && is_owner();
    if (writing)
        tr_stage_abandon();
    if ((!saving && !writing) || __atomic_load_n(&quiet, __ATOMIC_ACQUIRE) || !dir_shown[0] ||
        __atomic_exchange_n(&told, 1, __ATOMIC_ACQ_REL))
        return;
    int i = slot(sig);
    const char *name = i >= 0 ? handled[i].name : "a signal";
    if (writing)
        tr_log_parts(name, " while the trace was being written; the journal ", dir_shown, "/",
                     TR_JOURNAL_NAME, " is complete: 'tracer recover ", dir_shown, "' writes the trace", (char *)0);
    else
        tr_log_parts(name, " ends the run; every event recorded is in the journal ", dir_shown, "/",
                     TR_JOURNAL_NAME, ": 'tracer recover ", dir_shown, "' writes the trace", (char *)0);
}

/* Runs the program's handler @h as the kernel would have: with the mask the
 * kernel would have set for it. SA_RESETHAND makes the default action the
 * program's disposition from now on. */
static void chain(int sig, siginfo_t *info, void *context, int i)
{
    struct sigaction h = previous[i];
    if (h.sa_flags & SA_RESETHAND) {
        previous[i].sa_handler = SIG_DFL;
        previous[i].sa_flags &= ~(SA_SIGINFO | SA_RESETHAND);
    }
    if (context) {
        sigset_t mask = ((ucontext_t *)context)->uc_sigmask;
        sigorset(&mask, &mask, &h.sa_mask);
        if (!(h.sa_flags & SA_NODEFER))
            sigaddset(&mask, sig);
        pthread_sigmask(SIG_SETMASK, &mask, 0);
    }
    int outer_sig = chained_sig;
    uintptr_t outer_frame = chained_frame;
    chained_sig = sig;
    chained_frame = (uintptr_t)__builtin_frame_address(0);
    if (h.sa_flags & SA_SIGINFO)
        h.sa_sigaction(sig, info, context);
    else
        h.sa_handler(sig);
    chained_sig = outer_sig;
    chained_frame = outer_frame;
}

/* The handler returned: is the signal going to kill the process? */
static int fatal_after_return(int sig, int sent)
{
    struct sigaction now;
    if (sigaction(sig, 0, &now) || is_handler(&now))
        return 0; /* still ours (we decide when it comes again), or the program's */
    if (sig == SIGABRT)
        return 1; /* abort() goes on to the default action */
    if (!sent)
        return 1; /* the instruction faults again: SIG_DFL kills, and SIG_IGN cannot stop a fault */
    sigset_t pending;
    return now.sa_handler == SIG_DFL && !sigpending(&pending) && sigismember(&pending, sig);
}

static void handle(int sig, siginfo_t *info, void *context)
{
    int i = slot(sig);
    if (i < 0)
        return;
    int sent = !is_fault(sig) || !info || info->si_code <= 0; /* kill, raise, abort: not a fault */
    if (is_handler(&previous[i])) {
        chain(sig, info, context, i);
        if (fatal_after_return(sig, sent))
            dying(sig);
        return;
    }
    if (previous[i].sa_handler == SIG_IGN && sent && sig != SIGABRT)
        return; /* ignored, as without tracer */
    dying(sig);
    /* The program's disposition comes back. A fault repeats when this
     * handler returns and meets it; a signal that was sent (abort, kill,
     * raise) is sent again. The process dies as it would have without
     * tracer. */
    sigaction(sig, &previous[i], 0);
    if (sent || sig == SIGABRT)
        raise(sig);
}

static void on_crash(int sig, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    handle(sig, info, context);
    errno = saved_errno; /* the process may live on: the program's handler recovered */
}

void tr_crash_install(void)
{
    owner = (pid_t)syscall(SYS_getpid);
    armed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIG_HANDLED; i++) {
        int sig = handled[i].sig;
        if (is_fault(sig) || sig == SIGABRT) {
            struct sigaction fault = sa;
            fault.sa_flags |= SA_ONSTACK; /* a stack overflow leaves no stack */
            sigaction(sig, &fault, &previous[i]);
            continue;
        }
        if (sigaction(sig, 0, &previous[i]) || previous[i].sa_handler == SIG_IGN)
            continue;
        /* The program's handler runs on the stack it asked for; tracer's
         * alone runs on its own (a thread deep in its stack has room left
         * there to save the journal). */
        struct sigaction own = sa;
        own.sa_flags |= is_handler(&previous[i]) ? previous[i].sa_flags & (SA_RESTART | SA_ONSTACK) : SA_ONSTACK;
        sigaction(sig, &own, 0);
    }
}

void tr_crash_forget_journal(void)
{
    __atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
}

void tr_crash_set_dir(const char *dir_path)
{
    if (!dir_shown[0])
        snprintf(dir_shown, sizeof dir_shown, "%s", dir_path);
}

void tr_crash_quiet(void) { __atomic_store_n(&quiet, 1, __ATOMIC_RELEASE); }

void tr_crash_writing_trace(int writing) { __atomic_store_n(&ending, writing, __ATOMIC_RELEASE); }

int tr_crash_chained_signal(void)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    return chained_sig && here < chained_frame && chained_frame - here < (64u << 20) ? chained_sig : 0;
}

void tr_crash_save_journal(int sig) { save_journal(sig); }

/* The program's fault handler ending the process: that fault was its end.
 * Any other _exit ends the run too, without atexit: every chunk is saved as
 * for a signal, the journal saying _exit(status) (journal_format.h). Not in
 * a vfork child, which shares this memory and calls _exit when its exec
 * fails: the run is the parent's, and goes on. */
static void exiting(int status)
{
    int sig = tr_crash_chained_signal();
    if (sig)
        dying(sig);
    else
        save_journal(-((status & 0xff) + 1));
}

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
    exiting(status);
    if (next_exit)
        next_exit(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
    exiting(status);
    if (next_Exit)
        next_Exit(status);
    for (;;)
        syscall(SYS_exit_group, status);
}
