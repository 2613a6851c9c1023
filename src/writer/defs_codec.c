/* defs_codec.c - see defs_codec.h. On the wire: the strings in id order,
 * then the regions, then the attributes beyond the fixed ones, each table
 * as a u32 count and its entries; fields refer to strings by id. */
#include "writer/defs_codec.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of the smallest region and attribute entry. */
enum { REGION_BYTES = 5 * 4 + 2, ATTR_BYTES = 2 * 4 + 1 };

void tr_defs_pack(const tr_defs *d, tr_blob *b)
{
    tr_blob_u32(b, d->strings.count);
    for (uint32_t i = 0; i < d->strings.count; i++)
        tr_blob_str(b, d->strings.s[i]);
    tr_blob_u32(b, d->nregions);
    for (uint32_t i = 0; i < d->nregions; i++) {
        const tr_region_def *g = &d->regions[i];
        tr_blob_u32(b, g->name);
        tr_blob_u32(b, g->canonical);
        tr_blob_u32(b, g->description);
        tr_blob_u32(b, g->file);
        tr_blob_u32(b, g->line);
        tr_blob_u8(b, g->role);
        tr_blob_u8(b, g->paradigm);
    }
    tr_blob_u32(b, d->nattrs);
    for (uint32_t i = 0; i < d->nattrs; i++) {
        tr_blob_u32(b, d->attrs[i].name);
        tr_blob_u32(b, d->attrs[i].description);
        tr_blob_u8(b, d->attrs[i].type);
    }
}

/* Whether @n entries of at least @each bytes can follow: a corrupt count
 * is rejected before it costs a loop over billions of entries. */
static int fits(const tr_blob_reader *r, uint32_t n, size_t each)
{
    return !r->bad && n <= (r->n - r->at) / each;
}

int tr_defs_unpack(tr_blob_reader *r, tr_defs *d)
{
    tr_defs_init(d, 1);
    uint32_t n = tr_blob_get_u32(r);
    if (!fits(r, n, 4))
        goto bad;
    /* Ids are positions: a string interned anywhere but at its position
     * (a duplicate, one cut short by a NUL) would shift every later id. */
    for (uint32_t i = 0; i < n; i++) {
        size_t at = r->at;
        char *s = tr_blob_get_str(r);
        int ok = s && strlen(s) == r->at - at - 4 && tr_strtab_id(&d->strings, s) == i;
        free(s);
        if (!ok)
            goto bad;
    }

    n = tr_blob_get_u32(r);
    if (!fits(r, n, REGION_BYTES))
        goto bad;
    for (uint32_t i = 0; i < n; i++) {
        tr_region_def g;
        g.name = tr_blob_get_u32(r);
        g.canonical = tr_blob_get_u32(r);
        g.description = tr_blob_get_u32(r);
        g.file = tr_blob_get_u32(r);
        g.line = tr_blob_get_u32(r);
        g.role = tr_blob_get_u8(r);
        g.paradigm = tr_blob_get_u8(r);
        uint32_t ns = d->strings.count;
        if (r->bad || g.name >= ns || g.canonical >= ns || g.description >= ns || g.file >= ns)
            goto bad;
        /* A duplicate comes back as the earlier id, out of memory as 0
         * with nothing added. */
        if (tr_defs_region_add(d, &g) != i || d->nregions != i + 1)
            goto bad;
    }

    n = tr_blob_get_u32(r);
    if (!fits(r, n, ATTR_BYTES))
        goto bad;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t name = tr_blob_get_u32(r), description = tr_blob_get_u32(r);
        OTF2_Type type = tr_blob_get_u8(r);
        if (r->bad || name >= d->strings.count || description >= d->strings.count)
            goto bad;
        if (tr_defs_attribute(d, name, description, type) != TR_ATTR_COUNT + i || d->nattrs != i + 1)
            goto bad;
    }
    return 0;
bad:
    tr_defs_free(d);
    return -1;
}

static uint64_t *ids_alloc(uint32_t n) { return malloc((n ? n : 1) * sizeof(uint64_t)); }

static int region_same(const tr_region_def *a, const tr_region_def *b)
{
    return a->name == b->name && a->canonical == b->canonical && a->description == b->description &&
           a->file == b->file && a->line == b->line && a->role == b->role && a->paradigm == b->paradigm;
}

int tr_defs_merge(tr_defs *dst, const tr_defs *src, tr_defs_map *map)
{
    tr_defs_map m = {0};
    /* The string map is needed to translate regions and attributes even
     * when the caller wants no map. */
    m.strings = ids_alloc(src->strings.count);
    if (!m.strings)
        goto oom;
    m.nstrings = src->strings.count;
    for (uint32_t i = 0; i < src->strings.count; i++) {
        uint32_t id = tr_strtab_id(&dst->strings, src->strings.s[i]);
        if (id == UINT32_MAX)
            goto oom;
        m.strings[i] = id;
    }

    if (map) {
        m.regions = ids_alloc(src->nregions);
        m.attrs = ids_alloc(TR_ATTR_COUNT + src->nattrs);
        if (!m.regions || !m.attrs)
            goto oom;
        m.nregions = src->nregions;
        m.nattrs = TR_ATTR_COUNT + src->nattrs;
    }
    for (uint32_t i = 0; i < src->nregions; i++) {
        tr_region_def g = src->regions[i];
        g.name = (uint32_t)m.strings[g.name];
        g.canonical = (uint32_t)m.strings[g.canonical];
        g.description = (uint32_t)m.strings[g.description];
        g.file = (uint32_t)m.strings[g.file];
        uint32_t id = tr_defs_region_add(dst, &g);
        /* 0 is also what out of memory returns: it is an answer only if
         * region 0 is this one. */
        if (id >= dst->nregions || !region_same(&dst->regions[id], &g))
            goto oom;
        if (map)
            m.regions[i] = id;
    }
    for (uint32_t i = 0; map && i < TR_ATTR_COUNT; i++)
        m.attrs[i] = i;
    for (uint32_t i = 0; i < src->nattrs; i++) {
        const tr_attr_def *a = &src->attrs[i];
        uint32_t id = tr_defs_attribute(dst, (uint32_t)m.strings[a->name], (uint32_t)m.strings[a->description],
                                        a->type);
        /* Out of memory gives a fixed id, never a dynamic one. */
        if (id < TR_ATTR_COUNT)
            goto oom;
        if (map)
            m.attrs[TR_ATTR_COUNT + i] = id;
    }

    if (map)
        *map = m;
    else
        free(m.strings);
    return 0;
oom:
    tr_defs_map_free(&m);
    if (map)
        memset(map, 0, sizeof *map);
    return -1;
}

void tr_defs_map_free(tr_defs_map *map)
{
    free(map->strings);
    free(map->regions);
    free(map->attrs);
    memset(map, 0, sizeof *map);
}
