/* Issue 34, item 1: a record's code address after an unload, as the
 * journal's reader keys it (journal/code_spans.h). Two libraries in turn
 * at [0x7000, 0x8000), a third object at [0x9000, 0xa000) never unloaded:
 * each record must get the key of the span its time falls in, at the
 * unload's own tick and around it; an address no unload freed, a record
 * before any unload and a field that holds no code address stay as they
 * are; a span with no SYMBOL gets an unnamed key, never another span's. */
#include <stdio.h>
#include <string.h>

#include "journal/code_spans.h"

static int failures;

static void check(const char *name, int ok, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", name, detail && !ok ? ": " : "", detail && !ok ? detail : "");
    if (!ok)
        failures++;
}

static uint64_t keyed(const tr_code_spans *s, uint8_t type, uint16_t sub, uint64_t time, uint64_t codeptr)
{
    tr_record r = {.time = time, .type = type, .phase = TR_PHASE_BEGIN, .sub = sub};
    int slot = type == TR_REC_SUBMIT ? 1 : 0;
    r.u[slot] = codeptr;
    tr_code_spans_rekey(s, &r);
    return r.u[slot];
}

static void expect(const tr_code_spans *s, const char *name, uint8_t type, uint16_t sub, uint64_t time,
                   uint64_t codeptr, uint64_t want)
{
    uint64_t got = keyed(s, type, sub, time, codeptr);
    char detail[96];
    snprintf(detail, sizeof detail, "got %#llx, want %#llx", (unsigned long long)got, (unsigned long long)want);
    check(name, got == want, detail);
}

int main(void)
{
    tr_code_spans s = {0};
    const uint64_t X = 0x7123, Y = 0x9123, T1 = 1000, T2 = 2000;
    /* Out of order, as a damaged or spliced journal could hold them. */
    tr_journal_unload second = {T2, 0x7000, 0x8000}, first = {T1, 0x7000, 0x8000}, empty = {T1, 5, 5};
    check("unloads added", !tr_code_spans_add_unload(&s, &second) && !tr_code_spans_add_unload(&s, &first) &&
                               !tr_code_spans_add_unload(&s, &empty), 0);
    check("the symbol of X after T1 added", !tr_code_spans_add_symbol(&s, X, T1, 7), 0);
    check("a second symbol of the same span ignored", !tr_code_spans_add_symbol(&s, X, T1, 9), 0);
    check("(X, T1) named", tr_code_spans_named(&s, X, T1), 0);
    check("(X, T2) not named", !tr_code_spans_named(&s, X, T2), 0);
    tr_code_spans_finish(&s);
    check("an empty range is no unload", s.nunloads == 2, 0);

    expect(&s, "before any unload: the address itself", TR_REC_TARGET, 0, T1 - 1, X, X);
    expect(&s, "at T1 itself: still the first library's", TR_REC_TARGET, 0, T1, X, X);
    expect(&s, "after T1: the second span's symbol", TR_REC_TARGET, 0, T1 + 1, X, TR_CODE_KEY_NAMED | 7);
    expect(&s, "the kernel submit (u1) too", TR_REC_SUBMIT, 0, T2 - 1, X, TR_CODE_KEY_NAMED | 7);
    expect(&s, "a host construct too", TR_REC_OMP, TR_OMP_PARALLEL, T1 + 5, X, TR_CODE_KEY_NAMED | 7);
    expect(&s, "after T2, no symbol: unnamed, not the second's", TR_REC_TARGET, 0, T2 + 1, X,
           TR_CODE_KEY_UNNAMED | X);
    expect(&s, "an address no unload freed stays", TR_REC_TARGET, 0, T2 + 1, Y, Y);
    expect(&s, "a task id (task_schedule u0) stays", TR_REC_OMP, TR_OMP_TASK_SCHEDULE, T2 + 1, X, X);
    expect(&s, "a data op's field stays", TR_REC_DATA_OP, 0, T2 + 1, X, X);
    expect(&s, "no address (0) stays 0", TR_REC_TARGET, 0, T2 + 1, 0, 0);

    tr_code_spans none = {0};
    tr_code_spans_finish(&none);
    expect(&none, "a journal without unloads reads as before", TR_REC_TARGET, 0, T2 + 1, X, X);
    tr_code_spans_free(&s);
    tr_code_spans_free(&none);
    printf("%s\n", failures ? "FAILED" : "all ok");
    return failures ? 1 : 0;
}
