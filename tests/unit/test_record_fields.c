/* Every field of every record a producer writes is its own (issue 18, B4).
 *
 * A chunk comes back from the pool with the records of its previous use in
 * it, and the journal takes whole records: a field a producer leaves unset
 * carries stale bytes into the trace. Here the slots a producer is about to
 * fill are poisoned first (as a recycled chunk's are), then the producers
 * under test write into them: an MPI_T event whose payload needs two
 * continuation records (TR_REC_MPIT_MORE), and user region begin/end/mark
 * records. Each field that record.h does not give a meaning for that record
 * type must be 0, never the poison. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "mpit/mpit_internal.h"
#include "tracer.h"

/* What tracer_api.c (and core/user_regions.c) need from the life cycle:
 * the test drives the buffer directly, with no session. */
int tr_lifecycle_activate(const char *why) { (void)why; return 1; }
int tr_lifecycle_active(void) { return 1; }
void tr_lifecycle_note_user_region(uint32_t id, const char *name) { (void)id, (void)name; }

#define POISON 0xa5

static int fake_timestamp(MPI_T_event_instance ev, MPI_Count *t) { (void)ev; *t = 1234; return MPI_SUCCESS; }
static int fake_source(MPI_T_event_instance ev, int *s) { (void)ev; *s = 3; return MPI_SUCCESS; }
static int fake_read(MPI_T_event_instance ev, int e, void *out)
{
    (void)ev;
    uint64_t v = 100 + (uint64_t)e;
    memcpy(out, &v, 8);
    return MPI_SUCCESS;
}

static int failures;

static void expect(const char *what, uint64_t got, uint64_t want)
{
    if (got != want) {
        printf("FAIL %s: 0x%llx, expected 0x%llx\n", what, (unsigned long long)got, (unsigned long long)want);
        failures++;
    }
}

/* Poisons the slot the next record goes to and every slot after it in the
 * current chunk. The reserve is not committed: the next reserve returns the
 * same slot. */
static tr_record *poison_from_here(void)
{
    tr_record *r = tr_buf_reserve();
    if (!r) {
        printf("FAIL no slot\n");
        exit(1);
    }
    tr_record *end = &tr_buf_tls->cur->rec[TR_CHUNK_RECORDS];
    memset(r, POISON, (size_t)((char *)end - (char *)r));
    return r;
}

static void check_mpit(void)
{
    /* 10 one-slot elements: 3 ride in the event, 4 + 3 in two continuations. */
    static tr_mpit_layout layout = {.type_index = 7, .nelements = 10, .nslots = 10};
    for (int e = 0; e < 10; e++)
        layout.el[e].displacement = 8 * e, layout.el[e].size = 8, layout.el[e].slot = e;
    static tr_mpit_reg reg = {.id = 42, .layout = &layout};
    tr_mpit_live.event_get_timestamp = fake_timestamp;
    tr_mpit_live.event_get_source = fake_source;
    tr_mpit_live.event_read = fake_read;

    tr_record *r = poison_from_here();
    tr_mpit_on_event((MPI_T_event_instance)0, (MPI_T_event_registration)0, 0, &reg);
    expect("MPIT type", r[0].type, TR_REC_MPIT);
    expect("MPIT sub (source)", r[0].sub, 3);
    expect("MPIT dev (event type)", (uint32_t)r[0].dev, 7);
    expect("MPIT aux (slots)", r[0].aux, 10);
    expect("MPIT u3 (slot 2)", r[0].u[3], 102);
    for (int k = 0; k < 2; k++) {
        const tr_record *m = &r[1 + k];
        char what[64];
        snprintf(what, sizeof what, "MPIT_MORE %d type", k);
        expect(what, m->type, TR_REC_MPIT_MORE);
        snprintf(what, sizeof what, "MPIT_MORE %d phase", k);
        expect(what, m->phase, TR_PHASE_POINT);
        snprintf(what, sizeof what, "MPIT_MORE %d sub", k);
        expect(what, m->sub, 0);
        snprintf(what, sizeof what, "MPIT_MORE %d dev", k);
        expect(what, (uint32_t)m->dev, 0);
        snprintf(what, sizeof what, "MPIT_MORE %d dev2", k);
        expect(what, (uint32_t)m->dev2, 0);
        snprintf(what, sizeof what, "MPIT_MORE %d aux", k);
        expect(what, m->aux, (uint32_t)k);
        snprintf(what, sizeof what, "MPIT_MORE %d id", k);
        expect(what, m->id, 42);
        for (int i = 0; i < 4; i++) {
            int slot = 3 + 4 * k + i;
            snprintf(what, sizeof what, "MPIT_MORE %d u%d", k, i);
            /* past the last slot (9): zero, not poison */
            expect(what, m->u[i], slot < 10 ? 100 + (uint64_t)slot : 0);
        }
    }
}

static void check_user(void)
{
    tracer_region_t region = 5; /* tracer_region_register is not needed to record */
    tr_record *r = poison_from_here();
    if (tracer_region_begin(region) || tracer_region_end(region) || tracer_mark(region, 77)) {
        printf("FAIL a user API call failed\n");
        exit(1);
    }
    const uint8_t types[3] = {TR_REC_USER_REGION, TR_REC_USER_REGION, TR_REC_USER_MARK};
    const uint8_t phases[3] = {TR_PHASE_BEGIN, TR_PHASE_END, TR_PHASE_POINT};
    for (int k = 0; k < 3; k++) {
        char what[64];
        snprintf(what, sizeof what, "user %d type", k);
        expect(what, r[k].type, types[k]);
        snprintf(what, sizeof what, "user %d phase", k);
        expect(what, r[k].phase, phases[k]);
        snprintf(what, sizeof what, "user %d sub/dev/dev2/aux", k);
        expect(what, r[k].sub | (uint32_t)r[k].dev | (uint32_t)r[k].dev2 | r[k].aux, 0);
        snprintf(what, sizeof what, "user %d id", k);
        expect(what, r[k].id, region);
        snprintf(what, sizeof what, "user %d u0", k);
        expect(what, r[k].u[0], k == 2 ? 77 : 0);
        for (int i = 1; i < 4; i++) {
            snprintf(what, sizeof what, "user %d u%d", k, i);
            expect(what, r[k].u[i], 0);
        }
    }
}

int main(void)
{
    if (tr_buf_init(1 << 20, 1 << 20, 0, 0)) {
        printf("FAIL tr_buf_init\n");
        return 1;
    }
    tr_buf_start();
    check_mpit();
    check_user();
    if (failures) {
        printf("%d fields hold stale bytes\n", failures);
        return 1;
    }
    printf("every field written\n");
    return 0;
}
