/* Ground truth for test_crash.py: N marks "step" with values 0..N-1 on the
 * main thread, then an ending chosen by argv[1]:
 *   segv     write through a null pointer (SIGSEGV)
 *   abort    abort() (SIGABRT)
 *   _exit    sleep SLEEP_MS, then _exit(5)
 *   kill     sleep SLEEP_MS, then kill(getpid(), SIGKILL)
 *   return   main returns 0
 *   region   tracer_region_begin("open") without an end, one more mark
 *            (value N), then SIGSEGV
 *   own      installs its own SIGSEGV handler BEFORE tracing starts (it
 *            prints "own handler" and _exit(3)s), then marks, then SIGSEGV
 *   overflow unbounded recursion: SIGSEGV on a stack with no room left
 *   term, int, hup, quit, xcpu
 *            kill(getpid(), SIGTERM / SIGINT / SIGHUP / SIGQUIT / SIGXCPU),
 *            as a batch system, a terminal or a launcher would
 *   ignored  SIGHUP ignored BEFORE tracing starts (as under nohup); the
 *            marks, a line when SIGHUP is no longer ignored (what an exec'd
 *            program would inherit), kill(getpid(), SIGHUP), one more mark
 *            (value N), and main returns 0
 *   vfork    the marks, then vfork: the child's exec fails and it calls
 *            _exit(127); the parent waits for it, one more mark (value N),
 *            main returns 0
 *   ownterm  its own SIGTERM handler installed BEFORE tracing starts (it
 *            prints "own term" and returns); the marks, kill(getpid(),
 *            SIGTERM), one more mark (value N), and main returns 0
 * usage: crash MODE N [SLEEP_MS]
 * Prints nothing else (the "own handler" / "own term" lines only in modes
 * own and ownterm). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer.h"

static void own_handler(int sig)
{
    (void)sig;
    static const char msg[] = "own handler\n";
    ssize_t r = write(1, msg, sizeof msg - 1);
    (void)r;
    _exit(3);
}

static void own_term(int sig)
{
    (void)sig;
    static const char msg[] = "own term\n";
    ssize_t r = write(1, msg, sizeof msg - 1);
    (void)r;
}

static const struct {
    const char *mode;
    int sig;
} sent[] = {{"term", SIGTERM}, {"int", SIGINT}, {"hup", SIGHUP}, {"quit", SIGQUIT}, {"xcpu", SIGXCPU}};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A store into a PROT_NONE page: SIGSEGV (SEGV_ACCERR) without undefined
 * behaviour for UBSan to report first. */
/* Each frame keeps 4 KiB alive, so the stack runs out after about 2000. */
static int deep(int n)
{
    volatile char pad[4096];
    if (n > (1 << 30)) /* never reached: the stack runs out first */
        return 0;
    memset((char *)pad, n, sizeof pad);
    return deep(n + 1) + pad[n % (int)sizeof pad];
}

static void segv(void)
{
    void *page = mmap(0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    volatile int *volatile p = page == MAP_FAILED ? 0 : (int *)page;
    *p = 1;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[1];
    long n = atol(argv[2]);
    long sleep = argc > 3 ? atol(argv[3]) : 0;
    if (!strcmp(mode, "own")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = own_handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, 0);
    }
    if (!strcmp(mode, "ignored"))
        signal(SIGHUP, SIG_IGN);
    if (!strcmp(mode, "ownterm")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = own_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, 0);
    }
    tracer_region_t m = tracer_region_register("step"); /* tracing starts here */
    for (long i = 0; i < n; i++)
        tracer_mark(m, (uint64_t)i);
    for (size_t i = 0; i < sizeof sent / sizeof *sent; i++) {
        if (!strcmp(mode, sent[i].mode)) {
            kill(getpid(), sent[i].sig);
            sleep_ms(10000);
            return 4;
        }
    }
    if (!strcmp(mode, "ignored")) {
        /* what a program exec'd from here would inherit */
        struct sigaction now;
        if (sigaction(SIGHUP, 0, &now) || now.sa_handler != SIG_IGN) {
            static const char msg[] = "SIGHUP is no longer ignored\n";
            ssize_t r = write(1, msg, sizeof msg - 1);
            (void)r;
        }
    }
    if (!strcmp(mode, "vfork")) {
        pid_t child = vfork();
        if (child == 0) {
            char *const argv_[] = {"/nonexistent/tracer-test", 0};
            execv(argv_[0], argv_);
            _exit(127);
        }
        int status = 0;
        if (child > 0)
            waitpid(child, &status, 0);
        tracer_mark(m, (uint64_t)n);
        return child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127 ? 0 : 6;
    }
    if (!strcmp(mode, "ignored") || !strcmp(mode, "ownterm")) {
        kill(getpid(), !strcmp(mode, "ignored") ? SIGHUP : SIGTERM);
        tracer_mark(m, (uint64_t)n);
        return 0;
    }
    if (!strcmp(mode, "segv") || !strcmp(mode, "own"))
        segv();
    if (!strcmp(mode, "abort"))
        abort();
    if (!strcmp(mode, "overflow"))
        return deep(0);
    if (!strcmp(mode, "_exit")) {
        sleep_ms(sleep);
        _exit(5);
    }
    if (!strcmp(mode, "kill")) {
        sleep_ms(sleep);
        kill(getpid(), SIGKILL);
        sleep_ms(10000);
        return 4;
    }
    if (!strcmp(mode, "region")) {
        tracer_region_t open = tracer_region_register("open");
        tracer_region_begin(open);
        tracer_mark(m, (uint64_t)n);
        segv();
    }
    if (!strcmp(mode, "return"))
        return 0;
    return 2;
}
