/* An append that raced the end of the journal never writes into whatever
 * file took the journal's descriptor number (issue 18, B3).
 *
 * Names, the MPI_T catalogue and clock pairs are appended from the
 * program's threads (tr_journal_append), while session_end detaches the
 * journal and closes its descriptor. An append that has checked the
 * descriptor and not yet written is held inside writev (linked with
 * -Wl,--wrap=writev); meanwhile another thread detaches the journal,
 * releases it and, when the number is free, gives it to a file of its own
 * (the program's next open, a dup2). Then the append goes on. Its frame must
 * be in the journal, never in that file.
 *
 *  - "waits": the append is let go once the detach is done, or after 200 ms
 *    (the detach is expected to wait for it); the detach must return only
 *    after the append has.
 *  - "stuck": the append is let go only once the detach has returned,
 *    however long: a detach that waits for ever would hang here (the test's
 *    timeout), one that does not wait lets the number be reused. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "journal/journal_write.h"

ssize_t __real_writev(int fd, const struct iovec *iov, int n);

static pthread_t appender;
static int hold_armed, held_fd = -1;
static sem_t held, go, detached;
static int write_done;

/* The appender's first write waits here, after its descriptor check. */
ssize_t __wrap_writev(int fd, const struct iovec *iov, int n)
{
    if (__atomic_load_n(&hold_armed, __ATOMIC_ACQUIRE) && pthread_equal(pthread_self(), appender)) {
        __atomic_store_n(&hold_armed, 0, __ATOMIC_RELEASE);
        held_fd = fd;
        sem_post(&held);
        while (sem_wait(&go) && errno == EINTR)
            ;
        ssize_t r = __real_writev(fd, iov, n);
        /* Here, not after tr_journal_append returns: the append leaves the
         * count the detach waits on right after this write, and a flag set
         * after that would race the detach's look at it. */
        __atomic_store_n(&write_done, 1, __ATOMIC_SEQ_CST);
        return r;
    }
    return __real_writev(fd, iov, n);
}

static const char name[] = "\1\0\0\0\7\0\0\0late name"; /* a STRING frame: USER_REGION 7 */

static void *append_late_name(void *arg)
{
    (void)arg;
    tr_frame_header h = {0};
    h.raw_bytes = sizeof name;
    tr_journal_append(&h, TR_FRAME_STRING, name, sizeof name);
    return 0;
}

static char victim_path[256];
static int append_done_at_detach, number_reused;

/* session_end's part: detach, release, then the number is anyone's. */
static void *end_journal(void *arg)
{
    (void)arg;
    tr_fd j;
    tr_journal_detach(&j);
    append_done_at_detach = __atomic_load_n(&write_done, __ATOMIC_SEQ_CST);
    tr_fd_release(&j);
    if (fcntl(held_fd, F_GETFD) < 0 && errno == EBADF) {
        int v = open(victim_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (v >= 0 && dup2(v, held_fd) == held_fd)
            number_reused = 1;
        if (v >= 0 && v != held_fd)
            close(v);
    }
    sem_post(&detached);
    return 0;
}

static off_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : st.st_size;
}

static int run(const char *mode)
{
    int stuck = !strcmp(mode, "stuck");
    char dir[200];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tracer-detach-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return perror("mkdtemp"), 1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0 || tr_journal_open(dfd)) {
        printf("FAIL %s: cannot open a journal in %s\n", mode, dir);
        return 1;
    }
    char jpath[300];
    snprintf(jpath, sizeof jpath, "%s/%s", dir, TR_JOURNAL_NAME);
    snprintf(victim_path, sizeof victim_path, "%s/victim", dir);
    write_done = append_done_at_detach = number_reused = 0;
    held_fd = -1;
    sem_init(&held, 0, 0);
    sem_init(&go, 0, 0);
    sem_init(&detached, 0, 0);

    __atomic_store_n(&hold_armed, 1, __ATOMIC_RELEASE);
    pthread_create(&appender, 0, append_late_name, 0);
    sem_wait(&held);
    pthread_t ender;
    pthread_create(&ender, 0, end_journal, 0);
    if (stuck) {
        sem_wait(&detached);
    } else {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000000;
        if (until.tv_nsec >= 1000000000)
            until.tv_sec++, until.tv_nsec -= 1000000000;
        while (sem_timedwait(&detached, &until) && errno == EINTR)
            ;
    }
    sem_post(&go);
    pthread_join(appender, 0);
    pthread_join(ender, 0);

    off_t in_victim = size_of(victim_path), in_journal = size_of(jpath);
    printf("%s: frame %s; the number was %s; the journal holds %lld bytes, the file at its number %lld\n", mode,
           append_done_at_detach ? "written before the detach returned" : "still pending when the detach returned",
           number_reused ? "reused" : "never free", (long long)in_journal, (long long)(in_victim < 0 ? 0 : in_victim));
    int fail = 0;
    if (in_victim > 0) {
        printf("FAIL %s: the late frame went into the file that took the journal's descriptor number\n", mode);
        fail = 1;
    }
    if (in_journal != (off_t)(sizeof(tr_frame_header) + sizeof name)) {
        printf("FAIL %s: the journal should hold the late frame (%zu bytes)\n", mode,
               sizeof(tr_frame_header) + sizeof name);
        fail = 1;
    }
    if (!stuck && !append_done_at_detach) {
        printf("FAIL %s: the detach returned while an append was still writing\n", mode);
        fail = 1;
    }
    unlink(jpath);
    unlink(victim_path);
    rmdir(dir);
    close(dfd);
    return fail;
}

int main(void)
{
    int fail = run("waits");
    fail |= run("stuck");
    return fail;
}
