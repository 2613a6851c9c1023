/* journal_load.c - a journal's frames -> tr_journal_data. */
#include "journal/journal_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include <time.h>

#include "core/record.h"
#include "common/hugepage.h"
#include "journal/journal_index.h"
#include "journal/stream_cursor.h"

/* The scan decodes every frame but the chunks, which it only notes
 * (journal_index.h): their records are read stream by stream, through a
 * cursor (stream_cursor.h), when they join their stream. */
typedef struct load_ctx {
    tr_journal_data *jd;
    tr_journal_index *ix;
    int oom;
} load_ctx;

static int grow(void **p, size_t *cap, size_t n, size_t size) { return tr_grow(p, cap, n, size, 64); }

static int add_string(tr_journal_data *jd, const char *s, size_t max, uint32_t *index)
{
    size_t cap = jd->capstrings;
    if (grow((void **)&jd->strings, &cap, jd->nstrings, sizeof *jd->strings))
        return -1;
    jd->capstrings = (uint32_t)cap;
    char *copy = strndup(s, max);
    if (!copy)
        return -1;
    jd->strings[jd->nstrings] = copy;
    *index = jd->nstrings++;
    return 0;
}

static void load_start(tr_journal_data *jd, const unsigned char *p, uint64_t n)
{
    uint64_t off = 0;
    uint16_t key;
    uint32_t len;
    const unsigned char *v;
    while (tr_kv_next(p, n, &off, &key, &v, &len)) {
        switch (key) {
        case TR_KEY_PID:
            if (len == 8)
                memcpy(&jd->pid, v, 8);
            break;
        case TR_KEY_HOSTNAME:
            free(jd->hostname);
            jd->hostname = strndup((const char *)v, len);
            break;
        case TR_KEY_CMDLINE:
            free(jd->cmdline);
            jd->cmdline = malloc(len + 1);
            if (jd->cmdline) {
                memcpy(jd->cmdline, v, len);
                jd->cmdline[len] = 0;
                jd->cmdline_len = len;
            }
            break;
        case TR_KEY_CONFIG: {
            char **c = realloc(jd->config, (jd->nconfig + 1) * sizeof *c);
            if (c) {
                jd->config = c;
                c[jd->nconfig] = strndup((const char *)v, len);
                if (c[jd->nconfig])
                    jd->nconfig++;
            }
            break;
        }
        case TR_KEY_CLOCK_TSC:
            if (len == 4)
                memcpy(&jd->tsc, v, 4);
            break;
        case TR_KEY_CLOCK0:
            if (len == 16) {
                memcpy(&jd->tick0, v, 8);
                memcpy(&jd->ns0, v + 8, 8);
            }
            break;
        case TR_KEY_REALTIME_OFFSET:
            if (len == 8)
                memcpy(&jd->realtime_offset, v, 8);
            break;
        default:
            break;
        }
    }
}

/* A span's symbol (code_spans.h) after an unload, @since != 0, is found
 * through the index's spans; the first span's, by its address. */
static int load_symbol(tr_journal_data *jd, tr_journal_index *ix, uint64_t since, const unsigned char *p, uint64_t n)
{
    if (n < sizeof(tr_journal_symbol))
        return 0;
    tr_journal_symbol s;
    memcpy(&s, p, sizeof s);
    /* function, file, kernel, and (journals since issue 35) the function
     * that creates the construct's task; a later text is ignored. */
    const char *texts[4] = {0, 0, 0, 0};
    uint64_t off = sizeof s;
    for (int i = 0; i < 4 && off < n; i++) {
        const char *t = (const char *)p + off;
        size_t len = strnlen(t, n - off);
        if (len == n - off)
            break; /* unterminated: ignore the rest */
        texts[i] = len ? t : 0;
        off += len + 1;
    }
    size_t cap = jd->capsymbols;
    if (since ? !s.codeptr || tr_code_spans_named(&ix->spans, s.codeptr, since)
              : tr_u64map_get(&jd->symbol_index, s.codeptr, 0))
        return 0;
    if (grow((void **)&jd->symbols, &cap, jd->nsymbols, sizeof *jd->symbols))
        return -1;
    jd->capsymbols = (uint32_t)cap;
    tr_jsymbol *j = &jd->symbols[jd->nsymbols];
    *j = (tr_jsymbol){.codeptr = s.codeptr, .line = s.line, .kernel_line = s.kernel_line};
    uint32_t idx;
    if (texts[0] && !add_string(jd, texts[0], 4096, &idx))
        j->function = jd->strings[idx];
    if (texts[1] && !add_string(jd, texts[1], 4096, &idx))
        j->file = jd->strings[idx];
    if (texts[2] && !add_string(jd, texts[2], 4096, &idx))
        j->kernel = jd->strings[idx];
    if (texts[3] && !add_string(jd, texts[3], 4096, &idx))
        j->task_of = jd->strings[idx];
    if (since)
        return tr_code_spans_add_symbol(&ix->spans, s.codeptr, since, jd->nsymbols++);
    tr_u64map_put(&jd->symbol_index, s.codeptr ? s.codeptr : 1, jd->nsymbols++);
    return 0;
}

