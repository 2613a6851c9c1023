/* config.c - reads every TRACER_* variable once and reports what is wrong. */
#include "core/config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

tr_config tr_cfg;
tr_cfg_report tr_cfg_loaded;

const tr_cfg_var *tr_cfg_find(const char *name)
{
    for (size_t i = 0; i < tr_cfg_nvars; i++)
        if (!strcmp(tr_cfg_vars[i].name, name))
            return &tr_cfg_vars[i];
    return 0;
}

static void add_message(tr_cfg_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_message(tr_cfg_report *r, const char *fmt, ...)
{
    if (r->nmessages == TR_CFG_MAX_MESSAGES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->messages[r->nmessages++], sizeof r->messages[0], fmt, ap);
    va_end(ap);
}

/* Edit distance, to name the variable a typo most likely meant. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof *prev);
    }
    return prev[lb];
}

static const char *closest(const char *name)
{
    const char *best = 0;
    size_t best_d = 64;
    for (size_t i = 0; i < tr_cfg_nvars; i++) {
        size_t d = distance(name, tr_cfg_vars[i].name);
        if (d < best_d) {
            best_d = d;
            best = tr_cfg_vars[i].name;
        }
    }
    return best;
}

static const char *lookup_env(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (char *const *e = envp; e && *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return 0;
}

int tr_cfg_load(tr_config *cfg, char *const *envp, tr_cfg_report *r)
{
    memset(cfg, 0, sizeof *cfg);
    memset(r, 0, sizeof *r);
    char err[256];
    for (size_t i = 0; i < tr_cfg_nvars; i++) {
        const tr_cfg_var *v = &tr_cfg_vars[i];
        void *field = (char *)cfg + v->offset;
        const char *text = lookup_env(envp, v->name);
        if (text) {
            r->source[i] = TR_CFG_FROM_ENV;
            r->raw[i] = text;
            if (tr_cfg_parse(v, text, field, err, sizeof err) == 0)
                continue;
            r->errors++;
            add_message(r, "%s='%.200s' %s", v->name, text, err);
        }
        /* A default (or the fallback after an error) always parses, except the
         * default output directory, which the writer builds. */
        r->source[i] = text ? r->source[i] : TR_CFG_FROM_DEFAULT;
        r->raw[i] = text ? text : v->def;
        if (v->type != TR_CFG_PATH)
            tr_cfg_parse(v, v->def, field, err, sizeof err);
    }
    for (char *const *e = envp; e && *e; e++) {
        if (strncmp(*e, "TRACER_", 7))
            continue;
        char name[128];
        size_t n = strcspn(*e, "=");
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, *e, n);
        name[n] = 0;
        if (tr_cfg_find(name))
            continue;
        r->warnings++;
        add_message(r, "unknown variable %s is ignored; did you mean %s? ('tracer info --config' lists them all)",
                    name, closest(name));
    }
    return r->errors;
}
