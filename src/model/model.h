/* model.h - the model layer: one journal's records (journal/journal_load.h)
 * -> what they say across threads, ready to be written in any format.
 *
 * Devices and the host's device number, the data op and kernel ends a
 * cursor cannot see (model_scan.c, model_build.c); the device side in time
 * order: kernels on stream lanes, device memory in use, what each delete
 * freed (device_pass.h, device_stream.h, delete_info.h); declare-target-link
 * mappings (link_model.h); MPI_T events per source on the trace timeline
 * (mpit_model.h); host OpenMP teams and tasks (omp_model.h). It also
 * numbers a journal's locations: host streams first, then each device's
 * lanes, then the MPI_T sources with events.
 *
 * Memory: the model is built in one pass over the records as the journal is
 * decoded (model_scan.c), then one device pass over the streams merged in
 * time order; it holds none of the records. What it keeps grows with what
 * is open at once (target constructs, kernels, live allocations), with the
 * rare far ends and the deletes whose alloc ran on another thread, and with
 * MPI_T events, parallel regions and explicit tasks (their models need
 * every one); with nothing else: not marks, user regions, MPI calls, host
 * OpenMP states, kernels, allocations or deletes.
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
#include "journal/stream_cursor.h"
#include "model/delete_info.h"
#include "model/link_model.h"
#include "model/mpit_model.h"
#include "model/omp_model.h"

typedef struct tr_device {
    int num;
    uint32_t nlanes;         /* stream lanes its kernels need (device_pass.h) */
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

/* What the model keeps of a target construct's begin. */
typedef struct tr_target_info {
    int dev;
    uint64_t codeptr;
} tr_target_info;

/* A data op's end farther than TR_MODEL_DATA_OP_END_NEAR records after its
 * begin: the host writer, which looks only that far ahead, finds it here. */
typedef struct tr_far_end {
    uint64_t pos; /* its index in its stream */
    tr_record rec;
} tr_far_end;

typedef struct tr_stream_far_ends {
    tr_u64map by_id; /* host_op_id -> index in ends of its last far end */
    tr_far_end *ends;
    size_t n, cap;
    tr_u64map submit_end; /* position + 1 of a kernel's begin -> its end (TR_SUBMIT_*), when
                           * that lies more than TR_MODEL_SUBMIT_END_NEAR records later */
} tr_stream_far_ends;

/* How far after a kernel's begin (a TR_REC_SUBMIT) its end is looked for in
 * the stream (the whole of a cursor's lookahead). A kernel ends at the first
 * SUBMIT record with its host_op_id after it: an END (its time), or another
 * BEGIN (the id was reused: zero length); with neither it never ended. */
#define TR_MODEL_SUBMIT_END_NEAR TR_CURSOR_LOOKAHEAD
#define TR_SUBMIT_NEVER_ENDED UINT64_MAX
#define TR_SUBMIT_ZERO_LENGTH (UINT64_MAX - 1)

/* How far after a data op's begin its end is looked for in the stream
 * itself (a cursor's lookahead, stream_cursor.h, reaches that far). */
#define TR_MODEL_DATA_OP_END_NEAR 64

/* The one pass's state while it reads a stream (model_scan.c). */
typedef struct tr_model_scan {
    size_t stream;  /* being read */
    uint64_t pos;   /* index of the next record in it */
    struct {
        uint64_t pos, id;
        int found;
    } pending[TR_MODEL_DATA_OP_END_NEAR + 1]; /* the data op begins of the last NEAR records */
    size_t head, count;
    tr_u64map far_ids;   /* begins whose end was not near: their ids */
    size_t *kept_cap;    /* per stream */
    int *devices;        /* every device number seen */
    int last_device;     /* the last one noted */
    size_t ndevices, capdevices;
    int prev_kept_mpit;  /* the record before was an MPI_T record kept */
    tr_u64map open_submits; /* host_op_id -> position + 1 of a kernel begin not yet ended */
    int any_link;        /* the journal names declare-target-link variables */
} tr_model_scan;

