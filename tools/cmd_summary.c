/* cmd_summary.c - `tracer summary`: arguments and dispatch to the reader
 * and the printers of the summary library (src/summary/summary.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

void cmd_summary_usage(FILE *fp)
{
    fputs("usage: tracer summary [--json] [--top N] TRACE\n"
          "\n"
          "Print what a trace written by libtracer holds: duration, processes, host\n"
          "threads and devices; target constructs by kind; kernel launches by kernel;\n"
          "transfers to and from devices (RMA put/get events) with their bytes;\n"
          "device allocations and deletes; operations that began but never ended;\n"
          "link maps and stale link pointers per variable; MPI_T totals. Then:\n"
          "  - per region, for each kind of location (host threads, device streams,\n"
          "    MPI_T sources): count, inclusive and exclusive time, the top N by\n"
          "    exclusive time;\n"
          "  - per device: transfers to and from it (count, bytes, time, achieved\n"
          "    bandwidth) and its peak memory in use (device_memory_in_use);\n"
          "  - MPI_T events per source and type, with the drops reported;\n"
          "  - the TRACER_* variables the trace was taken with that were not at\n"
          "    their defaults.\n"
          "TRACER_SUMMARY=1 prints the same report on stderr at the end of a run.\n"
          "\n"
          "TRACE is the trace directory (the one holding traces.otf2) or the path\n"
          "of its traces.otf2.\n"
          "\n"
          "options:\n"
          "  --json      print the same report as one JSON object on one line\n"
          "              (every region, whatever --top says)\n"
          "  --top N     regions listed per kind of location (default 10; 0: all)\n"
          "  -h, --help  show this text\n"
          "\n"
          "exit status: 0 done, 1 the trace cannot be read, 2 usage error\n",
          fp);
}

static int cmd_summary_usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "tracer: summary: %s%s%s%s; see 'tracer summary --help'\n", what,
            arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
    return 2;
}

int cmd_summary(int argc, char **argv)
{
    bool json = false, options_done = false;
    size_t top = TR_SUMMARY_DEFAULT_TOP;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && a[0] == '-' && a[1] != '\0') {
            if (strcmp(a, "--") == 0) {
                options_done = true;
            } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                cmd_summary_usage(stdout);
                return 0;
            } else if (strcmp(a, "--json") == 0) {
                json = true;
            } else if (strcmp(a, "--top") == 0 || strncmp(a, "--top=", 6) == 0) {
                const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
                if (!v)
                    return cmd_summary_usage_error("--top needs a number", NULL);
                char *end = NULL;
                errno = 0;
                unsigned long long n = strtoull(v, &end, 10);
                if (v[0] < '0' || v[0] > '9' || *end || errno || n > SIZE_MAX)
                    return cmd_summary_usage_error("--top needs a number, not", v);
                top = (size_t)n;
            } else {
                return cmd_summary_usage_error("unknown option", a);
            }
        } else if (!path) {
            path = a;
        } else {
            return cmd_summary_usage_error("unexpected argument", a);
        }
    }
    if (!path)
        return cmd_summary_usage_error("missing trace directory", NULL);

    struct tr_summary s;
    char err[512] = "";
    if (tr_summary_collect(path, &s, err, sizeof err) != 0) {
        fprintf(stderr, "tracer: summary: cannot read trace '%s': %s\n", path,
                err[0] ? err : "unknown error");
        return 1;
    }
    if (json)
        tr_summary_print_json(stdout, &s);
    else
        tr_summary_print_text(stdout, &s, top);
    tr_summary_free(&s);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tracer: summary: cannot write output: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
