/* otf2_wire.h - an OTF2 event with every id resolved (region, string,
 * attribute, window), packed so that a thread other than the model's can
 * write it: the model's thread resolves (the definitions are its own), and
 * whichever thread owns the event's location writes it (otf2_workers.h),
 * or the model's thread itself when the write has no helper. */
#ifndef TR_WRITER_OTF2_WIRE_H
#define TR_WRITER_OTF2_WIRE_H

#include <otf2/otf2.h>
#include <stdint.h>

#include "model/model_event.h"

/* TR_MEV_* kinds, and: */
enum { TR_WIRE_CLOSE = 64 }; /* the location is done: close its writer */

typedef struct tr_wire_ev {
    uint32_t kind;   /* enum tr_mev_kind, or TR_WIRE_CLOSE */
    uint32_t nattrs; /* tr_wire_attr entries right after it */
    uint32_t ref;    /* ENTER, LEAVE: region; METRIC: metric; RMA and WIN: window */
    uint32_t aux;    /* RMA: remote; FORK: team size; PROGRAM_BEGIN: arguments (string refs after the attributes) */
    uint64_t loc;    /* the journal's location */
    uint64_t time;
    uint64_t a, b;   /* RMA: bytes, matching; METRIC: value; PROGRAM_END: status; PROGRAM_BEGIN: name */
} tr_wire_ev;

typedef struct tr_wire_attr {
    uint32_t id;
    uint32_t type;   /* OTF2_Type */
    OTF2_AttributeValue v;
} tr_wire_attr;

/* The bytes of @e with @nattrs attributes and @nargs argument refs. */
static inline size_t tr_wire_size(uint32_t nattrs, uint32_t nargs)
{
    return sizeof(tr_wire_ev) + nattrs * sizeof(tr_wire_attr) + nargs * sizeof(uint32_t);
}

static inline tr_wire_attr *tr_wire_attrs(tr_wire_ev *e) { return (tr_wire_attr *)(void *)(e + 1); }
static inline const tr_wire_attr *tr_wire_attrs_c(const tr_wire_ev *e)
{
    return (const tr_wire_attr *)(const void *)(e + 1);
}
static inline uint32_t *tr_wire_args(tr_wire_ev *e) { return (uint32_t *)(void *)(tr_wire_attrs(e) + e->nattrs); }

/* Writes @e (not a CLOSE) with @ew, its attributes through @al. */
void tr_wire_write(OTF2_EvtWriter *ew, OTF2_AttributeList *al, const tr_wire_ev *e);

#endif
