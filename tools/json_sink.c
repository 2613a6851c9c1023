/* json_sink.c - tracer convert's Chrome trace-event JSON output (opens in
 * chrome://tracing and ui.perfetto.dev).
 *
 * The file is written as the calls come, one event per line:
 *   {"displayTimeUnit":"ns","traceEvents":[
 *   {"ph":"M","name":"process_name",...},
 *   {"ph":"B","name":"target","cat":"openmp","ts":12.345,"pid":1,"tid":1,"args":{...}},
 *   ...
 *   ]}
 * "ts" is in microseconds, as the format wants, printed with exactly three
 * decimals so that nanoseconds survive (no floating point on the way).
 * pid = process id + 1 and tid = track id + 1, because viewers treat 0 as
 * "no process". What the sink keeps grows with tracks and counters, never
 * with events. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_sink.h"
#include "convert_utf8.h"

/* Output is assembled here and handed to stdio in large writes. */
#define JS_FLUSH_AT (256 * 1024)

struct js {
    FILE *out;
    char *buf;
    size_t len, cap;
    bool first; /* no comma before the first event */
    bool failed;
    uint32_t *track_pid; /* track id -> "pid" */
    uint32_t ntracks;
    struct js_counter {
        uint32_t pid;
        char *name;
    } *counters;
    uint32_t ncounters;
};

/* ---- the output buffer ---------------------------------------------------- */

static int js_flush(struct js *s)
{
    if (s->len && !s->failed && fwrite(s->buf, 1, s->len, s->out) != s->len)
        s->failed = true;
    s->len = 0;
    return s->failed ? -1 : 0;
}

static void js_put(struct js *s, const char *p, size_t n)
{
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : JS_FLUSH_AT * 2;
        while (cap < s->len + n)
            cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b) {
            s->failed = true;
            errno = ENOMEM;
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

#define JS_LIT(s, lit) js_put((s), (lit), sizeof(lit) - 1)

static void js_putc(struct js *s, char c)
{
    if (s->len < s->cap)
        s->buf[s->len++] = c;
    else
        js_put(s, &c, 1);
}

static void js_u64(struct js *s, uint64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    do
        tmp[--i] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    js_put(s, tmp + i, sizeof tmp - (size_t)i);
}

static void js_i64(struct js *s, int64_t v)
{
    if (v < 0) {
        js_putc(s, '-');
        js_u64(s, (uint64_t)0 - (uint64_t)v);
    } else {
        js_u64(s, (uint64_t)v);
    }
}

/* Shortest of %.15g / %.17g that reads back exactly; JSON has no NaN or
 * infinity, so those become null. */
static void js_double(struct js *s, double v)
{
    if (!isfinite(v)) {
        JS_LIT(s, "null");
        return;
    }
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v)
        n = snprintf(tmp, sizeof tmp, "%.17g", v);
    js_put(s, tmp, (size_t)n);
}

/* Microseconds with three decimals: exact nanoseconds. */
static void js_ts(struct js *s, uint64_t ns)
{
    js_u64(s, ns / 1000);
    uint32_t frac = (uint32_t)(ns % 1000);
    char tmp[4] = { '.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10), (char)('0' + frac % 10) };
    js_put(s, tmp, 4);
}

/* A JSON string: quotes, backslashes and control characters escaped, and
 * every byte that is not part of valid UTF-8 replaced by U+FFFD, because
 * names and string attributes come from the traced program as raw bytes. */
static void js_str(struct js *s, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(str ? str : "");
    js_putc(s, '"');
    while (*p) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
            p++;
        js_put(s, (const char *)run, (size_t)(p - run));
        unsigned c = *p;
        if (!c)
            break;
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            js_put(s, e, 2);
            p++;
        } else if (c < 0x20) {
            char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
            if (c == '\n')
                JS_LIT(s, "\\n");
            else if (c == '\t')
                JS_LIT(s, "\\t");
            else if (c == '\r')
                JS_LIT(s, "\\r");
            else
                js_put(s, e, 6);
            p++;
        } else {
            int n = tc_utf8_len(p);
            if (n) {
                js_put(s, (const char *)p, (size_t)n);
                p += n;
            } else {
                JS_LIT(s, "\\ufffd");
                p++;
            }
        }
    }
    js_putc(s, '"');
}

/* ---- events ------------------------------------------------------------------ */

