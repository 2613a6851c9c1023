/* test_defs_codec.c - definitions and rank descriptions through the wire
 * format, and the unification of two ranks' definitions: the ids every
 * rank's events are rewritten with come from these maps, so a wrong one
 * silently points events at another region. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/defs_codec.h"
#include "writer/rank_desc.h"

static int failures;
#define CHECK(c)                                                    \
    do {                                                            \
        if (!(c)) {                                                 \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);     \
            failures++;                                             \
        }                                                           \
    } while (0)

static uint32_t region(tr_defs *d, const char *name, const char *canonical, const char *file, uint32_t line,
                       OTF2_RegionRole role)
{
    tr_region_def g = {.line = line, .role = role, .paradigm = OTF2_PARADIGM_OPENMP};
    g.name = tr_defs_str(d, name);
    g.canonical = tr_defs_str(d, canonical);
    g.description = tr_defs_str(d, "OpenMP target construct");
    g.file = tr_defs_str(d, file);
    return tr_defs_region_add(d, &g);
}

static uint32_t attr(tr_defs *d, const char *name, OTF2_Type type)
{
    return tr_defs_attribute(d, tr_defs_str(d, name), tr_defs_str(d, "MPI_T element"), type);
}

/* Rank A and rank B share some definitions, made in another order (so
 * with other ids), and each has its own. */
static void build_a(tr_defs *d)
{
    tr_defs_init(d, 1);
    tr_defs_str(d, "");
    region(d, "target (a.c:10)", "target", "a.c", 10, OTF2_REGION_ROLE_WRAPPER);
    attr(d, "bytes", OTF2_TYPE_UINT64);
    region(d, "alloc", "alloc", "", 0, OTF2_REGION_ROLE_ALLOCATE);
    attr(d, "count", OTF2_TYPE_INT64);
    region(d, "only in A", "target", "a.c", 20, OTF2_REGION_ROLE_WRAPPER);
    tr_defs_str(d, "a string of A");
}

static void build_b(tr_defs *d)
{
    tr_defs_init(d, 1);
    tr_defs_str(d, "a string of B");
    attr(d, "count", OTF2_TYPE_INT64);
    region(d, "alloc", "alloc", "", 0, OTF2_REGION_ROLE_ALLOCATE);
    attr(d, "count", OTF2_TYPE_UINT32); /* same name, another type: another attribute */
    region(d, "only in B", "target", "b.c", 5, OTF2_REGION_ROLE_WRAPPER);
    region(d, "target (a.c:10)", "target", "a.c", 10, OTF2_REGION_ROLE_WRAPPER);
    /* Equal in every field but the line: another region. */
    region(d, "target (a.c:10)", "target", "a.c", 11, OTF2_REGION_ROLE_WRAPPER);
    tr_defs_str(d, "");
}

static int defs_equal(const tr_defs *a, const tr_defs *b)
{
    if (a->strings.count != b->strings.count || a->nregions != b->nregions || a->nattrs != b->nattrs)
        return 0;
    for (uint32_t i = 0; i < a->strings.count; i++)
        if (strcmp(a->strings.s[i], b->strings.s[i]))
            return 0;
    for (uint32_t i = 0; i < a->nregions; i++) {
        const tr_region_def *x = &a->regions[i], *y = &b->regions[i];
        if (x->name != y->name || x->canonical != y->canonical || x->description != y->description ||
            x->file != y->file || x->line != y->line || x->role != y->role || x->paradigm != y->paradigm)
            return 0;
    }
    for (uint32_t i = 0; i < a->nattrs; i++)
        if (a->attrs[i].name != b->attrs[i].name || a->attrs[i].description != b->attrs[i].description ||
            a->attrs[i].type != b->attrs[i].type)
            return 0;
    return 1;
}

