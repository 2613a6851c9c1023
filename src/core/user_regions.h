/* user_regions.h - the table of region names registered through
 * include/tracer.h. It lives in core/ so that the producer (api/) fills it
 * and the journal's consumer reads it without either knowing the other.
 * Rare paths only (registration, the consumer's first sight of a handle). */
#ifndef TR_CORE_USER_REGIONS_H
#define TR_CORE_USER_REGIONS_H

#include <stdint.h>

/* The handle (1, 2, ...) of @name; a new name is added and journaled at
 * once (tr_lifecycle_note_user_region), in the order of the handles.
 * 0 when out of memory. Thread-safe. */
uint32_t tr_user_region_add(const char *name);

/* Name of handle @id (its top bit, TRACER_REGIONS' off mark, ignored), or
 * NULL when unknown. The text stays valid for the process's life. */
const char *tr_user_region_name(uint32_t id);

#endif
