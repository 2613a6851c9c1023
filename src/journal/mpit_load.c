/* mpit_load.c - see mpit_load.h. Frames are checked field by field: a
 * damaged journal gives a shorter catalogue, never a crash. */
#include "journal/mpit_load.h"

#include <stdlib.h>
#include <string.h>

#include "journal/journal_format.h"

/* The next NUL-terminated text at *off, copied; "" when absent. */
static char *take_text(const unsigned char *p, uint64_t n, uint64_t *off)
{
    if (*off >= n)
        return strdup("");
    size_t len = strnlen((const char *)p + *off, n - *off);
    char *s = strndup((const char *)p + *off, len);
    *off += len + 1;
    return s;
}

static int load_source(tr_jmpit *m, const unsigned char *p, uint64_t n)
{
    tr_journal_mpit_source js;
    if (n < sizeof js)
        return 0;
    memcpy(&js, p, sizeof js);
    if (tr_jmpit_find_source(m, js.index))
        return 0;
    tr_jmpit_source *s = realloc(m->sources, (m->nsources + 1) * sizeof *s);
    if (!s)
        return -1;
    m->sources = s;
    uint64_t off = sizeof js;
    s[m->nsources] = (tr_jmpit_source){.index = js.index, .ordered = js.ordered, .adhoc = js.adhoc_timestamps,
                                       .ticks_per_second = js.ticks_per_second, .max_ticks = js.max_ticks};
    s[m->nsources].name = take_text(p, n, &off);
    s[m->nsources].desc = take_text(p, n, &off);
    m->nsources++;
    return 0;
}

static int load_type(tr_jmpit *m, const unsigned char *p, uint64_t n)
{
    tr_journal_mpit_type jt;
    if (n < sizeof jt)
        return 0;
    memcpy(&jt, p, sizeof jt);
    if (jt.nelements < 0 || jt.nelements > 32 || n < sizeof jt + (uint64_t)jt.nelements * sizeof(tr_journal_mpit_element) ||
        tr_jmpit_find_type(m, jt.index))
        return 0;
    tr_jmpit_type *t = realloc(m->types, (m->ntypes + 1) * sizeof *t);
    if (!t)
        return -1;
    m->types = t;
    t = &t[m->ntypes];
    *t = (tr_jmpit_type){.index = jt.index, .level = jt.verbosity_level, .bind = jt.bind,
                         .nelements = jt.nelements, .registered = jt.registered, .has_enum = jt.has_enum};
    t->el = calloc(jt.nelements ? (size_t)jt.nelements : 1, sizeof *t->el);
    if (!t->el)
        return -1;
    uint64_t off = sizeof jt;
    for (int e = 0; e < jt.nelements; e++, off += sizeof(tr_journal_mpit_element)) {
        tr_journal_mpit_element je;
        memcpy(&je, p + off, sizeof je);
        int size = je.size > 0 && je.size <= 32 ? je.size : 8;
        t->el[e] = (tr_jmpit_element){.displacement = je.displacement, .size = size, .is_signed = je.is_signed,
                                      .is_float = je.is_float, .known = je.known, .slot = t->nslots};
        t->nslots += (size + 7) / 8;
    }
    t->name = take_text(p, n, &off);
    t->desc = take_text(p, n, &off);
    t->bind_name = take_text(p, n, &off);
    for (int e = 0; e < jt.nelements; e++)
        t->el[e].type_name = take_text(p, n, &off);
    m->ntypes++;
    return 0;
}

static int load_reg(tr_jmpit *m, const unsigned char *p, uint64_t n, int freed)
{
    tr_journal_mpit_reg jr;
    if (n < sizeof jr)
        return 0;
    memcpy(&jr, p, sizeof jr);
    jr.object_name[sizeof jr.object_name - 1] = 0;
    for (uint32_t i = 0; i < m->nregs; i++)
        if (m->regs[i].id == jr.id) {
            m->regs[i].freed |= freed;
            return 0;
        }
    tr_jmpit_reg *r = realloc(m->regs, (m->nregs + 1) * sizeof *r);
    if (!r)
        return -1;
    m->regs = r;
    r[m->nregs] = (tr_jmpit_reg){.id = jr.id, .type_index = jr.type_index, .bound = jr.bound, .freed = freed,
                                 .object = jr.object};
    memcpy(r[m->nregs].object_name, jr.object_name, sizeof jr.object_name);
    m->nregs++;
    return 0;
}

static int load_clock(tr_jmpit *m, const unsigned char *p, uint64_t n)
{
    tr_journal_mpit_clock jc;
    if (n < sizeof jc)
        return 0;
    memcpy(&jc, p, sizeof jc);
    if (jc.host_after < jc.host_before)
        return 0;
    if (m->nclocks == m->capclocks) {
        uint32_t cap = m->capclocks ? 2 * m->capclocks : 64;
        tr_jmpit_clock *c = realloc(m->clocks, cap * sizeof *c);
        if (!c)
            return -1;
        m->clocks = c;
        m->capclocks = cap;
    }
    m->clocks[m->nclocks++] = (tr_jmpit_clock){jc.source, jc.source_tick, jc.host_before, jc.host_after};
    return 0;
}

int tr_jmpit_frame(tr_jmpit *m, const unsigned char *p, uint64_t n)
{
    if (n < 8)
        return 0;
    uint32_t kind;
    memcpy(&kind, p, 4);
    p += 8;
    n -= 8;
    switch (kind) {
    case TR_MPIT_FRAME_STATUS: {
        uint64_t off = 0;
        char *s = take_text(p, n, &off);
        if (!s)
            return -1;
        free(m->status);
        m->status = s;
        return 0;
    }
    case TR_MPIT_FRAME_SOURCE: return load_source(m, p, n);
    case TR_MPIT_FRAME_TYPE: return load_type(m, p, n);
    case TR_MPIT_FRAME_REG: return load_reg(m, p, n, 0);
    case TR_MPIT_FRAME_UNREG: return load_reg(m, p, n, 1);
    case TR_MPIT_FRAME_CLOCK: return load_clock(m, p, n);
    default: return 0;
    }
}

void tr_jmpit_free(tr_jmpit *m)
{
    free(m->status);
    for (uint32_t i = 0; i < m->nsources; i++) {
        free(m->sources[i].name);
        free(m->sources[i].desc);
    }
    free(m->sources);
    for (uint32_t i = 0; i < m->ntypes; i++) {
        for (int e = 0; e < m->types[i].nelements; e++)
            free(m->types[i].el[e].type_name);
        free(m->types[i].el);
        free(m->types[i].name);
        free(m->types[i].desc);
        free(m->types[i].bind_name);
    }
    free(m->types);
    free(m->regs);
    free(m->clocks);
    memset(m, 0, sizeof *m);
}

const tr_jmpit_source *tr_jmpit_find_source(const tr_jmpit *m, uint32_t index)
{
    for (uint32_t i = 0; i < m->nsources; i++)
        if (m->sources[i].index == index)
            return &m->sources[i];
    return 0;
}

const tr_jmpit_type *tr_jmpit_find_type(const tr_jmpit *m, uint32_t index)
{
    for (uint32_t i = 0; i < m->ntypes; i++)
        if (m->types[i].index == index)
            return &m->types[i];
    return 0;
}

const tr_jmpit_reg *tr_jmpit_find_reg(const tr_jmpit *m, uint32_t id)
{
    for (uint32_t i = 0; i < m->nregs; i++)
        if (m->regs[i].id == id)
            return &m->regs[i];
    return 0;
}
