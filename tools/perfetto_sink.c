/* perfetto_sink.c - tracer convert's Perfetto output: the native protobuf
 * trace format that ui.perfetto.dev and trace_processor open.
 *
 * A trace file is one `Trace` message, `repeated TracePacket packet = 1`,
 * so the file is simply TracePackets one after another, each written as
 * field 1 with its length. Each call of the sink becomes one packet (a
 * TrackDescriptor, or a TrackEvent), built in a reusable buffer and written
 * when the buffer passes TR_PF_FLUSH bytes: nothing grows with the number
 * of events.
 *
 * All packets share one sequence (trusted_packet_sequence_id). Event names,
 * categories and argument names are interned on it: a string gets an iid
 * on first use, and the packet that first uses it carries it in its
 * InternedData. The table is bounded (TR_PF_INTERN_MAX_*); when it is full
 * it is emptied and the next packet says SEQ_INCREMENTAL_STATE_CLEARED, so
 * that readers drop the old iids and strings are interned afresh.
 *
 * Tracks: a process track per tc_process (pid = id + 1); a thread track per
 * TC_TRACK_THREAD track (the process's pid, a tid of its own); a named track
 * under the process for every other kind and for each counter. A track's
 * descriptor is written when it is announced (begin, add_track,
 * add_counter), always before any event on it.
 *
 * Errors: a callback returns -1 with errno set: the error of the failed
 * write (sticky: every later call fails the same way), ENOMEM, or EINVAL
 * for an event on a track or counter never announced. The sink prints
 * nothing.
 *
 * Field numbers and enum values are from perfetto_trace.proto (Perfetto's
 * merged schema, ../shared/perfetto/ in the development tree). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_sink.h"
#include "protobuf_writer.h"

/* message Trace */
#define TR_PF_TRACE_PACKET 1
/* message TracePacket */
#define TR_PF_PKT_TIMESTAMP 8         /* uint64, ns, default clock (BOOTTIME) */
#define TR_PF_PKT_SEQ_ID 10           /* trusted_packet_sequence_id, uint32 */
#define TR_PF_PKT_TRACK_EVENT 11      /* TrackEvent */
#define TR_PF_PKT_INTERNED_DATA 12    /* InternedData */
#define TR_PF_PKT_SEQUENCE_FLAGS 13   /* uint32, SequenceFlags */
#define TR_PF_PKT_TRACK_DESCRIPTOR 60 /* TrackDescriptor */
/* enum TracePacket.SequenceFlags */
#define TR_PF_SEQ_INCREMENTAL_STATE_CLEARED 1
#define TR_PF_SEQ_NEEDS_INCREMENTAL_STATE 2
/* message TrackDescriptor */
#define TR_PF_TD_UUID 1           /* uint64 */
#define TR_PF_TD_NAME 2           /* string */
#define TR_PF_TD_PROCESS 3        /* ProcessDescriptor */
#define TR_PF_TD_THREAD 4         /* ThreadDescriptor */
#define TR_PF_TD_PARENT_UUID 5    /* uint64 */
#define TR_PF_TD_COUNTER 8        /* CounterDescriptor */
#define TR_PF_TD_SIBLING_MERGE 15 /* SiblingMergeBehavior */
#define TR_PF_SIBLING_MERGE_NONE 2
/* message ProcessDescriptor */
#define TR_PF_PD_PID 1  /* int32 */
#define TR_PF_PD_NAME 6 /* process_name, string */
/* message ThreadDescriptor */
#define TR_PF_THD_PID 1  /* int32 */
#define TR_PF_THD_TID 2  /* int64 */
#define TR_PF_THD_NAME 5 /* thread_name, string */
/* message CounterDescriptor */
#define TR_PF_CD_UNIT 3      /* enum Unit */
#define TR_PF_CD_UNIT_NAME 6 /* string */
#define TR_PF_UNIT_TIME_NS 1
#define TR_PF_UNIT_SIZE_BYTES 3
/* message TrackEvent */
#define TR_PF_TE_CATEGORY_IIDS 3           /* repeated uint64 */
#define TR_PF_TE_DEBUG_ANNOTATIONS 4       /* repeated DebugAnnotation */
#define TR_PF_TE_TYPE 9                    /* enum Type */
#define TR_PF_TE_NAME_IID 10               /* uint64 */
#define TR_PF_TE_TRACK_UUID 11             /* uint64 */
#define TR_PF_TE_CATEGORIES 22             /* repeated string */
#define TR_PF_TE_NAME 23                   /* string */
#define TR_PF_TE_COUNTER_VALUE 30          /* int64 */
#define TR_PF_TE_DOUBLE_COUNTER_VALUE 44   /* double */
#define TR_PF_TE_FLOW_IDS 47               /* repeated fixed64 (36 is the deprecated uint64 form) */
#define TR_PF_TE_TERMINATING_FLOW_IDS 48   /* repeated fixed64 (42 is deprecated) */
/* enum TrackEvent.Type */
#define TR_PF_TYPE_SLICE_BEGIN 1
#define TR_PF_TYPE_SLICE_END 2
#define TR_PF_TYPE_INSTANT 3
#define TR_PF_TYPE_COUNTER 4
/* message DebugAnnotation */
#define TR_PF_DA_NAME_IID 1 /* uint64 */
#define TR_PF_DA_UINT 3     /* uint_value, uint64 */
#define TR_PF_DA_INT 4      /* int_value, int64 */
#define TR_PF_DA_DOUBLE 5   /* double_value, double */
#define TR_PF_DA_STRING 6   /* string_value, string */
#define TR_PF_DA_NAME 10    /* string */
/* message EventCategory, EventName, DebugAnnotationName */
#define TR_PF_IE_IID 1  /* uint64 */
#define TR_PF_IE_NAME 2 /* string */