static void round_trip(const tr_defs *d)
{
    tr_blob b = {0};
    tr_defs_pack(d, &b);
    CHECK(!b.oom);
    tr_blob_reader r = tr_blob_read(b.p, b.n);
    tr_defs u;
    CHECK(tr_defs_unpack(&r, &u) == 0);
    CHECK(!r.bad && r.at == b.n);
    CHECK(u.by_content == 1);
    CHECK(defs_equal(d, &u));
    /* By content after unpacking: adding what is there finds it. */
    for (uint32_t i = 0; i < u.nregions; i++) {
        tr_region_def g = u.regions[i];
        CHECK(tr_defs_region_add(&u, &g) == i);
    }
    for (uint32_t i = 0; i < u.nattrs; i++)
        CHECK(tr_defs_attribute(&u, u.attrs[i].name, u.attrs[i].description, u.attrs[i].type) == TR_ATTR_COUNT + i);
    CHECK(u.nregions == d->nregions && u.nattrs == d->nattrs);
    tr_defs_free(&u);

    /* Every blob cut short is refused. */
    for (size_t len = 0; len < b.n; len++) {
        r = tr_blob_read(b.p, len);
        CHECK(tr_defs_unpack(&r, &u) == -1);
        CHECK(u.strings.count == 0 && u.regions == NULL && u.attrs == NULL);
    }
    tr_blob_free(&b);
}

static const char *str(const tr_defs *d, uint64_t id) { return id < d->strings.count ? d->strings.s[id] : 0; }

static int same_str(const tr_defs *a, uint64_t ia, const tr_defs *b, uint64_t ib)
{
    const char *x = str(a, ia), *y = str(b, ib);
    return x && y && !strcmp(x, y);
}

/* @map takes @src's definitions to equal ones in @dst. */
static void check_map(const tr_defs *dst, const tr_defs *src, const tr_defs_map *m)
{
    CHECK(m->nstrings == src->strings.count);
    CHECK(m->nregions == src->nregions);
    CHECK(m->nattrs == TR_ATTR_COUNT + src->nattrs);
    for (uint32_t i = 0; i < m->nstrings; i++)
        CHECK(same_str(dst, m->strings[i], src, i));
    for (uint32_t i = 0; i < m->nregions; i++) {
        CHECK(m->regions[i] < dst->nregions);
        if (m->regions[i] >= dst->nregions)
            continue;
        const tr_region_def *x = &dst->regions[m->regions[i]], *y = &src->regions[i];
        CHECK(same_str(dst, x->name, src, y->name));
        CHECK(same_str(dst, x->canonical, src, y->canonical));
        CHECK(same_str(dst, x->description, src, y->description));
        CHECK(same_str(dst, x->file, src, y->file));
        CHECK(x->line == y->line && x->role == y->role && x->paradigm == y->paradigm);
    }
    for (uint32_t i = 0; i < TR_ATTR_COUNT; i++)
        CHECK(m->attrs[i] == i);
    for (uint32_t i = 0; i < src->nattrs; i++) {
        uint64_t id = m->attrs[TR_ATTR_COUNT + i];
        CHECK(id >= TR_ATTR_COUNT && id < TR_ATTR_COUNT + dst->nattrs);
        if (id < TR_ATTR_COUNT || id >= TR_ATTR_COUNT + dst->nattrs)
            continue;
        const tr_attr_def *x = &dst->attrs[id - TR_ATTR_COUNT], *y = &src->attrs[i];
        CHECK(same_str(dst, x->name, src, y->name));
        CHECK(same_str(dst, x->description, src, y->description));
        CHECK(x->type == y->type);
    }
}

static int maps_equal(const tr_defs_map *a, const tr_defs_map *b)
{
    return a->nstrings == b->nstrings && a->nregions == b->nregions && a->nattrs == b->nattrs &&
           !memcmp(a->strings, b->strings, a->nstrings * sizeof *a->strings) &&
           !memcmp(a->regions, b->regions, a->nregions * sizeof *a->regions) &&
           !memcmp(a->attrs, b->attrs, a->nattrs * sizeof *a->attrs);
}

