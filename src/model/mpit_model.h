/* mpit_model.h - MPI_T events, from the threads that received them to one
 * stream per MPI_T source: every source is its own clock domain, mapped
 * onto the trace timeline by a fit of its clock pairs (offset and rate,
 * unwrapping at max_ticks), checked for order when the source is ordered,
 * and sorted. docs/trace-model.md says how the result appears in OTF2. */
#ifndef TR_MODEL_MPIT_MODEL_H
#define TR_MODEL_MPIT_MODEL_H

#include <stdint.h>

#include "core/record.h"
#include "journal/collect.h"
#include "journal/journal_load.h"
#include "journal/mpit_load.h"

typedef struct tr_mpit_item {
    uint64_t time;          /* ns on the trace timeline */
    uint64_t callback_ns;   /* when the callback ran */
    const tr_record *rec;   /* TR_REC_MPIT or TR_REC_MPIT_DROP */
    const tr_record *more;  /* its continuation records, or NULL */
    uint32_t nmore;
    uint8_t violation;      /* ordered source: a tick lower than the one before */
} tr_mpit_item;

typedef struct tr_mpit_loc {
    const tr_jmpit_source *src; /* NULL: events whose source was not reported */
    tr_mpit_item *items;
    size_t n, cap;
    int mapped;                 /* 1: source clock fitted; 0: host time at callback */
    long double offset, rate;   /* ns = offset + rate * unwrapped tick */
    uint32_t npairs;
    uint64_t wraps;
    double max_residual_ns;
    uint64_t events, dropped, violations;
    uint64_t location;          /* OTF2 location id; only a source with events has one */
    int has_location;
} tr_mpit_loc;

typedef struct tr_mpit_model {
    tr_mpit_loc *locs;
    uint32_t nlocs;
    uint32_t nlocated;          /* sources with a location (and events) */
} tr_mpit_model;

/* @m from @jd's MPI_T catalogue and the MPI_T records of @data's streams;
 * its locations numbered from @first_location; widens [*t_min, *t_max] to
 * its events. Leaves @m empty (locs NULL) when the run had no MPI_T.
 * Returns 0, or -1 out of memory. Part of the model layer: no OTF2. */
int tr_mpit_model_build(tr_mpit_model *m, const tr_journal_data *jd, const tr_collected *data, uint64_t first_location,
                        uint64_t *t_min, uint64_t *t_max);
void tr_mpit_model_free(tr_mpit_model *m);

#endif
