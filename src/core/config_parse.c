/* config_parse.c - one parser per TRACER_* value type. Each either fills its
 * field or explains, in one phrase, what it expected. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config.h"

const char *tr_cfg_type_name(enum tr_cfg_type t)
{
    switch (t) {
    case TR_CFG_BOOL: return "bool";
    case TR_CFG_INT: return "integer";
    case TR_CFG_SIZE: return "size";
    case TR_CFG_DURATION: return "duration";
    case TR_CFG_PATH: return "path";
    case TR_CFG_CHOICE: return "choice";
    case TR_CFG_LIST: return "list";
    case TR_CFG_GLOBS: return "glob list";
    case TR_CFG_RANGES: return "range list";
    }
    return "?";
}

const char *tr_cfg_form(const tr_cfg_var *v)
{
    static __thread char buf[256];
    switch (v->type) {
    case TR_CFG_BOOL: return "1, 0, yes, no, true, false, on or off";
    case TR_CFG_INT:
        snprintf(buf, sizeof buf, "an integer from %lld to %lld", (long long)v->min, (long long)v->max);
        return buf;
    case TR_CFG_SIZE: return "a size in bytes such as 4096, 64k, 16M or 1G";
    case TR_CFG_DURATION: return "a duration with a unit, such as 500us, 20ms, 2s or 1min";
    case TR_CFG_PATH: return "a path";
    case TR_CFG_CHOICE:
    case TR_CFG_LIST: {
        size_t n = (size_t)snprintf(buf, sizeof buf, v->type == TR_CFG_CHOICE ? "one of " : "all, none or a comma-separated list of ");
        for (int i = 0; v->words[i] && n < sizeof buf; i++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", v->words[i]);
        return buf;
    }
    case TR_CFG_GLOBS: return "a comma-separated list of patterns such as solve*,!*init*";
    case TR_CFG_RANGES: return "all or a comma-separated list of numbers and ranges such as 0-3,8";
    }
    return "?";
}

/* Digits only (no sign, no space), into *out; ERANGE-safe. */
static int parse_u64(const char **p, uint64_t *out)
{
    const char *s = *p;
    if (!isdigit((unsigned char)*s))
        return -1;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    *p = s;
    *out = v;
    return 0;
}

static int parse_bool(const char *t, int *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false", "off"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(t, yes[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(t, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

static int parse_int(const tr_cfg_var *v, const char *t, int64_t *out, char *err, size_t errlen)
{
    const char *p = t;
    int neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    uint64_t u;
    int rc = parse_u64(&p, &u);
    if (rc == -2 || (rc == 0 && u > (uint64_t)INT64_MAX)) {
        snprintf(err, errlen, "out of range; expected %s", tr_cfg_form(v));
        return -1;
    }
    if (rc || *p)
        return -1;
    int64_t x = neg ? -(int64_t)u : (int64_t)u;
    if (x < v->min || x > v->max) {
        snprintf(err, errlen, "out of range; expected %s", tr_cfg_form(v));
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_size(const char *t, uint64_t *out, char *err, size_t errlen)
{
    const char *p = t;
    uint64_t v;
    int rc = parse_u64(&p, &v);
    if (rc == -2) {
        snprintf(err, errlen, "too large; expected %s", "a size below 16 EiB");
        return -1;
    }
    if (rc)
        return -1;
    unsigned shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    case 't': case 'T': shift = 40; p++; break;
    default: break;
    }
    /* Accept the spellings people write: 64k, 64K, 64KB, 64KiB, 100B. */
    if (shift && p[0] == 'i' && p[1] == 'B')
        p += 2;
    else if (*p == 'B')
        p++;
    if (*p)
        return -1;
    if (shift && v > (UINT64_MAX >> shift)) {
        snprintf(err, errlen, "too large; expected a size below 16 EiB");
        return -1;
    }
    *out = v << shift;
    return 0;
}

static int parse_duration(const char *t, uint64_t *out, char *err, size_t errlen)
{
    const char *p = t;
    uint64_t whole, frac = 0, frac_div = 1;
    int rc = parse_u64(&p, &whole);
    if (rc == -2) {
        snprintf(err, errlen, "too large; expected a duration below 500 years");
        return -1;
    }
    if (rc)
        return -1;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        for (; isdigit((unsigned char)*p); p++) {
            if (frac_div < 1000000000u) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                frac_div *= 10;
            }
        }
    }
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ull},
                 {"min", 60000000000ull}, {"h", 3600000000000ull}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strcmp(p, units[i].unit))
            continue;
        if (whole > UINT64_MAX / units[i].ns / 2) {
            snprintf(err, errlen, "too large; expected a duration below 500 years");
            return -1;
        }
        *out = whole * units[i].ns + frac * units[i].ns / frac_div;
        return 0;
    }
    if (!*p)
        snprintf(err, errlen, "has no unit; expected %s", "a duration with a unit, such as 500us, 20ms, 2s or 1min");
    return -1;
}

