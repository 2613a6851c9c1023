#define _GNU_SOURCE 1
#include "journal/recover_names.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/u64map.h"
#include "core/record.h"
#include "journal/code_spans.h"
#include "journal/data_op.h"
#include "journal/journal_format.h"
#include "journal/journal_read.h"
#include "journal/symbols.h"

typedef struct module {
    tr_journal_module m;
    char *path;
    int fd;    /* open when the file is the one the run loaded; -1 otherwise */
    int state; /* 0 not looked at, 1 the same file, 2 changed or gone */
} module;

typedef struct scan {
    module *mods;
    size_t nmods;
    tr_journal_unload *unloads;
    size_t nunloads;
    tr_u64map named;  /* codeptr -> 1: a SYMBOL frame names it */
    tr_u64map wanted; /* codeptr -> 1: a record needs it */
    tr_journal_variable *vars; /* what VARIABLE frames name */
    size_t nvars;
    tr_u64map wanted_vars; /* host address -> 1: a data op touched it */
    int oom;
} scan;

static int add_module(scan *sc, const tr_journal_module *m, const char *path)
{
    for (size_t i = 0; i < sc->nmods; i++)
        if (sc->mods[i].m.bias == m->bias && sc->mods[i].m.lo == m->lo && !strcmp(sc->mods[i].path, path))
            return 0;
    module *grown = realloc(sc->mods, (sc->nmods + 1) * sizeof *grown);
    char *copy = strdup(path);
    if (!grown || !copy) {
        free(copy);
        if (grown)
            sc->mods = grown;
        return -1;
    }
    sc->mods = grown;
    sc->mods[sc->nmods++] = (module){*m, copy, -1, 0};
    return 0;
}

static int read_modules(scan *sc, const unsigned char *p, uint64_t n)
{
    uint64_t off = 0;
    while (n - off > sizeof(tr_journal_module)) {
        tr_journal_module m;
        memcpy(&m, p + off, sizeof m);
        const char *path = (const char *)p + off + sizeof m;
        size_t len = strnlen(path, n - off - sizeof m);
        if (len == n - off - sizeof m)
            break; /* no NUL: a frame of another layout */
        if (*path == '/' && m.lo < m.hi && add_module(sc, &m, path))
            return -1;
        off += sizeof m + len + 1;
    }
    return 0;
}

/* The code address a record needs named, as the consumer names them
 * (consumer.c, write_references): an end's slot names nothing new. */
static uint64_t code_address(const tr_record *r)
{
    int slot = tr_record_code_slot(r);
    if (slot < 0 || (r->type != TR_REC_SUBMIT && r->phase == TR_PHASE_END))
        return 0;
    return r->u[slot];
}

static int visit(void *ctx, const tr_frame_header *h, const void *payload, uint64_t bytes)
{
    scan *sc = ctx;
    const unsigned char *p = payload;
    int rc = 0;
    switch (h->type) {
    case TR_FRAME_MODULES:
        rc = read_modules(sc, p, bytes);
        break;
    case TR_FRAME_SYMBOL:
        if (bytes >= sizeof(tr_journal_symbol)) {
            tr_journal_symbol s;
            memcpy(&s, p, sizeof s);
            rc = s.codeptr ? tr_u64map_put(&sc->named, s.codeptr, 1) : 0;
        }
        break;
    case TR_FRAME_UNLOAD:
        if (bytes >= sizeof(tr_journal_unload)) {
            tr_journal_unload *u = realloc(sc->unloads, (sc->nunloads + 1) * sizeof *u);
            if (!u)
                return sc->oom = 1;
            sc->unloads = u;
            memcpy(&u[sc->nunloads++], p, sizeof *u);
        }
        break;
    case TR_FRAME_VARIABLE:
        if (bytes > sizeof(tr_journal_variable)) {
            tr_journal_variable *v = realloc(sc->vars, (sc->nvars + 1) * sizeof *v);
            if (!v)
                return sc->oom = 1;
            sc->vars = v;
            memcpy(&v[sc->nvars++], p, sizeof *v);
        }
        break;
    case TR_FRAME_CHUNK:
        for (uint64_t i = 0; !rc && i + sizeof(tr_record) <= bytes; i += sizeof(tr_record)) {
            tr_record r;
            memcpy(&r, p + i, sizeof r);
            uint64_t a = code_address(&r);
            if (a && !tr_u64map_get(&sc->wanted, a, 0))
                rc = tr_u64map_put(&sc->wanted, a, 1);
            /* The host side of a data op, as the consumer looks it up. */
            a = r.type == TR_REC_DATA_OP && r.phase != TR_PHASE_END ? tr_data_op_host_addr(&r) : 0;
            if (!rc && a && !tr_u64map_get(&sc->wanted_vars, a, 0))
                rc = tr_u64map_put(&sc->wanted_vars, a, 1);
        }
        break;
    default:
        break;
    }
    if (rc)
        sc->oom = 1;
    return rc;
}

