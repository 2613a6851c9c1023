/* tracer_api.c - include/tracer.h: user regions and marks. */
#include "tracer.h"

#include <stdint.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/lifecycle.h"
#include "core/user_regions.h"

#define TR_STR2(x) #x
#define TR_STR(x) TR_STR2(x)

/* Handle bit of regions that TRACER_REGIONS filters out. */
#define TR_REGION_OFF 0x80000000u

__attribute__((visibility("default"))) tracer_region_t tracer_region_register(const char *name)
{
    if (!name)
        return 0;
    /* The handle is valid whether or not tracing runs: a program must not
     * behave differently because its trace could not be written. */
    tr_lifecycle_activate("api");
    tracer_region_t id = tr_user_region_add(name);
    /* TRACER_REGIONS is decided here, once per name: a filtered region gets
     * a handle marked off, which the hot path tests with one branch. */
    if (id && !tr_globs_match(&tr_cfg.regions, name))
        id |= TR_REGION_OFF;
    return id;
}

static inline int record(uint8_t type, uint8_t phase, tracer_region_t region, uint64_t value)
{
    if (__builtin_expect(region - 1 >= TR_REGION_OFF - 1, 0))
        return region ? 0 : -1; /* 0: never valid; off: filtered by TRACER_REGIONS */
    /* Reserve first: with tracing off the call then costs a branch, not a
     * clock read. */
    tr_record *r = tr_buf_reserve();
    if (!r)
        return tr_lifecycle_active() ? -1 : 0; /* -1: lost in a traced run; 0: tracing is off */
    r->time = tr_clock_ticks();
    r->type = type;
    r->phase = phase;
    r->sub = 0;
    r->dev = 0;
    r->dev2 = 0;
    r->aux = 0;
    r->id = region;
    r->u[0] = value;
    r->u[1] = r->u[2] = r->u[3] = 0; /* not left to a recycled chunk's old bytes */
    tr_buf_commit();
    return 0;
}

__attribute__((visibility("default"))) int tracer_region_begin(tracer_region_t region)
{
    return record(TR_REC_USER_REGION, TR_PHASE_BEGIN, region, 0);
}

__attribute__((visibility("default"))) int tracer_region_end(tracer_region_t region)
{
    return record(TR_REC_USER_REGION, TR_PHASE_END, region, 0);
}

__attribute__((visibility("default"))) int tracer_mark(tracer_region_t region, uint64_t value)
{
    return record(TR_REC_USER_MARK, TR_PHASE_POINT, region, value);
}

__attribute__((visibility("default"))) const char *tracer_version_string(void)
{
    return TR_STR(TRACER_VERSION_MAJOR) "." TR_STR(TRACER_VERSION_MINOR) "." TR_STR(TRACER_VERSION_PATCH);
}
