/* host_stack.h - one host thread's location while the model's pass reads
 * it: the regions open on it (a stack), the events they make, and the
 * time the thread spent working and waiting in OpenMP.
 *
 * The parts that take a host thread's records share the stack, record by
 * record in time order: host_thread.c (target constructs, data ops, user
 * regions and marks, MPI calls, gaps, link mappings) and omp_states.c (host
 * OpenMP states), so a target construct inside a parallel region's
 * implicit task nests inside that region. An end closes its own begin and,
 * first, whatever opened inside it never ended (marked incomplete).
 *
 * Attributes wait for the next event that takes them, as an OTF2 attribute
 * list does: Enter and Leave take them, the other events do not. Internal
 * to src/model/. */
#ifndef TR_MODEL_HOST_STACK_H
#define TR_MODEL_HOST_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64map.h"
#include "core/record.h"
#include "model/pass_context.h"

/* What time in a region counts as (the metrics OMP work and OMP wait): the
 * innermost classified region open decides. */
enum tr_region_class { TR_CLASS_NONE, TR_CLASS_WORK, TR_CLASS_WAIT };

typedef struct tr_open_region {
    uint8_t type;    /* enum tr_rec_type of the record that opened it */
    uint8_t kind;    /* TR_REC_OMP: which OpenMP region (omp_states.c); 0 otherwise */
    uint8_t guessed; /* opened by a repair whose end no record will give (omp_states.c) */
    uint8_t cls;     /* enum tr_region_class */
    uint8_t runtime; /* a region of a team the OpenMP runtime forked for itself (omp_states.c) */
    int32_t window;  /* the device (index) of its transfer's RMA window; -1: none */
    uint64_t id;
    uint64_t region; /* tr_region_key_make */
} tr_open_region;

/* What omp_states.c keeps per host thread. */
typedef struct tr_omp_thread {
    int worker, alive;         /* an OpenMP worker thread, between its thread begin and end */
    uint64_t acc_time;         /* work and wait are counted up to here */
    uint64_t work, wait;       /* ns: the metrics OMP work and OMP wait */
    tr_u64map clipped;         /* parallel ids whose implicit task closed at its team's end */
    struct tr_host *dry;       /* machine mode: the user-mode states, not written, for the metrics */
} tr_omp_thread;

typedef struct tr_host {
    tr_pass_ctx *p;
    size_t stream;             /* its thread's stream */
    uint32_t loc;              /* its location (host_slots.h), taken at its first event; TR_HOST_NO_SLOT */
    int tid_due;               /* its first Enter on that location is still to come: it carries the tid */
    uint64_t emit_time;        /* of its latest event written */
    int emits;                 /* 0: a stack that writes nothing (machine mode's metrics) */
    tr_open_region *stack;
    size_t depth, cap;
    size_t omp_open;           /* regions of TR_REC_OMP on the stack (omp_states.c has work only then) */
    uint64_t last_time;        /* of the last record handled */
    uint64_t final_gap;        /* drop mode: start of a loss open until the end; 0 = none */
    tr_omp_thread omp;
    tr_mattrs attrs;           /* waiting for the event that takes them */
} tr_host;

/* The thread's location for an event at @t: taken (the lowest free one
 * whose last event is not after @t) at its first event;
 * the thread's first Enter there then carries its OS tid (TR_ATTR_THREAD),
 * so each thread's span on a shared location stays known. */
uint32_t tr_host_loc(tr_host *h, uint64_t t);

/* Attributes for the next Enter or Leave (nothing when !h->emits). */
void tr_host_attr(tr_host *h, enum tr_attr a, uint64_t v);
void tr_host_text(tr_host *h, enum tr_attr a, const char *s);
/* An Enter at @t of @region, with the waiting attributes. */
void tr_host_enter(tr_host *h, uint64_t t, uint64_t region);
/* An event that takes no attributes: @e's kind and fields, its location
 * and time set here. */
void tr_host_emit(tr_host *h, tr_mev *e, uint64_t t);
/* Metric @metric = @value at @t. */
void tr_host_metric(tr_host *h, uint64_t t, uint32_t metric, uint64_t value);

int tr_host_push(tr_host *h, tr_open_region o);
/* The Leave of @o, which is not (or no longer) on the stack. */
void tr_host_leave(tr_host *h, const tr_open_region *o, uint64_t t, int incomplete);
/* Closes the innermost open region at @t. */
void tr_host_pop(tr_host *h, uint64_t t, int incomplete);
/* 1 + the stack index of the innermost (type, kind, id); 0 when not open. */
size_t tr_host_find(const tr_host *h, uint8_t type, uint8_t kind, uint64_t id);
/* Closes the innermost (type, kind, id) at @t, after what is open inside it
 * (incomplete). Returns 0 when it was not open. */
int tr_host_close(tr_host *h, uint8_t type, uint8_t kind, uint64_t id, uint64_t t);
/* Counts work and wait up to @t; called before the stack changes. */
void tr_host_account(tr_host *h, uint64_t t);
void tr_host_stack_free(tr_host *h);

#endif