/* Whether a VARIABLE frame (the journal's or one appended) holds @a. */
static int variable_named(const scan *sc, uint64_t a)
{
    for (size_t i = 0; i < sc->nvars; i++)
        if (a >= sc->vars[i].base && a - sc->vars[i].base < sc->vars[i].size)
            return 1;
    return 0;
}

static int unloaded(const scan *sc, uint64_t a)
{
    for (size_t i = 0; i < sc->nunloads; i++)
        if (a >= sc->unloads[i].lo && a < sc->unloads[i].hi)
            return 1;
    return 0;
}

/* The module whose range holds @a; the latest listed when several do. */
static module *module_at(scan *sc, uint64_t a)
{
    for (size_t i = sc->nmods; i-- > 0;)
        if (a >= sc->mods[i].m.lo && a < sc->mods[i].m.hi)
            return &sc->mods[i];
    return 0;
}

/* Opens @m's file if it is the one the run loaded (same device, inode,
 * size and mtime, checked on the descriptor read). */
static int same_file(module *m, tr_names_report *r)
{
    if (m->state)
        return m->state == 1;
    m->state = 2;
    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_dev == m->m.dev &&
        (uint64_t)st.st_ino == m->m.ino && (uint64_t)st.st_size == m->m.size &&
        (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == m->m.mtime_ns) {
        m->fd = fd;
        m->state = 1;
        return 1;
    }
    if (fd >= 0)
        close(fd);
    if (!r->changed_file[0])
        snprintf(r->changed_file, sizeof r->changed_file, "%s", m->path);
    return 0;
}

/* One frame, one writev; seq 0: the span before any unload (none holds
 * the addresses named here). */
static int append_frame(int fd, uint16_t type, const void *buf, size_t n)
{
    tr_frame_header h = {0};
    h.raw_bytes = n;
    tr_frame_seal(&h, type, buf, n);
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)buf, n}};
    ssize_t w;
    do
        w = writev(fd, iov, 2);
    while (w < 0 && errno == EINTR);
    if (w == (ssize_t)(sizeof h + n))
        return 0;
    if (w >= 0)
        errno = ENOSPC;
    return -1;
}

static int append_symbol(int fd, uint64_t codeptr, const tr_code_description *d)
{
    static char buf[sizeof(tr_journal_symbol) + 4 * TR_SYMBOL_TEXT];
    tr_journal_symbol s = {codeptr, d->line, d->kernel_line};
    const char *texts[4] = {d->function, d->file, d->kernel, d->task_of};
    return append_frame(fd, TR_FRAME_SYMBOL, buf, tr_journal_symbol_encode(buf, &s, texts, TR_SYMBOL_TEXT));
}

/* The VARIABLE frame of @v, as the consumer writes it; @sc then knows it. */
static int append_variable(int fd, scan *sc, const tr_variable *v)
{
    char buf[sizeof(tr_journal_variable) + 1001];
    tr_journal_variable jv = {v->base, v->size, v->ref_ptr};
    size_t len = strnlen(v->name, 1000);
    memcpy(buf, &jv, sizeof jv);
    memcpy(buf + sizeof jv, v->name, len);
    buf[sizeof jv + len] = 0;
    tr_journal_variable *grown = realloc(sc->vars, (sc->nvars + 1) * sizeof *grown);
    if (!grown) {
        errno = ENOMEM;
        return -1;
    }
    sc->vars = grown;
    sc->vars[sc->nvars++] = jv;
    return append_frame(fd, TR_FRAME_VARIABLE, buf, sizeof jv + len + 1);
}

/* Which addresses of @map (code: @code, else data) need naming from
 * which file: those the journal names not, in a module whose file is the
 * same, go to @pending; the others are counted in @r. A data address in no
 * module is the heap's or a stack's: no variable. */
