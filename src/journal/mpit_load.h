/* mpit_load.h - the MPI_T catalogue, registrations and clock pairs of a run,
 * read from the journal's MPIT frames (see journal_format.h). The writer
 * interprets MPI_T records with these alone, so a recovered journal is
 * written exactly like a finished one. */
#ifndef TR_JOURNAL_MPIT_LOAD_H
#define TR_JOURNAL_MPIT_LOAD_H

#include <stdint.h>

typedef struct tr_jmpit_source {
    uint32_t index;
    int ordered, adhoc;
    int64_t ticks_per_second, max_ticks;
    char *name, *desc;
} tr_jmpit_source;

typedef struct tr_jmpit_element {
    int64_t displacement;
    int size, is_signed, is_float, known;
    int slot;          /* first record slot (elements in order, ceil(size / 8) slots each) */
    char *type_name;   /* "int32_t", "MPI_COUNT", ..., "unknown" */
} tr_jmpit_element;

typedef struct tr_jmpit_type {
    uint32_t index;
    int level;         /* 1 user basic .. 9 mpidev all, 0 unknown */
    int bind, nelements, registered, has_enum, nslots;
    char *name, *desc, *bind_name;
    tr_jmpit_element *el;
} tr_jmpit_type;

typedef struct tr_jmpit_reg {
    uint32_t id, type_index;
    int bound, freed;
    uint64_t object;
    char object_name[64];
} tr_jmpit_reg;

typedef struct tr_jmpit_clock {
    uint32_t source;
    int64_t tick;
    uint64_t host_before, host_after; /* ticks until converted, then ns */
} tr_jmpit_clock;

typedef struct tr_jmpit {
    char *status;      /* the last STATUS text, NULL without MPI */
    tr_jmpit_source *sources;
    uint32_t nsources;
    tr_jmpit_type *types;
    uint32_t ntypes;
    tr_jmpit_reg *regs;
    uint32_t nregs;
    tr_jmpit_clock *clocks;
    uint32_t nclocks, capclocks;
} tr_jmpit;

/* Takes one MPIT frame's payload. Returns 0, or -1 when out of memory
 * (a malformed frame is ignored). */
int tr_jmpit_frame(tr_jmpit *m, const unsigned char *p, uint64_t n);
void tr_jmpit_free(tr_jmpit *m);

const tr_jmpit_source *tr_jmpit_find_source(const tr_jmpit *m, uint32_t index);
const tr_jmpit_type *tr_jmpit_find_type(const tr_jmpit *m, uint32_t index);
const tr_jmpit_reg *tr_jmpit_find_reg(const tr_jmpit *m, uint32_t id);

#endif
