/* The data mapping patterns (src/model/advice.h) on op sequences whose
 * answer is fixed by hand: each flagged op, and the clean look-alikes that
 * must stay unflagged. */
#include <stdio.h>
#include <string.h>

#include "model/advice.h"

enum { A = TR_ADV_ALLOC, T = TR_ADV_TO, F = TR_ADV_FROM, D = TR_ADV_DELETE, K = TR_ADV_KERNEL };
enum { N_ = TR_ADVICE_NONE, DUP = TR_ADVICE_DUPLICATE_TRANSFER, RT = TR_ADVICE_ROUND_TRIP,
       REP = TR_ADVICE_REPEATED_ALLOCATION, UA = TR_ADVICE_UNUSED_ALLOCATION, UT = TR_ADVICE_UNUSED_TRANSFER };

/* kind, device, hash (0: none); host 0x1000, 4096 bytes, device 0xd000 */
typedef struct { int kind, device; uint64_t hash; int want; } step;

static int failures;

static void run(const char *name, const step *st, size_t n)
{
    tr_advice_op ops[64];
    uint8_t cat[64];
    for (size_t i = 0; i < n; i++)
        ops[i] = (tr_advice_op){.time = 100 * (i + 1), .op_id = i + 1, .kind = st[i].kind,
                                .device = st[i].device, .host = 0x1000, .dev_addr = 0xd000 + st[i].device,
                                .bytes = 4096, .hash = st[i].hash, .has_hash = st[i].hash != 0};
    if (tr_advice_run(ops, n, cat)) {
        printf("FAIL %s: out of memory\n", name);
        failures++;
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (cat[i] != st[i].want) {
            printf("FAIL %s: op %zu: got '%s', want '%s'\n", name, i, tr_advice_name(cat[i]),
                   tr_advice_name(st[i].want));
            failures++;
        }
}

#define RUN(name, ...)                                                                 \
    do {                                                                               \
        const step s_[] = {__VA_ARGS__};                                               \
        run(name, s_, sizeof s_ / sizeof *s_);                                         \
    } while (0)

int main(void)
{
    RUN("clean: map tofrom around a kernel", {A, 0, 0, N_}, {T, 0, 11, N_}, {K, 0, 0, N_},
        {F, 0, 12, N_}, {D, 0, 0, N_});
    RUN("duplicate: update to right after map to", {A, 0, 0, N_}, {T, 0, 11, N_}, {T, 0, 11, DUP},
        {K, 0, 0, N_}, {D, 0, 0, N_});
    RUN("clean: update from, host changes it, update to", {A, 0, 0, N_}, {T, 0, 11, N_}, {K, 0, 0, N_},
        {F, 0, 12, N_}, {T, 0, 13, N_}, {K, 0, 0, N_}, {D, 0, 0, N_});
    RUN("duplicate: copied back unchanged after a kernel, sent again", {A, 0, 0, N_}, {T, 0, 11, N_},
        {K, 0, 0, N_}, {F, 0, 12, N_}, {T, 0, 12, DUP}, {K, 0, 0, N_}, {D, 0, 0, N_});
    RUN("clean: sent again after a kernel, not copied back", {A, 0, 0, N_}, {T, 0, 11, N_}, {K, 0, 0, N_},
        {T, 0, 11, N_}, {K, 0, 0, N_}, {D, 0, 0, N_});
    RUN("round trip and repeated allocation: tofrom per iteration, unchanged between",
        {A, 0, 0, N_}, {T, 0, 11, N_}, {K, 0, 0, N_}, {F, 0, 12, N_}, {D, 0, 0, N_},
        {A, 0, 0, REP}, {T, 0, 12, RT}, {K, 0, 0, N_}, {F, 0, 13, N_}, {D, 0, 0, N_});
    RUN("repeated allocation only: the host changed the data in between",
        {A, 0, 0, N_}, {T, 0, 11, N_}, {K, 0, 0, N_}, {F, 0, 12, N_}, {D, 0, 0, N_},
        {A, 0, 0, REP}, {T, 0, 14, N_}, {K, 0, 0, N_}, {F, 0, 15, N_}, {D, 0, 0, N_});
    RUN("unused allocation: alloc and release around no kernel", {A, 0, 0, UA}, {D, 0, 0, UA});
    RUN("unused outranks repeated", {A, 0, 0, UA}, {D, 0, 0, UA}, {A, 0, 0, UA}, {D, 0, 0, UA});
    RUN("unused transfer: overwritten before a kernel", {A, 0, 0, N_}, {T, 0, 11, UT}, {T, 0, 12, N_},
        {K, 0, 0, N_}, {D, 0, 0, N_});
    RUN("unused transfer and allocation: map to, exit data, no kernel", {A, 0, 0, UA}, {T, 0, 11, UT},
        {D, 0, 0, UA});
    RUN("clean: buffer reused with new contents", {A, 0, 0, N_}, {T, 0, 11, N_}, {K, 0, 0, N_},
        {T, 0, 12, N_}, {K, 0, 0, N_}, {D, 0, 0, N_});
    RUN("a kernel on another device uses nothing here", {A, 0, 0, UA}, {T, 0, 11, UT}, {K, 1, 0, N_},
        {D, 0, 0, UA});
    RUN("no hash: no duplicate claimed; the overwritten copy was unused either way", {A, 0, 0, N_},
        {T, 0, 0, UT}, {T, 0, 0, N_}, {K, 0, 0, N_}, {D, 0, 0, N_});
    RUN("clean transfer: the last update to is read back at the end of target data", {A, 0, 0, N_},
        {T, 0, 11, N_}, {K, 0, 0, N_}, {F, 0, 12, N_}, {T, 0, 13, N_}, {F, 0, 13, N_}, {D, 0, 0, N_});
    RUN("one target data around many kernels", {A, 0, 0, N_}, {T, 0, 11, N_}, {K, 0, 0, N_},
        {K, 0, 0, N_}, {K, 0, 0, N_}, {F, 0, 12, N_}, {D, 0, 0, N_});
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("advice: all cases as expected\n");
    return 0;
}
