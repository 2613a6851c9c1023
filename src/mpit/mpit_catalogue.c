#include "mpit/mpit_catalogue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The datatypes tracer reads, by their index in the family's table. */
static const struct {
    enum tr_mpi_dt dt;
    const char *name;
    int size, is_signed, is_float;
} known_types[] = {
    {TR_MPI_DT_CHAR, "char", 1, 1, 0},
    {TR_MPI_DT_SIGNED_CHAR, "signed char", 1, 1, 0},
    {TR_MPI_DT_UNSIGNED_CHAR, "unsigned char", 1, 0, 0},
    {TR_MPI_DT_BYTE, "byte", 1, 0, 0},
    {TR_MPI_DT_SHORT, "short", sizeof(short), 1, 0},
    {TR_MPI_DT_UNSIGNED_SHORT, "unsigned short", sizeof(short), 0, 0},
    {TR_MPI_DT_INT, "int", sizeof(int), 1, 0},
    {TR_MPI_DT_UNSIGNED, "unsigned", sizeof(int), 0, 0},
    {TR_MPI_DT_LONG, "long", sizeof(long), 1, 0},
    {TR_MPI_DT_UNSIGNED_LONG, "unsigned long", sizeof(long), 0, 0},
    {TR_MPI_DT_LONG_LONG, "long long", sizeof(long long), 1, 0},
    {TR_MPI_DT_UNSIGNED_LONG_LONG, "unsigned long long", sizeof(long long), 0, 0},
    {TR_MPI_DT_INT8_T, "int8_t", 1, 1, 0},
    {TR_MPI_DT_INT16_T, "int16_t", 2, 1, 0},
    {TR_MPI_DT_INT32_T, "int32_t", 4, 1, 0},
    {TR_MPI_DT_INT64_T, "int64_t", 8, 1, 0},
    {TR_MPI_DT_UINT8_T, "uint8_t", 1, 0, 0},
    {TR_MPI_DT_UINT16_T, "uint16_t", 2, 0, 0},
    {TR_MPI_DT_UINT32_T, "uint32_t", 4, 0, 0},
    {TR_MPI_DT_UINT64_T, "uint64_t", 8, 0, 0},
    {TR_MPI_DT_FLOAT, "float", sizeof(float), 1, 1},
    {TR_MPI_DT_DOUBLE, "double", sizeof(double), 1, 1},
    {TR_MPI_DT_C_BOOL, "bool", 1, 0, 0},
    {TR_MPI_DT_WCHAR, "wchar_t", 4, 1, 0},
    {TR_MPI_DT_AINT, "MPI_AINT", sizeof(MPI_Aint), 1, 0},
    {TR_MPI_DT_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset), 1, 0},
    {TR_MPI_DT_COUNT, "MPI_COUNT", sizeof(MPI_Count), 1, 0},
};

int tr_mpit_datatype(MPI_Datatype dt, const char **name, int *size, int *is_signed, int *is_float)
{
    for (size_t i = 0; i < sizeof known_types / sizeof *known_types; i++) {
        if (tr_mpi.family && tr_mpi.dt[known_types[i].dt] == dt) {
            *name = known_types[i].name;
            *size = known_types[i].size;
            *is_signed = known_types[i].is_signed;
            *is_float = known_types[i].is_float;
            return 1;
        }
    }
    *name = "unknown";
    *size = 0;
    *is_signed = *is_float = 0;
    return 0;
}

const char *tr_mpit_verbosity_name(int v)
{
    static const char *const names[] = {"user basic",   "user detail",  "user all",
                                        "tuner basic",  "tuner detail", "tuner all",
                                        "mpidev basic", "mpidev detail", "mpidev all"};
    int k = v - MPI_T_VERBOSITY_USER_BASIC;
    return tr_mpi.family && k >= 0 && k < 9 ? names[k] : "unknown";
}

const char *tr_mpit_bind_name(int b)
{
    static const char *const names[] = {"none", "communicator", "datatype", "errhandler", "file", "group",
                                        "op",   "request",      "window",   "message",    "info", "session"};
    int k = b - MPI_T_BIND_NO_OBJECT;
    return tr_mpi.family && k >= 0 && k < (int)(sizeof names / sizeof *names) ? names[k] : "unknown";
}