static void test_merge(const tr_defs *a, const tr_defs *b)
{
    tr_defs dst;
    tr_defs_map ma, mb, again;
    tr_defs_init(&dst, 1);
    CHECK(tr_defs_merge(&dst, a, &ma) == 0);
    CHECK(tr_defs_merge(&dst, b, &mb) == 0);
    check_map(&dst, a, &ma);
    check_map(&dst, b, &mb);

    /* The union: A's 11 strings and B's 3 of its own; A's 3 regions and
     * B's 2 of its own; A's 2 attributes and B's 1. */
    CHECK(dst.strings.count == 14);
    CHECK(dst.nregions == 5);
    CHECK(dst.nattrs == 3);
    for (uint32_t i = 0; i < dst.strings.count; i++)
        for (uint32_t j = i + 1; j < dst.strings.count; j++)
            CHECK(strcmp(dst.strings.s[i], dst.strings.s[j]));
    for (uint32_t i = 0; i < dst.nregions; i++)
        for (uint32_t j = i + 1; j < dst.nregions; j++) {
            const tr_region_def *x = &dst.regions[i], *y = &dst.regions[j];
            CHECK(x->name != y->name || x->canonical != y->canonical || x->description != y->description ||
                  x->file != y->file || x->line != y->line || x->role != y->role || x->paradigm != y->paradigm);
        }
    for (uint32_t i = 0; i < dst.nattrs; i++)
        for (uint32_t j = i + 1; j < dst.nattrs; j++)
            CHECK(dst.attrs[i].name != dst.attrs[j].name || dst.attrs[i].description != dst.attrs[j].description ||
                  dst.attrs[i].type != dst.attrs[j].type);

    /* A rank's own table merged into the final one: a lookup. */
    uint32_t ns = dst.strings.count, nr = dst.nregions, na = dst.nattrs;
    CHECK(tr_defs_merge(&dst, a, &again) == 0);
    CHECK(dst.strings.count == ns && dst.nregions == nr && dst.nattrs == na);
    CHECK(maps_equal(&ma, &again));
    tr_defs_map_free(&again);
    CHECK(tr_defs_merge(&dst, b, NULL) == 0);
    CHECK(dst.strings.count == ns && dst.nregions == nr && dst.nattrs == na);

    /* The merged table survives the wire too, as a subtree's would. */
    round_trip(&dst);

    /* An empty table merges into anything, and anything into an empty one. */
    tr_defs empty, e2;
    tr_defs_init(&empty, 1);
    CHECK(tr_defs_merge(&dst, &empty, &again) == 0);
    CHECK(again.nstrings == 0 && again.nregions == 0 && again.nattrs == TR_ATTR_COUNT);
    tr_defs_map_free(&again);
    tr_defs_init(&e2, 1);
    CHECK(tr_defs_merge(&e2, &empty, NULL) == 0);
    CHECK(e2.strings.count == 0 && e2.nregions == 0 && e2.nattrs == 0);
    round_trip(&empty);
    tr_defs_free(&e2);
    tr_defs_free(&empty);

    tr_defs_map_free(&ma);
    tr_defs_map_free(&mb);
    tr_defs_free(&dst);
}

/* Blobs our packer never writes. */
static int unpack_raw(const tr_blob *b)
{
    tr_blob_reader r = tr_blob_read(b->p, b->n);
    tr_defs d;
    int rc = tr_defs_unpack(&r, &d);
    if (rc == 0)
        tr_defs_free(&d);
    return rc;
}

static void region_raw(tr_blob *b, uint32_t name, uint32_t line)
{
    for (int i = 0; i < 4; i++)
        tr_blob_u32(b, name);
    tr_blob_u32(b, line);
    tr_blob_u8(b, OTF2_REGION_ROLE_FUNCTION);
    tr_blob_u8(b, OTF2_PARADIGM_USER);
}

