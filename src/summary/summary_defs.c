/* summary_defs.c - the summary's global definition callbacks: each
 * definition becomes a record of its table in struct tr_state, names still
 * as string ids (definitions may come in any order: summary_resolve.c
 * resolves them once all are in). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

/* tr_str() before the strings are sorted (while definitions are read):
 * a linear search. */
static const char *tr_str_any(const struct tr_state *st, uint32_t ref)
{
    const struct tr_string *s = st->strings.v;
    for (size_t i = st->strings.n; i-- > 0;)
        if (s[i].id == ref)
            return s[i].s;
    return NULL;
}

static OTF2_CallbackCode tr_def_clock(void *user, uint64_t resolution, uint64_t offset,
                                      uint64_t length, uint64_t realtime)
{
    (void)offset;
    (void)realtime;
    struct tr_state *st = user;
    st->timer_resolution = resolution;
    st->trace_length = length;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_string(void *user, OTF2_StringRef self, const char *string)
{
    struct tr_state *st = user;
    struct tr_string *s = otr_vec_push(&st->strings, sizeof *s);
    char *copy = strdup(string ? string : "");
    if (!s || !copy) {
        free(copy);
        if (s)
            st->strings.n--;
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    s->id = self;
    s->s = copy;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_region(void *user, OTF2_RegionRef self, OTF2_StringRef name,
                                       OTF2_StringRef canon, OTF2_StringRef desc,
                                       OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                       OTF2_RegionFlag flags, OTF2_StringRef file,
                                       uint32_t begin_line, uint32_t end_line)
{
    (void)desc;
    (void)paradigm;
    (void)flags;
    (void)file;
    (void)begin_line;
    (void)end_line;
    struct tr_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->regions, struct tr_region, r, st->oom);
    r->id = self;
    r->name = name;
    r->canon = canon;
    r->cls = TR_R_OTHER;
    r->role = role;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_attribute(void *user, OTF2_AttributeRef self,
                                          OTF2_StringRef name, OTF2_StringRef desc,
                                          OTF2_Type type)
{
    (void)desc;
    (void)type;
    struct tr_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->attrs, struct tr_attr, a, st->oom);
    a->id = self;
    a->name = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_group(void *user, OTF2_LocationGroupRef self,
                                      OTF2_StringRef name, OTF2_LocationGroupType type,
                                      OTF2_SystemTreeNodeRef parent,
                                      OTF2_LocationGroupRef creator)
{
    (void)parent;
    struct tr_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->groups, struct tr_group, g, st->oom);
    g->id = self;
    g->name = name;
    g->type = type;
    g->creator = creator;
    if (type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
        st->out->processes++;
    else if (type == OTF2_LOCATION_GROUP_TYPE_ACCELERATOR)
        st->out->devices++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_group_property(void *user, OTF2_LocationGroupRef group,
                                               OTF2_StringRef name, OTF2_Type type,
                                               OTF2_AttributeValue value)
{
    struct tr_state *st = user;
    if (type != OTF2_TYPE_STRING)
        return OTF2_CALLBACK_SUCCESS;
    OTR_PUSH_OR_INTERRUPT(&st->gprops, struct tr_group_prop, p, st->oom);
    p->group = group;
    p->name = name;
    p->value = value.stringRef;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_location(void *user, OTF2_LocationRef self, OTF2_StringRef name,
                                         OTF2_LocationType type, uint64_t n_events,
                                         OTF2_LocationGroupRef group)
{
    (void)n_events;
    struct tr_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->locations, struct tr_loc, loc, st->oom);
    loc->id = self;
    loc->name = name;
    loc->group = group;
    loc->type = type;
    /* Strings precede locations in a global definition file. */
    const char *lname = tr_str_any(st, name);
    bool mpit_source = lname && strncmp(lname, TRV_MPIT_SOURCE_PREFIX, strlen(TRV_MPIT_SOURCE_PREFIX)) == 0;
    if (type == OTF2_LOCATION_TYPE_CPU_THREAD && !mpit_source)
        st->out->host_threads++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_rma_win(void *user, OTF2_RmaWinRef self, OTF2_StringRef name,
                                        OTF2_CommRef comm, OTF2_RmaWinFlag flags)
{
    (void)comm;
    (void)flags;
    struct tr_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->wins, struct tr_rma_win, w, st->oom);
    w->id = self;
    w->name = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_metric_member(void *user, OTF2_MetricMemberRef self, OTF2_StringRef name,
                                              OTF2_StringRef desc, OTF2_MetricType mtype,
                                              OTF2_MetricMode mode, OTF2_Type vtype, OTF2_Base base,
                                              int64_t exponent, OTF2_StringRef unit)
{
    (void)desc, (void)mtype, (void)mode, (void)vtype, (void)base, (void)exponent, (void)unit;
    struct tr_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->members, struct tr_metric_member, m, st->oom);
    m->id = self;
    m->name = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_metric_class(void *user, OTF2_MetricRef self, uint8_t n,
                                             const OTF2_MetricMemberRef *members,
                                             OTF2_MetricOccurrence occurrence, OTF2_RecorderKind kind)
{
    (void)occurrence, (void)kind;
    struct tr_state *st = user;
    uint32_t *copy = malloc((n ? n : 1) * sizeof *copy);
    struct tr_metric *m = copy ? otr_vec_push(&st->metrics, sizeof *m) : NULL;
    if (!m) {
        free(copy);
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    for (uint8_t i = 0; i < n; i++)
        copy[i] = members[i];
    m->id = self;
    m->class = self;
    m->n = n;
    m->members = copy;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tr_def_metric_instance(void *user, OTF2_MetricRef self, OTF2_MetricRef metric_class,
                                                OTF2_LocationRef recorder, OTF2_MetricScope scope_type,
                                                uint64_t scope)
{
    (void)recorder, (void)scope_type, (void)scope;
    struct tr_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->metrics, struct tr_metric, m, st->oom);
    m->id = self;
    m->class = metric_class;
    return OTF2_CALLBACK_SUCCESS;
}

void tr_def_callbacks(OTF2_GlobalDefReaderCallbacks *cb)
{
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, tr_def_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, tr_def_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, tr_def_region);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, tr_def_attribute);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, tr_def_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupPropertyCallback(cb, tr_def_group_property);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, tr_def_location);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, tr_def_rma_win);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, tr_def_metric_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, tr_def_metric_class);
    OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(cb, tr_def_metric_instance);
}
