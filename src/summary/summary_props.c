/* summary_props.c - what the summary reads from properties: the
 * anchor file's (configuration, how the run ended, a lone process's MPI_T,
 * the transfers TRACER_MIN_BYTES kept out) and, in a job's archive, each
 * rank's MPI_T on its location group. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

/* "N transfers, B bytes", as src/writer/writer.c records it. */
static void tr_parse_small(const char *value, struct tr_count_bytes *cb)
{
    unsigned long long count, bytes;
    if (sscanf(value, TRV_PROP_SMALL_VALUE_FMT, &count, &bytes) == 2) {
        cb->count = count;
        cb->bytes = bytes;
    }
}

/* One rank's TRACER::MPIT::<kind> (kind: what follows the prefix and, in
 * old job archives, RANK<N>::): STATUS is kept when none is yet (the
 * callers offer rank 0's first), SOURCE::<name> adds to the totals. */
static void tr_mpit_property(struct tr_summary *out, const char *kind, const char *value)
{
    if (strcmp(kind, TRV_PROP_MPIT_STATUS) == 0) {
        if (!out->mpit_status[0])
            snprintf(out->mpit_status, sizeof out->mpit_status, "%s", value);
    } else if (strncmp(kind, TRV_PROP_MPIT_SOURCE, TRV_LEN(TRV_PROP_MPIT_SOURCE)) == 0) {
        const char *e = strstr(value, "; events="), *d = strstr(value, "; dropped="),
                   *v = strstr(value, "; order_violations=");
        out->mpit_sources++;
        out->mpit_events += e ? strtoull(e + 9, 0, 10) : 0;
        out->mpit_dropped += d ? strtoull(d + 10, 0, 10) : 0;
        out->mpit_order_violations += v ? strtoull(v + 19, 0, 10) : 0;
    }
}

/* Order of a location group as a rank: N for "rank <N>", after every rank
 * (by id) for any other name. */
uint64_t tr_group_rank(const struct tr_state *st, uint32_t group)
{
    const struct tr_group *g = tr_find(&st->groups, sizeof *g, group);
    const char *name = g ? tr_str(st, g->name) : NULL;
    size_t skip = TRV_LEN(TRV_RANK_PREFIX);
    if (name && strncmp(name, TRV_RANK_PREFIX, skip) == 0 && name[skip] >= '0' && name[skip] <= '9') {
        char *end = NULL;
        errno = 0;
        unsigned long rank = strtoul(name + skip, &end, 10);
        if (errno == 0 && *end == '\0' && rank <= UINT32_MAX)
            return rank;
    }
    return ((uint64_t)1 << 32) + group;
}

/* An MPI job's archive keeps each rank's TRACER::MPIT::* as properties of
 * the rank's location group: every group counts as a rank, the sources
 * add up, STATUS is the lowest rank's. Definitions must be resolved. */
void tr_read_group_properties(const struct tr_state *st, struct tr_summary *out)
{
    const struct tr_group_prop *p = st->gprops.v;
    const char *status = NULL;
    uint64_t status_rank = UINT64_MAX;
    for (size_t i = 0; i < st->gprops.n; i++) {
        const char *name = tr_str(st, p[i].name), *value = tr_str(st, p[i].value);
        if (!name || !value || strncmp(name, TRV_PROP_MPIT_PREFIX, TRV_LEN(TRV_PROP_MPIT_PREFIX)) != 0)
            continue;
        if (strcmp(name + TRV_LEN(TRV_PROP_MPIT_PREFIX), TRV_PROP_MPIT_STATUS) == 0) {
            uint64_t rank = tr_group_rank(st, p[i].group);
            if (!status || rank < status_rank) {
                status = value;
                status_rank = rank;
            }
        } else {
            tr_mpit_property(out, name + TRV_LEN(TRV_PROP_MPIT_PREFIX), value);
        }
    }
    if (status)
        tr_mpit_property(out, TRV_PROP_MPIT_STATUS, status);
}