static int discover_sources(const tr_mpit_api *api, tr_mpit_catalogue *cat)
{
    int n = 0, added = 0;
    if (api->source_get_num(&n) != MPI_SUCCESS || n <= cat->nsources)
        return 0;
    tr_mpit_source *s = realloc(cat->sources, (size_t)n * sizeof *s);
    if (!s)
        return -1;
    cat->sources = s;
    for (int i = cat->nsources; i < n; i++) {
        tr_mpit_source *src = &cat->sources[i];
        memset(src, 0, sizeof *src);
        int name_len = sizeof src->name, desc_len = sizeof src->desc;
        MPI_T_source_order order = MPI_T_SOURCE_UNORDERED;
        MPI_Count tps = 0, max = 0;
        if (api->source_get_info(i, src->name, &name_len, src->desc, &desc_len, &order, &tps, &max, 0) !=
            MPI_SUCCESS)
            snprintf(src->name, sizeof src->name, "source %d", i);
        src->ordered = order == MPI_T_SOURCE_ORDERED;
        src->ticks_per_second = tps;
        src->max_ticks = max;
        MPI_Count now;
        src->adhoc_timestamps = api->source_get_timestamp(i, &now) == MPI_SUCCESS;
        added++;
    }
    cat->nsources = n;
    return added;
}

static void fill_elements(tr_mpit_event_type *t, const unsigned char *dts, const MPI_Aint *disps)
{
    for (int e = 0; e < t->nelements; e++) {
        tr_mpit_element *el = &t->elements[e];
        el->datatype = tr_mpi_handle_at(dts + (size_t)e * (size_t)tr_mpi.handle_size);
        el->displacement = disps[e];
        el->known = tr_mpit_datatype(el->datatype, &el->type_name, &el->size, &el->is_signed, &el->is_float);
        if (!el->known) {
            /* Kept as raw bytes: as many as lie before the next element. */
            long long room = e + 1 < t->nelements ? (long long)disps[e + 1] - disps[e] : 8;
            el->size = room > 0 && room <= 32 ? (int)room : 8;
        }
    }
}

int tr_mpit_discover(const tr_mpit_api *api, tr_mpit_catalogue *cat)
{
    int added = discover_sources(api, cat);
    if (added < 0)
        return -1;
    int n = 0;
    if (api->event_get_num(&n) != MPI_SUCCESS || n <= cat->ntypes)
        return added;
    tr_mpit_event_type *t = realloc(cat->types, (size_t)n * sizeof *t);
    if (!t)
        return -1;
    cat->types = t;
    for (int i = cat->ntypes; i < n; i++) {
        tr_mpit_event_type *et = &cat->types[i];
        memset(et, 0, sizeof *et);
        et->index = i;
        int name_len = sizeof et->name, desc_len = sizeof et->desc, num = 0;
        /* First the element count, then the element arrays. */
        if (api->event_get_info(i, 0, 0, 0, 0, 0, &num, 0, 0, 0, 0, 0) != MPI_SUCCESS)
            num = 0;
        if (num < 0)
            num = 0;
        if (num > TR_MPIT_MAX_ELEMENTS)
            num = TR_MPIT_MAX_ELEMENTS;
        /* The family's handles: 4 or 8 bytes each. */
        unsigned char dts[TR_MPIT_MAX_ELEMENTS * sizeof(tr_mpi_handle)] __attribute__((aligned(8)));
        MPI_Aint disps[TR_MPIT_MAX_ELEMENTS];
        MPI_T_enum en = MPI_T_ENUM_NULL;
        int got = num;
        if (api->event_get_info(i, et->name, &name_len, &et->verbosity, dts, disps, &got, &en, 0, et->desc,
                                &desc_len, &et->bind) != MPI_SUCCESS) {
            snprintf(et->name, sizeof et->name, "event %d", i);
            got = 0;
        }
        et->nelements = got < num ? got : num;
        et->has_enum = en != MPI_T_ENUM_NULL;
        fill_elements(et, dts, disps);
        added++;
    }
    cat->ntypes = n;
    return added;
}

void tr_mpit_catalogue_free(tr_mpit_catalogue *cat)
{
    free(cat->sources);
    free(cat->types);
    memset(cat, 0, sizeof *cat);
}