static int word_index(const char *const *words, const char *w, size_t len)
{
    for (int i = 0; words[i]; i++)
        if (strlen(words[i]) == len && !strncasecmp(words[i], w, len))
            return i;
    return -1;
}

static int parse_list(const tr_cfg_var *v, const char *t, uint32_t *out, char *err, size_t errlen)
{
    if (!strcasecmp(t, "all")) {
        uint32_t all = 0;
        for (int i = 0; v->words[i]; i++)
            all |= 1u << i;
        *out = all;
        return 0;
    }
    if (!strcasecmp(t, "none")) {
        *out = 0;
        return 0;
    }
    uint32_t bits = 0;
    for (const char *p = t;;) {
        size_t len = strcspn(p, ",");
        int i = word_index(v->words, p, len);
        if (i < 0) {
            snprintf(err, errlen, "has unknown word '%.*s'; expected %s", (int)(len > 64 ? 64 : len), p,
                     tr_cfg_form(v));
            return -1;
        }
        bits |= 1u << i;
        if (!p[len])
            break;
        p += len + 1;
    }
    *out = bits;
    return 0;
}

static int parse_globs(const char *t, tr_globs *g, char *err, size_t errlen)
{
    tr_globs r;
    memset(&r, 0, sizeof r);
    size_t len = strlen(t);
    if (len >= sizeof r.buf) {
        snprintf(err, errlen, "is longer than %zu characters; expected %s", sizeof r.buf - 1,
                 "a comma-separated list of patterns such as solve*,!*init*");
        return -1;
    }
    memcpy(r.buf, t, len + 1);
    for (char *p = r.buf;;) {
        size_t n = strcspn(p, ",");
        int last = !p[n];
        p[n] = 0;
        if (!n || (p[0] == '!' && n == 1)) {
            snprintf(err, errlen, "has an empty pattern; expected %s",
                     "a comma-separated list of patterns such as solve*,!*init*");
            return -1;
        }
        if (r.n == TR_CFG_MAX_GLOBS) {
            snprintf(err, errlen, "has more than %d patterns; expected %s", TR_CFG_MAX_GLOBS,
                     "a comma-separated list of patterns such as solve*,!*init*");
            return -1;
        }
        r.off[r.n++] = (uint16_t)(p - r.buf);
        if (last)
            break;
        p += n + 1;
    }
    *g = r;
    return 0;
}

