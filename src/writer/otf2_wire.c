/* otf2_wire.c - see otf2_wire.h. */
#include "writer/otf2_wire.h"

void tr_wire_write(OTF2_EvtWriter *ew, OTF2_AttributeList *al, const tr_wire_ev *e)
{
    const tr_wire_attr *a = tr_wire_attrs_c(e);
    for (uint32_t i = 0; i < e->nattrs; i++)
        OTF2_AttributeList_AddAttribute(al, a[i].id, (OTF2_Type)a[i].type, a[i].v);
    OTF2_AttributeList *list = e->nattrs ? al : 0;
    OTF2_Type type = OTF2_TYPE_UINT64;
    OTF2_MetricValue mv = {.unsigned_int = e->a};
    switch (e->kind) {
    case TR_MEV_ENTER: OTF2_EvtWriter_Enter(ew, list, e->time, e->ref); break;
    case TR_MEV_LEAVE: OTF2_EvtWriter_Leave(ew, list, e->time, e->ref); break;
    case TR_MEV_METRIC: OTF2_EvtWriter_Metric(ew, list, e->time, e->ref, 1, &type, &mv); break;
    case TR_MEV_RMA_PUT: OTF2_EvtWriter_RmaPut(ew, list, e->time, e->ref, e->aux, e->a, e->b); break;
    case TR_MEV_RMA_GET: OTF2_EvtWriter_RmaGet(ew, list, e->time, e->ref, e->aux, e->a, e->b); break;
    case TR_MEV_RMA_COMPLETE: OTF2_EvtWriter_RmaOpCompleteBlocking(ew, list, e->time, e->ref, e->b); break;
    case TR_MEV_FORK: OTF2_EvtWriter_ThreadFork(ew, list, e->time, OTF2_PARADIGM_OPENMP, e->aux); break;
    case TR_MEV_JOIN: OTF2_EvtWriter_ThreadJoin(ew, list, e->time, OTF2_PARADIGM_OPENMP); break;
    case TR_MEV_MEASURE_OFF: OTF2_EvtWriter_MeasurementOnOff(ew, list, e->time, OTF2_MEASUREMENT_OFF); break;
    case TR_MEV_MEASURE_ON: OTF2_EvtWriter_MeasurementOnOff(ew, list, e->time, OTF2_MEASUREMENT_ON); break;
    case TR_MEV_PROGRAM_BEGIN: {
        const uint32_t *args = (const uint32_t *)(const void *)(a + e->nattrs);
        OTF2_EvtWriter_ProgramBegin(ew, list, e->time, (OTF2_StringRef)e->a, e->aux, args);
        break;
    }
    case TR_MEV_PROGRAM_END: OTF2_EvtWriter_ProgramEnd(ew, list, e->time, (int64_t)e->a); break;
    case TR_MEV_WIN_CREATE: OTF2_EvtWriter_RmaWinCreate(ew, list, e->time, e->ref); break;
    case TR_MEV_WIN_DESTROY: OTF2_EvtWriter_RmaWinDestroy(ew, list, e->time, e->ref); break;
    default: break;
    }
}
