/* code_spans.h - a record's code address, named after the code that was
 * there at the record's time (core/unload.h: spans).
 *
 * When the program unloads a library, the next one is often mapped at the
 * same addresses. The journal holds the unloads (UNLOAD frames) and one
 * SYMBOL per address and span (the header's seq: the span's start). As a
 * record is decoded (stream_cursor.c), a code address that some earlier
 * unload freed is replaced by a key of its own for that span, which
 * tr_journal_find_symbol names and tr_journal_code_address turns back into
 * the address. Addresses no unload freed stay as they are, and a journal
 * without unloads reads as it always did.
 *
 * Keys: bit 52 set, the index of the span's symbol in tr_journal_data's
 * symbols; bit 51 set, the address of a span without a symbol (unnamed).
 * Code addresses lie below 2^47 (user space): a key fits the model's
 * region keys (codeptr << 5 within 58 bits). */
#ifndef TR_JOURNAL_CODE_SPANS_H
#define TR_JOURNAL_CODE_SPANS_H

#include <stdint.h>

#include "common/u64map.h"
#include "core/record.h"
#include "journal/journal_format.h"

#define TR_CODE_KEY_NAMED (1ull << 52)
#define TR_CODE_KEY_UNNAMED (1ull << 51)

typedef struct tr_code_span_key {
    uint64_t since, key;
    uint32_t next; /* the next span of the same address: index + 1, 0 = none */
} tr_code_span_key;

typedef struct tr_code_spans {
    tr_journal_unload *unloads; /* by tick after tr_code_spans_finish */
    uint32_t nunloads, capunloads;
    tr_code_span_key *keys;
    uint32_t nkeys, capkeys;
    tr_u64map first; /* address -> index + 1 of its first span key */
    uint64_t lo, hi; /* every unload's range lies in [lo, hi) (after finish) */
} tr_code_spans;

/* An UNLOAD frame. Returns 0, or -1 (out of memory). */
int tr_code_spans_add_unload(tr_code_spans *s, const tr_journal_unload *u);
/* Whether (@codeptr, @since) has a key already. */
int tr_code_spans_named(const tr_code_spans *s, uint64_t codeptr, uint64_t since);
/* The SYMBOL of (@codeptr, @since != 0) is the journal's symbol @index.
 * Returns 0, or -1 (out of memory). */
int tr_code_spans_add_symbol(tr_code_spans *s, uint64_t codeptr, uint64_t since, uint32_t index);
/* Every frame read: ready to rekey. */
void tr_code_spans_finish(tr_code_spans *s);
/* @r (its time still in ticks): its code address, if any, as its span's key. */
void tr_code_spans_rekey(const tr_code_spans *s, tr_record *r);
void tr_code_spans_free(tr_code_spans *s);

/* The u[] slot of @r that holds a code address the journal names, or -1. */
static inline int tr_record_code_slot(const tr_record *r)
{
    switch (r->type) {
    case TR_REC_TARGET: return 0;
    case TR_REC_SUBMIT: return 1;
    case TR_REC_OMP: return r->sub == TR_OMP_TASK_SCHEDULE ? -1 : 0; /* there: a task id */
    default: return -1;
    }
}

#endif
