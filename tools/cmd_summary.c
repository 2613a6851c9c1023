/* cmd_summary.c - `tracer summary`: arguments and dispatch to the reader
 * (summary_read.c) and the printers (summary_print.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

void cmd_summary_usage(FILE *fp)
{
    fputs("usage: tracer summary [--json] TRACE\n"
          "\n"
          "Print what a trace written by libtracer holds: duration, processes, host\n"
          "threads and devices; target constructs by kind; kernel launches by kernel;\n"
          "transfers to and from devices (RMA put/get events) with their bytes;\n"
          "device allocations and deletes; operations that began but never ended.\n"
          "\n"
          "TRACE is the trace directory (the one holding traces.otf2) or the path\n"
          "of its traces.otf2.\n"
          "\n"
          "options:\n"
          "  --json      print the same numbers as one JSON object on one line\n"
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
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && a[0] == '-' && a[1] != '\0') {
            if (strcmp(a, "--") == 0)
                options_done = true;
            else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                cmd_summary_usage(stdout);
                return 0;
            } else if (strcmp(a, "--json") == 0)
                json = true;
            else
                return cmd_summary_usage_error("unknown option", a);
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
        tr_summary_print_text(stdout, &s);
    tr_summary_free(&s);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tracer: summary: cannot write output: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
