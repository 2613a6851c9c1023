/* test_u64map.c - the writer's hash map against a plain array model, with
 * deletions that force backward shifts across wrapped probe chains. */
#include <stdio.h>
#include <stdlib.h>

#include "common/strtab.h"
#include "common/u64map.h"

#define N 20000

static uint64_t model_val[N + 1];
static int model_has[N + 1];

int main(void)
{
    tr_u64map m = {0};
    int failures = 0;
    srand(12345);
    for (int round = 0; round < 200000; round++) {
        /* Keys collide on purpose: multiples of a power of two. */
        uint64_t k = 1 + (uint64_t)(rand() % N);
        uint64_t key = k << 20;
        int op = rand() % 3;
        if (op < 2) {
            uint64_t v = (uint64_t)rand();
            if (tr_u64map_put(&m, key, v)) {
                puts("FAIL: out of memory");
                return 1;
            }
            model_val[k] = v;
            model_has[k] = 1;
        } else {
            uint64_t got;
            int had = tr_u64map_del(&m, key, &got);
            if (had != model_has[k] || (had && got != model_val[k]))
                failures++;
            model_has[k] = 0;
        }
    }
    size_t count = 0;
    for (int k = 1; k <= N; k++) {
        uint64_t got;
        int has = tr_u64map_get(&m, (uint64_t)k << 20, &got);
        count += model_has[k];
        if (has != model_has[k] || (has && got != model_val[k]))
            failures++;
    }
    if (count != m.count)
        failures++;

    /* reserve: entries stay, and the room reserved takes its keys without
     * another rehash (the slot array stays where it is). */
    if (tr_u64map_reserve(&m, 50000)) {
        puts("FAIL: out of memory");
        return 1;
    }
    const tr_u64slot *slots = m.slots;
    size_t cap = m.cap, before = m.count;
    for (uint64_t k = 1; k <= 50000; k++)
        if (tr_u64map_put(&m, (k << 40) | 7, k))
            failures++;
    if (m.slots != slots || m.cap != cap || m.count != before + 50000) {
        printf("FAIL: reserve(50000) then 50000 puts: cap %zu -> %zu, slots %s\n", cap, m.cap,
               m.slots == slots ? "kept" : "moved");
        failures++;
    }
    for (uint64_t k = 1; k <= 50000; k++) {
        uint64_t got;
        if (!tr_u64map_get(&m, (k << 40) | 7, &got) || got != k)
            failures++;
    }
    for (int k = 1; k <= N; k++) {
        uint64_t got;
        int has = tr_u64map_get(&m, (uint64_t)k << 20, &got);
        if (has != model_has[k] || (has && got != model_val[k]))
            failures++;
    }
    tr_u64map_free(&m);

    tr_strtab t = {0};
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "s%d", i % 1000);
        if (tr_strtab_id(&t, buf) != (uint32_t)(i % 1000))
            failures++;
    }
    if (t.count != 1000)
        failures++;
    tr_strtab_free(&t);

    if (failures) {
        printf("u64map/strtab: %d mismatches against the model\n", failures);
        return 1;
    }
    puts("u64map/strtab: OK");
    return 0;
}
