/* mpit_callback.c - the MPI_T event and dropped-event callbacks: the hot
 * path of MPI_T recording.
 *
 * A callback reads the instance's source, timestamp and payload with the
 * MPI_T_event_* accessors only (no other MPI call), then appends records to
 * the calling thread's buffer through tr_buf_reserve(), like every OMPT
 * callback: no lock, no syscall, no allocation once the thread has a chunk.
 * That path is thread-safe but not async-signal-safe (a signal arriving
 * between reserve and commit on the same thread would take the same slot),
 * so the callbacks are registered at MPI_T_CB_REQUIRE_THREAD_SAFE, not
 * ASYNC_SIGNAL_SAFE. */
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "mpit/mpit_internal.h"

tr_mpit_api tr_mpit_live;

static void read_payload(MPI_T_event_instance ev, const tr_mpit_layout *l, uint64_t *slots, uint32_t *flags)
{
    if (l->copy_ok && tr_mpit_live.event_copy) {
        unsigned char buf[TR_MPIT_COPY_MAX] __attribute__((aligned(16)));
        if (tr_mpit_live.event_copy(ev, buf) == MPI_SUCCESS) {
            for (int e = 0; e < l->nelements; e++)
                memcpy(&slots[l->el[e].slot], buf + l->el[e].displacement, (size_t)l->el[e].size);
            return;
        }
    }
    for (int e = 0; e < l->nelements; e++) {
        /* Room for any element the MPI could write: an unknown datatype's
         * true size is not known, only the gap to the next element. */
        unsigned char one[256] __attribute__((aligned(16)));
        if (tr_mpit_live.event_read(ev, e, one) == MPI_SUCCESS)
            memcpy(&slots[l->el[e].slot], one, (size_t)l->el[e].size);
        else
            *flags |= TR_MPIT_F_READ_FAILED;
    }
}

void tr_mpit_on_event(MPI_T_event_instance ev, MPI_T_event_registration handle, MPI_T_cb_safety safety,
                      void *user_data)
{
    (void)handle, (void)safety;
    const tr_mpit_reg *reg = user_data;
    const tr_mpit_layout *l = reg->layout;
    uint64_t now = tr_clock_ticks();
    MPI_Count tick = 0;
    int source = -1;
    uint32_t flags = 0;
    if (tr_mpit_live.event_get_timestamp(ev, &tick) == MPI_SUCCESS)
        flags |= TR_MPIT_F_TICK;
    if (tr_mpit_live.event_get_source(ev, &source) != MPI_SUCCESS)
        source = -1;
    uint64_t slots[TR_MPIT_MAX_SLOTS + TR_MPIT_MORE_SLOTS];
    memset(slots, 0, (size_t)(l->nslots + TR_MPIT_MORE_SLOTS) * sizeof *slots);
    read_payload(ev, l, slots, &flags);

    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    r->time = now;
    r->type = TR_REC_MPIT;
    r->phase = TR_PHASE_POINT;
    r->sub = (uint16_t)source;
    r->dev = l->type_index;
    r->dev2 = (int32_t)flags;
    r->aux = (uint32_t)l->nslots;
    r->id = reg->id;
    r->u[0] = (uint64_t)tick;
    memcpy(&r->u[1], slots, TR_MPIT_HEAD_SLOTS * sizeof *slots);
    tr_buf_commit();
    for (int at = TR_MPIT_HEAD_SLOTS, k = 0; at < l->nslots; at += TR_MPIT_MORE_SLOTS, k++) {
        if (!(r = tr_buf_reserve()))
            return;
        r->time = now;
        r->type = TR_REC_MPIT_MORE;
        r->phase = TR_PHASE_POINT;
        /* Unused here, and written all the same: a recycled chunk still
         * holds its previous records, and the journal takes whole ones. */
        r->sub = 0;
        r->dev = r->dev2 = 0;
        r->aux = (uint32_t)k;
        r->id = reg->id;
        memcpy(r->u, &slots[at], TR_MPIT_MORE_SLOTS * sizeof *slots);
        tr_buf_commit();
    }
}

void tr_mpit_on_dropped(MPI_Count count, MPI_T_event_registration handle, int source_index,
                        MPI_T_cb_safety safety, void *user_data)
{
    (void)handle, (void)safety;
    const tr_mpit_reg *reg = user_data;
    uint64_t now = tr_clock_ticks();
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    r->time = now;
    r->type = TR_REC_MPIT_DROP;
    r->phase = TR_PHASE_POINT;
    r->sub = (uint16_t)source_index;
    r->dev = reg ? reg->layout->type_index : -1;
    r->dev2 = r->aux = 0;
    r->id = reg ? reg->id : 0;
    r->u[0] = (uint64_t)count;
    r->u[1] = r->u[2] = r->u[3] = 0;
    tr_buf_commit();
}

void tr_mpit_record_call(enum tr_mpi_call call, int end, int rc)
{
    uint64_t now = tr_clock_ticks();
    tr_record *r = tr_buf_reserve();
    if (!r)
        return;
    memset(r, 0, sizeof *r);
    r->time = now;
    r->type = TR_REC_MPI_CALL;
    r->phase = end ? TR_PHASE_END : TR_PHASE_BEGIN;
    r->id = (uint64_t)call;
    r->u[0] = (uint64_t)(int64_t)rc;
    tr_buf_commit();
}