static void test_malformed(void)
{
    tr_blob b = {0};

    /* The well-formed base the others vary: strings "", "x"; one region;
     * one attribute. */
    tr_blob_u32(&b, 2), tr_blob_str(&b, ""), tr_blob_str(&b, "x");
    tr_blob_u32(&b, 1), region_raw(&b, 1, 3);
    tr_blob_u32(&b, 1), tr_blob_u32(&b, 1), tr_blob_u32(&b, 0), tr_blob_u8(&b, OTF2_TYPE_UINT8);
    CHECK(unpack_raw(&b) == 0);
    tr_blob_free(&b);

    /* A region's string id out of range. */
    tr_blob_u32(&b, 2), tr_blob_str(&b, ""), tr_blob_str(&b, "x");
    tr_blob_u32(&b, 1), region_raw(&b, 2, 3);
    tr_blob_u32(&b, 0);
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);

    /* An attribute's string id out of range. */
    tr_blob_u32(&b, 1), tr_blob_str(&b, "");
    tr_blob_u32(&b, 0);
    tr_blob_u32(&b, 1), tr_blob_u32(&b, 0), tr_blob_u32(&b, UINT32_MAX), tr_blob_u8(&b, OTF2_TYPE_UINT8);
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);

    /* A string twice: every later id would be off by one. */
    tr_blob_u32(&b, 3), tr_blob_str(&b, "x"), tr_blob_str(&b, "y"), tr_blob_str(&b, "x");
    tr_blob_u32(&b, 0), tr_blob_u32(&b, 0);
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);

    /* A NUL inside a string, and a NULL string. */
    tr_blob_u32(&b, 1), tr_blob_u32(&b, 3), tr_blob_bytes(&b, "a\0b", 3);
    tr_blob_u32(&b, 0), tr_blob_u32(&b, 0);
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);
    tr_blob_u32(&b, 1), tr_blob_str(&b, NULL);
    tr_blob_u32(&b, 0), tr_blob_u32(&b, 0);
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);

    /* A region or an attribute twice. */
    tr_blob_u32(&b, 1), tr_blob_str(&b, "");
    tr_blob_u32(&b, 2), region_raw(&b, 0, 1), region_raw(&b, 0, 1);
    tr_blob_u32(&b, 0);
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);
    tr_blob_u32(&b, 1), tr_blob_str(&b, "");
    tr_blob_u32(&b, 0);
    tr_blob_u32(&b, 2);
    for (int i = 0; i < 2; i++)
        tr_blob_u32(&b, 0), tr_blob_u32(&b, 0), tr_blob_u8(&b, OTF2_TYPE_UINT8);
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);

    /* Counts far beyond what follows. */
    tr_blob_u32(&b, UINT32_MAX), tr_blob_str(&b, "");
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);
    tr_blob_u32(&b, 0), tr_blob_u32(&b, UINT32_MAX), region_raw(&b, 0, 0);
    CHECK(unpack_raw(&b) == -1);
    tr_blob_free(&b);
}

static char *dup(const char *s) { return s ? strdup(s) : NULL; }

