/* cmd_run.c - `tracer run [options] [--] COMMAND [ARGS...]`: sets the
 * TRACER_* variables from options, preloads libtracer.so and execs COMMAND.
 *
 * The options are derived from tr_cfg_vars[] (TRACER_MIN_BYTES is
 * --min-bytes), so every variable has an option and each value is checked by
 * the library's own parser before anything runs, as is every TRACER_* value
 * the command inherits from the environment. Everything goes through the
 * environment, so it also reaches the ranks of an mpiexec that tracer runs,
 * and `mpiexec -n 2 tracer run -- ./app` works as well. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "commands.h"
#include "core/config.h"
#include "info.h"

/* TRACER_MIN_BYTES -> min-bytes */
static void option_name(const tr_cfg_var *v, char *buf, size_t len)
{
    size_t n = 0;
    for (const char *p = v->name + 7; *p && n + 1 < len; p++)
        buf[n++] = *p == '_' ? '-' : (char)tolower((unsigned char)*p);
    buf[n] = 0;
}

static const char *placeholder(enum tr_cfg_type t)
{
    switch (t) {
    case TR_CFG_BOOL: return "BOOL";
    case TR_CFG_INT: return "N";
    case TR_CFG_SIZE: return "SIZE";
    case TR_CFG_DURATION: return "DURATION";
    case TR_CFG_PATH: return "PATH";
    case TR_CFG_CHOICE: return "WORD";
    case TR_CFG_LIST: return "LIST";
    case TR_CFG_GLOBS: return "PATTERNS";
    case TR_CFG_RANGES: return "RANGES";
    }
    return "VALUE";
}

void cmd_run_usage(FILE *fp)
{
    fputs("usage: tracer run [options] [--] COMMAND [ARGS...]\n"
          "\n"
          "Run COMMAND with libtracer.so preloaded (put first in LD_PRELOAD, after\n"
          "any sanitizer runtime, existing entries kept). Each option sets the TRACER_*\n"
          "variable named beside it. Before COMMAND runs, the options' values and the\n"
          "TRACER_* values already in the environment are checked as the library\n"
          "checks them: a malformed one is an error here, not an untraced run. The\n"
          "environment reaches the processes COMMAND starts, so\n"
          "  tracer run --output d -- mpiexec -n 2 ./app\n"
          "traces both ranks of an MPI program into one archive, d, as does\n"
          "  mpiexec -n 2 tracer run --output d -- ./app\n"
          "(processes that never call MPI_Init write d.rank0, d.rank1, ... instead).\n"
          "\n"
          "options:\n",
          fp);
    char name[64];
    for (size_t i = 0; i < tr_cfg_nvars; i++) {
        const tr_cfg_var *v = &tr_cfg_vars[i];
        option_name(v, name, sizeof name);
        char left[160];
        if (v->type == TR_CFG_BOOL)
            snprintf(left, sizeof left, "--%s[=BOOL], --no-%s", name, name);
        else
            snprintf(left, sizeof left, "--%s %s", name, placeholder(v->type));
        fprintf(fp, "  %-34s %s (%s, default %s)\n", left, v->name, tr_cfg_type_name(v->type), v->def);
        fprintf(fp, "      %s; %s\n", v->help, tr_cfg_form(v));
    }
    fputs("  --lib PATH                         libtracer.so to preload (default: the one\n"
          "                                     beside this tracer command)\n"
          "  -h, --help                         show this text\n"
          "\n"
          "An option's value is the next word or follows '='. A bool option alone\n"
          "means 1; it takes the next word only when that is a bool (1, 0, yes, no,\n"
          "true, false, on, off) and more words follow.\n"
          "\n"
          "exit status: that of COMMAND; 2 usage error or invalid value (option or\n"
          "environment), 1 libtracer.so not found, 126 COMMAND cannot be run, 127\n"
          "COMMAND not found\n",
          fp);
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "tracer: run: %s%s%s%s; see 'tracer run --help'\n", what, arg ? " '" : "", arg ? arg : "",
            arg ? "'" : "");
    return 2;
}

/* The variable of option @opt (without "--", @len bytes); *negated is set
 * for --no-<bool>. */
static const tr_cfg_var *find_option(const char *opt, size_t len, bool *negated)
{
    char name[64];
    *negated = false;
    for (int pass = 0; pass < 2; pass++) {
        const char *o = opt;
        size_t n = len;
        if (pass == 1) {
            if (n < 3 || strncmp(o, "no-", 3))
                return NULL;
            o += 3;
            n -= 3;
        }
        for (size_t i = 0; i < tr_cfg_nvars; i++) {
            option_name(&tr_cfg_vars[i], name, sizeof name);
            if (strlen(name) == n && !strncmp(name, o, n)) {
                if (pass == 1 && tr_cfg_vars[i].type != TR_CFG_BOOL)
                    return NULL;
                *negated = pass == 1;
                return &tr_cfg_vars[i];
            }
        }
    }
    return NULL;
}

static bool is_sanitizer_runtime(const char *entry, size_t len)
{
    static const char *const names[] = {"libasan", "libubsan", "libtsan", "liblsan", "libhwasan", "libclang_rt.", 0};
    const char *base = entry;
    for (size_t i = 0; i < len; i++)
        if (entry[i] == '/')
            base = entry + i + 1;
    for (int i = 0; names[i]; i++)
        if (!strncmp(base, names[i], strlen(names[i])))
            return true;
    return false;
}

