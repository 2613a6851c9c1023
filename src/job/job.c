/* job.c - see job.h. Runs only inside MPI_Init and MPI_Finalize (the write
 * at exit is job_exit.c's). */
#define _GNU_SOURCE 1 /* asprintf */
#include "job/job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/fd_keep.h"
#include "core/lifecycle.h"
#include "core/log.h"
#include "job/clock_offset.h"
#include "job/job_exit.h"
#include "job/job_write.h"
#include "job/mpi_world.h"
#include "journal/journal_frames.h"
#include "mpit/mpit_api.h"
#include "session/session.h"
#include "summary/summary.h"
#include "session/output_dir.h"
#include "writer/writer.h"

/* The job's directory is held from MPI_Init to MPI_Finalize (core/fd_keep.h);
 * @abs is where the kernel had it, to reopen it if the program takes it. */
static struct {
    int active, rank, size;
    tr_fd dir_fd;
    char dir[4096], abs[4096];
    tr_mpi_world w;
} job = {.dir_fd = TR_FD_NONE};

static void keep_dir(int fd)
{
    if (tr_fd_keep(&job.dir_fd, fd) < 0 || tr_fd_path(job.dir_fd.fd, job.abs, sizeof job.abs))
        job.abs[0] = 0;
}

/* The job directory's descriptor, reopened if the program took its number. */
static int dir_fd(void) { return tr_fd_reclaim(&job.dir_fd, job.abs, O_RDONLY | O_DIRECTORY); }

/* The same answer on every rank: the MPI family and TRACER_ENABLE. */
static int takes_part(void)
{
    tr_mpit_api api;
    enum tr_mpit_status st = tr_mpit_resolve(&api, 0, 0);
    if (st != TR_MPIT_READY && st != TR_MPIT_NO_EVENTS)
        return 0;
    const char *e = getenv("TRACER_ENABLE");
    if (e && (!strcmp(e, "0") || !strcasecmp(e, "no") || !strcasecmp(e, "false") || !strcasecmp(e, "off")))
        return 0;
    return tr_mpi_world_resolve(&job.w) == 0;
}

static void journal_offset(uint32_t when)
{
    tr_journal_clock_offset o;
    int per_rank = tr_cfg.clock_offsets == TR_OFFSETS_RANK;
    if (tr_clock_offset_measure(&job.w, job.rank, job.size, when, per_rank, &o) == 0 && job.rank != 0)
        tr_journal_write_clock_offset(&o);
    else if (job.rank == 0)
        tr_journal_write_clock_offset(&o); /* offset 0 by definition */
}

/* Rank 0 claims the directory; everyone learns its path ("" on failure). */
static void agree_on_directory(void)
{
    int created = 0, fd = -1;
    job.dir[0] = 0;
    if (job.rank == 0) {
        /* Started without a launcher (a singleton), rank 0 already has the
         * job's directory: the one it claimed at activation. */
        long launcher_rank;
        if (!tr_lifecycle_launcher_rank(&launcher_rank))
            fd = tr_session_dir_dup(job.dir, sizeof job.dir);
        if (fd < 0)
            fd = tr_output_dir_create_job(job.dir, sizeof job.dir, &created);
        keep_dir(fd);
        /* 0775 less the umask: never writable by others */
        if (job.dir_fd.fd >= 0 && mkdirat(job.dir_fd.fd, "journals", 0775) && errno != EEXIST) {
            tr_log("job: cannot create %s/journals: %s; each rank writes its own archive", job.dir,
                   strerror(errno));
            tr_fd_release(&job.dir_fd);
        }
        if (job.dir_fd.fd < 0)
            job.dir[0] = 0;
    }
    if (job.w.bcast(job.dir, (int)sizeof job.dir, MPI_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        job.dir[0] = 0;
    job.dir[sizeof job.dir - 1] = 0;
    if (!job.dir[0] || job.rank == 0)
        return;
    fd = open(job.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) || st.st_uid != geteuid())) {
        close(fd);
        fd = -1;
    }
    keep_dir(fd);
    if (job.dir_fd.fd < 0)
        tr_log("job: cannot open the job's directory %s; this rank writes its own archive", job.dir);
}

