/* cmd_recover.c - `tracer recover DIR`: the journal of a run that did not end
 * normally (crash, kill, _exit) becomes an OTF2 archive, through the same
 * code that writes a normal run's archive (src/writer/writer.c); the rank
 * journals of an MPI job (DIR/journals/rank<N>.journal) become the job's one
 * archive (src/writer/job_convert.c). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "core/config.h"
#include "journal/inflight_salvage.h"
#include "journal/journal_format.h"
#include "journal/recover_names.h"
#include "writer/writer.h"

void cmd_recover_usage(FILE *fp)
{
    fputs("usage: tracer recover [--force] DIR\n"
          "\n"
          "Writes DIR/traces.otf2 from DIR/" TR_JOURNAL_NAME ", the journal a traced run keeps\n"
          "while it runs. Use it when the run crashed, was killed, or ended in _exit\n"
          "or MPI_Abort: every event that reached the journal is recovered, and so is\n"
          "every event still in the run's file in /dev/shm (what SIGKILL left there:\n"
          "it is appended to the journal, and removed once the trace is written).\n"
          "For each thread one line says how many records came from each, and where\n"
          "chunks are missing (marked measurement off). Regions left open are closed\n"
          "at the last event and marked incomplete, and damaged parts of the journal\n"
          "are skipped (one line says how much). Regions and variables the run died\n"
          "before naming are named from the program's files and libraries, when they\n"
          "are the files the run loaded (a line says how many; one changed since names\n"
          "nothing, and a line says which).\n"
          "\n"
          "When DIR is an MPI job's directory (DIR/journals/rank<N>.journal), the\n"
          "journals of all its ranks become one archive; ranks without a journal are\n"
          "named in the archive and in the line printed. A rank journal cut short\n"
          "before it names its rank (or unreadable) is lost, not the job: the other\n"
          "ranks are written, and one line names the lost one.\n"
          "\n"
          "  --force   replace a trace DIR already holds (the journal stays)\n"
          "\n"
          "A run still going is never recovered, --force or not: its process holds\n"
          "its in-flight file, and recover writes nothing while it does (it waits a\n"
          "few seconds for a process that is dying or ending). One recover at a time\n"
          "works on DIR: a second one says so and does nothing.\n"
          "\n"
          "exit status: 0 written, 1 failed, 2 usage error\n",
          fp);
}

/* How long recover waits for runs that hold their in-flight files to let
 * go, from the first one found held (all of a job's ranks together): a
 * launcher may return before the ranks it killed are gone, and a run that
 * is saving its end holds its file until it has. A run still holding it
 * then is going on. */
#define HOLDER_WAIT_NS (5 * 1000000000ull)

/* One recover at a time in @dir: two would append the same chunks, and
 * each would find the other's archive in its way. The lock goes with the
 * process. Returns 0 (also when @dir cannot be locked: what reads it then
 * says what is wrong), or -1 with one line said. */
static int lock_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || !flock(fd, LOCK_EX | LOCK_NB))
        return 0;
    int e = errno;
    close(fd);
    if (e != EWOULDBLOCK)
        return 0;
    fprintf(stderr, "tracer: recover: another 'tracer recover', or the run itself writing its trace at its end, is "
                    "working on %s; nothing done\n",
            dir);
    return -1;
}

/* A crashed run leaves its claim: an empty traces.otf2. A real one is kept
 * unless --force. */
static int holds_trace(const char *dir)
{
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/traces.otf2", dir);
    return lstat(p, &st) == 0 && st.st_size > 0;
}

/* What an earlier archive in @dir left (replaced with --force, or the
 * partial files of a write that failed): the location files
 * traces/<id>.evt|.def, the directory, traces.def. The claim traces.otf2 is
 * rewritten by the writer. Without this OTF2 finds traces/ taken, and files
 * of locations the new archive does not have would stay. */
