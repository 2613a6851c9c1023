/* writer_internal.h - state shared by the writer's passes:
 * analysis (writer_model.c) -> definitions (otf2_defs.c) -> events
 * (otf2_host_events.c, otf2_device_events.c), driven by writer.c. */
#ifndef TR_WRITER_INTERNAL_H
#define TR_WRITER_INTERNAL_H

#include <otf2/otf2.h>
#include <stdint.h>

#include "writer/collect.h"
#include "writer/journal_load.h"
#include "writer/link_model.h"
#include "writer/mpit_model.h"
#include "writer/strtab.h"
#include "writer/u64map.h"

enum tr_attr {
    TR_ATTR_DEVICE,
    TR_ATTR_TARGET_ID,
    TR_ATTR_HOST_OP_ID,
    TR_ATTR_CODEPTR,
    TR_ATTR_OPTYPE,
    TR_ATTR_SRC_ADDR,
    TR_ATTR_SRC_DEVICE,
    TR_ATTR_DST_ADDR,
    TR_ATTR_DST_DEVICE,
    TR_ATTR_BYTES,
    TR_ATTR_TEAMS,
    TR_ATTR_MODULE_ID,
    TR_ATTR_HOST_ADDR,
    TR_ATTR_DEVICE_ADDR,
    TR_ATTR_FILE,
    TR_ATTR_DEVICE_TYPE,
    TR_ATTR_INCOMPLETE,
    TR_ATTR_VALUE,
    TR_ATTR_LOST,
    TR_ATTR_VARIABLE,
    TR_ATTR_REF_PTR,
    TR_ATTR_REF_PTR_WRITTEN,
    TR_ATTR_PARTIAL,
    TR_ATTR_REF_VALUE,
    TR_ATTR_MPIT_TICK,
    TR_ATTR_MPIT_TIME_BASE,
    TR_ATTR_MPIT_CALLBACK_TIME,
    TR_ATTR_MPIT_REGISTRATION,
    TR_ATTR_MPIT_OBJECT,
    TR_ATTR_MPIT_ORDER_VIOLATION,
    TR_ATTR_MPIT_DROPPED,
    TR_ATTR_MPIT_EVENT_TYPE,
    TR_ATTR_MPIT_READ_FAILED,
    TR_ATTR_COUNT
};

/* Something drawn on a device stream: a kernel, or a zero-length device event. */
typedef struct tr_dev_item {
    uint64_t start, end;
    uint32_t region;
    uint8_t incomplete, is_point;
    uint32_t lane;
    const tr_record *rec; /* the begin (or point) record */
} tr_dev_item;

typedef struct tr_dev_metric {
    uint64_t time, value;
} tr_dev_metric;

typedef struct tr_device {
    int num;
    tr_dev_item *items;
    size_t nitems, capitems;
    tr_dev_metric *metrics;
    size_t nmetrics, capmetrics;
    uint32_t nlanes;
    uint64_t first_location; /* location id of lane 0 */
    const char *type;        /* from device_initialize */
} tr_device;

typedef struct tr_region_def {
    uint32_t name, canonical, description, file;
    uint32_t line;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
} tr_region_def;

typedef struct tr_writer {
    tr_journal_data *jd;   /* the run, as its journal tells it */
    tr_collected data;     /* moved out of jd: one stream per thread */
    uint64_t t_min, t_max; /* ns */
    int host_device;       /* OpenMP number of the host, -2 when unknown */

    tr_device *devices;
    size_t ndevices;

    tr_u64map targets;       /* target_id -> index of its begin record, see target_rec */
    const tr_record **target_rec;
    size_t ntarget_rec, captarget_rec;
    tr_u64map delete_bytes;  /* host_op_id of a delete -> bytes of its alloc */
    tr_u64map delete_host;   /* host_op_id of a delete -> host address its alloc mapped */

    tr_strtab strings;
    tr_region_def *regions;
    uint32_t nregions, capregions;
    tr_u64map region_keys;   /* region key -> region id + 1 */

    uint64_t stray_ends;     /* ends whose begin was never seen */
    uint64_t incomplete;
    uint64_t target_maps;
    uint64_t lost;           /* events dropped in drop mode */
    tr_link_model links;     /* declare-target-link mappings */
    tr_mpit_model mpit;      /* MPI_T events, one stream per source */
} tr_writer;

/* writer_model.c */
int tr_model_build(tr_writer *w);
tr_device *tr_model_device(tr_writer *w, int num);
const tr_record *tr_model_target(tr_writer *w, uint64_t target_id);

/* otf2_defs.c */
uint32_t tr_defs_string(tr_writer *w, const char *s);
uint32_t tr_defs_region_target(tr_writer *w, uint16_t kind, uint64_t codeptr);
uint32_t tr_defs_region_data_op(tr_writer *w, uint16_t optype);
uint32_t tr_defs_region_kernel(tr_writer *w, uint64_t target_codeptr);
uint32_t tr_defs_region_device_event(tr_writer *w, uint8_t rec_type);
uint32_t tr_defs_region_user(tr_writer *w, uint32_t id, int mark);
/* "link map", "link unmap" or "stale link pointer". */
uint32_t tr_defs_region_link(tr_writer *w, const char *canonical);
/* Adds a STRING attribute. */
void tr_defs_attr_string(tr_writer *w, OTF2_AttributeList *al, enum tr_attr a, const char *s);
void tr_defs_write_global(tr_writer *w, OTF2_GlobalDefWriter *gw, const uint64_t *events_per_location,
                          uint64_t nlocations, const char *hostname);
OTF2_Type tr_defs_attr_type(enum tr_attr a);
/* Adds attribute @a with value @v, converted to the attribute's type. */
void tr_defs_attr(OTF2_AttributeList *al, enum tr_attr a, uint64_t v);

/* mpit_model.c: after tr_model_build (extends t_min / t_max). */
int tr_mpit_model_build(tr_writer *w, uint64_t first_location);
/* TRACER::MPIT::* archive properties. */
void tr_mpit_properties(tr_writer *w, OTF2_Archive *ar);

/* otf2_mpit.c */
int tr_events_write_mpit(tr_writer *w, OTF2_Archive *ar, uint32_t loc, uint64_t *nevents);
uint32_t tr_defs_region_mpi_call(tr_writer *w, uint64_t call);
/* The MPI_T locations, element attributes and the drop metric. */
enum { TR_MPIT_DEFS_LOCATIONS = 1, TR_MPIT_DEFS_REST = 2 };
void tr_defs_write_mpit(tr_writer *w, OTF2_GlobalDefWriter *gw, int part, const uint64_t *events_per_location);

/* Location ids: host streams 0..nstreams-1, then each device's lanes. */
static inline uint64_t tr_host_location(const tr_writer *w, size_t stream) { (void)w; return stream; }

/* otf2_host_events.c / otf2_device_events.c */
int tr_events_write_host(tr_writer *w, OTF2_Archive *ar, size_t stream, uint64_t *nevents);
int tr_events_write_device(tr_writer *w, OTF2_Archive *ar, size_t device, uint32_t lane, uint64_t *nevents);

/* Data op classification shared by the passes. */
int tr_optype_is_to_device(uint16_t optype);
int tr_optype_is_from_device(uint16_t optype);
int tr_optype_is_alloc(uint16_t optype);
int tr_optype_is_delete(uint16_t optype);

#endif
