/* session.c - see session.h. Runs at activation and at the end of the run,
 * never on the hot path. */
#include "session/session.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/fd_keep.h"
#include "core/fork_guard.h"
#include "core/inflight.h"
#include "core/lifecycle.h"
#include "core/log.h"
#include "journal/consumer.h"
#include "journal/journal_frames.h"
#include "journal/journal_write.h"
#include "session/crash.h"
#include "session/output_dir.h"
#include "summary/summary.h"
#include "writer/writer.h"

/* The run's directory is held for the whole run (core/fd_keep.h): @dir_abs
 * is where the kernel had it, to reopen it if the program takes the
 * descriptor; @dir_path is how the user named it, for messages. */
static tr_fd dir = TR_FD_NONE;
static int active, dir_created, job_mode;
/* Runs first at the end of the run, if set (MPI_T's last clock pairs). */
static void (*end_hook)(void);
void (*tr_session_job_end_hook)(void);
static char dir_path[4096], dir_abs[4096];
/* A rank's "D.rank<N> already holds a trace; writing to D.rank<N>.1
 * instead", held back until it is known that the directory stays: joining
 * its job at MPI_Init removes it, and the line would name a directory that
 * never exists afterwards (issue 34, item 9). */
static char dir_note[8500];

static void after_fork_child(void)
{
    /* The child records nothing and never touches the parent's files. */
    active = 0;
    tr_crash_forget_journal();
    tr_journal_close();
    tr_fd_release(&dir);
}

/* The directory's descriptor, reopened if the program took its number. */
static int dir_fd(void) { return tr_fd_reclaim(&dir, dir_abs, O_RDONLY | O_DIRECTORY); }

static void keep_dir(int fd)
{
    if (tr_fd_keep(&dir, fd) < 0 || tr_fd_path(dir.fd, dir_abs, sizeof dir_abs))
        dir_abs[0] = 0;
}

static int write_start(void)
{
    static tr_kv kv; /* 32 KiB: not on the stack of a callback */
    kv.len = 0;
    uint64_t pid = (uint64_t)getpid();
    tr_kv_add(&kv, TR_KEY_PID, &pid, 8);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    tr_kv_add_text(&kv, TR_KEY_HOSTNAME, host);
    char cmd[8192];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, cmd, sizeof cmd) : 0;
    if (fd >= 0)
        close(fd);
    if (n > 0)
        tr_kv_add(&kv, TR_KEY_CMDLINE, cmd, (uint32_t)n);
    char line[700];
    for (size_t i = 0; i < tr_cfg_nvars; i++) {
        snprintf(line, sizeof line, "%s=%.600s (%s)", tr_cfg_vars[i].name,
                 tr_cfg_loaded.raw[i] ? tr_cfg_loaded.raw[i] : tr_cfg_vars[i].def,
                 tr_cfg_loaded.source[i] == TR_CFG_FROM_ENV ? "environment" : "default");
        tr_kv_add_text(&kv, TR_KEY_CONFIG, line);
    }
    uint32_t tsc = (uint32_t)tr_clock_use_tsc;
    tr_kv_add(&kv, TR_KEY_CLOCK_TSC, &tsc, 4);
    uint64_t pair[2];
    tr_clock_start_pair(&pair[0], &pair[1]);
    tr_kv_add(&kv, TR_KEY_CLOCK0, pair, 16);
    int64_t off = tr_clock_realtime_offset_ns();
    tr_kv_add(&kv, TR_KEY_REALTIME_OFFSET, &off, 8);
    const char *inflight = tr_inflight_path();
    if (inflight[0]) {
        char v[128];
        uint64_t id = tr_inflight_run_id();
        size_t len = strlen(inflight);
        memcpy(v, &id, 8);
        memcpy(v + 8, inflight, len);
        tr_kv_add(&kv, TR_KEY_INFLIGHT, v, (uint32_t)(8 + len));
    }
    if (tr_journal_write_start(&kv))
        return -1;
    /* Before any event: a run that dies before the consumer thread wrote a
     * thing still tells recover which files name its code. A failure costs
     * only those names (the consumer tries again). */
    tr_journal_write_modules();
    return 0;
}