/* The first sequence's id (any non-zero id); each run of the reader
 * (tc_sink.next_run) is the next one, as if each had its own writer:
 * timestamps never go back within a sequence. */
#define TR_PF_FIRST_SEQUENCE_ID 1
/* Written out once the buffer holds this much (whole packets only). */
#define TR_PF_FLUSH (64 * 1024)

/* Bounds of the intern table, the only state that grows with the trace's
 * content. A string longer than TR_PF_INTERN_MAX_LEN is written inline:
 * long strings are rarely repeated and would use up the byte budget.
 * A packet is granted room for up to TR_PF_INTERN_RESERVE new strings
 * before it starts (see tr_pf_intern_room). */
#define TR_PF_INTERN_MAX_ENTRIES 65536
#define TR_PF_INTERN_MAX_BYTES (16u << 20)
#define TR_PF_INTERN_MAX_LEN 1024
#define TR_PF_INTERN_RESERVE 1024

/* Each kind has its own iid space and its own InternedData field. */
enum tr_pf_kind { TR_PF_CATEGORY, TR_PF_NAME, TR_PF_ANNOTATION, TR_PF_KINDS };
static const uint32_t tr_pf_interned_field[TR_PF_KINDS] = {
    [TR_PF_CATEGORY] = 1,   /* InternedData.event_categories */
    [TR_PF_NAME] = 2,       /* InternedData.event_names */
    [TR_PF_ANNOTATION] = 3, /* InternedData.debug_annotation_names */
};

/* Track uuids: the kind of track in the high half, its id in the low half,
 * so the three id spaces never collide and 0 (the trace-global track) is
 * never used. */
#define TR_PF_UUID_PROCESS (1ull << 32)
#define TR_PF_UUID_TRACK (2ull << 32)
#define TR_PF_UUID_COUNTER (3ull << 32)

/* A string in the intern table; iid 0 marks an empty slot. The string is
 * in the arena at @off (an offset: the arena moves when it grows). */
struct tr_pf_slot {
    uint32_t hash, off, len, iid;
    uint8_t kind;
};

/* A string interned by the packet being built: goes into its InternedData. */
struct tr_pf_fresh {
    uint32_t kind, iid, off, len;
};

/* Which ids have been announced: one byte per id (ids are dense). */
struct tr_pf_ids {
    uint8_t *known;
    uint32_t cap;
};

struct tr_pf {
    tc_sink sink;
    FILE *out;
    struct tr_pb buf;
    int err;        /* errno of the first failure; every later call fails */
    int begun;
    uint32_t npids; /* pids are 1..npids; tids start above them */
    struct tr_pf_ids tracks, counters;
    uint32_t sequence; /* trusted_packet_sequence_id */
    uint64_t last_ts;  /* of this sequence */
    int have_ts;
    int clear_pending; /* the next packet says SEQ_INCREMENTAL_STATE_CLEARED */