static void desc_full(tr_rank_desc *d)
{
    memset(d, 0, sizeof *d);
    d->rank = 7;
    d->pid = 0x123456789abcull;
    d->hostname = dup("node-3");
    d->empty = 0;
    d->ended = 1, d->crashed = 1, d->truncated = 1;
    d->crash_signal = -11;
    d->small_count[0] = 1, d->small_count[1] = 2, d->small_bytes[0] = 3, d->small_bytes[1] = UINT64_MAX;
    d->loc_base = 1ull << 40;
    d->group_base = 9, d->win_base = 4;
    d->nlocations = 5;
    d->events = malloc(5 * sizeof *d->events);
    for (int i = 0; i < 5; i++)
        d->events[i] = 1000 + (uint64_t)i;
    d->nhost = 2;
    d->ndevices = 2;
    d->devices = malloc(2 * sizeof *d->devices);
    /* A device's lanes need not be consecutive: a lane the pass needed
     * late comes after other devices' locations. */
    d->devices[0] = (tr_desc_device){-1, 2, malloc(2 * sizeof(uint64_t))};
    d->devices[0].lanes[0] = 2, d->devices[0].lanes[1] = 6;
    d->devices[1] = (tr_desc_device){3, 1, malloc(sizeof(uint64_t))};
    d->devices[1].lanes[0] = 3;
    d->nmpit = 2;
    d->mpit = malloc(2 * sizeof *d->mpit);
    d->mpit[0] = (tr_desc_mpit){4, dup("MPI_T source mpich")};
    d->mpit[1] = (tr_desc_mpit){5, NULL};
    d->ncomms = 2;
    d->comms = malloc(2 * sizeof *d->comms);
    d->comms[0] = (tr_desc_comm){0xdeadbeef, 0};
    d->comms[1] = (tr_desc_comm){0x44000001, 1};
    d->t_min = 10, d->t_max = 20;
    d->realtime_shift = -1234567890123ll;
    d->nprops = 2;
    d->props = malloc(2 * sizeof *d->props);
    d->props[0] = (tr_desc_prop){dup("TRACER::MPIT::RANK7::STATUS"), dup("ready")};
    d->props[1] = (tr_desc_prop){dup("TRACER::MPIT::RANK7::EMPTY"), dup("")};
    d->nconfig = 3;
    d->config = malloc(3 * sizeof *d->config);
    d->config[0] = dup("TRACER_MODE=drop");
    d->config[1] = NULL;
    d->config[2] = dup("TRACER_X=");
    d->records = 11, d->events_total = 5010, d->lost = 13, d->skipped_bytes = 14, d->bad_frames = 15;
}

/* A journal without events: no hostname known, every array empty. */
static void desc_empty(tr_rank_desc *d)
{
    memset(d, 0, sizeof *d);
    d->rank = -1;
    d->pid = 42;
    d->empty = 1;
    d->journal_lost = 1; /* as a rank whose journal was lost is described */
    d->crash_signal = 0;
}

