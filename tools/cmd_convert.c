/* cmd_convert.c - `tracer convert ARCHIVE -o FILE`: arguments, the output
 * file, and dispatch to the reader (convert_read.c) with the sink of the
 * chosen format (perfetto_sink.c, json_sink.c). */
#define _GNU_SOURCE /* O_NOFOLLOW, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "convert_sink.h"

enum cv_format { CV_AUTO, CV_PERFETTO, CV_JSON };

static const char *const cv_format_names[] = { [CV_AUTO] = "auto", [CV_PERFETTO] = "perfetto", [CV_JSON] = "json" };

void cmd_convert_usage(FILE *fp)
{
    fputs("usage: tracer convert [--format perfetto|json] [--force] [--locations N] -o FILE ARCHIVE\n"
          "\n"
          "Writes an OTF2 trace (tracer's, or any other OTF2 writer's) as a file that\n"
          "Perfetto or Chrome can open. ARCHIVE is the trace directory (the one holding\n"
          "traces.otf2) or the path of its traces.otf2.\n"
          "\n"
          "Each location (host thread, device stream, MPI_T source) is a track of its\n"
          "process; regions are slices, zero-length regions (MPI_T events, link maps,\n"
          "marks) instant events with their attributes; host<->device transfers are\n"
          "flows from the host data operation to a \"device N transfers\" track; device\n"
          "memory in use, MPI_T drops and numeric MPI_T payloads are counters. Clock\n"
          "offsets of an MPI job are applied. Memory stays bounded however large the\n"
          "archive; progress is shown when stderr is a terminal.\n"
          "\n"
          "options:\n"
          "  -o, --output FILE  the file to write (required); it must not exist. '-':\n"
          "                     stdout (the report line then goes to stderr)\n"
          "  --format FORMAT    perfetto: Perfetto's protobuf trace (default; also\n"
          "                     chosen by the extensions .pftrace, .perfetto-trace, .pb)\n"
          "                     json: Chrome trace-event JSON (chosen by .json)\n"
          "  --force            replace FILE if it exists (only once the new one is\n"
          "                     complete)\n"
          "  --locations N      read at most N locations at once (default 64, 1 to\n"
          "                     65536); each takes up to 4 MiB of memory. An archive\n"
          "                     with more is read in turns, each process with its\n"
          "                     devices in one turn where it fits\n"
          "  -h, --help         show this text\n"
          "\n"
          "To look at the result, open https://ui.perfetto.dev and use \"Open trace\n"
          "file\" (or drag the file onto the page); the trace is read in the browser and\n"
          "not uploaded. A .json file also opens in chrome://tracing (\"Load\").\n"
          "\n"
          "exit status: 0 written, 1 failed (nothing is left behind), 2 usage error\n",
          fp);
}

static int cv_usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "tracer: convert: %s%s%s%s; see 'tracer convert --help'\n", what, arg ? " '" : "",
            arg ? arg : "", arg ? "'" : "");
    return 2;
}

static int cv_parse_format(const char *name, enum cv_format *f)
{
    if (strcmp(name, "perfetto") == 0)
        *f = CV_PERFETTO;
    else if (strcmp(name, "json") == 0)
        *f = CV_JSON;
    else
        return -1;
    return 0;
}

/* --locations N: a whole number in [1, 65536]. */
static int cv_parse_locations(const char *v, uint32_t *n)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno || x < 1 || x > 65536)
        return -1;
    *n = (uint32_t)x;
    return 0;
}

/* The format a file name asks for: json for .json, perfetto for anything
 * else (.pftrace, .perfetto-trace, .pb or none). */
static enum cv_format cv_format_of(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *dot = strrchr(base ? base + 1 : path, '.');
    return dot && strcasecmp(dot, ".json") == 0 ? CV_JSON : CV_PERFETTO;
}

/* ---- the output file ------------------------------------------------------ */

/* Where the converter writes: FILE itself, created exclusively (a file or
 * a planted symlink there is never written through), or with --force a
 * new file beside it that replaces FILE by rename() once complete, so a
 * failed conversion leaves the old FILE as it was. Mode 0666 lets the
 * user's umask decide. */
struct cv_out {
    const char *path;
    char *tmp;    /* NULL: writing path directly */
    bool special; /* stdout ("-"), a FIFO or a character device: never removed */
    FILE *fp;
};

static int cv_create(const char *path, int *fd)
{
    *fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0664); /* never writable by others */
    return *fd < 0 ? -1 : 0;
}

/* --force: a new file beside @o->path (.NAME.<pid>-<n>.tmp), renamed over
 * it when complete. */