typedef struct tr_model {
    tr_journal_data *jd;   /* the run, as its journal tells it */
    tr_collected data;     /* moved out of jd: one stream per thread, counts only
                            * (read again with tr_journal_stream_open) */
    tr_collected kept;     /* per stream, copies of the records the models read
                            * again after the pass: MPI_T events, and data op
                            * ends when link variables exist (model_scan.c) */
    tr_stream_far_ends *far; /* per stream */
    tr_model_scan scan;
    int beyond_bookkeeping; /* a record beyond the initial thread and task */
    uint8_t *device_records; /* per stream: it holds a record the device pass reads */
    uint64_t t_min, t_max; /* ns */
    int host_device;       /* OpenMP number of the host, -2 when unknown */

    tr_device *devices;    /* by number */
    size_t ndevices;

    tr_delete_info deletes;  /* what each delete freed, where its thread's view is wrong (delete_info.h) */

    uint64_t stray_ends;     /* ends whose begin was never seen (the writer adds its own) */
    uint64_t incomplete;     /* regions that never ended (likewise) */
    uint64_t target_maps;
    tr_link_model links;     /* declare-target-link mappings */
    tr_mpit_model mpit;      /* MPI_T events, one stream per source */
    tr_omp_model omp;        /* host OpenMP states (TR_REC_OMP) */
} tr_model;

/* The model is built in one pass over the journal's records, which it
 * never holds all at once: tr_model_begin, then tr_journal_load_visiting(
 * ..., tr_model_visit, m, ...) into m->jd, then tr_model_build. */
void tr_model_begin(tr_model *m, tr_journal_data *jd);
/* A tr_journal_visit_fn: @m is the tr_model. */
int tr_model_visit(void *m, size_t stream, const tr_record *r);
/* After the last record (tr_model_build calls it). Returns 0, or -1. */
int tr_model_scan_end(tr_model *m);
/* Where the kernel begun at record @begin_pos of @stream ends when that is
 * more than TR_MODEL_SUBMIT_END_NEAR records later: a time,
 * TR_SUBMIT_ZERO_LENGTH, or TR_SUBMIT_NEVER_ENDED (also when it is near). */
uint64_t tr_model_far_submit_end(const tr_model *m, size_t stream, uint64_t begin_pos);
/* Moves the streams out of m->jd (m->data), then builds what needs every
 * stream: devices and their items, labelled through @labels, then the link
 * and MPI_T models. Returns 0, or -1 out of memory. */
int tr_model_build(tr_model *m, const tr_model_labels *labels);
tr_device *tr_model_device(tr_model *m, int num);
/* The devices' numbers, in order (malloc'd; NULL out of memory). */
int *tr_model_device_numbers(const tr_model *m);
/* The end of the data op whose begin is record @pos of @stream when it lies
 * farther than TR_MODEL_DATA_OP_END_NEAR records after it; NULL otherwise. */
const tr_record *tr_model_far_end(const tr_model *m, size_t stream, uint64_t pos, uint64_t id);
/* The end of the data op that record @r (at @pos of @stream, the one @cur
 * yielded last) begins: in @cur's lookahead, else tr_model_far_end. NULL
 * when it has none (or no id). */
const tr_record *tr_model_data_op_end(const tr_model *m, tr_stream_cursor *cur, size_t stream, uint64_t pos,
                                      const tr_record *r);
/* The location of MPI_T source locations' first one: after the host
 * streams and every device's lanes. */
uint64_t tr_model_mpit_first(const tr_model *m);
/* Frees what only the events need (records, items, the sub-models' maps);
 * keeps device numbers and lane counts, the MPI_T sources and statistics. */
void tr_model_release_events(tr_model *m);
/* Frees everything, the journal's data included. */
void tr_model_free(tr_model *m);

#endif
