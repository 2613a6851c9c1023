/* otf2_mpit.c - MPI_T events in OTF2: one location per source, each event a
 * zero-length region named after its type whose Enter carries the payload
 * elements as typed attributes and the original source tick; dropped events
 * as a region and a running-total metric; MPI_Init/_Finalize regions. The
 * contract is docs/trace-model.md, "MPI_T events". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "writer/writer_internal.h"

enum { MPIT_DROP_METRIC = TR_METRIC_MPIT_DROPPED }; /* metric class and member 1; 0 is device memory */

static uint32_t region(tr_writer *w, enum tr_region_key tag, uint64_t v, const char *name, const char *desc,
                       OTF2_RegionRole role)
{
    return tr_defs_region(w, tag, v, name, name, desc, role, OTF2_PARADIGM_MPI);
}

static uint32_t region_type(tr_writer *w, const tr_jmpit_type *t, int index)
{
    char name[64];
    if (!t)
        snprintf(name, sizeof name, "MPI_T event %d", index);
    return region(w, KEY_MPIT_TYPE, (uint64_t)(uint32_t)index, t ? t->name : name,
                  t && t->desc[0] ? t->desc : "MPI_T event", OTF2_REGION_ROLE_ARTIFICIAL);
}

/* Element @e's bytes as attribute @id of type @type. */
static void add_element(tr_writer *w, OTF2_AttributeList *al, uint32_t id, OTF2_Type type, const unsigned char *b,
                        int size)
{
    OTF2_AttributeValue v;
    memset(&v, 0, sizeof v);
    switch (type) {
    case OTF2_TYPE_INT8: memcpy(&v.int8, b, 1); break;
    case OTF2_TYPE_UINT8: memcpy(&v.uint8, b, 1); break;
    case OTF2_TYPE_INT16: memcpy(&v.int16, b, 2); break;
    case OTF2_TYPE_UINT16: memcpy(&v.uint16, b, 2); break;
    case OTF2_TYPE_INT32: memcpy(&v.int32, b, 4); break;
    case OTF2_TYPE_UINT32: memcpy(&v.uint32, b, 4); break;
    case OTF2_TYPE_INT64: memcpy(&v.int64, b, 8); break;
    case OTF2_TYPE_UINT64: memcpy(&v.uint64, b, 8); break;
    case OTF2_TYPE_FLOAT: memcpy(&v.float32, b, 4); break;
    case OTF2_TYPE_DOUBLE: memcpy(&v.float64, b, 8); break;
    default: {
        char hex[2 + 2 * 32 + 1] = "0x";
        for (int i = 0; i < size && i < 32; i++)
            snprintf(hex + 2 + 2 * i, 3, "%02x", b[i]);
        v.stringRef = tr_defs_string(w, hex);
        type = OTF2_TYPE_STRING;
        break;
    }
    }
    OTF2_AttributeList_AddAttribute(al, id, type, v);
}

/* @first: the index of the type's element 0 in w->mpit_elem_attr. */
static void add_elements(tr_writer *w, OTF2_AttributeList *al, const tr_mpit_item *it, const tr_jmpit_type *t,
                         uint32_t first)
{
    const tr_record *r = it->rec;
    uint64_t slots[3 + 4 * 128];
    uint32_t have = TR_MPIT_HEAD_SLOTS;
    memcpy(slots, &r->u[1], TR_MPIT_HEAD_SLOTS * 8);
    for (uint32_t k = 0; k < it->nmore && have + TR_MPIT_MORE_SLOTS <= sizeof slots / 8; k++, have += 4)
        memcpy(&slots[have], it->more[k].u, TR_MPIT_MORE_SLOTS * 8);
    int failed = (r->dev2 & TR_MPIT_F_READ_FAILED) != 0;
    if ((int)r->aux != t->nslots) {
        failed = 1; /* the layout changed under the record: trust neither */
    } else {
        for (int e = 0; e < t->nelements; e++) {
            const tr_jmpit_element *el = &t->el[e];
            if ((uint32_t)(el->slot + (el->size + 7) / 8) > have) {
                failed = 1; /* a continuation record is missing */
                continue;
            }
            uint32_t id = w->mpit_elem_attr[first + (uint32_t)e];
            add_element(w, al, id, tr_defs_attribute_type(w->defs, id), (const unsigned char *)&slots[el->slot],
                        el->size);
        }
    }
    if (failed)
        tr_defs_attr(al, TR_ATTR_MPIT_READ_FAILED, 1);
}

