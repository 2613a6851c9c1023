/* mpit_note.h - what the MPI_T producer (mpit/) tells the journal about
 * MPI_T: the library's status, its event sources and types, registrations
 * and clock pairs. Plain data, with no MPI type and no journal format: the
 * producer fills a note and hands it to tr_lifecycle_note_mpit
 * (core/lifecycle.h); the composition root (session/) has journal/ encode it
 * (journal/journal_frames.h) as an MPIT frame. Texts are borrowed for the
 * call only. Included by mpit/, core/lifecycle.h and journal/. */
#ifndef TR_CORE_MPIT_NOTE_H
#define TR_CORE_MPIT_NOTE_H

#include <stdint.h>

enum tr_mpit_note_kind {
    TR_MPIT_NOTE_STATUS = 1, /* text: what MPI_T offered */
    TR_MPIT_NOTE_SOURCE,     /* source */
    TR_MPIT_NOTE_TYPE,       /* type, with its elements */
    TR_MPIT_NOTE_REG,        /* reg: a registration (callback) made */
    TR_MPIT_NOTE_CLOCK,      /* clock: a source tick between two host ticks */
    TR_MPIT_NOTE_UNREG,      /* reg: a registration freed (its object was) */
};

typedef struct tr_mpit_note_element {
    int64_t displacement;
    int32_t size, is_signed, is_float, known;
    const char *type_name;
} tr_mpit_note_element;

typedef struct tr_mpit_note {
    enum tr_mpit_note_kind kind;
    const char *text;
    struct {
        uint32_t index;
        int32_t ordered, adhoc_timestamps;
        int64_t ticks_per_second, max_ticks;
        const char *name, *desc;
    } source;
    struct {
        uint32_t index;
        int32_t verbosity_level, bind, nelements, registered, has_enum;
        const char *name, *desc, *bind_name;
        const tr_mpit_note_element *elements; /* nelements of them */
    } type;
    struct {
        uint32_t id, type_index;
        int32_t bound;
        uint64_t object;
        const char *object_name;
    } reg;
    struct {
        uint32_t source;
        int64_t source_tick;
        uint64_t host_before, host_after;
    } clock;
} tr_mpit_note;

#endif