    struct tr_pf_slot *slots;
    uint32_t nslots, nentries;
    uint32_t next_iid[TR_PF_KINDS];
    char *arena;
    size_t arena_len, arena_cap;
    struct tr_pf_fresh *fresh;
    uint32_t nfresh, fresh_cap;
};

static int tr_pf_fail(struct tr_pf *k, int err)
{
    if (!k->err)
        k->err = err;
    errno = k->err;
    return -1;
}

/* ---- interning ---- */

static void tr_pf_intern_reset(struct tr_pf *k)
{
    if (k->slots)
        memset(k->slots, 0, (size_t)k->nslots * sizeof *k->slots);
    k->nentries = 0;
    k->arena_len = 0;
    for (int i = 0; i < TR_PF_KINDS; i++)
        k->next_iid[i] = 1;
    k->clear_pending = 1;
}

/* Called before a packet that may intern up to @n new strings: if the table
 * could overflow while the packet is built, empty it now, so that all iids
 * one packet uses come from the same generation. A packet that needs more
 * than TR_PF_INTERN_RESERVE still gets correct output: whatever no longer
 * fits is written inline. */
static void tr_pf_intern_room(struct tr_pf *k, uint32_t n)
{
    if (n > TR_PF_INTERN_RESERVE)
        n = TR_PF_INTERN_RESERVE;
    if (k->nentries + n > TR_PF_INTERN_MAX_ENTRIES ||
        k->arena_len + (size_t)n * TR_PF_INTERN_MAX_LEN > TR_PF_INTERN_MAX_BYTES)
        tr_pf_intern_reset(k);
}

static int tr_pf_rehash(struct tr_pf *k, uint32_t nslots)
{
    struct tr_pf_slot *s = calloc(nslots, sizeof *s);
    if (!s)
        return -1;
    for (uint32_t i = 0; i < k->nslots; i++) {
        const struct tr_pf_slot *e = &k->slots[i];
        if (!e->iid)
            continue;
        uint32_t j = e->hash & (nslots - 1);
        while (s[j].iid)
            j = (j + 1) & (nslots - 1);
        s[j] = *e;
    }
    free(k->slots);
    k->slots = s;
    k->nslots = nslots;
    return 0;
}

/* The iid of @s as a @kind, interned (and queued for this packet's
 * InternedData) if new. 0: write @s inline (too long, the table is full,
 * or out of memory; none of these is an error). */
static uint32_t tr_pf_intern(struct tr_pf *k, enum tr_pf_kind kind, const char *s)
{
    uint32_t h = 2166136261u ^ (uint32_t)kind; /* FNV-1a */
    size_t len = 0;
    for (; s[len]; len++)
        h = (h ^ (uint8_t)s[len]) * 16777619u;
    if (len > TR_PF_INTERN_MAX_LEN)
        return 0;
    /* The table is at most half full, so a probe always ends. */
    if (!k->nslots && tr_pf_rehash(k, 256) < 0)
        return 0;
    uint32_t mask = k->nslots - 1, i = h & mask;
    for (; k->slots[i].iid; i = (i + 1) & mask) {
        const struct tr_pf_slot *e = &k->slots[i];
        if (e->hash == h && e->kind == kind && e->len == len && memcmp(k->arena + e->off, s, len) == 0)
            return e->iid;
    }

    if (k->nentries >= TR_PF_INTERN_MAX_ENTRIES || k->arena_len + len > TR_PF_INTERN_MAX_BYTES)
        return 0;
    if (k->arena_cap - k->arena_len < len) {
        size_t cap = k->arena_cap ? k->arena_cap : 4096;
        while (cap - k->arena_len < len)
            cap *= 2;
        char *a = realloc(k->arena, cap);
        if (!a)
            return 0;
        k->arena = a;
        k->arena_cap = cap;
    }
    if (k->nfresh == k->fresh_cap) {
        uint32_t cap = k->fresh_cap ? 2 * k->fresh_cap : 16;
        struct tr_pf_fresh *f = realloc(k->fresh, cap * sizeof *f);
        if (!f)
            return 0;
        k->fresh = f;
        k->fresh_cap = cap;
    }
    if (2 * (k->nentries + 1) > k->nslots) {
        if (tr_pf_rehash(k, 2 * k->nslots) < 0)
            return 0;
        mask = k->nslots - 1;
        for (i = h & mask; k->slots[i].iid; i = (i + 1) & mask)
            ;
    }

    struct tr_pf_slot *e = &k->slots[i];
    e->hash = h;
    e->off = (uint32_t)k->arena_len;
    e->len = (uint32_t)len;
    e->iid = k->next_iid[kind]++;
    e->kind = (uint8_t)kind;
    memcpy(k->arena + k->arena_len, s, len);
    k->arena_len += len;
    k->nentries++;
    k->fresh[k->nfresh++] = (struct tr_pf_fresh){(uint32_t)kind, e->iid, e->off, e->len};
    return e->iid;
}

