/* summary_events.c - the summary's Enter and Leave events. Each
 * location keeps its own stack of open regions (as deep as its regions
 * nest) for inclusive and exclusive times, the OMP work and wait split and
 * the transfer a data op region stands for; an Enter also counts its
 * region's class (allocations, kernels, link maps, ...) and MPI_T events. */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

static struct tr_loc *tr_find_loc(const struct tr_state *st, uint64_t id)
{
    return st->locations.n ? bsearch(&id, st->locations.v, st->locations.n, sizeof(struct tr_loc), tr_cmp_id64)
                           : NULL;
}

/* A count per name (link maps, stale pointers per variable); names are
 * few, so a linear search. Returns -1 when out of memory. */
static int tr_count_name(struct tr_kernel_count **v, size_t *n, const char *name)
{
    size_t i = 0;
    while (i < *n && strcmp((*v)[i].name, name))
        i++;
    if (i == *n) {
        struct tr_kernel_count *m = realloc(*v, (i + 1) * sizeof *m);
        if (!m)
            return -1;
        *v = m;
        char *copy = strdup(name);
        if (!copy)
            return -1;
        m[i] = (struct tr_kernel_count){copy, 0};
        (*n)++;
    }
    (*v)[i].count++;
    return 0;
}

/* Attribute types follow the spec, but accept any integer type so a writer
 * that widens a field does not silently zero the counts. */
bool tr_attr_u64(OTF2_AttributeList *list, OTF2_AttributeRef id, uint64_t *value)
{
    if (!list || id == OTF2_UNDEFINED_ATTRIBUTE || !OTF2_AttributeList_TestAttributeByID(list, id))
        return false;
    OTF2_Type type;
    OTF2_AttributeValue v;
    if (OTF2_AttributeList_GetAttributeByID(list, id, &type, &v) != OTF2_SUCCESS)
        return false;
    switch (type) {
    case OTF2_TYPE_UINT8: *value = v.uint8; return true;
    case OTF2_TYPE_UINT16: *value = v.uint16; return true;
    case OTF2_TYPE_UINT32: *value = v.uint32; return true;
    case OTF2_TYPE_UINT64: *value = v.uint64; return true;
    case OTF2_TYPE_INT8: *value = v.int8 < 0 ? 0 : (uint64_t)v.int8; return v.int8 >= 0;
    case OTF2_TYPE_INT16: *value = v.int16 < 0 ? 0 : (uint64_t)v.int16; return v.int16 >= 0;
    case OTF2_TYPE_INT32: *value = v.int32 < 0 ? 0 : (uint64_t)v.int32; return v.int32 >= 0;
    case OTF2_TYPE_INT64: *value = v.int64 < 0 ? 0 : (uint64_t)v.int64; return v.int64 >= 0;
    default: return false;
    }
}

const char *tr_attr_str(const struct tr_state *st, OTF2_AttributeList *list, OTF2_AttributeRef id)
{
    OTF2_StringRef ref;
    if (!list || id == OTF2_UNDEFINED_ATTRIBUTE || !OTF2_AttributeList_TestAttributeByID(list, id) ||
        OTF2_AttributeList_GetStringRef(list, id, &ref) != OTF2_SUCCESS)
        return NULL;
    return tr_str(st, ref);
}

/* Every event: the trace's span, and the location's latest time (where
 * regions still open at its end are closed). */
struct tr_loc *tr_saw_time(struct tr_state *st, OTF2_LocationRef loc, OTF2_TimeStamp t)
{
    if (!st->any_event || t < st->first_ts)
        st->first_ts = t;
    if (!st->any_event || t > st->last_ts)
        st->last_ts = t;
    st->any_event = true;
    struct tr_loc *l = tr_find_loc(st, loc);
    if (l && (!l->any_event || t > l->last_ts)) {
        l->last_ts = t;
        l->any_event = true;
    }
    return l;
}

static struct tr_rstat *tr_rstat_of(struct tr_state *st, const struct tr_region *r, enum tr_loc_kind kind)
{
    struct tr_rgroup *g = &((struct tr_rgroup *)st->rgroups.v)[r->group];
    if (!g->stat[kind]) {
        struct tr_rstat *s = otr_vec_push(&st->rstats, sizeof *s);
        if (!s)
            return NULL;
        s->group = r->group;
        s->kind = kind;
        g->stat[kind] = st->rstats.n;
    }
    return &((struct tr_rstat *)st->rstats.v)[g->stat[kind] - 1];
}

