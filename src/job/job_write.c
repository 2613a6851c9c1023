/* job_write.c - see job_write.h. Every step is taken by every rank, and
 * whether to go on is agreed after each step that one rank alone can fail,
 * so no rank is left waiting in a collective the others abandoned. */
#include "job/job_write.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "job/job_tree.h"
#include "job/otf2_mpi.h"
#include "writer/archive_stage.h"
#include "writer/job_part.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int merge(void *ctx, const void *blob, size_t len) { return tr_job_union_add_blob(ctx, blob, len); }
static int pack(void *ctx, tr_blob *out) { return tr_job_union_pack(ctx, out); }
static const tr_tree_ops union_ops = {merge, pack};

typedef struct state {
    tr_job_comm c;
    tr_job_part *part;
    tr_job_union *u;
    OTF2_Archive *ar;
    tr_stage stage;         /* where the archive is written (archive_stage.h) */
    uint64_t first, nlocs;  /* this rank's location ids */
    char err[512];
} state;

/* Rank 0 makes the stage the archive is written in, every rank opens it. */
static int stage(state *s, int dir_fd, const char *dir)
{
    char name[sizeof s->stage.name] = "";
    int ok = 1;
    if (s->c.rank == 0) {
        ok = tr_stage_create(&s->stage, dir_fd, dir, s->err, sizeof s->err) == 0;
        if (ok)
            snprintf(name, sizeof name, "%s", s->stage.name);
    }
    if (s->c.w->bcast(name, (int)sizeof name, MPI_CHAR, 0, s->c.comm) != MPI_SUCCESS) {
        snprintf(s->err, sizeof s->err, "MPI_Bcast failed");
        ok = 0;
    }
    name[sizeof name - 1] = 0;
    if (s->c.rank != 0 && ok && name[0]) {
        if (dir_fd >= 0)
            ok = tr_stage_join(&s->stage, dir_fd, dir, name, s->err, sizeof s->err) == 0;
        else /* no journal here, so no file to write (job.c said why) */
            snprintf(s->stage.path, sizeof s->stage.path, "%s/%s", dir, name);
    }
    return tr_job_agree(&s->c, ok && name[0]) ? 0 : -1;
}

/* The archive's events: every rank's own files. */
static int write_events(state *s, const char *dir)
{
    uint64_t counts[3] = {0, 0, 0}, bases[3];
    int counted = !s->part || !tr_job_part_counts(s->part, counts);
    if (!counted)
        snprintf(s->err, sizeof s->err, "cannot count the locations of its journal (out of memory, or unreadable)");
    if (tr_job_exscan_u64(&s->c, counts, bases, 3)) {
        snprintf(s->err, sizeof s->err, "MPI_Exscan failed");
        return -1;
    }
    if (!tr_job_agree(&s->c, counted))
        return -1;
    s->first = bases[0];
    s->nlocs = counts[0];
    s->ar = tr_job_archive_open(s->stage.path, s->part ? tr_job_part_hostname(s->part) : 0, 0);
    if (!tr_job_agree(&s->c, s->ar != 0)) {
        snprintf(s->err, sizeof s->err, "OTF2 cannot open an archive (out of memory)");
        return -1;
    }
    int ok = OTF2_Archive_SetCollectiveCallbacks(s->ar, tr_otf2_mpi_callbacks(), 0, (OTF2_CollectiveContext *)&s->c,
                                                 0) == OTF2_SUCCESS &&
             OTF2_Archive_OpenEvtFiles(s->ar) == OTF2_SUCCESS;
    if (!ok)
        snprintf(s->err, sizeof s->err, "OTF2 cannot open the archive in %s", dir);
    if (ok && s->part && tr_job_part_write_events(s->part, s->ar, bases, s->err, sizeof s->err))
        ok = 0;
    if (s->ar && OTF2_Archive_CloseEvtFiles(s->ar) != OTF2_SUCCESS && ok) {
        snprintf(s->err, sizeof s->err, "OTF2 failed to close the event files");
        ok = 0;
    }
    return ok ? 0 : -1;
}

/* The unified definitions: up the tree into rank 0's union, then back to
 * every rank; each maps its ids in its local definitions. */
static int unify(state *s, double *local_s)
{
    int ok = (s->u = tr_job_union_new()) != 0;
    if (ok && s->part && tr_job_union_add_part(s->u, s->part))
        ok = 0;
    if (!ok)
        snprintf(s->err, sizeof s->err, "out of memory");
    int rc = tr_job_tree_reduce(&s->c, &union_ops, s->u, ok);
    tr_blob defs = {0};
    if (s->c.rank == 0 && !rc && tr_job_union_pack_defs(s->u, &defs))
        tr_blob_free(&defs); /* empty: tells every rank it failed */
    if (tr_job_bcast_blob(&s->c, &defs)) {
        if (ok)
            snprintf(s->err, sizeof s->err, "the definitions of some rank could not be unified");
        tr_blob_free(&defs);
        return -1;
    }
    double t0 = now();
    ok = OTF2_Archive_OpenDefFiles(s->ar) == OTF2_SUCCESS;
    if (ok && s->part && tr_job_part_local_defs(s->part, s->ar, defs.p, defs.n)) {
        snprintf(s->err, sizeof s->err, "this rank's definitions are not in the unified ones");
        ok = 0;
    }
    OTF2_Archive_CloseDefFiles(s->ar);
    tr_blob_free(&defs);
    *local_s = now() - t0;
    return ok ? 0 : -1;
}