/* @lib first in LD_PRELOAD, except after sanitizer runtimes, which must be
 * loaded before any instrumented library. Already present: left as it is. */
static int set_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    if (!old || !old[0])
        return setenv("LD_PRELOAD", lib, 1);
    size_t liblen = strlen(lib), keep = 0;
    for (const char *p = old; *p;) {
        size_t n = strcspn(p, ": ");
        if (n == liblen && !strncmp(p, lib, n))
            return 0;
        if (n && keep == (size_t)(p - old) && is_sanitizer_runtime(p, n))
            keep = (size_t)(p - old) + n + (p[n] ? 1 : 0);
        p += n + (p[n] ? 1 : 0);
    }
    size_t total = strlen(old) + liblen + 2;
    char *v = malloc(total);
    if (!v)
        return -1;
    if (keep && !old[keep]) /* only sanitizer runtimes: append */
        snprintf(v, total, "%s:%s", old, lib);
    else
        snprintf(v, total, "%.*s%s:%s", (int)keep, old, lib, old + keep);
    int rc = setenv("LD_PRELOAD", v, 1);
    free(v);
    return rc;
}

static bool is_bool_word(const char *s)
{
    static const char *const words[] = {"1", "0", "yes", "no", "true", "false", "on", "off", 0};
    for (int i = 0; words[i]; i++)
        if (!strcasecmp(s, words[i]))
            return true;
    return false;
}

/* A TRACER_* value already in the environment reaches COMMAND unchanged,
 * and the library refuses to trace a run with a malformed one: check it
 * here with the library's parser, so that the mistake stops the launch
 * instead of giving an untraced run. An option given overrides it. Prints
 * one line per bad value; returns how many there were. */
static int check_environment(const char *const *option_value)
{
    static tr_config scratch;
    char err[256];
    int bad = 0;
    for (size_t k = 0; k < tr_cfg_nvars; k++) {
        const tr_cfg_var *v = &tr_cfg_vars[k];
        const char *text = getenv(v->name);
        if (option_value[k] || !text)
            continue;
        if (tr_cfg_parse(v, text, (char *)&scratch + v->offset, err, sizeof err) == 0)
            continue;
        fprintf(stderr, "tracer: run: %s='%.200s' (from the environment) %s; nothing was run\n", v->name, text, err);
        bad++;
    }
    return bad;
}

int cmd_run(int argc, char **argv)
{
    const char *value[64] = {0};
    const char *lib = NULL;
    static tr_config scratch; /* the parsers want a field to fill */
    char err[256];
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || !a[1])
            break; /* COMMAND */
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cmd_run_usage(stdout);
            return 0;
        }
        if (strncmp(a, "--", 2))
            return usage_error("unknown option", a);
        const char *opt = a + 2, *eq = strchr(opt, '=');
        size_t len = eq ? (size_t)(eq - opt) : strlen(opt);
        if (len == 3 && !strncmp(opt, "lib", 3)) {
            lib = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!lib || !lib[0])
                return usage_error("missing path after", "--lib");
            continue;
        }
        bool negated;
        const tr_cfg_var *v = find_option(opt, len, &negated);
        if (!v) {
            char shown[128];
            snprintf(shown, sizeof shown, "--%.*s", (int)(len < 100 ? len : 100), opt);
            return usage_error("unknown option", shown);
        }
        const char *text;
        if (negated) {
            if (eq)
                return usage_error("takes no value", a);
            text = "0";
        } else if (eq) {
            text = eq + 1;
        } else if (v->type == TR_CFG_BOOL) {
            text = "1";
            if (i + 2 < argc && is_bool_word(argv[i + 1]))
                text = argv[++i];
        } else {
            if (i + 1 >= argc) {
                char shown[128];
                snprintf(shown, sizeof shown, "--%.*s", (int)(len < 100 ? len : 100), opt);
                return usage_error("missing value after", shown);
            }
            text = argv[++i];
        }
        if (tr_cfg_parse(v, text, (char *)&scratch + v->offset, err, sizeof err) != 0) {
            fprintf(stderr, "tracer: run: --%.*s '%.200s' %s; see 'tracer run --help'\n", (int)(len < 100 ? len : 100),
                    opt, text, err);
            return 2;
        }
        value[v - tr_cfg_vars] = text;
    }
    if (i >= argc)
        return usage_error("no command given", NULL);
    if (check_environment(value) != 0)
        return 2;

    char path[PATH_MAX], tried[2048];
    if (tr_find_libtracer(lib, path, sizeof path, tried, sizeof tried) != 0) {
        fprintf(stderr, "tracer: run: cannot find libtracer.so (tried %s)%s\n", tried,
                lib ? "" : "; give --lib PATH");
        return 1;
    }
    for (size_t k = 0; k < tr_cfg_nvars; k++)
        if (value[k] && setenv(tr_cfg_vars[k].name, value[k], 1) != 0) {
            fprintf(stderr, "tracer: run: cannot set %s: %s\n", tr_cfg_vars[k].name, strerror(errno));
            return 1;
        }
    if (set_preload(path) != 0) {
        fprintf(stderr, "tracer: run: cannot set LD_PRELOAD: %s\n", strerror(errno));
        return 1;
    }
    fflush(stdout);
    execvp(argv[i], argv + i);
    int e = errno;
    fprintf(stderr, "tracer: run: cannot run '%s': %s\n", argv[i], strerror(e));
    return e == ENOENT || e == ENOTDIR ? 127 : 126;
}