/* MPI_T: an event type's region, or a drop report, on a source's location. */
static int tr_mpit_event(struct tr_state *st, const struct tr_loc *l, const struct tr_region *r,
                         OTF2_AttributeList *attrs)
{
    struct tr_mpit_source_stat *src = &((struct tr_mpit_source_stat *)st->mpit.v)[l->mpit_source - 1];
    const char *type;
    uint64_t dropped = 0;
    if (r->mpit_drop) {
        type = tr_attr_str(st, attrs, st->attr_mpit_event_type);
        tr_attr_u64(attrs, st->attr_mpit_dropped, &dropped);
    } else {
        const struct tr_rgroup *g = &((const struct tr_rgroup *)st->rgroups.v)[r->group];
        type = g->name;
    }
    if (!type)
        type = "unknown";
    size_t k = 0;
    while (k < src->n_types && strcmp(src->types[k].type, type))
        k++;
    if (k == src->n_types) {
        struct tr_mpit_type_stat *v = realloc(src->types, (k + 1) * sizeof *v);
        if (!v)
            return -1;
        src->types = v;
        char *copy = strdup(type);
        if (!copy)
            return -1;
        v[k] = (struct tr_mpit_type_stat){.type = copy};
        src->n_types++;
    }
    if (r->mpit_drop) {
        src->types[k].dropped += dropped;
        src->dropped += dropped;
    } else {
        src->types[k].events++;
        src->events++;
    }
    return 0;
}

/* The counts of the existing report, by region class. */
static int tr_count_class(struct tr_state *st, const struct tr_region *r, OTF2_AttributeList *attrs)
{
    struct tr_summary *out = st->out;
    uint64_t bytes = 0;
    const char *var;
    switch (r->cls) {
    case TR_R_OTHER:
        break;
    case TR_R_ALLOC:
        out->allocations.count++;
        if (tr_attr_u64(attrs, st->attr_bytes, &bytes))
            out->allocations.bytes += bytes;
        break;
    case TR_R_DELETE:
        out->deletes++;
        break;
    case TR_R_KERNEL:
        out->kernels[r->kernel].count++;
        break;
    case TR_R_STALE_LINK:
        out->stale_link_pointers++;
        var = tr_attr_str(st, attrs, st->attr_variable);
        return tr_count_name(&out->stale_by_variable, &out->n_stale_by_variable, var ? var : "?");
    case TR_R_LINK_MAP:
        var = tr_attr_str(st, attrs, st->attr_variable);
        return tr_count_name(&out->link_maps, &out->n_link_maps, var ? var : "?");
    default:
        out->target_regions[r->cls]++;
        break;
    }
    return 0;
}

/* A parallel region or a waiting state entered on a host thread. Returns
 * -1 when out of memory. */
static int tr_omp_enter(struct tr_state *st, struct tr_loc *l, const struct tr_region *r, struct tr_frame *f)
{
    if (l->kind != TR_LOC_HOST || (r->omp != TR_OMP_R_PARALLEL && r->omp != TR_OMP_R_WAIT))
        return 0;
    l->omp_seen = true;
    if (r->omp != TR_OMP_R_PARALLEL)
        return 0;
    l->par_open++;
    if (l->omp_after_overhead)
        ((struct tr_rgroup *)st->rgroups.v)[r->group].omp_teams++;
    struct tr_ompstat *stats = st->ompstats.v;
    size_t k = 0;
    while (k < l->n_ompstats && stats[l->ompstats[k]].group != r->group)
        k++;
    if (k == l->n_ompstats) {
        size_t *v = realloc(l->ompstats, (k + 1) * sizeof *v);
        if (!v)
            return -1;
        l->ompstats = v;
        struct tr_ompstat *s = otr_vec_push(&st->ompstats, sizeof *s);
        if (!s)
            return -1;
        s->group = r->group;
        s->loc = (size_t)(l - (struct tr_loc *)st->locations.v);
        v[k] = st->ompstats.n - 1;
        l->n_ompstats++;
    }
    ((struct tr_ompstat *)st->ompstats.v)[l->ompstats[k]].enters++;
    f->ompstat = l->ompstats[k] + 1;
    return 0;
}

static OTF2_CallbackCode tr_evt_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    struct tr_state *st = user;
    struct tr_loc *l = tr_saw_time(st, loc, t);
    const struct tr_region *r = tr_find(&st->regions, sizeof *r, region);
    if (!r)
        return OTF2_CALLBACK_SUCCESS;
    if (tr_count_class(st, r, attrs) != 0)
        goto oom;
    if (!l)
        return OTF2_CALLBACK_SUCCESS;
    if (l->kind == TR_LOC_MPIT && tr_mpit_event(st, l, r, attrs) != 0)
        goto oom;
    struct tr_rstat *s = tr_rstat_of(st, r, l->kind);
    if (!s)
        goto oom;
    s->count++;

    if (l->depth == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct tr_frame *v = realloc(l->stack, cap * sizeof *v);
        if (!v)
            goto oom;
        l->stack = v;
        l->cap = cap;
    }
    struct tr_frame *f = &l->stack[l->depth];
    *f = (struct tr_frame){.r = r, .enter = t};
    for (size_t i = 0; i < l->depth && !f->nested; i++)
        f->nested = l->stack[i].r->group == r->group;
    if (r->xfer != TR_XFER_NONE) {
        uint64_t device;
        OTF2_AttributeRef dev_attr = r->xfer == TR_XFER_TO ? st->attr_dst_device : st->attr_src_device;
        f->has_bytes = tr_attr_u64(attrs, st->attr_bytes, &f->bytes);
        if (tr_attr_u64(attrs, dev_attr, &device) && device <= INT32_MAX && !(f->dev = tr_dev_slot(st, l->group, (int64_t)device)))
            goto oom;
    }
    if (tr_omp_enter(st, l, r, f) != 0 || tr_advice_enter(st, l, f, attrs) != 0)
        goto oom;
    l->omp_after_overhead = false;
    l->depth++;
    return OTF2_CALLBACK_SUCCESS;
