/* journal_frames.c - see journal_frames.h. */
#include "journal/journal_frames.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal/journal_write.h"
#include "journal/loaded_modules.h"

static int append(uint16_t type, const void *payload, uint64_t bytes)
{
    tr_frame_header h = {0};
    h.raw_bytes = bytes;
    return tr_journal_append(&h, type, payload, bytes);
}

void tr_kv_add(tr_kv *kv, uint16_t key, const void *value, uint32_t len)
{
    if (kv->len + 8 + len > sizeof kv->data)
        return;
    uint16_t k[2] = {key, 0};
    memcpy(kv->data + kv->len, k, 4);
    memcpy(kv->data + kv->len + 4, &len, 4);
    memcpy(kv->data + kv->len + 8, value, len);
    kv->len += 8 + len;
}

void tr_kv_add_text(tr_kv *kv, uint16_t key, const char *text)
{
    tr_kv_add(kv, key, text, (uint32_t)strlen(text) + 1);
}

int tr_journal_write_start(const tr_kv *kv) { return append(TR_FRAME_START, kv->data, kv->len); }

int tr_journal_write_end(const tr_journal_end *e, const tr_journal_lost_thread *lost, size_t nlost)
{
    static char payload[sizeof(tr_journal_end) + 28 * TR_JOURNAL_END_MAX_LOST]; /* the end runs once */
    size_t n = sizeof *e;
    memcpy(payload, e, n);
    for (size_t i = 0; i < nlost && i < TR_JOURNAL_END_MAX_LOST; i++, n += 28) {
        memcpy(payload + n, &lost[i].index, 4);
        memcpy(payload + n + 4, &lost[i].lost, 8);
        memcpy(payload + n + 12, &lost[i].first, 8);
        memcpy(payload + n + 20, &lost[i].last, 8);
    }
    return append(TR_FRAME_END, payload, n);
}

static int write_string(uint32_t kind, uint32_t id, const uint64_t *id64, const char *text)
{
    char buf[4200];
    uint32_t head[2] = {kind, id};
    size_t n = 8, len = strnlen(text, 4000);
    memcpy(buf, head, 8);
    if (id64) {
        memcpy(buf + 8, id64, 8);
        n = 16;
    }
    memcpy(buf + n, text, len);
    buf[n + len] = 0;
    return append(TR_FRAME_STRING, buf, n + len + 1);
}

int tr_journal_write_user_region(uint32_t id, const char *name)
{
    return write_string(TR_STRING_USER_REGION, id & 0x7fffffffu, 0, name);
}

int tr_journal_write_text(uint64_t id, const char *text) { return write_string(TR_STRING_TEXT, 0, &id, text); }

/* The loader's count of loads when MODULES was last written: written at
 * the session's start, before the consumer thread exists, then only by
 * that thread. */
static unsigned long long modules_written_adds;

int tr_journal_write_modules(void)
{
    unsigned long long adds = tr_loader_adds();
    if (adds == modules_written_adds)
        return 0;
    char *p;
    size_t n;
    if (tr_loaded_modules_payload(&p, &n)) {
        errno = ENOMEM; /* tried again at the next call */
        return -1;
    }
    int rc = n ? append(TR_FRAME_MODULES, p, n) : 0;
    if (!rc)
        modules_written_adds = adds;
    free(p);
    return rc;
}

int tr_journal_write_clock(uint64_t tick, uint64_t ns)
{
    uint64_t pair[2] = {tick, ns};
    return append(TR_FRAME_CLOCK, pair, sizeof pair);
}

int tr_journal_write_clock_signal(uint64_t tick, uint64_t ns)
{
    uint64_t pair[2] = {tick, ns};
    tr_frame_header h = {0};
    h.raw_bytes = sizeof pair;
    return tr_journal_append_signal(&h, TR_FRAME_CLOCK, pair, sizeof pair);
}

int tr_journal_write_mpi_rank(int32_t rank, int32_t size)
{
    tr_journal_mpi_rank jr = {.rank = rank, .size = size};
    return append(TR_FRAME_MPI_RANK, &jr, sizeof jr);
}

int tr_journal_write_clock_offset(const tr_journal_clock_offset *o)
{
    return append(TR_FRAME_CLOCK_OFFSET, o, sizeof *o);
}

/* --- MPIT ------------------------------------------------------------------
 * One payload at a time, built in static storage (a TYPE frame is up to
 * 16 KiB: not for the stack of an MPI call); a part that does not fit is
 * left out, as the reader expects of a full frame. */