/* Opens an event object: `{"ph":"X"` after the separator. */
static void js_open(struct js *s, char ph)
{
    if (!s->first)
        js_putc(s, ',');
    s->first = false;
    char head[9] = { '\n', '{', '"', 'p', 'h', '"', ':', '"', ph };
    js_put(s, head, sizeof head);
    js_putc(s, '"');
}

/* Closes an event; writes out a full buffer. */
static int js_close(struct js *s)
{
    js_putc(s, '}');
    if (s->len >= JS_FLUSH_AT)
        return js_flush(s);
    return s->failed ? -1 : 0;
}

static void js_pid_tid(struct js *s, uint32_t pid, uint32_t tid)
{
    JS_LIT(s, ",\"pid\":");
    js_u64(s, pid);
    JS_LIT(s, ",\"tid\":");
    js_u64(s, tid);
}

static uint32_t js_pid_of(const struct js *s, uint32_t track)
{
    return track < s->ntracks ? s->track_pid[track] : 0;
}

static void js_name_cat_ts(struct js *s, const char *name, const char *cat, uint64_t ts)
{
    JS_LIT(s, ",\"name\":");
    js_str(s, name);
    if (cat) {
        JS_LIT(s, ",\"cat\":");
        js_str(s, cat);
    }
    JS_LIT(s, ",\"ts\":");
    js_ts(s, ts);
}

static void js_args(struct js *s, const tc_arg *args, uint32_t nargs)
{
    if (!nargs)
        return;
    JS_LIT(s, ",\"args\":{");
    for (uint32_t i = 0; i < nargs; i++) {
        if (i)
            js_putc(s, ',');
        js_str(s, args[i].name);
        js_putc(s, ':');
        switch (args[i].type) {
        case TC_ARG_INT: js_i64(s, args[i].v.i); break;
        case TC_ARG_UINT: js_u64(s, args[i].v.u); break;
        case TC_ARG_DOUBLE: js_double(s, args[i].v.d); break;
        case TC_ARG_STRING: js_str(s, args[i].v.s); break;
        }
    }
    js_putc(s, '}');
}

/* "M" events: a process's or a track's name and its place in the list. */
static void js_meta(struct js *s, const char *what, uint32_t pid, uint32_t tid, const char *name,
                    uint32_t sort_index)
{
    js_open(s, 'M');
    JS_LIT(s, ",\"name\":\"");
    js_put(s, what, strlen(what));
    JS_LIT(s, "_name\"");
    js_pid_tid(s, pid, tid);
    JS_LIT(s, ",\"args\":{\"name\":");
    js_str(s, name);
    JS_LIT(s, "}}");
    js_open(s, 'M');
    JS_LIT(s, ",\"name\":\"");
    js_put(s, what, strlen(what));
    JS_LIT(s, "_sort_index\"");
    js_pid_tid(s, pid, tid);
    JS_LIT(s, ",\"args\":{\"sort_index\":");
    js_u64(s, sort_index);
    JS_LIT(s, "}");
    js_close(s);
}

static int js_add_track(tc_sink *sink, const tc_track *t)
{
    struct js *s = sink->ctx;
    if (t->id >= s->ntracks) {
        uint32_t n = t->id + 1 > 2 * s->ntracks ? t->id + 1 : 2 * s->ntracks;
        uint32_t *p = realloc(s->track_pid, n * sizeof *p);
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        memset(p + s->ntracks, 0, (n - s->ntracks) * sizeof *p);
        s->track_pid = p;
        s->ntracks = n;
    }
    s->track_pid[t->id] = t->process + 1;
    js_meta(s, "thread", t->process + 1, t->id + 1, t->name, t->id);
    return s->failed ? -1 : 0;
}

