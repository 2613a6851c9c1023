/* job_exit.c - see job_exit.h. Runs in MPI_Finalize (arming) and at the
 * end of the run (counting out, and the last rank's write). */
#define _GNU_SOURCE 1
#include "job/job_exit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "session/session.h"
#include "summary/summary.h"
#include "writer/writer.h"

#define EXIT_MARK ".exit-"

static struct {
    tr_fd dir_fd;
    char abs[4096], dir[4096];
    int rank, size;
    int arrived; /* atomic: the exit step runs once */
} ex = {.dir_fd = TR_FD_NONE};

/* The files journals/.exit-<k> already there: a lower bound of the count
 * (a listing may be stale on a network file system, never ahead of it). */
static int marks_seen(int jfd)
{
    int fd = openat(jfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : 0;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += !strncmp(e->d_name, EXIT_MARK, sizeof EXIT_MARK - 1);
    closedir(d);
    return n;
}

/* Counts this rank out: its place k in 1..size, or -1 (errno set). The
 * marks are taken in order from 1 with O_EXCL, so they always form 1..m:
 * starting at (what a listing shows) + 1 never skips a free one. */
static int count_out(int jfd)
{
    for (int k = marks_seen(jfd) + 1; k <= ex.size; k++) {
        char name[32];
        snprintf(name, sizeof name, EXIT_MARK "%d", k);
        int fd = openat(jfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            close(fd);
            return k;
        }
        if (errno != EEXIST)
            return -1;
    }
    errno = ERANGE; /* more ranks counted out than the job has */
    return -1;
}

static void remove_marks(int jfd)
{
    for (int k = 1; k <= ex.size; k++) {
        char name[32];
        snprintf(name, sizeof name, EXIT_MARK "%d", k);
        unlinkat(jfd, name, 0);
    }
}

/* The last rank: every journal -> the archive, as `tracer recover` does. */
static void write_archive(int dfd, int jfd)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* Paths through /proc/self/fd: no name in the job's path is trusted
     * after it was opened. */
    char base[4200];
    snprintf(base, sizeof base, "/proc/self/fd/%d", dfd);
    if (access(base, F_OK))
        snprintf(base, sizeof base, "%s", ex.abs[0] ? ex.abs : ex.dir);
    char **paths = calloc((size_t)ex.size, sizeof *paths);
    size_t n = 0;
    for (int k = 0; paths && k < ex.size; k++) {
        char name[48];
        snprintf(name, sizeof name, "rank%d.journal", k);
        if (faccessat(jfd, name, R_OK, 0))
            continue; /* a rank not traced (TRACER_RANKS) */
        if (asprintf(&paths[n], "%s/journals/%s", base, name) < 0)
            break;
        n++;
    }
    tr_convert_report r;
    memset(&r, 0, sizeof r);
    int rc = -1;
    if (!paths)
        snprintf(r.error, sizeof r.error, "out of memory");
    else if (!n)
        rc = 1; /* no rank was traced: nothing to write */
    else
        rc = tr_writer_convert_job((const char *const *)paths, n, base, &r);
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    remove_marks(jfd);
    if (rc > 0)
        return;
    if (rc) {
        tr_log("job: writer: %s; the journals in %s/journals are kept: 'tracer recover %s' retries", r.error,
               ex.dir, ex.dir);
        return;
    }
    if (r.warning[0])
        tr_log("job: writer: %s; the journals in %s/journals are kept", r.warning, ex.dir);
    if (r.ranks_lost)
        tr_log("job: writer: %llu rank journal%s lost, %s; the other ranks are in %s/traces.otf2 and the journals "
               "are kept",
               (unsigned long long)r.ranks_lost, r.ranks_lost == 1 ? "" : "s", r.lost_journals, ex.dir);
    if (!tr_cfg.keep_journal && !r.warning[0] && !r.ranks_lost) {
        for (int k = 0; k < ex.size; k++) {
            char name[48];
            snprintf(name, sizeof name, "rank%d.journal", k);
            unlinkat(jfd, name, 0);
        }
        unlinkat(dfd, "journals", AT_REMOVEDIR);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (tr_cfg.verbose)
        tr_log("job: trace of %llu rank%s written to %s/traces.otf2 (%llu events) by rank %d, the last to exit, "
               "in %.1f ms",
               (unsigned long long)r.ranks, r.ranks == 1 ? "" : "s", ex.dir, (unsigned long long)r.events, ex.rank,
               1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec));
    if (tr_cfg.summary)
        tr_summary_report_fd(tr_log_fd(), base, ex.dir);
}

static void arrive(void)
{
    if (__atomic_exchange_n(&ex.arrived, 1, __ATOMIC_ACQ_REL))
        return;
    int dfd = tr_fd_reclaim(&ex.dir_fd, ex.abs, O_RDONLY | O_DIRECTORY);
    int jfd = dfd >= 0 ? openat(dfd, "journals", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    int k = jfd >= 0 ? count_out(jfd) : -1;
    if (k < 0)
        tr_log("job: rank %d cannot count itself out in %s/journals (%s); the job's archive is not written: "
               "'tracer recover %s' writes it once every rank has ended",
               ex.rank, ex.dir, strerror(errno), ex.dir);
    else if (k == ex.size)
        write_archive(dfd, jfd);
    if (jfd >= 0)
        close(jfd);
    tr_fd_release(&ex.dir_fd);
}

void tr_job_exit_arm(tr_fd *dir_fd, const char *abs, const char *dir, int rank, int size)
{
    ex.dir_fd = *dir_fd;
    *dir_fd = (tr_fd)TR_FD_NONE;
    snprintf(ex.abs, sizeof ex.abs, "%s", abs);
    snprintf(ex.dir, sizeof ex.dir, "%s", dir);
    ex.rank = rank;
    ex.size = size;
    /* The hook first, then the check: the session's end either sees the
     * hook or has already ended when tr_session_in_job() is asked (both
     * seq_cst); arrive() runs once either way. */
    __atomic_store_n(&tr_session_job_end_hook, arrive, __ATOMIC_SEQ_CST);
    if (!tr_session_in_job())
        arrive();
}