/* ---- packets ---- */

/* Opens a TracePacket on the sequence; @ts is written when @has_ts. */
static size_t tr_pf_packet_open(struct tr_pf *k, int has_ts, uint64_t ts)
{
    size_t mark = tr_pb_begin(&k->buf, TR_PF_TRACE_PACKET);
    if (has_ts)
        tr_pb_varint(&k->buf, TR_PF_PKT_TIMESTAMP, ts);
    tr_pb_varint(&k->buf, TR_PF_PKT_SEQ_ID, k->sequence);
    return mark;
}

static int tr_pf_flush(struct tr_pf *k)
{
    if (k->buf.len && fwrite(k->buf.p, 1, k->buf.len, k->out) != k->buf.len)
        return tr_pf_fail(k, errno ? errno : EIO);
    k->buf.len = 0;
    return 0;
}

/* Closes the packet opened at @mark: the strings it interned, its flags
 * (@flags, plus STATE_CLEARED on the first packet after a reset). */
static int tr_pf_packet_close(struct tr_pf *k, size_t mark, uint32_t flags)
{
    struct tr_pb *b = &k->buf;
    if (k->nfresh) {
        size_t idata = tr_pb_begin(b, TR_PF_PKT_INTERNED_DATA);
        for (uint32_t i = 0; i < k->nfresh; i++) {
            const struct tr_pf_fresh *f = &k->fresh[i];
            size_t m = tr_pb_begin(b, tr_pf_interned_field[f->kind]);
            tr_pb_varint(b, TR_PF_IE_IID, f->iid);
            tr_pb_bytes(b, TR_PF_IE_NAME, k->arena + f->off, f->len);
            tr_pb_end(b, m);
        }
        tr_pb_end(b, idata);
        k->nfresh = 0;
    }
    if (k->clear_pending)
        flags |= TR_PF_SEQ_INCREMENTAL_STATE_CLEARED;
    if (flags)
        tr_pb_varint(b, TR_PF_PKT_SEQUENCE_FLAGS, flags);
    tr_pb_end(b, mark);
    if (b->oom)
        return tr_pf_fail(k, ENOMEM);
    k->clear_pending = 0;
    return b->len >= TR_PF_FLUSH ? tr_pf_flush(k) : 0;
}

/* A string field as an iid when it can be interned, inline otherwise. */
static int tr_pf_put_interned(struct tr_pf *k, enum tr_pf_kind kind, const char *s, uint32_t iid_field,
                              uint32_t str_field)
{
    uint32_t iid = tr_pf_intern(k, kind, s);
    if (iid)
        tr_pb_varint(&k->buf, iid_field, iid);
    else
        tr_pb_string(&k->buf, str_field, s);
    return iid != 0;
}

static int tr_pf_ids_add(struct tr_pf_ids *ids, uint32_t id)
{
    if (id == UINT32_MAX)
        return -1;
    if (id >= ids->cap) {
        uint32_t cap = ids->cap ? ids->cap : 64;
        while (cap <= id && cap < UINT32_MAX / 2)
            cap *= 2;
        if (cap <= id)
            cap = UINT32_MAX;
        uint8_t *p = realloc(ids->known, cap);
        if (!p)
            return -1;
        memset(p + ids->cap, 0, cap - ids->cap);
        ids->known = p;
        ids->cap = cap;
    }
    ids->known[id] = 1;
    return 0;
}

static int tr_pf_ids_has(const struct tr_pf_ids *ids, uint32_t id)
{
    return id < ids->cap && ids->known[id];
}

/* ---- track descriptors ---- */

/* A descriptor written mid-stream carries the latest event time, so packet
 * timestamps stay non-decreasing; those written by begin() have none. */
static size_t tr_pf_descriptor_open(struct tr_pf *k, size_t *pkt)
{
    *pkt = tr_pf_packet_open(k, k->have_ts, k->last_ts);
    return tr_pb_begin(&k->buf, TR_PF_PKT_TRACK_DESCRIPTOR);
}