static void remove_old_archive(const char *dir)
{
    char p[4300];
    snprintf(p, sizeof p, "%s/traces", dir);
    /* Never through a link someone put there in traces/'s place. */
    int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : 0;
    if (!d && fd >= 0)
        close(fd);
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *c = e->d_name;
        while (isdigit((unsigned char)*c))
            c++;
        if (c != e->d_name && (!strcmp(c, ".evt") || !strcmp(c, ".def")))
            unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d)
        closedir(d);
    rmdir(p);
    snprintf(p, sizeof p, "%s/traces.def", dir);
    unlink(p);
}

/* rank<digits>.journal */
static int is_rank_journal(const struct dirent *d)
{
    const char *n = d->d_name;
    if (strncmp(n, "rank", 4) || !isdigit((unsigned char)n[4]))
        return 0;
    const char *p = n + 4;
    while (isdigit((unsigned char)*p))
        p++;
    return !strcmp(p, ".journal");
}

static int by_rank_number(const struct dirent **a, const struct dirent **b)
{
    long x = strtol((*a)->d_name + 4, 0, 10), y = strtol((*b)->d_name + 4, 0, 10);
    return (x > y) - (x < y);
}

/* At most one line: what OTF2 refused, else what damage was skipped (and
 * what it cost: chunks missing between a thread's kept ones, each a
 * measurement-off gap on its thread; issue 18, B1). */
static void print_skipped(const tr_convert_report *r, int job)
{
    char missing[128] = "";
    if (r->missing_chunks)
        snprintf(missing, sizeof missing, "; %llu chunk(s) of events are missing, each gap marked measurement off",
                 (unsigned long long)r->missing_chunks);
    if (r->warning[0])
        fprintf(stderr, "tracer: recover: %s\n", r->warning);
    else if (r->skipped_bytes || r->truncated)
        fprintf(stderr, "tracer: recover: skipped %llu damaged bytes%s (%llu damaged places%s); every intact frame "
                        "was used%s\n",
                (unsigned long long)r->skipped_bytes, job ? " of the ranks' journals" : "",
                (unsigned long long)r->bad_frames,
                !r->truncated ? "" : job ? ", a journal ends inside a frame" : ", the journal ends inside a frame",
                missing);
    else if (r->missing_chunks)
        fprintf(stderr, "tracer: recover: %llu chunk(s) of events missing from the journal; each gap is marked "
                        "measurement off on its thread\n",
                (unsigned long long)r->missing_chunks);
}

/* Before the archive is written: what the in-flight file adds to @journal.
 * Problems go to stderr at once; the per-thread report waits for the
 * archive's line (print_salvage). */
static void salvage(const char *journal, const char *who, tr_holder_wait *w, tr_salvage_report *r)
{
    int rc = tr_inflight_salvage(journal, w, r);
    if (r->state == TR_SALVAGE_LIVE)
        fprintf(stderr, "tracer: recover: %sthe run is still going (a living process holds %s); nothing is written "
                        "while it runs, --force or not: recover once it has ended\n",
                who, r->path);
    else if (r->state == TR_SALVAGE_ELSEWHERE)
        fprintf(stderr, "tracer: recover: %sthe run's last events are in %s on host %s, not here: run 'tracer "
                        "recover --force' on %s too (each run takes the files of its host)\n",
                who, r->path, r->host, r->host);
    else if (r->state == TR_SALVAGE_BAD)
        fprintf(stderr, "tracer: recover: %sthe in-flight file %s is not used: %s\n", who, r->path, r->problem);
    else if (rc)
        fprintf(stderr, "tracer: recover: %s%s; the in-flight file %s is kept\n", who, r->problem, r->path);
    if (r->bad_chunks)
        fprintf(stderr, "tracer: recover: %s%llu damaged chunk(s) of the in-flight file %s skipped\n", who,
                (unsigned long long)r->bad_chunks, r->path);
}

/* What the in-flight file gave: when it was taken, per thread the records
 * from the journal and from the file; and every thread with chunks missing
 * (the gaps, marked measurement off). A run that saved everything itself
 * and has no gap adds nothing to the archive's line. Once the archive holds
 * them, the in-flight file goes. */