static int cv_create_beside(struct cv_out *o, int *fd)
{
    const char *slash = strrchr(o->path, '/');
    int dirlen = slash ? (int)(slash - o->path + 1) : 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    for (unsigned i = 0; i < 100; i++) {
        free(o->tmp);
        if (asprintf(&o->tmp, "%.*s.%s.%ld-%lx.tmp", dirlen, o->path, o->path + dirlen, (long)getpid(),
                     (unsigned long)now.tv_nsec + i) < 0) {
            o->tmp = NULL;
            errno = ENOMEM;
            return -1;
        }
        if (cv_create(o->tmp, fd) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    free(o->tmp);
    o->tmp = NULL;
    return -1;
}

static int cv_open_out(struct cv_out *o, const char *path, bool force)
{
    *o = (struct cv_out){ .path = path };
    if (strcmp(path, "-") == 0) {
        o->special = true;
        o->fp = stdout;
        setvbuf(o->fp, NULL, _IOFBF, 1 << 20);
        return 0;
    }
    int fd = -1;
    struct stat sb;
    bool exists = lstat(path, &sb) == 0;
    if (exists && (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode))) {
        /* Named by the user itself (lstat: not through a symlink), e.g.
         * /dev/null or a pipe: written, never created, replaced or removed. */
        o->special = true;
        fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "tracer: convert: cannot write '%s': %s\n", path, strerror(errno));
            return -1;
        }
    } else if (exists && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
        fprintf(stderr, "tracer: convert: cannot write '%s': it is %s\n", path,
                S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
        return -1;
    } else if (exists && !force) {
        fprintf(stderr, "tracer: convert: '%s' exists; use --force to replace it\n", path);
        return -1;
    } else if (exists ? cv_create_beside(o, &fd) != 0 : cv_create(path, &fd) != 0) {
        /* (A file that appeared meanwhile is refused by O_EXCL.) */
        fprintf(stderr, "tracer: convert: cannot create %s'%s': %s\n", exists ? "a file beside " : "", path,
                errno == EEXIST ? "it exists (use --force to replace it)" : strerror(errno));
        return -1;
    }
    o->fp = fdopen(fd, "w");
    if (!o->fp) {
        fprintf(stderr, "tracer: convert: cannot write '%s': %s\n", path, strerror(errno));
        close(fd);
        if (!o->special)
            unlink(o->tmp ? o->tmp : path);
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    /* The sinks hand over large blocks; a big buffer keeps writes few. */
    setvbuf(o->fp, NULL, _IOFBF, 1 << 20);
    return 0;
}

/* Closes the output; on @ok puts it in place, otherwise removes it.
 * Returns 0, or -1 (with a message) when the data did not reach the file. */
static int cv_close_out(struct cv_out *o, bool ok)
{
    const char *written = o->tmp ? o->tmp : o->path;
    int rc = 0;
    if (o->fp == stdout) {
        if ((fflush(stdout) != 0 || ferror(stdout)) && ok) {
            fprintf(stderr, "tracer: convert: cannot write to stdout: %s\n", strerror(errno));
            rc = -1;
        }
        return rc;
    }
    if (fclose(o->fp) != 0 && ok) {
        fprintf(stderr, "tracer: convert: cannot write '%s': %s\n", o->path, strerror(errno));
        ok = false;
        rc = -1;
    }
    if (ok && o->tmp && rename(o->tmp, o->path) != 0) {
        fprintf(stderr, "tracer: convert: cannot replace '%s': %s\n", o->path, strerror(errno));
        ok = false;
        rc = -1;
    }
    if (!ok && !o->special)
        unlink(written);
    free(o->tmp);
    o->tmp = NULL;
    return rc;
}

/* ---- the command -------------------------------------------------------------- */

int cmd_convert(int argc, char **argv)
{
    enum cv_format format = CV_AUTO;
    const char *archive = NULL, *output = NULL;
    bool force = false, options_done = false;
    uint32_t at_once = 0; /* the reader's default */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == '\0') {
            if (archive)
                return cv_usage_error("unexpected argument", a);
            archive = a;
        } else if (strcmp(a, "--") == 0) {
            options_done = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            cmd_convert_usage(stdout);
            return 0;
        } else if (strcmp(a, "--force") == 0) {
            force = true;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strncmp(a, "--output=", 9) == 0) {
            const char *v = a[1] == '-' && a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !v[0])
                return cv_usage_error("missing file name after", a);
            output = v;
        } else if (strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v)
                return cv_usage_error("missing format after", a);
            if (cv_parse_format(v, &format) != 0)
                return cv_usage_error("unknown format (perfetto or json)", v);
        } else if (strcmp(a, "--locations") == 0 || strncmp(a, "--locations=", 12) == 0) {
            const char *v = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v)
                return cv_usage_error("missing number after", a);
            if (cv_parse_locations(v, &at_once) != 0)
                return cv_usage_error("--locations wants a whole number from 1 to 65536, not", v);
        } else {
            return cv_usage_error("unknown option", a);
        }
    }
    if (!archive)
        return cv_usage_error("missing trace archive", NULL);
    if (!output)
        return cv_usage_error("missing output file (-o FILE)", NULL);
    if (format == CV_AUTO)
        format = cv_format_of(output);

    struct cv_out out;
    if (cv_open_out(&out, output, force) != 0)
        return 1;
    tc_sink *sink = format == CV_JSON ? tc_json_sink(out.fp) : tc_perfetto_sink(out.fp);
    if (!sink) {
        if (format == CV_PERFETTO)
            fprintf(stderr, "tracer: convert: the perfetto format is not available in this build "
                            "(its writer returned no sink); use --format json\n");
        else
            fprintf(stderr, "tracer: convert: out of memory\n");
        cv_close_out(&out, false);
        return 1;
    }
    tc_stats st;
    char err[512] = "";
    int rc = tc_convert(archive, sink, isatty(2), at_once, &st, err, sizeof err);
    sink->free(sink);
    if (rc != 0) {
        fprintf(stderr, "tracer: convert: cannot convert '%s': %s\n", archive, err[0] ? err : "unknown error");
        cv_close_out(&out, false);
        return 1;
    }
    if (cv_close_out(&out, true) != 0)
        return 1;
    /* With -o - the trace is on stdout, so the report goes to stderr. */
    FILE *report = strcmp(output, "-") == 0 ? stderr : stdout;
    fprintf(report, "converted %s -> %s (%s): %llu events, %llu slices, %llu instants, %llu counter values, "
            "%llu flows\n", archive, output, cv_format_names[format], (unsigned long long)st.events,
            (unsigned long long)st.slices, (unsigned long long)st.instants, (unsigned long long)st.counters,
            (unsigned long long)st.flows);
    if (fflush(report) != 0 || ferror(report))
        return 1;
    return 0;
}