static void write_event(tr_writer *w, OTF2_EvtWriter *ew, OTF2_AttributeList *al, const tr_mpit_loc *l,
                        const tr_mpit_item *it)
{
    const tr_record *r = it->rec;
    const tr_jmpit *cat = &w->m.jd->mpit;
    const tr_jmpit_type *t = tr_jmpit_find_type(cat, (uint32_t)r->dev);
    const tr_jmpit_reg *reg = tr_jmpit_find_reg(cat, (uint32_t)r->id);
    uint32_t rg = region_type(w, t, r->dev);
    if (r->dev2 & TR_MPIT_F_TICK)
        tr_defs_attr(al, TR_ATTR_MPIT_TICK, r->u[0]);
    int mapped = l->mapped && (r->dev2 & TR_MPIT_F_TICK);
    tr_defs_attr_string(w, al, TR_ATTR_MPIT_TIME_BASE, mapped ? "source clock" : "host clock at callback");
    tr_defs_attr(al, TR_ATTR_MPIT_CALLBACK_TIME, it->callback_ns);
    tr_defs_attr(al, TR_ATTR_MPIT_REGISTRATION, r->id);
    if (reg && reg->bound)
        tr_defs_attr(al, TR_ATTR_MPIT_OBJECT, reg->object);
    if (it->violation)
        tr_defs_attr(al, TR_ATTR_MPIT_ORDER_VIOLATION, 1);
    if (t)
        add_elements(w, al, it, t, w->mpit_type_attr[t - cat->types]);
    OTF2_EvtWriter_Enter(ew, al, it->time, rg);
    OTF2_EvtWriter_Leave(ew, 0, it->time, rg);
}

static void write_drop(tr_writer *w, OTF2_EvtWriter *ew, OTF2_AttributeList *al, const tr_mpit_item *it,
                       uint64_t *total)
{
    const tr_record *r = it->rec;
    const tr_jmpit_type *t = tr_jmpit_find_type(&w->m.jd->mpit, (uint32_t)r->dev);
    uint32_t rg = region(w, KEY_MPIT_DROP, 0, TRV_REGION_MPIT_DROPPED,
                         "the MPI library reported events it dropped before delivering them",
                         OTF2_REGION_ROLE_ARTIFICIAL);
    tr_defs_attr(al, TR_ATTR_MPIT_DROPPED, r->u[0]);
    tr_defs_attr(al, TR_ATTR_MPIT_REGISTRATION, r->id);
    tr_defs_attr_string(w, al, TR_ATTR_MPIT_EVENT_TYPE, t ? t->name : "unknown");
    OTF2_EvtWriter_Enter(ew, al, it->time, rg);
    OTF2_EvtWriter_Leave(ew, 0, it->time, rg);
    *total += r->u[0];
    OTF2_Type type = OTF2_TYPE_UINT64;
    OTF2_MetricValue v = {.unsigned_int = *total};
    OTF2_EvtWriter_Metric(ew, 0, it->time, MPIT_DROP_METRIC, 1, &type, &v);
}

int tr_events_write_mpit(tr_writer *w, OTF2_Archive *ar, uint32_t li, uint64_t *nevents)
{
    const tr_mpit_loc *l = &w->m.mpit.locs[li];
    OTF2_EvtWriter *ew = OTF2_Archive_GetEvtWriter(ar, w->loc_base + l->location);
    OTF2_AttributeList *al = OTF2_AttributeList_New();
    if (!ew || !al) {
        if (al)
            OTF2_AttributeList_Delete(al);
        return -1;
    }
    uint64_t dropped = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i].rec->type == TR_REC_MPIT_DROP)
            write_drop(w, ew, al, &l->items[i], &dropped);
        else
            write_event(w, ew, al, l, &l->items[i]);
    }
    OTF2_EvtWriter_GetNumberOfEvents(ew, nevents);
    OTF2_AttributeList_Delete(al);
    return OTF2_Archive_CloseEvtWriter(ar, ew) == OTF2_SUCCESS ? 0 : -1;
}

