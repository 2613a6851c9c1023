/* crash.c - what a dying process leaves: on SIGSEGV, SIGBUS, SIGFPE, SIGILL
 * and SIGABRT, append every unwritten chunk to the journal (async-signal-safe
 * code only), then let the signal take its course unchanged. */
#include "session/crash.h"

#include <signal.h>
#include <string.h>

#include "journal/consumer.h"

static const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIG_HANDLED (sizeof signals / sizeof *signals)

static struct sigaction previous[NSIG_HANDLED];
static int armed; /* cleared in a forked child: the journal is the parent's */
static int flushed;

static void restore(int sig)
{
    for (size_t i = 0; i < NSIG_HANDLED; i++)
        if (signals[i] == sig)
            sigaction(sig, &previous[i], 0);
}

static void on_crash(int sig, siginfo_t *info, void *context)
{
    (void)context;
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) && !__atomic_exchange_n(&flushed, 1, __ATOMIC_ACQ_REL))
        tr_consumer_crash_flush(sig);
    /* The application's own handler (or the default action) comes back. A
     * fault repeats when this handler returns and meets it; a signal that was
     * sent (abort, kill, raise) is sent again. The process dies as it would
     * have without tracer. */
    restore(sig);
    if (info->si_code <= 0 || sig == SIGABRT)
        raise(sig);
}

void tr_crash_install(void)
{
    armed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK; /* a stack overflow leaves no stack */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIG_HANDLED; i++)
        sigaction(signals[i], &sa, &previous[i]);
}

void tr_crash_forget_journal(void)
{
    __atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
}
