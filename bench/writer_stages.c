/* writer_stages.c - where the journal -> OTF2 write spends its time, stage
 * by stage, on one journal (issue 33). Not a test: it prints numbers.
 *
 *   writer_stages JOURNAL [ROUNDS [STAGE]]
 *
 * Each round runs, in turn (interleaved, so that the machine's drift hits
 * every stage alike):
 *   decode  every stream read through its cursor to the end (zstd, delta,
 *           ticks -> ns): the floor of any pass over the journal
 *   model   the model's one pass with a sink that writes nothing
 *   write   the whole conversion (tr_writer_convert into a fresh directory)
 * and prints per stage the median over the rounds of its wall time and of
 * its records per second, one line each:
 *   stage=decode records=N seconds=S records_per_s=R
 * The journal's records are counted by the decode stage. With STAGE (decode,
 * model or write), only that one runs (for a profiler). WRITER_THREADS=N
 * sets the writing threads beside the model's (tr_writer_set_threads;
 * default: one per CPU beyond the first, at most 8). */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"
#include "writer/writer.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t decode(const char *journal)
{
    tr_journal_data jd;
    char err[256];
    if (tr_journal_load_index(journal, &jd, err, sizeof err)) {
        fprintf(stderr, "writer_stages: %s\n", err);
        exit(1);
    }
    uint64_t n = 0;
    for (size_t s = 0; s < jd.data.nstreams; s++) {
        if (jd.data.streams[s].chunked == TR_STREAM_NO_CHUNKS)
            continue;
        tr_stream_cursor *c = tr_journal_stream_open(&jd, &jd.data.streams[s]);
        while (c && tr_stream_cursor_next(c))
            n++;
        tr_stream_cursor_close(c);
    }
    tr_journal_data_free(&jd);
    return n;
}

static int nothing(void *ctx, const tr_mev *e)
{
    (void)e;
    (*(uint64_t *)ctx)++;
    return 0;
}

static uint64_t model(const char *journal)
{
    tr_model m;
    char err[256];
    uint64_t events = 0;
    if (tr_model_open(&m, journal, err, sizeof err) ||
        tr_model_run(&m, (tr_model_sink){.event = nothing, .ctx = &events})) {
        fprintf(stderr, "writer_stages: the model failed on %s\n", journal);
        exit(1);
    }
    tr_model_free(&m);
    return events;
}

static void write_archive(const char *journal, const char *dir)
{
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd)) {
        fprintf(stderr, "writer_stages: cannot make %s\n", dir);
        exit(1);
    }
    tr_convert_report r;
    if (tr_writer_convert(journal, dir, &r)) {
        fprintf(stderr, "writer_stages: %s\n", r.error);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: writer_stages JOURNAL [ROUNDS]\n");
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (getenv("WRITER_THREADS"))
        tr_writer_set_threads(atoi(getenv("WRITER_THREADS")));
    if (rounds < 1)
        rounds = 1;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/writer-stages.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    double *t[3];
    for (int k = 0; k < 3; k++)
        t[k] = calloc((size_t)rounds, sizeof *t[k]);
    uint64_t records = 0, events = 0;
    static const char *const names[3] = {"decode", "model", "write"};
    const char *only = argc > 3 ? argv[3] : 0;
    for (int i = 0; i < rounds; i++) {
        double t0 = now();
        if (!only || !strcmp(only, names[0]))
            records = decode(argv[1]);
        double t1 = now();
        if (!only || !strcmp(only, names[1]))
            events = model(argv[1]);
        double t2 = now();
        if (!only || !strcmp(only, names[2]))
            write_archive(argv[1], dir);
        double t3 = now();
        t[0][i] = t1 - t0, t[1][i] = t2 - t1, t[2][i] = t3 - t2;
    }
    for (int k = 0; k < 3; k++) {
        if (only && strcmp(only, names[k]))
            continue;
        qsort(t[k], (size_t)rounds, sizeof *t[k], by_value);
        double med = t[k][rounds / 2];
        printf("stage=%s records=%llu model_events=%llu seconds=%.4f records_per_s=%.0f\n", names[k],
               (unsigned long long)records, (unsigned long long)events, med, (double)records / med);
    }
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {
    }
    return 0;
}