void tr_job_after_init(int rc)
{
    if (rc != MPI_SUCCESS || job.active || !takes_part())
        return;
    if (job.w.comm_rank(MPI_COMM_WORLD, &job.rank) != MPI_SUCCESS ||
        job.w.comm_size(MPI_COMM_WORLD, &job.size) != MPI_SUCCESS)
        return;
    job.active = 1;
    tr_journal_write_mpi_rank(job.rank, job.size);
    agree_on_directory();
    if (job.dir_fd.fd >= 0)
        tr_session_join_job(job.dir_fd.fd, job.dir, job.rank);
    journal_offset(1);
}

/* Every rank together, once every rank's journal is complete. */
static void write_job_archive(void)
{
    char journal[4300], jdir[4200];
    snprintf(jdir, sizeof jdir, "%s/journals", job.dir);
    snprintf(journal, sizeof journal, "%s/rank%d.journal", jdir, job.rank);
    int dfd = dir_fd();
    int mine = dfd >= 0 && access(journal, R_OK) == 0;
    tr_convert_report r;
    tr_job_write_times t;
    int rc = tr_job_write(&job.w, dfd, job.dir, mine ? journal : 0, &r, &t);
    if (rc) {
        if (job.rank == 0)
            tr_log("job: writer: %s; the journals in %s are kept: 'tracer recover %s' retries", r.error, jdir,
                   job.dir);
        return;
    }
    if (job.rank == 0 && r.warning[0])
        tr_log("job: writer: %s; the journals in %s are kept", r.warning, jdir);
    int keep = tr_cfg.keep_journal || r.warning[0];
    /* Rank 0's warning decides for all: every rank keeps its journal then. */
    job.w.bcast(&keep, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!keep && mine)
        unlink(journal);
    job.w.barrier(MPI_COMM_WORLD);
    if (!keep && job.rank == 0)
        rmdir(jdir);
    if (job.rank == 0 && tr_cfg.verbose)
        tr_log("job: trace of %llu rank%s written to %s/traces.otf2 (%llu events) in %.1f ms: events %.1f, "
               "unification %.1f, local definitions %.1f, global definitions %.1f",
               (unsigned long long)r.ranks, r.ranks == 1 ? "" : "s", job.dir, (unsigned long long)r.events,
               1e3 * t.total_s, 1e3 * t.events_s, 1e3 * t.unify_s, 1e3 * t.local_s, 1e3 * t.global_s);
    if (job.rank == 0 && tr_cfg.summary)
        tr_summary_report_fd(tr_log_fd(), job.dir, job.dir);
}

void tr_job_before_finalize(void)
{
    if (!job.active)
        return;
    journal_offset(2);
    /* TRACER_JOB_WRITE=finalize: the archive is written while MPI still
     * works, so this rank's recording ends here (later events are counted,
     * not traced). exit: recording goes on to the process's end, and the
     * last rank to exit writes the archive (job_exit.h). */
    int at_exit = tr_cfg.job_write == TR_JOB_WRITE_EXIT;
    if (!at_exit)
        tr_lifecycle_end("MPI_Finalize");
    job.w.barrier(MPI_COMM_WORLD); /* finalize: every journal is complete */
    /* Written by all ranks, or by none (when any rank's environment says
     * TRACER_WRITE_AT_END=0, or another TRACER_JOB_WRITE - normally all
     * ranks have the launcher's). {min, -max} in one reduction tells a
     * disagreement. */
    int want = job.dir[0] && tr_cfg.write_at_end ? 1 + at_exit : 0;
    int agreed[2] = {want, -want};
    if (job.w.allreduce(MPI_IN_PLACE, agreed, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) {
        agreed[0] = 0;
    } else if (agreed[0] != -agreed[1]) {
        if (job.rank == 0)
            tr_log("job: TRACER_WRITE_AT_END or TRACER_JOB_WRITE differs between ranks, so no rank writes the "
                   "archive; the journals in %s/journals stay: 'tracer recover %s' writes it",
                   job.dir, job.dir);
        agreed[0] = 0;
    }
    if (agreed[0] == 1)
        write_job_archive();
    else if (agreed[0] == 2)
        tr_job_exit_arm(&job.dir_fd, job.abs, job.dir, job.rank, job.size);
    tr_fd_release(&job.dir_fd);
    job.active = 0;
}