static int session_start(void)
{
    tr_writer_set_threads((int)tr_cfg.write_threads);
    if (tr_buf_init(tr_cfg.max_memory, tr_cfg.buffer_size, tr_cfg.on_full == TR_ON_FULL_DROP, 1)) {
        tr_log("cannot reserve %llu bytes of buffer memory (TRACER_MAX_MEMORY); this run is not traced",
               (unsigned long long)tr_cfg.max_memory);
        return -1;
    }
    long rank;
    int launched = tr_lifecycle_launcher_rank(&rank);
    int fd = tr_output_dir_create(dir_path, sizeof dir_path, &dir_created, launched ? dir_note : 0, sizeof dir_note);
    if (fd < 0) {
        tr_inflight_remove();
        return -1;
    }
    keep_dir(fd);
    if (dir.fd < 0 || tr_journal_open(dir.fd)) {
        tr_log("journal: cannot create %s/%s: %s; this run is not traced", dir_path, TR_JOURNAL_NAME,
               strerror(errno));
        tr_fd_release(&dir);
        tr_inflight_remove();
        return -1;
    }
    if (write_start() || tr_consumer_start(tr_cfg.flush_interval_ns)) {
        tr_log("journal: cannot start writing %s/%s: %s; this run is not traced", dir_path, TR_JOURNAL_NAME,
               strerror(errno));
        tr_journal_close();
        tr_fd_release(&dir);
        tr_inflight_remove();
        return -1;
    }
    tr_crash_set_dir(dir_path);
    tr_crash_install();
    active = 1;
    pthread_atfork(0, 0, after_fork_child);
    return 0;
}

static void write_end(uint64_t end_ticks)
{
    static tr_journal_lost_thread lost[TR_JOURNAL_END_MAX_LOST]; /* the end runs once */
    size_t nlost = 0;
    tr_journal_end e = {.end_tick = end_ticks};
    e.has_status = tr_lifecycle_exit_status(&e.status);
    /* The threads may still be recording (dropping) meanwhile: their
     * buffers' counters are read with atomic loads (core/buf.c). */
    for (tr_tbuf *b = tr_buf_registered(); b; b = b->next_registered) {
        for (int d = 0; d < 2; d++) {
            e.small_count[d] += __atomic_load_n(&b->small_count[d], __ATOMIC_RELAXED);
            e.small_bytes[d] += __atomic_load_n(&b->small_bytes[d], __ATOMIC_RELAXED);
        }
        /* A drop-mode loss the thread never got to record itself. */
        uint64_t n_lost = __atomic_load_n(&b->lost, __ATOMIC_RELAXED);
        if (n_lost && nlost < TR_JOURNAL_END_MAX_LOST)
            lost[nlost++] = (tr_journal_lost_thread){b->index, n_lost, __atomic_load_n(&b->lost_first, __ATOMIC_RELAXED),
                                                     __atomic_load_n(&b->lost_last, __ATOMIC_RELAXED)};
    }
    tr_journal_write_end(&e, lost, nlost);
}

/* Nothing recorded: leave nothing behind but what was already there. */
static void remove_empty_run(int dfd)
{
    unlinkat(dfd, TR_JOURNAL_NAME, 0);
    unlinkat(dfd, "traces.otf2", 0);
    if (dir_created)
        rmdir(dir_path);
}

/* @fd as a path (/proc/self/fd/N), so that no name in a path can be swapped
 * for a link after it was checked; without /proc, @fallback. */