/* After a failure once the stage was made: rank 0 removes it, once every
 * rank is done with its files, so that the directory is as
 * TRACER_WRITE_AT_END=0 leaves it (journals and the empty claim) and
 * `tracer recover` starts clean. */
static void remove_partial(state *s)
{
    tr_job_agree(&s->c, 1); /* every rank's files are closed */
    if (s->c.rank == 0)
        tr_stage_discard(&s->stage);
    tr_stage_leave(&s->stage);
}

int tr_job_write(const tr_mpi_world *w, int dir_fd, const char *dir, const char *journal, tr_convert_report *r,
                 tr_job_write_times *t)
{
    memset(r, 0, sizeof *r);
    memset(t, 0, sizeof *t);
    /* MPI_COMM_WORLD itself, as for the clock offsets: inside MPI_Finalize no
     * message of the application can be in flight, and a communicator of
     * tracer's own would be one more the MPI library reports (MPI_T
     * communicator events the application may be watching). */
    state s = {.c = {.w = w, .comm = MPI_COMM_WORLD}, .stage = {.fd = -1}};
    if (w->comm_rank(s.c.comm, &s.c.rank) != MPI_SUCCESS || w->comm_size(s.c.comm, &s.c.size) != MPI_SUCCESS) {
        tr_log("job: MPI_Comm_rank failed at MPI_Finalize; the journals are kept");
        return -1;
    }
    tr_job_errors_begin();
    double t0 = now();
    int ok = 1;
    if (journal && !(s.part = tr_job_part_open(journal, s.c.rank == 0, 0, s.err, sizeof s.err)))
        ok = 0;
    /* Nothing to write when no rank recorded an event. */
    int empty = !s.part || tr_job_part_empty(s.part);
    int rc = -1;
    if (!tr_job_agree(&s.c, ok)) {
        if (!ok)
            tr_log("job: rank %d: %s", s.c.rank, s.err);
    } else if (tr_job_agree(&s.c, empty)) {
        snprintf(r->error, sizeof r->error, "no rank's journal holds events");
    } else if (stage(&s, dir_fd, dir)) {
        if (s.err[0])
            tr_log("job: rank %d: %s", s.c.rank, s.err);
        if (s.c.rank == 0)
            tr_stage_discard(&s.stage);
        tr_stage_leave(&s.stage);
    } else {
        ok = write_events(&s, dir) == 0;
        t->events_s = now() - t0;
        if (!ok)
            tr_log("job: rank %d: %s", s.c.rank, s.err);
        double t1 = now();
        if (tr_job_agree(&s.c, ok)) {
            ok = unify(&s, &t->local_s) == 0;
            if (!ok && s.err[0])
                tr_log("job: rank %d: %s", s.c.rank, s.err);
            ok = tr_job_agree(&s.c, ok);
        } else {
            ok = 0;
        }
        t->unify_s = now() - t1 - t->local_s;
        double t2 = now();
        if (s.c.rank == 0 && ok) {
            rc = tr_job_union_write(s.u, s.ar, s.c.size, r);
        } else if (s.ar) {
            OTF2_Archive_Close(s.ar);
            rc = ok ? 0 : -1;
        }
        s.ar = 0;
        /* OTF2 may return success after a failed write (a full disk). */
        const char *incomplete = tr_job_errors_incomplete();
        if (incomplete) {
            tr_stage_error(&s.stage, s.err, sizeof s.err, incomplete);
            tr_log("job: rank %d: %s", s.c.rank, s.err);
            rc = -1;
        }
        t->global_s = now() - t2;
        /* Every rank's files are complete: rank 0 moves the archive into
         * place, and its answer is everyone's (the journals go only with
         * it). */
        int all = tr_job_agree(&s.c, rc == 0 && !incomplete);
        if (s.c.rank == 0 && all && tr_stage_commit(&s.stage, r->error, sizeof r->error))
            rc = -1;
        rc = tr_job_agree(&s.c, all && rc == 0) ? 0 : -1;
        if (rc)
            remove_partial(&s);
        tr_stage_leave(&s.stage);
    }
    if (s.ar)
        OTF2_Archive_Close(s.ar);
    const char *otf2_error = tr_job_errors_end();
    if (s.c.rank == 0 && rc && !r->error[0])
        snprintf(r->error, sizeof r->error, "%s", otf2_error ? otf2_error : "a rank failed (its own line says why)");
    else if (s.c.rank == 0 && !rc && otf2_error)
        snprintf(r->warning, sizeof r->warning, "OTF2 refused an event (%s); the trace may miss it", otf2_error);
    tr_job_part_free(s.part);
    tr_job_union_free(s.u);
    t->total_s = now() - t0;
    return rc;
}
