/* user_regions.h - the table of names registered through include/tracer.h,
 * read by the writer at the end. */
#ifndef TR_API_USER_REGIONS_H
#define TR_API_USER_REGIONS_H

#include <stdint.h>

/* Name of handle @id, or NULL when unknown. */
const char *tr_user_region_name(uint32_t id);

#endif
