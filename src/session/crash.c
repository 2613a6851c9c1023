/* crash.c - what a dying process leaves: on SIGSEGV, SIGBUS, SIGFPE, SIGILL
 * and SIGABRT, and on the signals that end a process from outside (SIGTERM,
 * SIGINT, SIGHUP, SIGQUIT, SIGXCPU: a batch system's time limit, Ctrl-C, a
 * launcher cleaning up after MPI_Abort), append every unwritten chunk to the
 * journal (async-signal-safe code only), then let the signal take its course
 * unchanged.
 *
 * A signal from outside that the program ignores when tracing starts is
 * left alone: a handler would change what an ignored signal does (it would
 * interrupt system calls, and a program exec'd from this one would no longer
 * inherit the ignoring, as under nohup). The program's SA_RESTART is kept.
 *
 * A signal is the end of the run only when it is fatal. When the program had
 * a handler of its own for it before tracing started, that handler runs
 * first, as if tracer were not there (its mask, SA_NODEFER, SA_RESETHAND and
 * SA_SIGINFO honoured), and may recover (siglongjmp, a fixed mapping): the
 * run goes on and nothing is written. The journal is saved only when the
 * process is about to die of it: the handler returned and left the default
 * action to come, or it ends the process with _exit, or the signal meets the
 * default action directly. _exit and _Exit are interposed: they end the run,
 * and save it, wherever they are called. */
#define _GNU_SOURCE 1 /* RTLD_NEXT, sigorset */
#include "session/crash.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/inflight.h"
#include "journal/consumer.h"
#include "journal/journal_write.h"

static const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU};
#define NSIG_HANDLED (sizeof signals / sizeof *signals)

/* A fault repeats when its handler returns; every other signal was sent
 * (by the kernel too: SIGXCPU, a terminal's SIGHUP) and happens once. */
static int is_fault(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL; }

static struct sigaction previous[NSIG_HANDLED];
static int armed; /* cleared in a forked child: the journal is the parent's */
static pid_t owner; /* the process whose journal it is: not a vfork child */
static int flushed;

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
        if (signals[i] == sig)
            return (int)i;
    return -1;
}

static int is_handler(const struct sigaction *sa)
{
    return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static void save_journal(int sig)
{
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) && !__atomic_exchange_n(&flushed, 1, __ATOMIC_ACQ_REL)) {
        int journal_open = tr_journal_is_open();
        tr_consumer_crash_flush(sig);
        /* Every chunk is in the journal now: the in-flight file is needed
         * only if an append failed (or there was no journal to append to). */
        if (journal_open && !tr_journal_write_failed())
            tr_inflight_remove();
    }
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

static void on_crash(int sig, siginfo_t *info, void *context)
{
    int i = slot(sig);
    if (i < 0)
        return;
    int sent = !is_fault(sig) || !info || info->si_code <= 0; /* kill, raise, abort: not a fault */
    if (is_handler(&previous[i])) {
        chain(sig, info, context, i);
        if (fatal_after_return(sig, sent))
            save_journal(sig);
        return;
    }
    if (previous[i].sa_handler == SIG_IGN && sent && sig != SIGABRT)
        return; /* ignored, as without tracer */
    save_journal(sig);
    /* The program's disposition comes back. A fault repeats when this
     * handler returns and meets it; a signal that was sent (abort, kill,
     * raise) is sent again. The process dies as it would have without
     * tracer. */
    sigaction(sig, &previous[i], 0);
    if (sent || sig == SIGABRT)
        raise(sig);
}

void tr_crash_install(void)
{
    owner = (pid_t)syscall(SYS_getpid);
    armed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK; /* a stack overflow leaves no stack */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIG_HANDLED; i++) {
        int sig = signals[i];
        if (is_fault(sig) || sig == SIGABRT) {
            sigaction(sig, &sa, &previous[i]);
            continue;
        }
        if (sigaction(sig, 0, &previous[i]) || previous[i].sa_handler == SIG_IGN)
            continue;
        struct sigaction own = sa;
        own.sa_flags |= previous[i].sa_flags & SA_RESTART;
        sigaction(sig, &own, 0);
    }
}

void tr_crash_forget_journal(void)
{
    __atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
}

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
        save_journal(sig);
    else if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) && (pid_t)syscall(SYS_getpid) == owner)
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
