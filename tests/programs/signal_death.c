/* Ground truth for test_signal_death.py (issue 34 item 3): N marks "step"
 * with values 0..N-1 on the main thread, then the process meets a signal
 * whose default action ends it, as chosen by MODE:
 *   SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF, SIGXFSZ, SIGIO,
 *   SIGSTKFLT, SIGPWR, SIGSYS, SIGTRAP
 *            kill(getpid(), that signal)
 *   alarm    alarm(1), then pause(): SIGALRM from the kernel
 *   virtual  ITIMER_VIRTUAL of 10 ms, then spins: SIGVTALRM from the kernel
 *   prof     ITIMER_PROF of 10 ms, then spins: SIGPROF from the kernel
 *   fsize    RLIMIT_FSIZE of 1 GiB, then a write at that offset of FILE:
 *            SIGXFSZ (the journal stays far below the limit)
 *   pipe     no marks first: for i = 0, 1, ...: mark i, the line "i" to FILE,
 *            the line "line i" to stdout, until a write to stdout (a pipe
 *            whose reader is gone) raises SIGPIPE. FILE then holds one line
 *            per mark made.
 *   own      its own SIGUSR1 handler, installed AFTER tracing started
 *            (prints "own usr1"), then kill(getpid(), SIGUSR1), one more
 *            mark (value N), and main returns 0
 *   ignored  SIGUSR1 ignored BEFORE tracing starts; the marks,
 *            kill(getpid(), SIGUSR1), one more mark (value N), main returns 0
 *   end      the marks, then main returns 0 (the test sends a signal while
 *            the trace is written)
 * usage: signal_death MODE N [FILE]
 * Prints nothing else. */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tracer.h"

static const struct {
    const char *name;
    int sig;
} sent[] = {{"SIGPIPE", SIGPIPE},     {"SIGALRM", SIGALRM}, {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2},
            {"SIGVTALRM", SIGVTALRM}, {"SIGPROF", SIGPROF}, {"SIGXFSZ", SIGXFSZ}, {"SIGIO", SIGIO},
            {"SIGSTKFLT", SIGSTKFLT}, {"SIGPWR", SIGPWR},   {"SIGSYS", SIGSYS},   {"SIGTRAP", SIGTRAP}};

static void own_usr1(int sig)
{
    (void)sig;
    static const char msg[] = "own usr1\n";
    ssize_t r = write(1, msg, sizeof msg - 1);
    (void)r;
}

static int put(int fd, const char *text)
{
    size_t n = strlen(text);
    return write(fd, text, n) == (ssize_t)n ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[1];
    long n = atol(argv[2]);
    const char *file = argc > 3 ? argv[3] : 0;
    if (!strcmp(mode, "ignored"))
        signal(SIGUSR1, SIG_IGN);
    tracer_region_t m = tracer_region_register("step"); /* tracing starts here */
    if (!strcmp(mode, "pipe")) {
        int fd = file ? open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
        if (fd < 0)
            return 3;
        char line[64];
        for (long i = 0;; i++) {
            tracer_mark(m, (uint64_t)i);
            snprintf(line, sizeof line, "%ld\n", i);
            if (put(fd, line))
                return 3;
            snprintf(line, sizeof line, "line %ld\n", i);
            if (put(1, line))
                return 5; /* EPIPE without SIGPIPE: not what this test wants */
        }
    }
    for (long i = 0; i < n; i++)
        tracer_mark(m, (uint64_t)i);
    for (size_t i = 0; i < sizeof sent / sizeof *sent; i++) {
        if (!strcmp(mode, sent[i].name)) {
            kill(getpid(), sent[i].sig);
            sleep(10);
            return 4;
        }
    }
    if (!strcmp(mode, "alarm")) {
        alarm(1);
        for (;;)
            pause();
    }
    if (!strcmp(mode, "virtual") || !strcmp(mode, "prof")) {
        struct itimerval t = {{0, 10000}, {0, 10000}};
        setitimer(!strcmp(mode, "prof") ? ITIMER_PROF : ITIMER_VIRTUAL, &t, 0);
        for (;;) { /* user time for the timers; a call now and then (a
                    * sanitizer's runtime delivers a signal in one) */
            for (volatile unsigned long spin = 0; spin < 100000; spin++)
                ;
            struct timespec none = {0, 0};
            nanosleep(&none, 0);
        }
    }
    if (!strcmp(mode, "fsize")) {
        int fd = file ? open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
        struct rlimit r = {1 << 30, 1 << 30};
        if (fd < 0 || setrlimit(RLIMIT_FSIZE, &r) || lseek(fd, 1 << 30, SEEK_SET) < 0)
            return 3;
        put(fd, "x");
        return 4;
    }
    if (!strcmp(mode, "own")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = own_usr1;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, 0);
    }
    if (!strcmp(mode, "own") || !strcmp(mode, "ignored")) {
        kill(getpid(), SIGUSR1);
        tracer_mark(m, (uint64_t)n);
        return 0;
    }
    if (!strcmp(mode, "end"))
        return 0;
    return 2;
}