static void print_salvage(const tr_salvage_report *r, const char *who, int written)
{
    int taken = r->state == TR_SALVAGE_TAKEN;
    if (taken)
        printf("  %sin-flight file %s: %llu records in %llu chunks not in the journal%s\n", who, r->path,
               (unsigned long long)r->records_added, (unsigned long long)r->chunks_added,
               r->chunks_added ? ", now appended to it" : "");
    for (size_t i = 0; i < r->nthreads; i++) {
        const tr_salvage_thread *t = &r->threads[i];
        if (!taken && !t->gaps)
            continue;
        printf("  %sthread %u (tid %u): %llu records from the journal, %llu from the in-flight file", who,
               t->location, t->tid, (unsigned long long)t->journal_records, (unsigned long long)t->inflight_records);
        if (t->gaps)
            printf("; %llu chunk(s) missing in %llu gap(s), the first at chunk %llu, marked measurement off",
                   (unsigned long long)t->missing, (unsigned long long)t->gaps, (unsigned long long)t->first_gap_seq);
        printf("\n");
    }
    if (written)
        tr_inflight_salvage_remove(r);
}

/* Before the archive is written: the code addresses the run died before
 * naming are named from its files (journal/recover_names.h). A failure
 * costs names only: it is said, and the archive is written. */
static void name_missing(const char *journal, const char *who, tr_names_report *n)
{
    if (tr_recover_names(journal, n))
        fprintf(stderr, "tracer: recover: %scould not name the code addresses the run left unnamed: %s\n", who,
                n->problem);
}

static const char *addresses(uint64_t n)
{
    return n == 1 ? "code address" : "code addresses";
}

/* What naming did, after the archive's line; nothing when the run had
 * named everything itself. */
static void print_names(const tr_names_report *n, const char *who)
{
    if (n->named || n->named_variables) {
        printf("  %snamed ", who);
        if (n->named)
            printf("%llu %s%s", (unsigned long long)n->named, addresses(n->named), n->named_variables ? " and " : "");
        if (n->named_variables)
            printf("%llu variable%s of data operations", (unsigned long long)n->named_variables,
                   n->named_variables == 1 ? "" : "s");
        printf(" from the program's files (the run died before naming them)\n");
    }
    if (n->changed || n->changed_data) {
        printf("  %s", who);
        if (n->changed)
            printf("%llu %s%s", (unsigned long long)n->changed, addresses(n->changed), n->changed_data ? " and " : "");
        if (n->changed_data)
            printf("%llu data address%s", (unsigned long long)n->changed_data, n->changed_data == 1 ? "" : "es");
        printf(" left unnamed: %s changed since the run (rebuilt or replaced), and names from another build would be "
               "wrong\n",
               n->changed_file);
    }
    if (n->no_module)
        printf("  %s%llu %s left unnamed: %s\n", who, (unsigned long long)n->no_module, addresses(n->no_module),
               n->no_modules ? "the journal lists no loaded files (written by an older tracer)"
                             : "in no file the journal lists (a library loaded just before the run died)");
    if (n->no_symbol)
        printf("  %s%llu %s left unnamed: no symbol of the run's files holds them\n", who,
               (unsigned long long)n->no_symbol, addresses(n->no_symbol));
}

/* The marks ranks leave in DIR/journals when they count themselves out at
 * exit (src/job/job_exit.h): left behind when a rank died before its exit,
 * they mean nothing once the archive is written. */
