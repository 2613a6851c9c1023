/* defs_codec.h - the definitions of one rank (strings, regions, attributes:
 * tr_defs) sent to another rank and unified there.
 *
 * Unifying is merging by content: a string, a region or an attribute equal
 * to one already in the destination is that one; anything else is appended.
 * Merging rank after rank (or subtree after subtree, in a reduction tree)
 * therefore gives one table with no duplicates and every id consistent, and
 * merging a rank's own table into the final one is a pure lookup that gives
 * its local -> global id maps (the OTF2 mapping tables). */
#ifndef TR_WRITER_DEFS_CODEC_H
#define TR_WRITER_DEFS_CODEC_H

#include "common/blob.h"
#include "writer/writer_internal.h"

/* Appends @d to @b. */
void tr_defs_pack(const tr_defs *d, tr_blob *b);
/* Reads what tr_defs_pack wrote into @d (initialised by content). Returns
 * 0, or -1 on a malformed blob or out of memory (@d is then freed). */
int tr_defs_unpack(tr_blob_reader *r, tr_defs *d);

/* The ids of one table's definitions in another. */
typedef struct tr_defs_map {
    uint64_t *strings;  /* [src string id] -> id in dst */
    uint32_t nstrings;
    uint64_t *regions;  /* [src region id] -> id in dst */
    uint32_t nregions;
    uint64_t *attrs;    /* [attribute id, fixed ones included] -> id in dst */
    uint32_t nattrs;    /* TR_ATTR_COUNT + src->nattrs */
} tr_defs_map;

/* Merges @src into @dst (which must be by content), filling @map when it
 * is not NULL. Returns 0, or -1 out of memory. */
int tr_defs_merge(tr_defs *dst, const tr_defs *src, tr_defs_map *map);
void tr_defs_map_free(tr_defs_map *map);

#endif
