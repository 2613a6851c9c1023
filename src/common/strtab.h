/* strtab.h - interned strings, numbered in order of first use as OTF2 string
 * references. Generic: any folder may include it (src/common/ depends on
 * nothing but libc). */
#ifndef TR_COMMON_STRTAB_H
#define TR_COMMON_STRTAB_H

#include <stdint.h>

#include "common/u64map.h"

typedef struct tr_strtab {
    char **s;
    uint32_t count, cap;
    tr_u64map index; /* hash(string) -> id + 1 chain head; collisions checked */
} tr_strtab;

/* Returns the id of @s (interning a copy), or UINT32_MAX when out of memory. */
uint32_t tr_strtab_id(tr_strtab *t, const char *s);
void tr_strtab_free(tr_strtab *t);

#endif