void tr_defs_write_mpit_metric(tr_defs *d, OTF2_GlobalDefWriter *gw)
{
    uint32_t s_name = tr_defs_str(d, TRV_METRIC_MPIT_DROPPED);
    uint32_t s_desc = tr_defs_str(d, "events the MPI library dropped, running total per MPI_T source");
    uint32_t s_unit = tr_defs_str(d, "events");
    if (!gw)
        return;
    OTF2_MetricMemberRef member = MPIT_DROP_METRIC;
    OTF2_GlobalDefWriter_WriteMetricMember(gw, MPIT_DROP_METRIC, s_name, s_desc, OTF2_METRIC_TYPE_OTHER,
                                           OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                           s_unit);
    OTF2_GlobalDefWriter_WriteMetricClass(gw, MPIT_DROP_METRIC, 1, &member, OTF2_METRIC_ASYNCHRONOUS,
                                          OTF2_RECORDER_KIND_ABSTRACT);
}

/* --- attributes of payload elements ------------------------------------------- */

static OTF2_Type element_type(const tr_jmpit_element *e)
{
    if (!e->known)
        return OTF2_TYPE_STRING;
    if (e->is_float)
        return e->size == 4 ? OTF2_TYPE_FLOAT : OTF2_TYPE_DOUBLE;
    switch (e->size) {
    case 1: return e->is_signed ? OTF2_TYPE_INT8 : OTF2_TYPE_UINT8;
    case 2: return e->is_signed ? OTF2_TYPE_INT16 : OTF2_TYPE_UINT16;
    case 4: return e->is_signed ? OTF2_TYPE_INT32 : OTF2_TYPE_UINT32;
    case 8: return e->is_signed ? OTF2_TYPE_INT64 : OTF2_TYPE_UINT64;
    default: return OTF2_TYPE_STRING;
    }
}

/* Defined once the model's pass is done, before the MPI_T events are
 * written. */
int tr_mpit_define_attributes(tr_writer *w)
{
    if (!w->m.mpit.locs)
        return 0; /* the run had no MPI_T */
    const tr_jmpit *cat = &w->m.jd->mpit;
    uint32_t total = 0;
    for (uint32_t t = 0; t < cat->ntypes; t++)
        total += (uint32_t)cat->types[t].nelements;
    w->mpit_type_attr = calloc(cat->ntypes ? cat->ntypes : 1, sizeof *w->mpit_type_attr);
    w->mpit_elem_attr = calloc(total ? total : 1, sizeof *w->mpit_elem_attr);
    if (!w->mpit_type_attr || !w->mpit_elem_attr)
        return -1;
    char name[200], desc[400];
    for (uint32_t t = 0; t < cat->ntypes; t++) {
        const tr_jmpit_type *ty = &cat->types[t];
        w->mpit_type_attr[t] = w->mpit_nelem;
        for (int e = 0; e < ty->nelements; e++) {
            const tr_jmpit_element *el = &ty->el[e];
            snprintf(name, sizeof name, "%s[%d]", ty->name, e);
            snprintf(desc, sizeof desc, "MPI_T element %d of %s: %s at displacement %lld%s", e, ty->name,
                     el->type_name, (long long)el->displacement,
                     el->known ? "" : " (datatype unknown to tracer: its bytes in memory order, hex)");
            uint32_t s_name = tr_defs_string(w, name), s_desc = tr_defs_string(w, desc);
            w->mpit_elem_attr[w->mpit_nelem++] = tr_defs_attribute(w->defs, s_name, s_desc, element_type(el));
        }
    }
    return 0;
}

/* --- what the archive says about MPI_T ---------------------------------------------- */