static int tr_pf_descriptor_close(struct tr_pf *k, size_t pkt, size_t td)
{
    tr_pb_end(&k->buf, td);
    return tr_pf_packet_close(k, pkt, 0);
}

static int tr_pf_write_process(struct tr_pf *k, const tc_process *p)
{
    struct tr_pb *b = &k->buf;
    size_t pkt, td = tr_pf_descriptor_open(k, &pkt);
    tr_pb_varint(b, TR_PF_TD_UUID, TR_PF_UUID_PROCESS | p->id);
    size_t pd = tr_pb_begin(b, TR_PF_TD_PROCESS);
    tr_pb_int64(b, TR_PF_PD_PID, (int64_t)p->id + 1);
    if (p->name && *p->name)
        tr_pb_string(b, TR_PF_PD_NAME, p->name);
    tr_pb_end(b, pd);
    return tr_pf_descriptor_close(k, pkt, td);
}

static int tr_pf_write_track(struct tr_pf *k, const tc_track *t)
{
    struct tr_pb *b = &k->buf;
    if (t->process >= k->npids)
        return tr_pf_fail(k, EINVAL);
    if (tr_pf_ids_add(&k->tracks, t->id) < 0)
        return tr_pf_fail(k, ENOMEM);
    const char *name = t->name ? t->name : "";
    size_t pkt, td = tr_pf_descriptor_open(k, &pkt);
    tr_pb_varint(b, TR_PF_TD_UUID, TR_PF_UUID_TRACK | t->id);
    if (t->kind == TC_TRACK_THREAD) {
        /* tids above every pid: Perfetto gives each process a main thread
         * whose tid is the pid, and a tid equal to another process's pid
         * would be taken for that thread. */
        size_t thd = tr_pb_begin(b, TR_PF_TD_THREAD);
        tr_pb_int64(b, TR_PF_THD_PID, (int64_t)t->process + 1);
        tr_pb_int64(b, TR_PF_THD_TID, (int64_t)k->npids + 1 + t->id);
        if (*name)
            tr_pb_string(b, TR_PF_THD_NAME, name);
        tr_pb_end(b, thd);
    } else {
        /* Under the process; never merged with a same-named sibling, which
         * would mix two locations' slices on one track. */
        tr_pb_varint(b, TR_PF_TD_PARENT_UUID, TR_PF_UUID_PROCESS | t->process);
        tr_pb_string(b, TR_PF_TD_NAME, name);
        tr_pb_varint(b, TR_PF_TD_SIBLING_MERGE, TR_PF_SIBLING_MERGE_NONE);
    }
    return tr_pf_descriptor_close(k, pkt, td);
}

static int tr_pf_write_counter(struct tr_pf *k, const tc_counter *c)
{
    struct tr_pb *b = &k->buf;
    if (c->process >= k->npids)
        return tr_pf_fail(k, EINVAL);
    if (tr_pf_ids_add(&k->counters, c->id) < 0)
        return tr_pf_fail(k, ENOMEM);
    size_t pkt, td = tr_pf_descriptor_open(k, &pkt);
    tr_pb_varint(b, TR_PF_TD_UUID, TR_PF_UUID_COUNTER | c->id);
    tr_pb_varint(b, TR_PF_TD_PARENT_UUID, TR_PF_UUID_PROCESS | c->process);
    tr_pb_string(b, TR_PF_TD_NAME, c->name ? c->name : "");
    tr_pb_varint(b, TR_PF_TD_SIBLING_MERGE, TR_PF_SIBLING_MERGE_NONE);
    size_t cd = tr_pb_begin(b, TR_PF_TD_COUNTER);
    /* The two units the schema names get its enum (the UI formats them);
     * any other goes in as text. */
    const char *unit = c->unit ? c->unit : "";
    if (strcmp(unit, "bytes") == 0)
        tr_pb_varint(b, TR_PF_CD_UNIT, TR_PF_UNIT_SIZE_BYTES);
    else if (strcmp(unit, "ns") == 0)
        tr_pb_varint(b, TR_PF_CD_UNIT, TR_PF_UNIT_TIME_NS);
    else if (*unit)
        tr_pb_string(b, TR_PF_CD_UNIT_NAME, unit);
    tr_pb_end(b, cd);
    return tr_pf_descriptor_close(k, pkt, td);
}

/* ---- events ---- */

