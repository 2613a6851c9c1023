/* Ground truth for test_handled_fault.py: a program that handles its own
 * SIGSEGV. Marks "step" carry the values 0, 1, 2, ... in order; between
 * groups of PER marks the program faults (a store into a PROT_NONE page).
 * usage: handled_fault MODE FAULTS PER
 *   recover  its SA_SIGINFO handler, installed BEFORE tracing starts,
 *            siglongjmps back; FAULTS faults, PER marks before each and
 *            after the last; exits 0
 *   nodefer  the same with SA_NODEFER and _longjmp (the signal mask is not
 *            restored: SIGSEGV must not stay blocked after the jump)
 *   later    the same as recover, the handler installed AFTER tracing starts
 *   oneshot  an SA_RESETHAND handler installed before tracing: the first
 *            fault is recovered, the next one (after PER more marks) kills
 *            the process with SIGSEGV; FAULTS is ignored
 *   reset    the handler recovers FAULTS faults; at the next one it restores
 *            SIG_DFL and returns, so the fault repeats and kills the process
 * stdout: "faults recovered: N" (N handled so far) at the end, or in oneshot
 * and reset just before the fatal fault. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracer.h"

static sigjmp_buf where;
static jmp_buf where_nodefer;
static volatile sig_atomic_t handled, limit = -1, nodefer;
static void *volatile bad_page;

static void on_segv(int sig, siginfo_t *info, void *context)
{
    (void)context;
    if (sig != SIGSEGV || info->si_addr != bad_page)
        _exit(90); /* not the fault this program makes */
    if (limit >= 0 && handled >= limit) {
        signal(SIGSEGV, SIG_DFL); /* the fault repeats and is fatal */
        return;
    }
    handled++;
    if (nodefer)
        _longjmp(where_nodefer, 1);
    siglongjmp(where, 1);
}

static void install(int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, 0))
        _exit(91);
}

static void fault(void)
{
    *(volatile int *)bad_page = 1;
}

/* One fault, recovered (returns 1) or not (the process dies). */
static int fault_recovered(void)
{
    if (nodefer) {
        if (_setjmp(where_nodefer))
            return 1;
    } else if (sigsetjmp(where, 1)) {
        return 1;
    }
    fault();
    return 0;
}

static void say(void)
{
    printf("faults recovered: %d\n", (int)handled);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    const char *mode = argv[1];
    long faults = atol(argv[2]), per = atol(argv[3]);
    bad_page = mmap(0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (bad_page == MAP_FAILED)
        return 3;
    int later = !strcmp(mode, "later");
    nodefer = !strcmp(mode, "nodefer");
    if (!strcmp(mode, "oneshot")) {
        install(SA_RESETHAND);
        faults = 2;
    } else if (!strcmp(mode, "reset")) {
        install(0);
        limit = (sig_atomic_t)faults;
        faults++;
    } else if (!later) {
        install(nodefer ? SA_NODEFER : 0);
    }
    tracer_region_t step = tracer_region_register("step"); /* tracing starts here */
    if (later)
        install(0);
    uint64_t value = 0;
    for (long k = 0;; k++) {
        for (long i = 0; i < per; i++)
            tracer_mark(step, value++);
        if (k == faults)
            break;
        if (k == faults - 1 && (!strcmp(mode, "oneshot") || !strcmp(mode, "reset")))
            say(); /* the next fault is the last thing this process does */
        if (!fault_recovered())
            return 4;
    }
    say();
    return 0;
}
