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

enum { MPIT_DROP_METRIC = 1 }; /* metric class and member 1; 0 is device memory */

static uint32_t region(tr_writer *w, enum tr_region_key tag, uint64_t v, const char *name, const char *desc,
                       OTF2_RegionRole role)
{
    return tr_defs_region(w, tag, v, name, name, desc, role, OTF2_PARADIGM_MPI);
}

uint32_t tr_defs_region_mpi_call(tr_writer *w, uint64_t call)
{
    const char *name = call == TR_MPI_INIT          ? "MPI_Init"
                       : call == TR_MPI_INIT_THREAD ? "MPI_Init_thread"
                       : call == TR_MPI_FINALIZE    ? "MPI_Finalize"
                       : call == TR_MPI_SESSION_INIT ? "MPI_Session_init"
                       : call == TR_MPI_SESSION_FINALIZE ? "MPI_Session_finalize"
                                                    : "MPI call";
    return region(w, KEY_MPI_CALL, call, name, "MPI call (interposed by tracer)", OTF2_REGION_ROLE_FUNCTION);
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

/* @first: the index of the type's element 0 in w->mpit.elem_attr. */
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
            uint32_t id = w->mpit.elem_attr[first + (uint32_t)e];
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
    const tr_jmpit *cat = &w->jd->mpit;
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
        add_elements(w, al, it, t, w->mpit.type_attr[t - cat->types]);
    OTF2_EvtWriter_Enter(ew, al, it->time, rg);
    OTF2_EvtWriter_Leave(ew, 0, it->time, rg);
}

static void write_drop(tr_writer *w, OTF2_EvtWriter *ew, OTF2_AttributeList *al, const tr_mpit_item *it,
                       uint64_t *total)
{
    const tr_record *r = it->rec;
    const tr_jmpit_type *t = tr_jmpit_find_type(&w->jd->mpit, (uint32_t)r->dev);
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
    const tr_mpit_loc *l = &w->mpit.locs[li];
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
