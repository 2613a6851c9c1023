/* cmd_info.c - `tracer info`: arguments, and the order of the sections.
 * Each section is its own engine (info_omp.c, info_mpi.c, info_config.c). */
#include <errno.h>
#include <limits.h>
#include <otf2/OTF2_GeneralDefinitions.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "info.h"

#ifndef TRACER_VERSION
#define TRACER_VERSION "unknown"
#endif
#ifndef TRACER_CC
#define TRACER_CC "unknown compiler"
#endif
#ifndef TRACER_BUILDTYPE
#define TRACER_BUILDTYPE "unknown"
#endif
#ifndef TRACER_SANITIZE
#define TRACER_SANITIZE "none"
#endif
#ifndef TRACER_OMPT_INCLUDE_DIR
#define TRACER_OMPT_INCLUDE_DIR "unknown"
#endif
#ifndef TRACER_MPI_HEADERS
#define TRACER_MPI_HEADERS "none"
#endif

extern char **environ;

void cmd_info_usage(FILE *fp)
{
    fputs("usage: tracer info [--config [--markdown]] [--lib PATH] [--omp-lib PATH]\n"
          "                   [--omptarget-lib PATH] [--mpi-lib PATH]\n"
          "\n"
          "Print what tracer would see here: its version and build; the OpenMP\n"
          "runtime, the OMPT callbacks it grants tracer and the devices it\n"
          "initialises; the MPI library and its MPI_T event sources and types; the\n"
          "TRACER_* variables with their values in this environment.\n"
          "\n"
          "The OpenMP and MPI libraries are loaded in a child process, with a clean\n"
          "TRACER_* environment and the trace going to a temporary directory.\n"
          "\n"
          "options:\n"
          "  --config             print only the TRACER_* variables\n"
          "  --markdown           with --config: print the README's table\n"
          "  --lib PATH           libtracer.so to load (default: the one beside tracer)\n"
          "  --omp-lib PATH       OpenMP runtime (default: libomp.so.5)\n"
          "  --omptarget-lib PATH offload runtime (default: libomptarget.so.19.1)\n"
          "  --mpi-lib PATH       MPI library (default: each of libmpich.so.12,\n"
          "                       libmpi.so.40, libmpi.so.12, libmpi.so.0 that loads)\n"
          "  -h, --help           show this text\n"
          "\n"
          "exit status: 0 done (also when a runtime is missing), 2 usage error\n",
          fp);
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "tracer: info: %s%s%s%s; see 'tracer info --help'\n", what, arg ? " '" : "", arg ? arg : "",
            arg ? "'" : "");
    return 2;
}

static void print_build(FILE *out, const struct tr_info_opts *o)
{
    char lib[PATH_MAX], tried[2048];
    fprintf(out, "tracer %s\n", TRACER_VERSION);
    fprintf(out, "  compiler:         %s\n", TRACER_CC);
    fprintf(out, "  build type:       %s\n", TRACER_BUILDTYPE);
    fprintf(out, "  sanitizers:       %s\n", TRACER_SANITIZE);
    fprintf(out, "  OTF2:             %d.%d.%d%s\n", OTF2_VERSION_MAJOR, OTF2_VERSION_MINOR, OTF2_VERSION_BUGFIX,
            OTF2_VERSION_SUFFIX);
    fprintf(out, "  omp-tools.h from: %s\n", TRACER_OMPT_INCLUDE_DIR);
    fprintf(out, "  MPI headers:      %s\n", TRACER_MPI_HEADERS);
    if (tr_find_libtracer(o->lib, lib, sizeof lib, tried, sizeof tried) == 0)
        fprintf(out, "  libtracer.so:     %s\n", lib);
    else
        fprintf(out, "  libtracer.so:     not found (tried %s)\n", tried);
}

int cmd_info(int argc, char **argv)
{
    bool config = false, markdown = false;
    struct tr_info_opts o = {0};
    static const struct {
        const char *name;
        size_t offset;
    } paths[] = {
        {"--lib", offsetof(struct tr_info_opts, lib)},
        {"--omp-lib", offsetof(struct tr_info_opts, omp_lib)},
        {"--omptarget-lib", offsetof(struct tr_info_opts, omptarget_lib)},
        {"--mpi-lib", offsetof(struct tr_info_opts, mpi_lib)},
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cmd_info_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--config")) {
            config = true;
            continue;
        }
        if (!strcmp(a, "--markdown")) {
            markdown = true;
            continue;
        }
        size_t k = 0;
        for (; k < sizeof paths / sizeof *paths; k++) {
            size_t n = strlen(paths[k].name);
            if (strncmp(a, paths[k].name, n) || (a[n] && a[n] != '='))
                continue;
            const char *value = a[n] == '=' ? a + n + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!value || !value[0])
                return usage_error("missing path after", paths[k].name);
            *(const char **)((char *)&o + paths[k].offset) = value;
            break;
        }
        if (k == sizeof paths / sizeof *paths)
            return usage_error(a[0] == '-' ? "unknown option" : "unexpected argument", a);
    }
    if (markdown && !config)
        return usage_error("--markdown is only for --config (tracer info --config --markdown)", NULL);

    if (markdown)
        tr_info_config_markdown(stdout);
    else if (config)
        tr_info_config(stdout, environ);
    else {
        print_build(stdout, &o);
        fputc('\n', stdout);
        tr_info_omp(stdout, &o);
        fputc('\n', stdout);
        tr_info_gpu(stdout);
        fputc('\n', stdout);
        tr_info_mpi(stdout, &o);
        fputc('\n', stdout);
        tr_info_config(stdout, environ);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tracer: info: cannot write output: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
