/* trace_count.c - counts what a trace holds, for bench/run_benchmarks.sh.
 *
 * Reads every event of an OTF2 archive written by libtracer and prints one
 * line of key=value pairs:
 *   otf2_events   all events of all locations (what the readers delivered)
 *   marks         Enter events of the region REGION (tracer_mark() writes an
 *                 Enter and a Leave per mark)
 *   in_order      1 when, on every location, the marks' "value" attributes
 *                 are 0, 1, 2, ... with no gap and no repeat (what
 *                 bench/throughput emits), else 0
 *   locations     locations that hold at least one mark
 * so the script can check that a block-mode run lost nothing.
 * Usage: trace_count TRACE_DIR [REGION]   (REGION defaults to "bench mark")
 * Exit status 0 read, 1 the trace cannot be read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <otf2/otf2.h>

#define MAX_LOCS 4096
#define MAX_STRINGS (1u << 20)

typedef struct {
    const char *region_name;
    char **strings;          /* global string table, by ref (small traces only) */
    uint32_t nstrings;
    OTF2_RegionRef region;   /* the region whose Enters are counted */
    OTF2_AttributeRef value_attr;
    uint64_t locs[MAX_LOCS];
    uint32_t nlocs;
    uint64_t events, marks;
    uint64_t next_value[MAX_LOCS]; /* per location index: the value expected next */
    uint64_t loc_marks[MAX_LOCS];
    uint32_t cur;            /* location index being read */
    int in_order;
} state;

static OTF2_CallbackCode def_string(void *u, OTF2_StringRef self, const char *s)
{
    state *st = u;
    if (self >= MAX_STRINGS)
        return OTF2_CALLBACK_SUCCESS;
    if (self >= st->nstrings) {
        uint32_t n = self + 1 > st->nstrings * 2 ? self + 1 : st->nstrings * 2;
        char **p = realloc(st->strings, n * sizeof *p);
        if (!p)
            return OTF2_CALLBACK_INTERRUPT;
        memset(p + st->nstrings, 0, (n - st->nstrings) * sizeof *p);
        st->strings = p;
        st->nstrings = n;
    }
    st->strings[self] = strdup(s);
    return OTF2_CALLBACK_SUCCESS;
}

static const char *str(state *st, OTF2_StringRef r)
{
    return r < st->nstrings && st->strings[r] ? st->strings[r] : "";
}

static OTF2_CallbackCode def_region(void *u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canon,
                                    OTF2_StringRef desc, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                    OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin, uint32_t end)
{
    (void)canon, (void)desc, (void)role, (void)paradigm, (void)flags, (void)file, (void)begin, (void)end;
    state *st = u;
    if (strcmp(str(st, name), st->region_name) == 0)
        st->region = self;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_attribute(void *u, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef desc,
                                       OTF2_Type type)
{
    (void)desc, (void)type;
    state *st = u;
    if (strcmp(str(st, name), "value") == 0)
        st->value_attr = self;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_location(void *u, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                                      uint64_t n_events, OTF2_LocationGroupRef group)
{
    (void)name, (void)type, (void)n_events, (void)group;
    state *st = u;
    if (st->nlocs < MAX_LOCS)
        st->locs[st->nlocs++] = self;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode evt_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t pos, void *u,
                                   OTF2_AttributeList *a, OTF2_RegionRef region)
{
    (void)loc, (void)t, (void)pos;
    state *st = u;
    if (region != st->region)
        return OTF2_CALLBACK_SUCCESS;
    st->marks++;
    st->loc_marks[st->cur]++;
    OTF2_Type type;
    OTF2_AttributeValue v;
    if (!a || OTF2_AttributeList_GetAttributeByID(a, st->value_attr, &type, &v) != OTF2_SUCCESS ||
        type != OTF2_TYPE_UINT64 || v.uint64 != st->next_value[st->cur])
        st->in_order = 0;
    st->next_value[st->cur]++;
    return OTF2_CALLBACK_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: trace_count TRACE_DIR [REGION]\n");
        return 2;
    }
    char anchor[4096];
    size_t len = strlen(argv[1]);
    if (len > 5 && strcmp(argv[1] + len - 5, ".otf2") == 0)
        snprintf(anchor, sizeof anchor, "%s", argv[1]);
    else
        snprintf(anchor, sizeof anchor, "%s/traces.otf2", argv[1]);
    static state st;
    st.region_name = argc > 2 ? argv[2] : "bench mark";
    st.region = OTF2_UNDEFINED_REGION;
    st.value_attr = OTF2_UNDEFINED_ATTRIBUTE;
    st.in_order = 1;

    OTF2_Reader *rd = OTF2_Reader_Open(anchor);
    if (!rd) {
        fprintf(stderr, "trace_count: cannot open %s\n", anchor);
        return 1;
    }
    OTF2_Reader_SetSerialCollectiveCallbacks(rd);
    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(rd);
    OTF2_GlobalDefReaderCallbacks *gcb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(gcb, def_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(gcb, def_region);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(gcb, def_attribute);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, def_location);
    OTF2_Reader_RegisterGlobalDefCallbacks(rd, gdr, gcb, &st);
    OTF2_GlobalDefReaderCallbacks_Delete(gcb);
    uint64_t n = 0;
    if (OTF2_Reader_ReadAllGlobalDefinitions(rd, gdr, &n) != OTF2_SUCCESS) {
        fprintf(stderr, "trace_count: cannot read the definitions of %s\n", anchor);
        return 1;
    }
    OTF2_Reader_CloseGlobalDefReader(rd, gdr);

    for (uint32_t i = 0; i < st.nlocs; i++)
        OTF2_Reader_SelectLocation(rd, st.locs[i]);
    int defs_open = OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS;
    OTF2_Reader_OpenEvtFiles(rd);
    OTF2_EvtReaderCallbacks *ecb = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetEnterCallback(ecb, evt_enter);
    for (uint32_t i = 0; i < st.nlocs; i++) {
        if (defs_open) {
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, st.locs[i]);
            if (dr) {
                OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
                OTF2_Reader_CloseDefReader(rd, dr);
            }
        }
        OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(rd, st.locs[i]);
        if (!er) {
            fprintf(stderr, "trace_count: cannot read the events of location %" PRIu64 "\n", st.locs[i]);
            return 1;
        }
        st.cur = i;
        OTF2_Reader_RegisterEvtCallbacks(rd, er, ecb, &st);
        uint64_t read = 0; /* every event of the location, whatever its type */
        if (OTF2_Reader_ReadAllLocalEvents(rd, er, &read) != OTF2_SUCCESS) {
            fprintf(stderr, "trace_count: error reading location %" PRIu64 "\n", st.locs[i]);
            return 1;
        }
        st.events += read;
        OTF2_Reader_CloseEvtReader(rd, er);
    }
    OTF2_EvtReaderCallbacks_Delete(ecb);
    if (defs_open)
        OTF2_Reader_CloseDefFiles(rd);
    OTF2_Reader_CloseEvtFiles(rd);
    OTF2_Reader_Close(rd);

    uint32_t with_marks = 0;
    for (uint32_t i = 0; i < st.nlocs; i++)
        with_marks += st.loc_marks[i] > 0;
    printf("otf2_events=%" PRIu64 " marks=%" PRIu64 " in_order=%d locations=%u\n", st.events, st.marks,
           st.marks ? st.in_order : 0, with_marks);
    return 0;
}