static size_t select_addresses(scan *sc, const tr_u64map *map, int code, uint64_t *pending, tr_names_report *r)
{
    size_t n = 0;
    uint64_t a, v;
    for (size_t i = 0; i < map->cap; i++) {
        if (!tr_u64map_at(map, i, &a, &v) || unloaded(sc, a) ||
            (code ? tr_u64map_get(&sc->named, a, 0) : variable_named(sc, a)))
            continue;
        module *m = module_at(sc, code ? a - 1 : a); /* a return address: its call is before it */
        if (!m)
            r->no_module += code;
        else if (!same_file(m, r))
            *(code ? &r->changed : &r->changed_data) += 1;
        else
            pending[n++] = a;
    }
    return n;
}

/* Names each address of @sc that needs it; returns 0 or -1 (r->problem). */
static int name_all(scan *sc, const char *journal, tr_names_report *r)
{
    uint64_t *pending = calloc(sc->wanted.count + 1, sizeof *pending);
    uint64_t *pending_vars = calloc(sc->wanted_vars.count + 1, sizeof *pending_vars);
    tr_symbols_file *files = calloc(sc->nmods + 1, sizeof *files);
    size_t nfiles = 0;
    if (!pending || !pending_vars || !files) {
        free(pending);
        free(pending_vars);
        free(files);
        snprintf(r->problem, sizeof r->problem, "out of memory");
        return -1;
    }
    size_t npending = select_addresses(sc, &sc->wanted, 1, pending, r);
    size_t nvars = select_addresses(sc, &sc->wanted_vars, 0, pending_vars, r);
    for (size_t i = 0; i < sc->nmods; i++)
        if (sc->mods[i].fd >= 0)
            files[nfiles++] = (tr_symbols_file){sc->mods[i].path, sc->mods[i].fd, sc->mods[i].m.bias};
    int rc = 0, jfd = -1;
    tr_symbols *s = npending || nvars ? tr_symbols_open_files(files, nfiles) : 0;
    if (npending || nvars) {
        jfd = open(journal, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (!s || jfd < 0) {
            if (!s)
                snprintf(r->problem, sizeof r->problem, "out of memory");
            else
                snprintf(r->problem, sizeof r->problem, "cannot append to the journal: %s", strerror(errno));
            rc = -1;
        }
    }
    for (size_t i = 0; !rc && i < npending; i++) {
        static tr_code_description d;
        tr_symbols_describe(s, pending[i], &d);
        if (append_symbol(jfd, pending[i], &d)) {
            snprintf(r->problem, sizeof r->problem, "cannot append to the journal: %s", strerror(errno));
            rc = -1;
        } else if (d.function[0] || d.kernel[0]) {
            r->named++;
        } else {
            r->no_symbol++;
        }
    }
    for (size_t i = 0; !rc && i < nvars; i++) {
        tr_variable v;
        if (variable_named(sc, pending_vars[i]) || !tr_symbols_variable(s, pending_vars[i], &v))
            continue; /* named by one appended just now, or no global holds it */
        if (append_variable(jfd, sc, &v)) {
            snprintf(r->problem, sizeof r->problem, "cannot append to the journal: %s", strerror(errno));
            rc = -1;
        } else {
            r->named_variables++;
        }
    }
    if (jfd >= 0)
        close(jfd);
    tr_symbols_close(s);
    free(pending_vars);
    free(pending);
    free(files);
    return rc;
}

int tr_recover_names(const char *journal, tr_names_report *r)
{
    memset(r, 0, sizeof *r);
    scan sc = {0};
    tr_journal_stats st;
    int rc = tr_journal_scan(journal, visit, &sc, &st);
    if (rc || sc.oom) {
        snprintf(r->problem, sizeof r->problem, "%s", sc.oom ? "out of memory" : strerror(errno));
        rc = -1;
    } else {
        r->no_modules = !sc.nmods;
        rc = name_all(&sc, journal, r);
    }
    for (size_t i = 0; i < sc.nmods; i++) {
        if (sc.mods[i].fd >= 0)
            close(sc.mods[i].fd);
        free(sc.mods[i].path);
    }
    free(sc.mods);
    free(sc.unloads);
    free(sc.vars);
    tr_u64map_free(&sc.wanted_vars);
    tr_u64map_free(&sc.named);
    tr_u64map_free(&sc.wanted);
    return rc;
}
