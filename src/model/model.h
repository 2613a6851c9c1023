/* model.h - the model layer: one journal's records (journal/journal_load.h)
 * -> what they say across threads, ready to be written in any format.
 *
 * Devices, the host's device number, the target constructs by id, the
 * device memory in use over time, every kernel placed on a stream lane
 * (model.c); declare-target-link mappings (link_model.h); MPI_T events per
 * source on the trace timeline (mpit_model.h); host OpenMP teams and tasks
 * (omp_model.h). It also numbers a journal's locations: host streams first,
 * then each device's lanes, then the MPI_T sources with events.
 *
 * Includes no OTF2 header: the OTF2 layer (src/writer/) includes this one,
 * never the reverse. Whatever the model must label for the writer (the
 * region of a kernel or a device event) it asks for through
 * tr_model_labels, so the writer's definitions keep their order. */
#ifndef TR_MODEL_MODEL_H
#define TR_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"
#include "core/record.h"
#include "journal/collect.h"
#include "journal/journal_load.h"
#include "model/link_model.h"
#include "model/mpit_model.h"
#include "model/omp_model.h"

/* Something drawn on a device stream: a kernel, or a zero-length device event. */
typedef struct tr_dev_item {
    uint64_t start, end;
    uint32_t region; /* the label tr_model_labels gave it */
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

/* How the model labels a device item: called in record order, stream by
 * stream, as the items are found (the writer defines its regions on first
 * use, so the order of these calls is the order of its definitions). */
typedef struct tr_model_labels {
    uint32_t (*kernel)(void *ctx, uint64_t target_codeptr);
    uint32_t (*device_event)(void *ctx, uint8_t rec_type);
    void *ctx;
} tr_model_labels;

typedef struct tr_model {
    tr_journal_data *jd;   /* the run, as its journal tells it */
    tr_collected data;     /* moved out of jd: one stream per thread */
    uint64_t t_min, t_max; /* ns */
    int host_device;       /* OpenMP number of the host, -2 when unknown */

    tr_device *devices;    /* by number */
    size_t ndevices;

    tr_u64map targets;       /* target_id -> index of its begin record, see target_rec */
    const tr_record **target_rec;
    size_t ntarget_rec, captarget_rec;
    tr_u64map delete_bytes;  /* host_op_id of a delete -> bytes of its alloc */
    tr_u64map delete_host;   /* host_op_id of a delete -> host address its alloc mapped */

    uint64_t stray_ends;     /* ends whose begin was never seen (the writer adds its own) */
    uint64_t incomplete;     /* regions that never ended (likewise) */
    uint64_t target_maps;
    tr_link_model links;     /* declare-target-link mappings */
    tr_mpit_model mpit;      /* MPI_T events, one stream per source */
    tr_omp_model omp;        /* host OpenMP states (TR_REC_OMP) */
} tr_model;

/* Builds the whole model of m->jd's streams (m->data, with t_min and t_max
 * preset: t_max the run's end): devices and their items, labelled through
 * @labels, then the link, MPI_T and OpenMP models. Returns 0, or -1 out of
 * memory. */
int tr_model_build(tr_model *m, const tr_model_labels *labels);
tr_device *tr_model_device(tr_model *m, int num);
const tr_record *tr_model_target(tr_model *m, uint64_t target_id);
/* The location of MPI_T source locations' first one: after the host
 * streams and every device's lanes. */
uint64_t tr_model_mpit_first(const tr_model *m);
/* Frees what only the events need (records, items, the sub-models' maps);
 * keeps device numbers and lane counts, the MPI_T sources and statistics. */
void tr_model_release_events(tr_model *m);
/* Frees everything, the journal's data included. */
void tr_model_free(tr_model *m);

#endif