/* TRACER::CONFIG::<VARIABLE>, in the archive's order. */
static int tr_add_config(struct tr_summary *out, const char *variable, const char *value)
{
    struct tr_config_entry *v = realloc(out->config, (out->n_config + 1) * sizeof *v);
    if (!v)
        return -1;
    out->config = v;
    char *name = strdup(variable), *val = strdup(value);
    if (!name || !val) {
        free(name);
        free(val);
        return -1;
    }
    v[out->n_config++] = (struct tr_config_entry){name, val};
    return 0;
}

/* The anchor file's properties: the configuration, how the run ended, a
 * lone process's MPI_T and the transfers that TRACER_MIN_BYTES kept out of
 * the event stream (older traces have none: the totals stay 0). Only names
 * that exist are asked for, so OTF2 reports no "not found" error. Returns
 * -1 when out of memory. */
int tr_read_properties(OTF2_Reader *rd, struct tr_summary *out)
{
    static const char *const names[2] = {TRV_PROP_SMALL_PREFIX TRV_PROP_SMALL_TO,
                                         TRV_PROP_SMALL_PREFIX TRV_PROP_SMALL_FROM};
    struct tr_count_bytes *dest[2] = {&out->small_to_device, &out->small_from_device};
    uint32_t n = 0;
    char **have = NULL;
    int ret = 0;
    if (OTF2_Reader_GetPropertyNames(rd, &n, &have) != OTF2_SUCCESS)
        return 0;
    for (uint32_t i = 0; have && i < n; i++) {
        char *value = NULL;
        if (strcmp(have[i], TRV_PROP_RUN_END) == 0 && OTF2_Reader_GetProperty(rd, have[i], &value) == OTF2_SUCCESS &&
            value)
            snprintf(out->run_end, sizeof out->run_end, "%s", value);
        else if (strncmp(have[i], TRV_PROP_CONFIG_PREFIX, strlen(TRV_PROP_CONFIG_PREFIX)) == 0 &&
                 OTF2_Reader_GetProperty(rd, have[i], &value) == OTF2_SUCCESS && value &&
                 tr_add_config(out, have[i] + strlen(TRV_PROP_CONFIG_PREFIX), value) != 0)
            ret = -1;
        free(value);
    }
    for (uint32_t i = 0; have && i < n; i++) {
        char *value = NULL;
        /* A lone process's archive has TRACER::MPIT::... here; a job's
         * archive from before they moved to its location groups has them
         * per rank: TRACER::MPIT::RANK<N>::... */
        const char *kind = have[i];
        if (strncmp(kind, TRV_PROP_MPIT_PREFIX, TRV_LEN(TRV_PROP_MPIT_PREFIX)) != 0)
            continue;
        kind += TRV_LEN(TRV_PROP_MPIT_PREFIX);
        if (strncmp(kind, "RANK", 4) == 0) {
            const char *sep = strchr(kind, ':');
            if (!sep || sep[1] != ':')
                continue;
            kind = sep + 2;
        }
        int status = strcmp(kind, TRV_PROP_MPIT_STATUS) == 0 && !out->mpit_status[0];
        int source = strncmp(kind, TRV_PROP_MPIT_SOURCE, TRV_LEN(TRV_PROP_MPIT_SOURCE)) == 0;
        if ((!status && !source) || OTF2_Reader_GetProperty(rd, have[i], &value) != OTF2_SUCCESS || !value) {
            free(value);
            continue;
        }
        tr_mpit_property(out, kind, value);
        free(value);
    }
    for (uint32_t i = 0; have && i < n; i++)
        for (int d = 0; d < 2; d++) {
            char *value = NULL;
            if (strcmp(have[i], names[d]) == 0 && OTF2_Reader_GetProperty(rd, names[d], &value) == OTF2_SUCCESS
                && value)
                tr_parse_small(value, dest[d]);
            free(value);
        }
    free(have);
    return ret;
}