static void fd_path(char *out, size_t size, int fd, const char *fallback)
{
    snprintf(out, size, "/proc/self/fd/%d", fd);
    struct stat a, b;
    if (fd < 0 || stat(out, &a) || fstat(fd, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
        snprintf(out, size, "%s", fallback);
}

/* The run directory locked as 'tracer recover' locks it (tools/cmd_recover.c),
 * from before the in-flight file goes until the archive is written: with
 * neither the file's lock nor this one, a recover started during the write
 * would take the run for dead and write the same archive beside it. A
 * descriptor of its own, so that no child forked earlier shares the lock
 * and keeps it. -1 when not taken (a recover already holds it: that one
 * sees the run's trace appear and writes nothing). */
static int lock_dir_for_write(void)
{
    int dfd = dir_fd();
    int fd = dfd < 0 ? -1 : openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void session_end(uint64_t end_ticks)
{
    if (!active)
        return;
    void (*hook)(void) = __atomic_load_n(&end_hook, __ATOMIC_ACQUIRE);
    if (hook)
        hook(); /* MPI_T's last clock pairs, while the journal is open */
    tr_clock_calibrate_end(); /* first, so the consumer's last clock pair spans it */
    tr_consumer_stop();
    write_end(end_ticks);
    /* No more appends (a late name has nowhere to go); the journal is read
     * through its own descriptor: no path in the directory is trusted. */
    tr_fd journal;
    tr_journal_detach(&journal);
    tr_crash_forget_journal();
    int write_lock = !job_mode && tr_cfg.write_at_end ? lock_dir_for_write() : -1;
    /* Every record is in the journal: the copy in /dev/shm is no longer
     * needed, unless an append failed (then tracer recover takes it). */
    if (!tr_journal_write_failed())
        tr_inflight_remove();
    /* seq_cst with the job end hook: tr_session_in_job() then sees this, or
     * the hook is called below (src/job/job_exit.c needs one of the two) */
    __atomic_store_n(&active, 0, __ATOMIC_SEQ_CST);
    if (!job_mode && dir_note[0]) /* the directory stays: now the line is true */
        tr_log("%s", dir_note);
    int dfd = job_mode ? -1 : dir_fd();
    if (job_mode || dfd < 0) {
        /* The job's archive is written from every rank's journal. */
        if (!job_mode)
            tr_log("writer: the trace directory %s cannot be reopened (%s) after the program closed its "
                   "descriptor; no trace written: 'tracer recover %s' writes it from the journal there",
                   dir_path, strerror(errno), dir_path);
        tr_fd_release(&journal);
        tr_fd_release(&dir);
        if (write_lock >= 0)
            close(write_lock);
        void (*job_end)(void) = __atomic_load_n(&tr_session_job_end_hook, __ATOMIC_SEQ_CST);
        if (job_mode && job_end)
            job_end();
        return;
    }

    /* TRACER_WRITE_AT_END=0: the journal is the durable record already, so
     * the program ends as soon as it is closed; 'tracer recover' writes the
     * archive from it later (or elsewhere), at the writer's full cost. */
    if (!tr_cfg.write_at_end) {
        if (tr_cfg.verbose)
            tr_log("journal kept in %s (TRACER_WRITE_AT_END=0): 'tracer recover %s' writes the trace", dir_path,
                   dir_path);
        tr_fd_release(&journal);
        tr_fd_release(&dir);
        return;
    }

    char apath[4200], jpath[4300], fallback[4300];
    fd_path(apath, sizeof apath, dfd, dir_path);
    snprintf(fallback, sizeof fallback, "%s/%s", apath, TR_JOURNAL_NAME);
    fd_path(jpath, sizeof jpath, journal.fd, fallback);

    tr_convert_report r;
    tr_crash_writing_trace(1);
    int failed = tr_writer_convert(jpath, apath, &r);
    tr_crash_writing_trace(0);
    if (failed) {
        if (!strcmp(r.error, "the journal holds no events")) {
            /* Silent by default: a preload reaches every process of a job
             * script, most with nothing to record. But a user who narrowed
             * TRACER_OMPT asked for this run's events and is told. */
            uint32_t all = TR_OMPT_CONSTRUCTS | TR_OMPT_DATA_OPS | TR_OMPT_KERNELS | TR_OMPT_LINK_MAPS |
                           TR_OMPT_HOST_STATES;
            if ((tr_cfg.ompt & all) != all)
                tr_log("no events were recorded (TRACER_OMPT leaves out some OpenMP events; 'tracer info "
                       "--config' shows its value); no trace written");
            else if (tr_cfg.verbose)
                tr_log("no events were recorded; no trace written");
            remove_empty_run(dfd);
        } else {
            tr_log("writer: %s; the journal %s/%s is kept: 'tracer recover %s' retries", r.error, dir_path,
                   TR_JOURNAL_NAME, dir_path);
        }
    } else {
        if (r.warning[0])
            tr_log("writer: %s; the journal %s/%s is kept", r.warning, dir_path, TR_JOURNAL_NAME);
        else if (!tr_cfg.keep_journal)
            unlinkat(dfd, TR_JOURNAL_NAME, 0);
        if (tr_cfg.verbose)
            tr_log("trace written to %s/traces.otf2 (%llu events, %llu host threads, %llu devices%s)", dir_path,
                   (unsigned long long)r.events, (unsigned long long)r.locations,
                   (unsigned long long)r.devices, r.lost ? ", events were dropped: TRACER_ON_FULL=drop" : "");
        if (r.lost)
            tr_log("%llu events were dropped because buffers were full (TRACER_ON_FULL=drop); the trace marks "
                   "where",
                   (unsigned long long)r.lost);
        if (tr_cfg.summary) /* read back through the same path the archive was written to */
            tr_summary_report_fd(tr_log_fd(), apath, dir_path);
    }
    tr_fd_release(&journal);
    tr_fd_release(&dir);
    if (write_lock >= 0)
        close(write_lock);
}

/* Recording, in this process: not in a child made without atfork handlers
 * (_Fork, a raw clone), which has a copy of active (core/fork_guard.h). */
static int active_here(void) { return __atomic_load_n(&active, __ATOMIC_SEQ_CST) && tr_fork_guard_here(); }

void tr_session_before_abort(int errorcode)
{
    if (!active_here())
        return;
    tr_crash_save_journal(tr_crash_mpi_abort(errorcode));
    __atomic_store_n(&active, 0, __ATOMIC_SEQ_CST);
}

int tr_session_in_job(void) { return active_here() && job_mode; }

int tr_session_dir_dup(char *path, size_t size)
{
    int dfd = active_here() && !job_mode ? dir_fd() : -1;
    if (dfd < 0)
        return -1;
    snprintf(path, size, "%s", dir_path);
    return fcntl(dfd, F_DUPFD_CLOEXEC, 0);
}

int tr_session_join_job(int job_fd, const char *job_path, int rank)
{
    if (!active_here() || job_mode)
        return 0;
    int dfd = dir_fd();
    if (dfd < 0) {
        tr_log("job: the run's directory %s cannot be reopened (%s); this rank's journal stays there", dir_path,
               strerror(errno));
        return -1;
    }
    char name[64];
    snprintf(name, sizeof name, "journals/rank%d.journal", rank);
    /* The open journal keeps its descriptor (and the crash handler's) across
     * the rename; both directories are siblings, so on one file system. */
    if (renameat(dfd, TR_JOURNAL_NAME, job_fd, name)) {
        tr_log("job: cannot move the journal into %s/%s: %s; this rank writes its own archive in %s", job_path,
               name, strerror(errno), dir_path);
        return -1;
    }
    int fd = fcntl(job_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        renameat(job_fd, name, dfd, TR_JOURNAL_NAME);
        return -1;
    }
    tr_journal_moved();
    tr_crash_quiet(); /* the launcher ends a job's ranks together, and says so */
    struct stat a, b;
    int same = !fstat(dfd, &a) && !fstat(job_fd, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
    if (!same) {
        unlinkat(dfd, "traces.otf2", 0); /* this directory's claim */
        if (dir_created)
            rmdir(dir_path);
    }
    tr_fd_release(&dir);
    keep_dir(fd);
    dir_created = 0;
    dir_note[0] = 0;
    snprintf(dir_path, sizeof dir_path, "%s", job_path);
    job_mode = 1;
    return 0;
}

static void note_user_region(uint32_t id, const char *name)
{
    if (name && tr_journal_is_open())
        tr_journal_write_user_region(id, name);
}

static void note_text(uint64_t id, const char *text)
{
    if (text && tr_journal_is_open())
        tr_journal_write_text(id, text);
}

static void note_mpit(const tr_mpit_note *note) { tr_journal_write_mpit(note); }

static void set_interval_hook(void (*hook)(void))
{
    __atomic_store_n(&tr_consumer_interval_hook, hook, __ATOMIC_RELEASE);
}

static void set_end_hook(void (*hook)(void)) { __atomic_store_n(&end_hook, hook, __ATOMIC_RELEASE); }

/* libtracer.so's composition root (core/lifecycle.h): the producers reach
 * the journal, the consumer and the writer only through this table. */
const tr_lifecycle_ops tr_lifecycle_root = {
    .start = session_start,
    .end = session_end,
    .note_user_region = note_user_region,
    .note_text = note_text,
    .note_mpit = note_mpit,
    .set_interval_hook = set_interval_hook,
    .set_end_hook = set_end_hook,
};
