/* host_events.h - the region stack of one host thread's location.
 *
 * Two writers share it, record by record in time order: otf2_host_events.c
 * (target constructs, data ops, user regions, MPI calls) and
 * otf2_omp_events.c (host OpenMP states), so a target construct inside a
 * parallel region's implicit task nests inside that region. An end closes
 * its own begin and, first, whatever opened inside it never ended (marked
 * incomplete). */
#ifndef TR_WRITER_HOST_EVENTS_H
#define TR_WRITER_HOST_EVENTS_H

#include "writer/writer_internal.h"

typedef struct tr_open_region {
    uint8_t type;    /* enum tr_rec_type of the record that opened it */
    uint8_t kind;    /* TR_REC_OMP: which OpenMP region (otf2_omp_events.c); 0 otherwise */
    uint8_t guessed; /* opened by a repair whose end no record will give (otf2_omp_events.c) */
    int32_t rma_win; /* -1: none */
    uint64_t id;
    uint32_t region;
} tr_open_region;

struct tr_host_ctx;

/* What otf2_omp_events.c keeps per host thread. */
typedef struct tr_omp_thread {
    int worker, alive;         /* an OpenMP worker thread, between its thread begin and end */
    uint64_t acc_time;         /* work and wait are counted up to here */
    uint64_t work, wait;       /* ns: the metrics OMP work and OMP wait */
    tr_u64map clipped;         /* parallel ids whose implicit task closed at its team's end */
    struct tr_host_ctx *dry;   /* machine mode: the user-mode states, not written, for the metrics */
} tr_omp_thread;

typedef struct tr_host_ctx {
    tr_writer *w;
    OTF2_EvtWriter *ew;        /* NULL: nothing is written (machine mode's metrics pass) */
    OTF2_AttributeList *al;
    size_t stream;
    tr_open_region *stack;
    size_t depth, cap;
    uint64_t last_time;        /* of the last record handled */
    uint64_t final_gap;        /* drop mode: start of a loss open until the end; 0 = none */
    tr_omp_thread omp;
    tr_local_allocs allocs;    /* this thread's own live device allocations (model/delete_info.h) */
} tr_host_ctx;

int tr_host_push(tr_host_ctx *c, tr_open_region o);
/* The Leave of @o, which is not (or no longer) on the stack. */
void tr_host_leave(tr_host_ctx *c, const tr_open_region *o, uint64_t t, int incomplete);
/* Closes the innermost open region at @t. */
void tr_host_pop(tr_host_ctx *c, uint64_t t, int incomplete);
/* 1 + the stack index of the innermost (type, kind, id); 0 when not open. */
size_t tr_host_find(const tr_host_ctx *c, uint8_t type, uint8_t kind, uint64_t id);
/* Closes the innermost (type, kind, id) at @t, after what is open inside it
 * (incomplete). Returns 0 when it was not open. */
int tr_host_close(tr_host_ctx *c, uint8_t type, uint8_t kind, uint64_t id, uint64_t t);

/* otf2_omp_events.c: host OpenMP states on a host thread's location, in
 * the mode of the journal. Around every record of the stream (of any type):
 * before, which closes the implicit tasks of teams that have ended and an
 * <OMP-idle> that a region of another kind interrupts; then the record
 * itself when it is a TR_REC_OMP; then after, which opens <OMP-idle>. */
int tr_omp_host_init(tr_host_ctx *c);
void tr_omp_host_before(tr_host_ctx *c, const tr_record *r);
void tr_omp_host_record(tr_host_ctx *c, const tr_record *r);
void tr_omp_host_after(tr_host_ctx *c, const tr_record *r);
/* At the end of the stream, before the regions still open are closed. */
void tr_omp_host_finish(tr_host_ctx *c);
/* After they are: the last Metric events. */
void tr_omp_host_final_metrics(tr_host_ctx *c);
void tr_omp_host_free(tr_host_ctx *c);
/* Counts work and wait up to @t; called before the stack changes. */
/* 1 when @o, still open at the end, is a region of a team the OpenMP
 * runtime forked for itself (libomp's hidden-helper threads wait in it
 * until the process ends): not the program's, written with incomplete = 2. */
int tr_omp_runtime_region(const struct tr_host_ctx *c, const tr_open_region *o);
void tr_omp_account(tr_host_ctx *c, uint64_t t);

#endif