static void load_end(tr_journal_data *jd, const unsigned char *p, uint64_t n)
{
    if (n < sizeof(tr_journal_end))
        return;
    memcpy(&jd->end, p, sizeof jd->end);
    jd->ended = 1;
    uint64_t off = sizeof jd->end;
    uint64_t count = (n - off) / (4 + 3 * 8);
    free(jd->losses);
    jd->losses = calloc(count ? count : 1, sizeof *jd->losses);
    if (!jd->losses)
        return;
    for (uint64_t i = 0; i < count; i++, off += 28) {
        tr_jloss *l = &jd->losses[jd->nlosses++];
        memcpy(&l->location, p + off, 4);
        memcpy(&l->count, p + off + 4, 8);
        memcpy(&l->first, p + off + 12, 8);
        memcpy(&l->last, p + off + 20, 8);
    }
}

static int visit_frame(void *vctx, const tr_frame_header *h, uint64_t offset, const void *payload, uint64_t bytes)
{
    load_ctx *ctx = vctx;
    tr_journal_data *jd = ctx->jd;
    const unsigned char *p = payload;
    switch (h->type) {
    case TR_FRAME_START:
        load_start(jd, p, bytes);
        break;
    case TR_FRAME_CHUNK:
        if (tr_journal_index_add(ctx->ix, h, offset)) {
            ctx->oom = 1;
            return 1;
        }
        break;
    case TR_FRAME_STRING: {
        if (bytes < 9)
            break;
        uint32_t kind, id, idx;
        memcpy(&kind, p, 4);
        memcpy(&id, p + 4, 4);
        tr_u64map *m = kind == TR_STRING_USER_REGION ? &jd->user_names : &jd->texts;
        uint64_t key = kind == TR_STRING_TEXT && bytes >= 16 ? 0 : id;
        const char *text = (const char *)p + 8;
        size_t max = bytes - 8;
        if (kind == TR_STRING_TEXT && bytes >= 16) {
            memcpy(&key, p + 8, 8); /* texts are keyed by a 64-bit id */
            text += 8;
            max -= 8;
        }
        if (key && !tr_u64map_get(m, key, 0) && !add_string(jd, text, max, &idx))
            tr_u64map_put(m, key, idx);
        break;
    }
    case TR_FRAME_SYMBOL:
        if (load_symbol(jd, ctx->ix, h->seq, p, bytes)) {
            ctx->oom = 1;
            return 1;
        }
        break;
    case TR_FRAME_UNLOAD:
        if (bytes >= sizeof(tr_journal_unload)) {
            tr_journal_unload u;
            memcpy(&u, p, sizeof u);
            if (tr_code_spans_add_unload(&ctx->ix->spans, &u)) {
                ctx->oom = 1;
                return 1;
            }
        }
        break;
    case TR_FRAME_VARIABLE: {
        if (bytes <= sizeof(tr_journal_variable))
            break;
        tr_journal_variable v;
        memcpy(&v, p, sizeof v);
        size_t cap = jd->capvariables;
        uint32_t idx;
        if (!v.size || grow((void **)&jd->variables, &cap, jd->nvariables, sizeof *jd->variables) ||
            add_string(jd, (const char *)p + sizeof v, bytes - sizeof v, &idx))
            break;
        jd->capvariables = (uint32_t)cap;
        /* The span is a tick until the clock is known (load_or_fail). */
        jd->variables[jd->nvariables++] = (tr_jvariable){v.base, v.size, v.ref_ptr, jd->strings[idx], h->seq};
        break;
    }
    case TR_FRAME_CLOCK:
        if (bytes >= 16) {
            memcpy(&jd->tick1, p, 8);
            memcpy(&jd->ns1, p + 8, 8);
        }
        break;
    case TR_FRAME_END:
        load_end(jd, p, bytes);
        break;
    case TR_FRAME_MPIT:
        if (tr_jmpit_frame(&jd->mpit, p, bytes)) {
            ctx->oom = 1;
            return 1;
        }
        break;
    case TR_FRAME_MPI_RANK:
        if (bytes >= 8 && !jd->has_mpi_rank) {
            memcpy(&jd->mpi_rank, p, bytes < sizeof jd->mpi_rank ? bytes : sizeof jd->mpi_rank);
            jd->has_mpi_rank = 1;
        }
        break;
    case TR_FRAME_CLOCK_OFFSET:
        if (bytes >= sizeof(tr_journal_clock_offset)) {
            tr_journal_clock_offset *o =
                realloc(jd->clock_offsets, (jd->nclock_offsets + 1) * sizeof *jd->clock_offsets);
            if (!o) {
                ctx->oom = 1;
                return 1;
            }
            jd->clock_offsets = o;
            memcpy(&o[jd->nclock_offsets++], p, sizeof *o);
        }
        break;
    case TR_FRAME_CRASH:
        jd->crashed = 1;
        if (bytes >= 4)
            memcpy(&jd->crash_signal, p, 4);
        /* The run ended at the crash: what was still open lasts until then. */
        if (bytes >= 16 && !jd->ended)
            memcpy(&jd->end.end_tick, p + 8, 8);
        break;
    default:
        break;
    }
    return 0;
}