struct tr_pf_event {
    uint64_t ts, track_uuid;
    int type;
    const char *name, *category; /* NULL: none (SLICE_END, COUNTER) */
    const tc_arg *args;
    uint32_t nargs;
    uint64_t flow_out, flow_in;
    int has_value;
    double value;
};

static void tr_pf_put_arg(struct tr_pf *k, const tc_arg *a, int *interned)
{
    struct tr_pb *b = &k->buf;
    size_t m = tr_pb_begin(b, TR_PF_TE_DEBUG_ANNOTATIONS);
    *interned |= tr_pf_put_interned(k, TR_PF_ANNOTATION, a->name ? a->name : "", TR_PF_DA_NAME_IID, TR_PF_DA_NAME);
    switch (a->type) {
    case TC_ARG_INT:
        tr_pb_int64(b, TR_PF_DA_INT, a->v.i);
        break;
    case TC_ARG_UINT:
        tr_pb_varint(b, TR_PF_DA_UINT, a->v.u);
        break;
    case TC_ARG_DOUBLE:
        tr_pb_double(b, TR_PF_DA_DOUBLE, a->v.d);
        break;
    case TC_ARG_STRING:
        tr_pb_string(b, TR_PF_DA_STRING, a->v.s ? a->v.s : "");
        break;
    }
    tr_pb_end(b, m);
}

/* True when @v is exactly an int64 (then counter_value is shorter and
 * exact); the range test comes first so the cast is defined. */
static int tr_pf_is_int64(double v)
{
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 && v == (double)(int64_t)v;
}

static int tr_pf_write_event(struct tr_pf *k, const struct tr_pf_event *ev)
{
    struct tr_pb *b = &k->buf;
    if (ev->name)
        tr_pf_intern_room(k, 2 + ev->nargs);
    if (!k->have_ts || ev->ts > k->last_ts)
        k->last_ts = ev->ts;
    k->have_ts = 1;

    int interned = 0;
    size_t pkt = tr_pf_packet_open(k, 1, ev->ts);
    size_t te = tr_pb_begin(b, TR_PF_PKT_TRACK_EVENT);
    tr_pb_varint(b, TR_PF_TE_TYPE, (uint64_t)ev->type);
    tr_pb_varint(b, TR_PF_TE_TRACK_UUID, ev->track_uuid);
    if (ev->name)
        interned |= tr_pf_put_interned(k, TR_PF_NAME, ev->name, TR_PF_TE_NAME_IID, TR_PF_TE_NAME);
    if (ev->category && *ev->category)
        interned |= tr_pf_put_interned(k, TR_PF_CATEGORY, ev->category, TR_PF_TE_CATEGORY_IIDS, TR_PF_TE_CATEGORIES);
    for (uint32_t i = 0; i < ev->nargs; i++)
        tr_pf_put_arg(k, &ev->args[i], &interned);
    if (ev->flow_out)
        tr_pb_fixed64(b, TR_PF_TE_FLOW_IDS, ev->flow_out);
    if (ev->flow_in)
        tr_pb_fixed64(b, TR_PF_TE_TERMINATING_FLOW_IDS, ev->flow_in);
    if (ev->has_value) {
        if (tr_pf_is_int64(ev->value))
            tr_pb_int64(b, TR_PF_TE_COUNTER_VALUE, (int64_t)ev->value);
        else
            tr_pb_double(b, TR_PF_TE_DOUBLE_COUNTER_VALUE, ev->value);
    }
    tr_pb_end(b, te);
    return tr_pf_packet_close(k, pkt, interned ? TR_PF_SEQ_NEEDS_INCREMENTAL_STATE : 0);
}

/* ---- the sink callbacks ---- */

static struct tr_pf *tr_pf_of(tc_sink *s)
{
    return s->ctx;
}

static int tr_pf_begin(tc_sink *s, const tc_process *procs, uint32_t nprocs, const tc_track *tracks,
                       uint32_t ntracks)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    if (k->begun)
        return tr_pf_fail(k, EINVAL);
    k->begun = 1;
    /* pids are id + 1; ids are dense, but do not rely on the order. */
    for (uint32_t i = 0; i < nprocs; i++)
        if (procs[i].id >= k->npids)
            k->npids = procs[i].id + 1;
    for (uint32_t i = 0; i < nprocs; i++)
        if (tr_pf_write_process(k, &procs[i]) < 0)
            return -1;
    for (uint32_t i = 0; i < ntracks; i++)
        if (tr_pf_write_track(k, &tracks[i]) < 0)
            return -1;
    return 0;
}