static pthread_mutex_t mpit_lock = PTHREAD_MUTEX_INITIALIZER;
static char frame[16384];

static size_t frame_start(uint32_t kind)
{
    uint32_t head[2] = {kind, 0};
    memcpy(frame, head, 8);
    return 8;
}

static size_t frame_put(size_t n, const void *p, size_t len)
{
    if (n + len > sizeof frame)
        return n;
    memcpy(frame + n, p, len);
    return n + len;
}

static size_t frame_text(size_t n, const char *t)
{
    size_t len = t ? strlen(t) : 0; /* texts here are all terminated */
    if (len > 2000)
        len = 2000;
    if (n + len + 1 > sizeof frame)
        return n;
    memcpy(frame + n, t ? t : "", len);
    frame[n + len] = 0;
    return n + len + 1;
}

static size_t mpit_source(const tr_mpit_note *note)
{
    tr_journal_mpit_source js = {.index = note->source.index, .ordered = note->source.ordered,
                                 .adhoc_timestamps = note->source.adhoc_timestamps,
                                 .ticks_per_second = note->source.ticks_per_second,
                                 .max_ticks = note->source.max_ticks};
    size_t n = frame_start(TR_MPIT_FRAME_SOURCE);
    n = frame_put(n, &js, sizeof js);
    n = frame_text(n, note->source.name);
    return frame_text(n, note->source.desc);
}

static size_t mpit_type(const tr_mpit_note *note)
{
    tr_journal_mpit_type jt = {.index = note->type.index, .verbosity_level = note->type.verbosity_level,
                               .bind = note->type.bind, .nelements = note->type.nelements,
                               .registered = note->type.registered, .has_enum = note->type.has_enum};
    size_t n = frame_start(TR_MPIT_FRAME_TYPE);
    n = frame_put(n, &jt, sizeof jt);
    for (int e = 0; e < note->type.nelements; e++) {
        const tr_mpit_note_element *el = &note->type.elements[e];
        tr_journal_mpit_element je = {.displacement = el->displacement, .size = el->size,
                                      .is_signed = el->is_signed, .is_float = el->is_float, .known = el->known};
        n = frame_put(n, &je, sizeof je);
    }
    n = frame_text(n, note->type.name);
    n = frame_text(n, note->type.desc);
    n = frame_text(n, note->type.bind_name);
    for (int e = 0; e < note->type.nelements; e++)
        n = frame_text(n, note->type.elements[e].type_name);
    return n;
}

static size_t mpit_reg(const tr_mpit_note *note, uint32_t kind)
{
    tr_journal_mpit_reg jr = {.id = note->reg.id, .type_index = note->reg.type_index, .bound = note->reg.bound,
                              .object = note->reg.object};
    snprintf(jr.object_name, sizeof jr.object_name, "%s", note->reg.object_name ? note->reg.object_name : "");
    size_t n = frame_start(kind);
    return frame_put(n, &jr, sizeof jr);
}

static size_t mpit_clock(const tr_mpit_note *note)
{
    tr_journal_mpit_clock jc = {.source = note->clock.source, .source_tick = note->clock.source_tick,
                                .host_before = note->clock.host_before, .host_after = note->clock.host_after};
    size_t n = frame_start(TR_MPIT_FRAME_CLOCK);
    return frame_put(n, &jc, sizeof jc);
}

int tr_journal_write_mpit(const tr_mpit_note *note)
{
    pthread_mutex_lock(&mpit_lock);
    size_t n = 0;
    switch (note->kind) {
    case TR_MPIT_NOTE_STATUS: n = frame_text(frame_start(TR_MPIT_FRAME_STATUS), note->text); break;
    case TR_MPIT_NOTE_SOURCE: n = mpit_source(note); break;
    case TR_MPIT_NOTE_TYPE: n = mpit_type(note); break;
    case TR_MPIT_NOTE_REG: n = mpit_reg(note, TR_MPIT_FRAME_REG); break;
    case TR_MPIT_NOTE_UNREG: n = mpit_reg(note, TR_MPIT_FRAME_UNREG); break;
    case TR_MPIT_NOTE_CLOCK: n = mpit_clock(note); break;
    }
    int rc = n ? append(TR_FRAME_MPIT, frame, n) : -1;
    pthread_mutex_unlock(&mpit_lock);
    return rc;
}