static int by_span_base(const void *a, const void *b)
{
    const tr_jvariable *x = a, *y = b;
    if (x->since != y->since)
        return (x->since > y->since) - (x->since < y->since);
    return (x->base > y->base) - (x->base < y->base);
}

/* The span of data address @addr at @t (ns): the latest unload before @t
 * that freed it, 0 if none. */
static uint64_t data_span(const tr_journal_data *jd, uint64_t addr, uint64_t t)
{
    for (uint32_t i = jd->nunloads; i-- > 0;) {
        const tr_journal_unload *u = &jd->unloads[i];
        if (u->tick < t && addr >= u->lo && addr < u->hi)
            return u->tick;
    }
    return 0;
}

const tr_jvariable *tr_journal_variable_at(const tr_journal_data *jd, uint64_t addr, uint64_t t)
{
    uint64_t since = jd->nunloads ? data_span(jd, addr, t) : 0;
    uint32_t lo = 0, hi = jd->nvariables;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const tr_jvariable *v = &jd->variables[mid];
        if (v->since < since || (v->since == since && v->base <= addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return 0;
    const tr_jvariable *v = &jd->variables[lo - 1];
    return v->since == since && addr - v->base < v->size ? v : 0;
}

/* The unloads, and the variables' spans, from ticks to ns (the time of
 * the records the model looks them up for). */
static int unloads_to_ns(tr_journal_data *jd, const tr_code_spans *spans)
{
    for (uint32_t i = 0; i < jd->nvariables; i++)
        if (jd->variables[i].since)
            jd->variables[i].since = tr_journal_ticks_to_ns(jd, jd->variables[i].since);
    if (!spans->nunloads)
        return 0;
    jd->unloads = malloc(spans->nunloads * sizeof *jd->unloads);
    if (!jd->unloads)
        return -1;
    for (uint32_t i = 0; i < spans->nunloads; i++) {
        jd->unloads[i] = spans->unloads[i];
        jd->unloads[i].tick = tr_journal_ticks_to_ns(jd, spans->unloads[i].tick);
    }
    jd->nunloads = spans->nunloads;
    return 0;
}

/* Ticks of the TSC are turned into ns with the first and the last
 * calibration pair; a journal that has only the first (killed within its
 * first flush interval) is calibrated against this machine now. */
static void calibrate(tr_journal_data *jd)
{
    uint64_t num = 1, den = 1;
    if (jd->tsc && jd->tick1 > jd->tick0 && jd->ns1 > jd->ns0) {
        num = jd->ns1 - jd->ns0;
        den = jd->tick1 - jd->tick0;
    } else if (jd->tsc) {
#if defined(__x86_64__)
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        uint64_t t0 = __builtin_ia32_rdtsc();
        do
            clock_gettime(CLOCK_MONOTONIC, &b);
        while ((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec) < 20000000);
        uint64_t t1 = __builtin_ia32_rdtsc();
        num = (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec));
        den = t1 - t0;
#endif
    }
    tr_journal_clock_set(&jd->clock, jd->tsc, jd->tick0, jd->ns0, num, den);
}

uint64_t tr_journal_ticks_to_ns(const tr_journal_data *jd, uint64_t ticks)
{
    return tr_journal_clock_ns(&jd->clock, ticks);
}

/* A thread that lost every record it tried (drop mode, no chunk ever free
 * for it) has no chunk in the journal, only its loss in the END frame: it
 * still gets its location (an empty stream, in index order), where the
 * writer puts the loss, so the trace counts it. The streams are laid out
 * before any record is read, so a pass sees each stream at its final index. */
static int lay_out_streams(tr_journal_data *jd, const tr_journal_index *ix)
{
    tr_collected *d = &jd->data;
    d->streams = calloc(ix->nstreams + jd->nlosses + 1, sizeof *d->streams);
    if (!d->streams)
        return -1;
    for (size_t i = 0; i < ix->nstreams; i++)
        d->streams[d->nstreams++] = (tr_stream){.index = ix->streams[i].location, .tid = (pid_t)ix->streams[i].tid,
                                                .chunked = (uint32_t)i};
    for (uint32_t i = 0; i < jd->nlosses; i++) {
        const tr_jloss *l = &jd->losses[i];
        size_t at = 0;
        while (at < d->nstreams && d->streams[at].index < l->location)
            at++;
        if (!l->count || (at < d->nstreams && d->streams[at].index == l->location))
            continue;
        memmove(&d->streams[at + 1], &d->streams[at], (d->nstreams - at) * sizeof *d->streams);
        d->streams[at] = (tr_stream){.index = l->location, .chunked = TR_STREAM_NO_CHUNKS};
        d->nstreams++;
    }
    return 0;
}

/* Stream @s read to its end (by its array's fill, or a pass's cursor):
 * its count, last stamp and damage. */
static void stream_read(tr_journal_data *jd, size_t s, uint64_t n, const tr_stream_cursor_stats *cs)
{
    tr_stream *st = &jd->data.streams[s];
    jd->stats.missing_chunks += cs->missing_chunks;
    jd->stats.bad_frames += cs->bad_frames;
    jd->stats.skipped_bytes += cs->skipped_bytes;
    st->n = n;
    st->last_time = n ? cs->last_time : 0;
    jd->data.records += n;
}

/* Stream @s's records, kept as one array. Returns 0, or -1 (out of
 * memory, the journal is gone). */
static int read_stream(tr_journal_data *jd, const tr_journal_index *ix, size_t s)
{
    tr_stream *st = &jd->data.streams[s];
    if (st->chunked == TR_STREAM_NO_CHUNKS)
        return 0;
    const tr_index_stream *is = &ix->streams[st->chunked];
    tr_record *rec = malloc((is->max_records ? is->max_records : 1) * sizeof *rec);
    if (!rec)
        return -1;
    tr_hugepage_hint(rec, is->max_records * sizeof *rec);
    tr_stream_cursor *c = tr_stream_cursor_open(ix, st->chunked);
    if (!c) {
        free(rec);
        return -1;
    }
    size_t at = 0;
    for (const tr_record *r; at < is->max_records && (r = tr_stream_cursor_next(c)); at++)
        rec[at] = *r;
    tr_stream_cursor_stats cs;
    tr_stream_cursor_stats_get(c, &cs);
    tr_stream_cursor_close(c);
    st->rec = rec;
    stream_read(jd, s, at, &cs);
    return 0;
}

/* What needs every stream's count and last stamp: the run's end, and the
 * drop-mode losses still open at it (written after their location's last
 * event: not before it either). */
static void streams_read(tr_journal_data *jd)
{
    uint64_t last_ns = 0;
    for (size_t s = 0; s < jd->data.nstreams; s++)
        if (jd->data.streams[s].last_time > last_ns)
            last_ns = jd->data.streams[s].last_time; /* times never go back: the last is the latest */
    for (uint32_t i = 0; i < jd->nlosses; i++) {
        tr_jloss *l = &jd->losses[i];
        for (size_t s = 0; s < jd->data.nstreams; s++) {
            const tr_stream *st = &jd->data.streams[s];
            if (st->index == l->location && st->n && l->first < st->last_time)
                l->first = st->last_time;
        }
        if (l->last < l->first)
            l->last = l->first;
    }
    jd->end_ns = jd->ended || jd->end.end_tick ? tr_journal_ticks_to_ns(jd, jd->end.end_tick) : 0;
    if (jd->end_ns < last_ns)
        jd->end_ns = last_ns;
}

void tr_journal_stream_done(tr_journal_data *jd, size_t s, const tr_stream_cursor_stats *cs)
{
    if (s < jd->data.nstreams)
        stream_read(jd, s, cs->records, cs);
}

void tr_journal_streams_done(tr_journal_data *jd) { streams_read(jd); }

static int load_or_fail(const char *path, tr_journal_data *jd, int keep, char *err, size_t errlen)
{
    memset(jd, 0, sizeof *jd);
    tr_journal_index *ix = calloc(1, sizeof *ix);
    if (!ix || tr_journal_index_init(ix, path)) {
        free(ix);
        snprintf(err, errlen, "out of memory while reading %s", path);
        return -1;
    }
    jd->index = ix;
    load_ctx ctx_scan = {.jd = jd, .ix = ix};
    if (tr_journal_scan_at(path, visit_frame, &ctx_scan, &jd->stats)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    if (ctx_scan.oom || tr_journal_index_finish(ix)) {
        snprintf(err, errlen, "out of memory while reading %s", path);
        return -1;
    }
    if (!jd->ns0 && !jd->tick0 && !ix->nchunks) {
        snprintf(err, errlen, "%s holds no tracer journal frame", path);
        return -1;
    }
    calibrate(jd);
    ix->clock = jd->clock;
    tr_code_spans_finish(&ix->spans);
    for (uint32_t i = 0; i < jd->mpit.nclocks; i++) {
        jd->mpit.clocks[i].host_before = tr_journal_ticks_to_ns(jd, jd->mpit.clocks[i].host_before);
        jd->mpit.clocks[i].host_after = tr_journal_ticks_to_ns(jd, jd->mpit.clocks[i].host_after);
    }
    if (unloads_to_ns(jd, &ix->spans)) {
        snprintf(err, errlen, "out of memory while reading %s", path);
        return -1;
    }
    if (jd->nvariables)
        qsort(jd->variables, jd->nvariables, sizeof *jd->variables, by_span_base);
    for (uint32_t i = 0; i < jd->nlosses; i++) {
        jd->losses[i].first = tr_journal_ticks_to_ns(jd, jd->losses[i].first);
        jd->losses[i].last = tr_journal_ticks_to_ns(jd, jd->losses[i].last);
    }
    if (lay_out_streams(jd, ix)) {
        snprintf(err, errlen, "out of memory while reading %s", path);
        return -1;
    }
    if (keep) {
        for (size_t s = 0; s < jd->data.nstreams; s++)
            if (read_stream(jd, ix, s)) {
                snprintf(err, errlen, "cannot read the chunks of %s: %s", path, errno ? strerror(errno) : "failed");
                return -1;
            }
        streams_read(jd);
    } else {
        /* Until a pass has read the streams, the run ends where it said. */
        jd->end_ns = jd->ended || jd->end.end_tick ? tr_journal_ticks_to_ns(jd, jd->end.end_tick) : 0;
    }
    if (keep) {
        tr_journal_index_free(ix); /* every record is in memory: the chunks are not read again */
        free(ix);
        jd->index = 0;
    }
    return 0;
}

/* On failure nothing is left held: jd is as tr_journal_data_free leaves it. */
static int load(const char *path, tr_journal_data *jd, int keep, char *err, size_t errlen)
{
    int rc = load_or_fail(path, jd, keep, err, errlen);
    if (rc)
        tr_journal_data_free(jd);
    return rc;
}

int tr_journal_load(const char *path, tr_journal_data *jd, char *err, size_t errlen)
{
    return load(path, jd, 1, err, errlen);
}

int tr_journal_load_index(const char *path, tr_journal_data *jd, char *err, size_t errlen)
{
    return load(path, jd, 0, err, errlen);
}

uint64_t tr_journal_records_stored(const tr_journal_data *jd)
{
    uint64_t n = 0;
    for (size_t i = 0; jd->index && i < jd->index->nstreams; i++)
        n += jd->index->streams[i].records;
    return n;
}

tr_stream_cursor *tr_journal_stream_open(const tr_journal_data *jd, const tr_stream *st)
{
    if (!jd->index || st->chunked == TR_STREAM_NO_CHUNKS) {
        errno = EINVAL;
        return 0;
    }
    return tr_stream_cursor_open(jd->index, st->chunked);
}

void tr_journal_data_free(tr_journal_data *jd)
{
    tr_collected_free(&jd->data);
    if (jd->index) {
        tr_journal_index_free(jd->index);
        free(jd->index);
    }
    free(jd->hostname);
    free(jd->cmdline);
    for (uint32_t i = 0; i < jd->nconfig; i++)
        free(jd->config[i]);
    free(jd->config);
    for (uint32_t i = 0; i < jd->nstrings; i++)
        free(jd->strings[i]);
    free(jd->strings);
    free(jd->symbols);
    free(jd->variables);
    free(jd->unloads);
    free(jd->losses);
    tr_u64map_free(&jd->user_names);
    tr_u64map_free(&jd->texts);
    tr_u64map_free(&jd->symbol_index);
    tr_jmpit_free(&jd->mpit);
    free(jd->clock_offsets);
    memset(jd, 0, sizeof *jd);
}

const tr_jsymbol *tr_journal_find_symbol(const tr_journal_data *jd, uint64_t codeptr)
{
    uint64_t i;
    if (codeptr & TR_CODE_KEY_NAMED) {
        i = codeptr & ~TR_CODE_KEY_NAMED;
        return i < jd->nsymbols ? &jd->symbols[i] : 0;
    }
    if (!codeptr || (codeptr & TR_CODE_KEY_UNNAMED) || !tr_u64map_get(&jd->symbol_index, codeptr, &i))
        return 0;
    return &jd->symbols[i];
}

uint64_t tr_journal_code_address(const tr_journal_data *jd, uint64_t key)
{
    if (key & TR_CODE_KEY_NAMED) {
        const tr_jsymbol *s = tr_journal_find_symbol(jd, key);
        return s ? s->codeptr : 0;
    }
    return key & TR_CODE_KEY_UNNAMED ? key & ~TR_CODE_KEY_UNNAMED : key;
}

const char *tr_journal_user_name(const tr_journal_data *jd, uint32_t id)
{
    uint64_t i;
    return id && tr_u64map_get(&jd->user_names, id, &i) ? jd->strings[i] : 0;
}

const char *tr_journal_text(const tr_journal_data *jd, uint64_t id)
{
    uint64_t i;
    return id && tr_u64map_get(&jd->texts, id, &i) ? jd->strings[i] : 0;
}