static void remove_exit_marks(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/journals", dir);
    DIR *d = opendir(path);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        if (!strncmp(e->d_name, ".exit-", 6))
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* A run that ended while recover waited for it wrote its own trace. */
static int trace_appeared(const char *dir, int force)
{
    if (force || !holds_trace(dir))
        return 0;
    fprintf(stderr, "tracer: recover: %s already holds a trace (the run wrote it as it ended); --force replaces it\n",
            dir);
    return 1;
}

/* The archive of the job's @n journals @paths; what each rank's in-flight
 * file gave, @sr, is said after it. */
static int write_job(const char *dir, char **paths, int n, const tr_salvage_report *sr, const tr_names_report *nr,
                     char (*who)[32])
{
    tr_convert_report r;
    if (tr_writer_convert_job((const char *const *)paths, (size_t)n, dir, &r)) {
        fprintf(stderr, "tracer: recover: %s\n", r.error);
        return 1;
    }
    remove_exit_marks(dir);
    print_skipped(&r, 1);
    if (r.ranks_lost)
        fprintf(stderr, "tracer: recover: %llu rank journal%s lost, %s; %s no events in the archive, marked "
                        "'journal lost'; the other ranks are recovered\n",
                (unsigned long long)r.ranks_lost, r.ranks_lost == 1 ? "" : "s", r.lost_journals,
                r.ranks_lost == 1 ? "its rank has" : "their ranks have");
    printf("recovered %s/traces.otf2: %llu of %llu ranks, %llu events of %llu host threads and %llu devices (%s", dir,
           (unsigned long long)r.ranks, (unsigned long long)r.job_size, (unsigned long long)r.events,
           (unsigned long long)r.locations, (unsigned long long)r.devices,
           strcmp(r.ends, "normal end") ? r.ends : "every rank ended normally");
    if (r.ranks_missing)
        printf("; missing: rank%s %s", r.ranks_missing == 1 ? "" : "s", r.missing);
    printf(")\n");
    for (int i = 0; i < n; i++) {
        print_salvage(&sr[i], who[i], 1);
        print_names(&nr[i], who[i]);
    }
    return 0;
}

/* The job's journals -> DIR/traces.otf2. @list: the rank journals found. */
static int recover_job(const char *dir, struct dirent **list, int n, int force)
{
    char **paths = calloc((size_t)n, sizeof *paths);
    int oom = !paths;
    for (int i = 0; !oom && i < n; i++) {
        size_t len = strlen(dir) + strlen(list[i]->d_name) + 16;
        paths[i] = malloc(len);
        if (!paths[i])
            oom = 1;
        else
            snprintf(paths[i], len, "%s/journals/%s", dir, list[i]->d_name);
    }
    tr_salvage_report *sr = calloc((size_t)n, sizeof *sr);
    tr_names_report *nr = calloc((size_t)n, sizeof *nr);
    char (*who)[32] = calloc((size_t)n, sizeof *who);
    if (!sr || !nr || !who)
        oom = 1;
    tr_holder_wait wait = {HOLDER_WAIT_NS, 0};
    int live = 0;
    for (int i = 0; !oom && i < n; i++) {
        snprintf(who[i], sizeof who[i], "rank %ld: ", strtol(list[i]->d_name + 4, 0, 10));
        salvage(paths[i], who[i], &wait, &sr[i]);
        live += sr[i].state == TR_SALVAGE_LIVE;
    }
    /* A rank still going: each said so, and nothing is written. */
    int rc = oom || live || trace_appeared(dir, force);
    if (oom)
        fprintf(stderr, "tracer: recover: out of memory\n");
    if (!rc) {
        for (int i = 0; i < n; i++)
            name_missing(paths[i], who[i], &nr[i]);
        remove_old_archive(dir);
        rc = write_job(dir, paths, n, sr, nr, who);
    }
    for (int i = 0; sr && i < n; i++)
        tr_salvage_report_free(&sr[i]);
    free(sr);
    free(nr);
    free(who);
    for (int i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    return rc;
}

/* TRACER_WRITE_THREADS holds for recover too; a bad value is refused as
 * the traced program refuses it. Returns 0, or -1 with one line said. */
static int write_threads(void)
{
    const char *v = getenv("TRACER_WRITE_THREADS");
    const tr_cfg_var *var = tr_cfg_find("TRACER_WRITE_THREADS");
    if (!v || !var)
        return 0;
    int64_t n;
    char err[256];
    if (tr_cfg_parse(var, v, &n, err, sizeof err)) {
        fprintf(stderr, "tracer: recover: TRACER_WRITE_THREADS='%s' %s\n", v, err);
        return -1;
    }
    tr_writer_set_threads((int)n);
    return 0;
}

int cmd_recover(int argc, char **argv)
{
    int force = 0;
    const char *dir = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cmd_recover_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--force")) {
            force = 1;
        } else if (argv[i][0] == '-' && strcmp(argv[i], "--")) {
            fprintf(stderr, "tracer: recover: unknown option '%s'; see 'tracer recover --help'\n", argv[i]);
            return 2;
        } else if (strcmp(argv[i], "--")) {
            if (dir) {
                fprintf(stderr, "tracer: recover: one directory only; see 'tracer recover --help'\n");
                return 2;
            }
            dir = argv[i];
        }
    }
    if (!dir) {
        fprintf(stderr, "tracer: recover: no directory given; see 'tracer recover --help'\n");
        return 2;
    }
    if (write_threads())
        return 2;
    if (lock_dir(dir))
        return 1;
    char journal[4200];
    snprintf(journal, sizeof journal, "%s/journals", dir);
    struct dirent **list = 0;
    int njournals = scandir(journal, &list, is_rank_journal, by_rank_number);
    if (njournals > 0) {
        int rc = 0;
        if (holds_trace(dir) && !force) {
            fprintf(stderr, "tracer: recover: %s already holds a trace; --force replaces it\n", dir);
            rc = 1;
        } else {
            rc = recover_job(dir, list, njournals, force);
        }
        for (int i = 0; i < njournals; i++)
            free(list[i]);
        free(list);
        return rc;
    }
    free(list);
    snprintf(journal, sizeof journal, "%s/%s", dir, TR_JOURNAL_NAME);
    if (access(journal, R_OK)) {
        fprintf(stderr, "tracer: recover: cannot read %s: %s\n", journal, strerror(errno));
        return 1;
    }
    if (holds_trace(dir) && !force) {
        fprintf(stderr, "tracer: recover: %s already holds a trace; --force replaces it\n", dir);
        return 1;
    }
    tr_salvage_report sr;
    tr_holder_wait wait = {HOLDER_WAIT_NS, 0};
    salvage(journal, "", &wait, &sr);
    if (sr.state == TR_SALVAGE_LIVE || trace_appeared(dir, force)) {
        tr_salvage_report_free(&sr);
        return 1;
    }
    tr_names_report nr;
    name_missing(journal, "", &nr);
    remove_old_archive(dir);
    tr_convert_report r;
    if (tr_writer_convert(journal, dir, &r)) {
        fprintf(stderr, "tracer: recover: %s\n", r.error);
        tr_salvage_report_free(&sr);
        return 1;
    }
    print_skipped(&r, 0);
    int exited = r.crashed && tr_crash_is_exit(r.crash_signal);
    int aborted = r.crashed && tr_crash_is_mpi_abort(r.crash_signal);
    const char *how = r.ended     ? "the run ended normally"
                      : exited    ? "the run ended in _exit"
                      : aborted   ? "the run called MPI_Abort"
                      : r.crashed ? "the run died of a signal"
                                  : "the run did not end normally";
    printf("recovered %s/traces.otf2: %llu events of %llu host threads and %llu devices (%s", dir,
           (unsigned long long)r.events, (unsigned long long)r.locations, (unsigned long long)r.devices, how);
    if (exited)
        printf(", status %d", -(r.crash_signal + 1));
    else if (aborted)
        printf(", error code %d", TR_CRASH_MPI_ABORT - r.crash_signal);
    else if (r.crashed)
        printf(", signal %d", r.crash_signal);
    printf(")\n");
    print_salvage(&sr, "", 1);
    print_names(&nr, "");
    tr_salvage_report_free(&sr);
    return 0;
}
