/* info_config.c - `tracer info`'s configuration section and the README's
 * table, both straight from tr_cfg_vars[] (src/core/config_table.c), so the
 * documentation, the library and the command cannot disagree. */
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "info.h"

static const char *lookup(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (char *const *e = envp; e && *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return 0;
}

/* Values come from the user's environment; keep control bytes out. */
static void put_clean(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

void tr_info_config(FILE *out, char *const *envp)
{
    /* tr_cfg_load checks what the library would: the values and the
     * unknown names. The per-variable lines below parse each value again
     * to put its error next to it. */
    static tr_config cfg, scratch;
    static tr_cfg_report report;
    tr_cfg_load(&cfg, envp, &report);

    fputs("configuration (TRACER_* environment variables):\n", out);
    char err[256];
    for (size_t i = 0; i < tr_cfg_nvars; i++) {
        const tr_cfg_var *v = &tr_cfg_vars[i];
        const char *text = lookup(envp, v->name);
        fprintf(out, "  %s=", v->name);
        put_clean(out, text ? text : v->def);
        fprintf(out, "  (%s)", text ? "environment" : "default");
        if (text && tr_cfg_parse(v, text, (char *)&scratch + v->offset, err, sizeof err) != 0)
            fprintf(out, "  INVALID: %s", err);
        fprintf(out, "\n      %s, default %s: %s\n", tr_cfg_type_name(v->type), v->def, v->help);
    }
    int unknown = 0;
    for (int m = 0; m < report.nmessages; m++) {
        if (strncmp(report.messages[m], "unknown variable ", 17))
            continue; /* the invalid values are shown above */
        if (!unknown++)
            fputs("  unknown TRACER_* variables (ignored by the library):\n", out);
        /* The library's line points here; drop that pointer. */
        const char *msg = report.messages[m];
        const char *cut = strstr(msg, " ('tracer info");
        fprintf(out, "    %.*s\n", (int)(cut ? (size_t)(cut - msg) : strlen(msg)), msg);
    }
}

/* '|' would end a Markdown table cell. */
static void put_cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
}

void tr_info_config_markdown(FILE *out)
{
    fputs("| variable | type | default | meaning |\n|---|---|---|---|\n", out);
    for (size_t i = 0; i < tr_cfg_nvars; i++) {
        const tr_cfg_var *v = &tr_cfg_vars[i];
        fprintf(out, "| `%s` | %s | `", v->name, tr_cfg_type_name(v->type));
        put_cell(out, v->def);
        fputs("` | ", out);
        put_cell(out, v->help);
        fputs(" |\n", out);
    }
}