static int parse_ranges(const char *t, tr_ranges *out, char *err, size_t errlen)
{
    tr_ranges r;
    memset(&r, 0, sizeof r);
    if (!strcasecmp(t, "all")) {
        r.all = 1;
        *out = r;
        return 0;
    }
    for (const char *p = t;;) {
        uint64_t lo, hi;
        int rc = parse_u64(&p, &lo);
        if (rc == -2 || (!rc && lo > INT32_MAX)) {
            snprintf(err, errlen, "has a number out of range; expected numbers from 0 to %d", INT32_MAX);
            return -1;
        }
        if (rc)
            return -1;
        hi = lo;
        if (*p == '-') {
            p++;
            rc = parse_u64(&p, &hi);
            if (rc == -2 || (!rc && hi > INT32_MAX)) {
                snprintf(err, errlen, "has a number out of range; expected numbers from 0 to %d", INT32_MAX);
                return -1;
            }
            if (rc)
                return -1;
            if (hi < lo) {
                snprintf(err, errlen, "has the range %llu-%llu, which runs backwards; expected %s",
                         (unsigned long long)lo, (unsigned long long)hi,
                         "all or a comma-separated list of numbers and ranges such as 0-3,8");
                return -1;
            }
        }
        if (r.n == TR_CFG_MAX_RANGES) {
            snprintf(err, errlen, "has more than %d ranges; expected %s", TR_CFG_MAX_RANGES,
                     "all or a comma-separated list of numbers and ranges such as 0-3,8");
            return -1;
        }
        r.r[r.n].lo = (int64_t)lo;
        r.r[r.n].hi = (int64_t)hi;
        r.n++;
        if (!*p)
            break;
        if (*p != ',')
            return -1;
        p++;
    }
    *out = r;
    return 0;
}

int tr_cfg_parse(const tr_cfg_var *v, const char *t, void *out, char *err, size_t errlen)
{
    err[0] = 0;
    int rc;
    if (!*t) {
        snprintf(err, errlen, "is empty; unset it or give %s", tr_cfg_form(v));
        return -1;
    }
    switch (v->type) {
    case TR_CFG_BOOL: rc = parse_bool(t, out); break;
    case TR_CFG_INT: rc = parse_int(v, t, out, err, errlen); break;
    case TR_CFG_SIZE:
        rc = parse_size(t, out, err, errlen);
        if (!rc && v->max > 0 && (*(uint64_t *)out < (uint64_t)v->min || *(uint64_t *)out > (uint64_t)v->max)) {
            snprintf(err, errlen, "is below the minimum of %lld bytes; expected %s", (long long)v->min,
                     tr_cfg_form(v));
            rc = -1;
        }
        break;
    case TR_CFG_DURATION: rc = parse_duration(t, out, err, errlen); break;
    case TR_CFG_PATH:
        if (strlen(t) > TR_CFG_PATH_MAX) {
            snprintf(err, errlen, "is longer than %d characters; expected a path of at most %d characters",
                     TR_CFG_PATH_MAX, TR_CFG_PATH_MAX);
            return -1;
        }
        strcpy(out, t);
        rc = 0;
        break;
    case TR_CFG_CHOICE: {
        int i = word_index(v->words, t, strlen(t));
        if (i >= 0)
            *(int *)out = i;
        rc = i >= 0 ? 0 : -1;
        break;
    }
    case TR_CFG_LIST: rc = parse_list(v, t, out, err, errlen); break;
    case TR_CFG_GLOBS: rc = parse_globs(t, out, err, errlen); break;
    case TR_CFG_RANGES: rc = parse_ranges(t, out, err, errlen); break;
    default: rc = -1; break;
    }
    if (rc && !err[0])
        snprintf(err, errlen, "is not %s", tr_cfg_form(v));
    return rc;
}

int tr_ranges_contains(const tr_ranges *r, int64_t v)
{
    if (r->all)
        return 1;
    for (uint32_t i = 0; i < r->n; i++)
        if (v >= r->r[i].lo && v <= r->r[i].hi)
            return 1;
    return 0;
}

int tr_globs_match(const tr_globs *g, const char *s)
{
    int includes = 0, included = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        const char *pat = g->buf + g->off[i];
        if (pat[0] == '!') {
            if (!fnmatch(pat + 1, s, 0))
                return 0;
        } else {
            includes++;
            included |= !fnmatch(pat, s, 0);
        }
    }
    return includes ? included : 1;
}