static int js_begin(tc_sink *sink, const tc_process *procs, uint32_t nprocs, const tc_track *tracks,
                    uint32_t ntracks)
{
    struct js *s = sink->ctx;
    JS_LIT(s, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    for (uint32_t i = 0; i < nprocs; i++)
        js_meta(s, "process", procs[i].id + 1, 0, procs[i].name, procs[i].id);
    for (uint32_t i = 0; i < ntracks; i++)
        if (js_add_track(sink, &tracks[i]) != 0)
            return -1;
    return js_flush(s);
}

static int js_add_counter(tc_sink *sink, const tc_counter *c)
{
    struct js *s = sink->ctx;
    if (c->id >= s->ncounters) {
        uint32_t n = c->id + 1 > 2 * s->ncounters ? c->id + 1 : 2 * s->ncounters;
        struct js_counter *p = realloc(s->counters, n * sizeof *p);
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        memset(p + s->ncounters, 0, (n - s->ncounters) * sizeof *p);
        s->counters = p;
        s->ncounters = n;
    }
    char *name = strdup(c->name);
    if (!name)
        return -1;
    free(s->counters[c->id].name);
    s->counters[c->id] = (struct js_counter){ c->process + 1, name };
    return 0;
}

/* A flow end binds to the slice that begins at its timestamp on its
 * thread ("bp":"e": the enclosing slice), so it follows the "B". */
static void js_flow(struct js *s, char ph, uint64_t id, uint64_t ts, uint32_t pid, uint32_t tid)
{
    js_open(s, ph);
    JS_LIT(s, ",\"id\":");
    js_u64(s, id);
    js_name_cat_ts(s, "flow", "flow", ts);
    js_pid_tid(s, pid, tid);
    JS_LIT(s, ",\"bp\":\"e\"");
    js_close(s);
}

static int js_slice_begin(tc_sink *sink, uint32_t track, uint64_t ts, const char *name, const char *category,
                          const tc_arg *args, uint32_t nargs, uint64_t flow_out, uint64_t flow_in)
{
    struct js *s = sink->ctx;
    uint32_t pid = js_pid_of(s, track);
    js_open(s, 'B');
    js_name_cat_ts(s, name, category, ts);
    js_pid_tid(s, pid, track + 1);
    js_args(s, args, nargs);
    js_close(s);
    if (flow_out)
        js_flow(s, 's', flow_out, ts, pid, track + 1);
    if (flow_in)
        js_flow(s, 'f', flow_in, ts, pid, track + 1);
    return s->failed ? -1 : 0;
}

static int js_slice_end(tc_sink *sink, uint32_t track, uint64_t ts)
{
    struct js *s = sink->ctx;
    js_open(s, 'E');
    JS_LIT(s, ",\"ts\":");
    js_ts(s, ts);
    js_pid_tid(s, js_pid_of(s, track), track + 1);
    return js_close(s);
}

static int js_instant(tc_sink *sink, uint32_t track, uint64_t ts, const char *name, const char *category,
                      const tc_arg *args, uint32_t nargs)
{
    struct js *s = sink->ctx;
    js_open(s, 'i');
    JS_LIT(s, ",\"s\":\"t\"");
    js_name_cat_ts(s, name, category, ts);
    js_pid_tid(s, js_pid_of(s, track), track + 1);
    js_args(s, args, nargs);
    return js_close(s);
}

static int js_counter(tc_sink *sink, uint32_t counter, uint64_t ts, double value)
{
    struct js *s = sink->ctx;
    if (counter >= s->ncounters || !s->counters[counter].name)
        return -1; /* never announced: a reader bug */
    js_open(s, 'C');
    js_name_cat_ts(s, s->counters[counter].name, NULL, ts);
    JS_LIT(s, ",\"pid\":");
    js_u64(s, s->counters[counter].pid);
    JS_LIT(s, ",\"args\":{\"value\":");
    js_double(s, value);
    js_putc(s, '}');
    return js_close(s);
}

static int js_end(tc_sink *sink)
{
    struct js *s = sink->ctx;
    JS_LIT(s, "\n]}\n");
    if (js_flush(s) != 0 || fflush(s->out) != 0 || ferror(s->out))
        return -1;
    return 0;
}

static void js_free(tc_sink *sink)
{
    if (!sink)
        return;
    struct js *s = sink->ctx;
    if (s) {
        for (uint32_t i = 0; i < s->ncounters; i++)
            free(s->counters[i].name);
        free(s->counters);
        free(s->track_pid);
        free(s->buf);
        free(s);
    }
    free(sink);
}

tc_sink *tc_json_sink(FILE *out)
{
    tc_sink *sink = calloc(1, sizeof *sink);
    struct js *s = calloc(1, sizeof *s);
    if (!sink || !s) {
        free(sink);
        free(s);
        return NULL;
    }
    s->out = out;
    s->first = true;
    *sink = (tc_sink){
        .ctx = s,
        .begin = js_begin,
        .add_track = js_add_track,
        .add_counter = js_add_counter,
        .slice_begin = js_slice_begin,
        .slice_end = js_slice_end,
        .instant = js_instant,
        .counter = js_counter,
        .end = js_end,
        .free = js_free,
    };
    return sink;
}
