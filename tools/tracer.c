/* tracer: command-line front end.  Parses the command word and hands the
 * remaining arguments to the command; everything else lives in cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#ifndef TRACER_VERSION
#define TRACER_VERSION "unknown"
#endif

struct tr_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *fp);
};

static const struct tr_command tr_commands[] = {
    { "summary", "print what a trace holds: target regions, kernels, transfers",
      cmd_summary, cmd_summary_usage },
    { "info", "print the build, the OpenMP/MPI runtimes tracer sees, the TRACER_* settings",
      cmd_info, cmd_info_usage },
    { "run", "run a command with libtracer.so preloaded, TRACER_* set from options",
      cmd_run, cmd_run_usage },
    { "recover", "write the OTF2 trace of a crashed or killed run from its journal",
      cmd_recover, cmd_recover_usage },
    { "convert", "write a trace as Perfetto (ui.perfetto.dev) or Chrome JSON",
      cmd_convert, cmd_convert_usage },
};

#define TR_N_COMMANDS (sizeof tr_commands / sizeof tr_commands[0])

static void tr_usage(FILE *fp)
{
    fputs("usage: tracer <command> [options] [args]\n"
          "       tracer --help | --version\n"
          "\n"
          "Record an OpenMP offload program with\n"
          "  tracer run --output DIR -- ./app\n"
          "(or TRACER_OUTPUT=DIR LD_PRELOAD=libtracer.so ./app)\n"
          "and inspect the resulting OTF2 trace with the commands below.\n"
          "\n"
          "commands:\n", fp);
    for (size_t i = 0; i < TR_N_COMMANDS; i++)
        fprintf(fp, "  %-10s %s\n", tr_commands[i].name, tr_commands[i].summary);
    fputs("  help [CMD] show this text, or the help of CMD\n"
          "\n"
          "options:\n"
          "  -h, --help     show this text\n"
          "  -V, --version  show the version\n"
          "\n"
          "Run 'tracer <command> --help' for the options of a command.\n", fp);
}

static const struct tr_command *tr_find(const char *name)
{
    for (size_t i = 0; i < TR_N_COMMANDS; i++)
        if (strcmp(tr_commands[i].name, name) == 0)
            return &tr_commands[i];
    return NULL;
}

static int tr_unknown(const char *name)
{
    fprintf(stderr, "tracer: unknown command '%s'; see 'tracer --help'\n", name);
    return 2;
}

static int tr_help(int argc, char **argv)
{
    if (argc < 2) {
        tr_usage(stdout);
        return 0;
    }
    const struct tr_command *cmd = tr_find(argv[1]);
    if (!cmd)
        return tr_unknown(argv[1]);
    cmd->usage(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        tr_usage(stderr);
        return 2;
    }
    const char *word = argv[1];
    if (strcmp(word, "-h") == 0 || strcmp(word, "--help") == 0)
        return tr_help(1, argv + 1);
    if (strcmp(word, "help") == 0)
        return tr_help(argc - 1, argv + 1);
    if (strcmp(word, "-V") == 0 || strcmp(word, "--version") == 0
        || strcmp(word, "version") == 0) {
        printf("tracer %s\n", TRACER_VERSION);
        return 0;
    }
    const struct tr_command *cmd = tr_find(word);
    if (!cmd) {
        if (word[0] == '-') {
            fprintf(stderr, "tracer: unknown option '%s'; see 'tracer --help'\n", word);
            return 2;
        }
        return tr_unknown(word);
    }
    return cmd->run(argc - 1, argv + 1);
}