static const char *level_name(int level)
{
    static const char *const names[] = {"unknown",      "user basic",   "user detail",
                                        "user all",     "tuner basic",  "tuner detail",
                                        "tuner all",    "mpidev basic", "mpidev detail",
                                        "mpidev all"};
    return level >= 0 && level <= 9 ? names[level] : "unknown";
}

/* OTF2 property names allow only [A-Z0-9_] per component: the MPI_T name
 * in upper case, anything else as '_' (the value repeats the real name). */
static void property_name(char *out, size_t size, const char *prefix, const char *kind, const char *mpit_name)
{
    int n = snprintf(out, size, "%s%s::", prefix, kind);
    if (n < 0 || n >= (int)size)
        n = 0;
    for (const char *c = mpit_name; *c && n + 1 < (int)size; c++)
        out[n++] = (*c >= 'a' && *c <= 'z') ? (char)(*c - 32)
                   : ((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')) ? *c
                                                                            : '_';
    out[n] = 0;
}

void tr_mpit_properties(const tr_writer *w, const char *prefix, tr_prop_fn put, void *ctx)
{
    const tr_jmpit *cat = &w->m.jd->mpit;
    if (!cat->status)
        return;
    char name[300], value[2048];
    snprintf(name, sizeof name, "%sSTATUS", prefix);
    put(ctx, name, cat->status);
    for (uint32_t i = 0; i < w->m.mpit.nlocs; i++) {
        const tr_mpit_loc *l = &w->m.mpit.locs[i];
        const tr_jmpit_source *s = l->src;
        const char *sname = s ? s->name : "(unknown)";
        if (s)
            snprintf(value, sizeof value,
                     "name=%s; %s; ticks_per_second=%lld; max_ticks=%lld; adhoc_timestamps=%s; events=%llu; dropped=%llu; "
                     "order_violations=%llu; description=%s",
                     s->name, s->ordered ? "ordered" : "unordered", (long long)s->ticks_per_second, (long long)s->max_ticks,
                     s->adhoc ? "yes" : "no", (unsigned long long)l->events, (unsigned long long)l->dropped,
                     (unsigned long long)l->violations, s->desc);
        else
            snprintf(value, sizeof value, "events whose source MPI_T did not report; events=%llu; dropped=%llu",
                     (unsigned long long)l->events, (unsigned long long)l->dropped);
        property_name(name, sizeof name, prefix, "SOURCE", sname);
        put(ctx, name, value);
        if (l->mapped)
            snprintf(value, sizeof value, "name=%s; ns = %.3Lf + %.12Lg * tick; pairs=%u; wraps=%llu; max_residual_ns=%.1f",
                     sname, l->offset, l->rate, l->npairs, (unsigned long long)l->wraps, l->max_residual_ns);
        else
            snprintf(value, sizeof value, "name=%s; host clock at callback (%s)", sname,
                     !s ? "unknown source" : !s->adhoc ? "no ad-hoc timestamps" : "no clock pairs recorded");
        property_name(name, sizeof name, prefix, "CLOCK", sname);
        put(ctx, name, value);
    }
    for (uint32_t t = 0; t < cat->ntypes; t++) {
        const tr_jmpit_type *ty = &cat->types[t];
        char elements[1200] = "";
        size_t n = 0;
        for (int e = 0; e < ty->nelements && n < sizeof elements - 80; e++)
            n += (size_t)snprintf(elements + n, sizeof elements - n, "%s%s@%lld", e ? "," : "", ty->el[e].type_name,
                                  (long long)ty->el[e].displacement);
        char reg[80];
        if (ty->registered > 0)
            snprintf(reg, sizeof reg, "yes");
        else if (ty->registered < 0)
            snprintf(reg, sizeof reg, "no (bound to %s, not tracked)", ty->bind_name);
        else
            snprintf(reg, sizeof reg, "no (filtered)");
        snprintf(value, sizeof value, "name=%s; verbosity=%s (%d); bind=%s; registered=%s; elements=%s; description=%.600s",
                 ty->name, level_name(ty->level), ty->level, ty->bind_name, reg, elements, ty->desc);
        property_name(name, sizeof name, prefix, "EVENT", ty->name);
        put(ctx, name, value);
    }
}