static int tr_pf_add_track(tc_sink *s, const tc_track *t)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    return tr_pf_write_track(k, t);
}

static int tr_pf_add_counter(tc_sink *s, const tc_counter *c)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    return tr_pf_write_counter(k, c);
}

static int tr_pf_slice_begin(tc_sink *s, uint32_t track, uint64_t ts, const char *name, const char *category,
                             const tc_arg *args, uint32_t nargs, uint64_t flow_out, uint64_t flow_in)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    if (!tr_pf_ids_has(&k->tracks, track))
        return tr_pf_fail(k, EINVAL);
    struct tr_pf_event ev = {
        .ts = ts, .track_uuid = TR_PF_UUID_TRACK | track, .type = TR_PF_TYPE_SLICE_BEGIN,
        .name = name ? name : "", .category = category, .args = args, .nargs = nargs,
        .flow_out = flow_out, .flow_in = flow_in,
    };
    return tr_pf_write_event(k, &ev);
}

static int tr_pf_slice_end(tc_sink *s, uint32_t track, uint64_t ts)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    if (!tr_pf_ids_has(&k->tracks, track))
        return tr_pf_fail(k, EINVAL);
    struct tr_pf_event ev = {.ts = ts, .track_uuid = TR_PF_UUID_TRACK | track, .type = TR_PF_TYPE_SLICE_END};
    return tr_pf_write_event(k, &ev);
}

static int tr_pf_instant(tc_sink *s, uint32_t track, uint64_t ts, const char *name, const char *category,
                         const tc_arg *args, uint32_t nargs)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    if (!tr_pf_ids_has(&k->tracks, track))
        return tr_pf_fail(k, EINVAL);
    struct tr_pf_event ev = {
        .ts = ts, .track_uuid = TR_PF_UUID_TRACK | track, .type = TR_PF_TYPE_INSTANT,
        .name = name ? name : "", .category = category, .args = args, .nargs = nargs,
    };
    return tr_pf_write_event(k, &ev);
}

static int tr_pf_counter(tc_sink *s, uint32_t counter, uint64_t ts, double value)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    if (!tr_pf_ids_has(&k->counters, counter))
        return tr_pf_fail(k, EINVAL);
    struct tr_pf_event ev = {
        .ts = ts, .track_uuid = TR_PF_UUID_COUNTER | counter, .type = TR_PF_TYPE_COUNTER,
        .has_value = 1, .value = value,
    };
    return tr_pf_write_event(k, &ev);
}

/* A new sequence starts with nothing interned and no time. */
static int tr_pf_next_run(tc_sink *s)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    k->sequence++;
    k->have_ts = 0;
    tr_pf_intern_reset(k);
    return 0;
}

static int tr_pf_end(tc_sink *s)
{
    struct tr_pf *k = tr_pf_of(s);
    if (k->err)
        return tr_pf_fail(k, k->err);
    if (tr_pf_flush(k) < 0)
        return -1;
    /* fflush reports a failed write of what stdio still held; ferror one
     * that an earlier fwrite hit without returning short. */
    if (fflush(k->out) != 0)
        return tr_pf_fail(k, errno ? errno : EIO);
    if (ferror(k->out))
        return tr_pf_fail(k, EIO);
    return 0;
}

static void tr_pf_free(tc_sink *s)
{
    if (!s)
        return;
    struct tr_pf *k = tr_pf_of(s);
    tr_pb_free(&k->buf);
    free(k->tracks.known);
    free(k->counters.known);
    free(k->slots);
    free(k->arena);
    free(k->fresh);
    free(k);
}

tc_sink *tc_perfetto_sink(FILE *out)
{
    struct tr_pf *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->out = out;
    k->sequence = TR_PF_FIRST_SEQUENCE_ID;
    tr_pb_init(&k->buf);
    /* The first packet of the sequence starts its incremental state. */
    tr_pf_intern_reset(k);
    k->sink = (tc_sink){
        .ctx = k,
        .begin = tr_pf_begin,
        .add_track = tr_pf_add_track,
        .add_counter = tr_pf_add_counter,
        .slice_begin = tr_pf_slice_begin,
        .slice_end = tr_pf_slice_end,
        .instant = tr_pf_instant,
        .counter = tr_pf_counter,
        .next_run = tr_pf_next_run,
        .end = tr_pf_end,
        .free = tr_pf_free,
    };
    return &k->sink;
}