static int str_eq(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static int desc_equal(const tr_rank_desc *a, const tr_rank_desc *b)
{
    int eq = a->rank == b->rank && a->pid == b->pid && str_eq(a->hostname, b->hostname) && a->empty == b->empty &&
             a->ended == b->ended && a->crashed == b->crashed && a->truncated == b->truncated &&
             a->journal_lost == b->journal_lost &&
             a->crash_signal == b->crash_signal && !memcmp(a->small_count, b->small_count, sizeof a->small_count) &&
             !memcmp(a->small_bytes, b->small_bytes, sizeof a->small_bytes) && a->loc_base == b->loc_base &&
             a->group_base == b->group_base && a->win_base == b->win_base && a->nlocations == b->nlocations &&
             a->nhost == b->nhost && a->ndevices == b->ndevices && a->nmpit == b->nmpit &&
             a->ncomms == b->ncomms && a->t_min == b->t_min && a->t_max == b->t_max &&
             a->realtime_shift == b->realtime_shift && a->nprops == b->nprops && a->nconfig == b->nconfig &&
             a->records == b->records && a->events_total == b->events_total && a->lost == b->lost &&
             a->skipped_bytes == b->skipped_bytes && a->bad_frames == b->bad_frames;
    if (!eq)
        return 0;
    /* Empty arrays come back as NULL, as the describer leaves them. */
    if ((a->nlocations && memcmp(a->events, b->events, a->nlocations * sizeof *a->events)) ||
        (!a->nlocations && b->events))
        return 0;
    if (!a->ndevices != !b->devices || !a->nmpit != !b->mpit || !a->ncomms != !b->comms || !a->nprops != !b->props ||
        !a->nconfig != !b->config)
        return 0;
    for (uint32_t i = 0; i < a->ndevices; i++)
        if (a->devices[i].num != b->devices[i].num || a->devices[i].nlanes != b->devices[i].nlanes ||
            memcmp(a->devices[i].lanes, b->devices[i].lanes, a->devices[i].nlanes * sizeof *a->devices[i].lanes))
            return 0;
    for (uint32_t i = 0; i < a->nmpit; i++)
        if (a->mpit[i].location != b->mpit[i].location || !str_eq(a->mpit[i].name, b->mpit[i].name))
            return 0;
    for (uint32_t i = 0; i < a->ncomms; i++)
        if (a->comms[i].handle != b->comms[i].handle || a->comms[i].self != b->comms[i].self)
            return 0;
    for (uint32_t i = 0; i < a->nprops; i++)
        if (!str_eq(a->props[i].name, b->props[i].name) || !str_eq(a->props[i].value, b->props[i].value))
            return 0;
    for (uint32_t i = 0; i < a->nconfig; i++)
        if (!str_eq(a->config[i], b->config[i]))
            return 0;
    return 1;
}

static void test_rank_desc(void)
{
    tr_rank_desc full, empty, u;
    desc_full(&full);
    desc_empty(&empty);

    /* Two in one blob, as a subtree sends its ranks': each read ends
     * exactly where the next begins. */
    tr_blob b = {0};
    tr_rank_desc_pack(&full, &b);
    size_t first = b.n;
    tr_rank_desc_pack(&empty, &b);
    CHECK(!b.oom);
    tr_blob_reader r = tr_blob_read(b.p, b.n);
    CHECK(tr_rank_desc_unpack(&r, &u) == 0);
    CHECK(r.at == first);
    CHECK(desc_equal(&full, &u));
    tr_rank_desc_free(&u);
    CHECK(tr_rank_desc_unpack(&r, &u) == 0);
    CHECK(!r.bad && r.at == b.n);
    CHECK(desc_equal(&empty, &u));
    CHECK(u.hostname == NULL && u.events == NULL && u.devices == NULL && u.config == NULL);
    tr_rank_desc_free(&u);

    for (size_t len = 0; len < first; len++) {
        r = tr_blob_read(b.p, len);
        CHECK(tr_rank_desc_unpack(&r, &u) == -1);
        CHECK(u.hostname == NULL && u.events == NULL && u.mpit == NULL && u.props == NULL && u.config == NULL);
    }
    for (size_t len = first; len < b.n; len++) {
        r = tr_blob_read(b.p + first, len - first);
        CHECK(tr_rank_desc_unpack(&r, &u) == -1);
    }
    tr_blob_free(&b);

    /* A location count no blob this size could hold is refused before it
     * is allocated. */
    full.nlocations = UINT64_MAX / 4;
    uint64_t *events = full.events;
    full.events = NULL;
    tr_blob_u32(&b, 0), tr_blob_u64(&b, 0), tr_blob_str(&b, NULL);
    for (int i = 0; i < 4; i++)
        tr_blob_u8(&b, 0);
    tr_blob_u32(&b, 0);
    for (int i = 0; i < 4; i++)
        tr_blob_u64(&b, 0);
    tr_blob_u64(&b, 0), tr_blob_u32(&b, 0), tr_blob_u32(&b, 0);
    tr_blob_u64(&b, full.nlocations);
    tr_blob_bytes(&b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    r = tr_blob_read(b.p, b.n);
    CHECK(tr_rank_desc_unpack(&r, &u) == -1);
    tr_blob_free(&b);
    full.nlocations = 5;
    full.events = events;

    tr_rank_desc_free(&full);
    tr_rank_desc_free(&empty);
}

int main(void)
{
    tr_defs a, b;
    build_a(&a);
    build_b(&b);
    CHECK(a.strings.count == 11 && a.nregions == 3 && a.nattrs == 2);
    CHECK(b.strings.count == 11 && b.nregions == 4 && b.nattrs == 2);
    round_trip(&a);
    round_trip(&b);
    test_merge(&a, &b);
    tr_defs_free(&a);
    tr_defs_free(&b);
    test_malformed();
    test_rank_desc();
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    puts("ok");
    return 0;
}