oom:
    st->oom = true;
    return OTF2_CALLBACK_INTERRUPT;
}

/* Ends the innermost open region of L at T. */
void tr_close_top(struct tr_state *st, struct tr_loc *l, uint64_t t)
{
    struct tr_frame *f = &l->stack[--l->depth];
    uint64_t incl = t > f->enter ? t - f->enter : 0;
    if (f->advice && tr_advice_close(st, f, incl) != 0)
        st->oom = true;
    struct tr_rstat *s = tr_rstat_of(st, f->r, l->kind); /* made at the Enter */
    if (s) {
        s->excl_ticks += incl > f->child ? incl - f->child : 0;
        if (!f->nested)
            s->incl_ticks += incl;
    }
    if (l->depth)
        l->stack[l->depth - 1].child += incl;
    /* OMP wait: a waiting state passes its whole time down (waits nested
     * in it count once), any other region the waits inside it. */
    uint64_t wait = f->r->omp == TR_OMP_R_WAIT ? incl : f->wait;
    if (l->depth)
        l->stack[l->depth - 1].wait += wait;
    else
        l->omp_wait_ticks += wait;
    if (f->r->omp == TR_OMP_R_PARALLEL && l->kind == TR_LOC_HOST) {
        uint64_t w = f->wait < incl ? f->wait : incl;
        if (l->par_open)
            l->par_open--;
        if (!l->par_open)
            l->omp_work_ticks += incl - w;
        if (f->ompstat && !f->nested) {
            struct tr_ompstat *os = &((struct tr_ompstat *)st->ompstats.v)[f->ompstat - 1];
            os->incl_ticks += incl;
            os->wait_ticks += w;
        }
    }
    l->omp_after_overhead = f->r->omp == TR_OMP_R_OVERHEAD;
    if (f->r->xfer != TR_XFER_NONE && f->dev) {
        struct tr_dev *d = &((struct tr_dev *)st->devs.v)[f->dev - 1];
        struct tr_transfer_stat *x = f->r->xfer == TR_XFER_TO ? &d->s.to_device : &d->s.from_device;
        x->count++;
        x->bytes += f->bytes;
        x->time_ns += incl; /* ticks until the end */
    }
}

static OTF2_CallbackCode tr_evt_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                      OTF2_AttributeList *attrs, OTF2_RegionRef region)
{
    struct tr_state *st = user;
    struct tr_loc *l = tr_saw_time(st, loc, t);
    uint64_t flag = 0;
    if (tr_attr_u64(attrs, st->attr_incomplete, &flag) && flag == 1)
        st->out->incomplete++;
    else if (flag == 2)
        st->out->runtime_open++;
    if (!l)
        return OTF2_CALLBACK_SUCCESS;
    /* Normally the innermost region; a Leave of a region further down
     * closes what is open above it; one that matches nothing is ignored. */
    size_t i = l->depth;
    while (i > 0 && l->stack[i - 1].r->id != region)
        i--;
    if (i == 0)
        return OTF2_CALLBACK_SUCCESS;
    while (l->depth >= i)
        tr_close_top(st, l, t);
    return OTF2_CALLBACK_SUCCESS;
}

/* A gap: events dropped when the buffers were full (drop mode says how
 * many), or journal chunks lost (no count). */
static OTF2_CallbackCode tr_evt_measurement(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                            OTF2_AttributeList *attrs, OTF2_MeasurementMode mode)
{
    struct tr_state *st = user;
    tr_saw_time(st, loc, t);
    if (mode != OTF2_MEASUREMENT_OFF)
        return OTF2_CALLBACK_SUCCESS;
    uint64_t lost = 0;
    if (tr_attr_u64(attrs, st->attr_lost, &lost)) {
        st->out->drop_gaps++;
        st->out->dropped_events += lost;
    } else {
        st->out->missing_gaps++;
    }
    return OTF2_CALLBACK_SUCCESS;
}

void tr_evt_callbacks(OTF2_GlobalEvtReaderCallbacks *cb)
{
    OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(cb, tr_evt_measurement);
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, tr_evt_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, tr_evt_leave);
    OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback(cb, tr_evt_put);
    OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback(cb, tr_evt_get);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cb, tr_evt_metric);
}
