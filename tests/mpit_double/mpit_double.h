/* mpit_double.h - control interface of the MPI_T event provider TEST DOUBLE.
 *
 * TEST DOUBLE: libmpit_double.so stands in for an MPI library that raises
 * MPI_T events (MPI-4.0 section 15.3.8). Debian's MPICH 4.0.2 has the MPI_T
 * event API but registers no sources and no event types and raises nothing,
 * so tracer's MPI_T event support cannot be tested against it alone.
 *
 * What the double implements (overriding MPICH when it is LD_PRELOADed, or
 * linked before -lmpich): MPI_T_init_thread / MPI_T_finalize (refcounted,
 * both also forwarded to MPICH so its cvars/pvars/categories keep working),
 * MPI_T_source_get_num / _get_info / _get_timestamp, MPI_T_event_get_num /
 * _get_info / _get_index, MPI_T_event_handle_alloc / _free,
 * MPI_T_event_register_callback, MPI_T_event_set_dropped_handler,
 * MPI_T_event_read / _copy / _get_timestamp / _get_source, and stubs for
 * MPI_T_event_handle_get_info / _set_info and MPI_T_event_callback_get_info /
 * _set_info (they return MPI_INFO_NULL / ignore the info). The PMPI_T_
 * names of all of these are aliases of the same functions. It models Open
 * MPI's catalogue (docs page "MPI_T_Events": sources "ompi" and
 * "ompi.unordered" and the ompi.mpi.* event types) plus one extra event type,
 * "double.weird", with element datatypes a tool is unlikely to know.
 *
 * What it does not implement: categories (MPI_T_category_* stay MPICH's and
 * list no events), real info objects, asynchronous or signal-context
 * delivery (everything is delivered synchronously on the raising thread), the
 * session model, RMA-window events. Every other MPI function stays MPICH's;
 * MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Comm_dup, _dup_with_info,
 * _split, _create, _free, _set_name and MPI_Comm_call_errhandler (and their
 * PMPI_ names) are wrapped to raise events around MPICH's own call, and
 * they and the calls tracer makes (MPI_Comm_rank, _size, MPI_Send, _Recv,
 * the collectives it uses) to speak, with MPIT_DOUBLE_DIALECT=ompi, Open
 * MPI's dialect: pointer handles translated to MPICH's integers at the
 * boundary (mpit_double.c's header says what that dialect covers). In the
 * default dialect they pass everything through to MPICH untouched.
 *
 * Tests drive it either with the environment (see mpit_double.c's header:
 * MPIT_DOUBLE_SCRIPT, MPIT_DOUBLE_LOG, ...) or with the functions below,
 * which a test program finds by linking the library or with dlsym.
 */
#ifndef MPIT_DOUBLE_H
#define MPIT_DOUBLE_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The "model" element of ompi.mpi.initialization / ompi.mpi.finalization.
 * Open MPI uses its OMPI_T_MODEL_* enum from its mpi.h; MPICH has none, so
 * the double picks these values. */
#define MPIT_DOUBLE_MODEL_WORLD 1
#define MPIT_DOUBLE_MODEL_SESSION 2

/* Index of an event type in the double's catalogue, or -1. Works whether or
 * not MPI_T is initialized. */
int mpit_double_event_index(const char *name);

/* Raises event type @event_index with @payload laid out as the catalogue says
 * (MPI_T_event_get_info's displacements; @bytes must be the layout's full
 * size, see mpit_double_payload_size). The instance's timestamp is the
 * source's current tick plus @source_tick_offset (a negative offset on the
 * ordered source deliberately breaks its ordering). For a bound event type
 * (communicator_name_set) element 0 is the object's handle: only
 * registrations bound to that communicator receive it. Logged to
 * MPIT_DOUBLE_LOG. Returns the number of callbacks invoked, or -1 on a bad
 * index or size. */
int mpit_double_raise_index(int event_index, const void *payload, size_t bytes, long long source_tick_offset);

/* Size in bytes of an event type's payload layout, or 0 for a bad index. */
size_t mpit_double_payload_size(int event_index);

/* Raises event @name with its element values as varargs, in element order:
 * MPI_INT32_T -> int, MPI_UINT64_T -> unsigned long long, MPI_COUNT /
 * MPI_AINT / MPI_OFFSET -> long long, the weird element -> const void *
 * (8 bytes copied). Returns as mpit_double_raise_index. */
int mpit_double_raise(const char *name, ...);

/* Reports @count dropped instances of event @name: every live registration
 * of that type that has a dropped handler gets one call with @count (none
 * is delivered). Returns the number of handlers called, or -1. */
int mpit_double_drop(const char *name, long long count);

/* Memory-release sink of ompi.mca.memory.patcher.released: accumulates
 * @count releases of @bytes in total; delivered as ONE aggregated event at
 * the next drain point (MPI_T_source_get_timestamp of source 1,
 * MPI_T_event_handle_alloc / _free, or mpit_double_drain). */
void mpit_double_release(unsigned long long count, unsigned long long bytes);

/* Delivers the sink now if it holds anything; returns callbacks invoked. */
int mpit_double_drain(void);

/* Runs script steps now (syntax in mpit_double.c's header; '@' hook markers
 * are not allowed here). Returns 0, or -1 on a bad step (reported on
 * stderr, nothing after it runs). */
int mpit_double_run(const char *steps);

/* The current tick of source 0 or 1 (as MPI_T_source_get_timestamp, but
 * without draining the sink and without MPI_T being initialized); -1 for a
 * bad source. */
MPI_Count mpit_double_tick(int source_index);

#ifdef __cplusplus
}
#endif

#endif
