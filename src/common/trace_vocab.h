/* trace_vocab.h - the words of a tracer OTF2 archive: region (canonical)
 * names, attribute names, metric member names, location and group name
 * patterns, archive property names, as docs/trace-model.md describes them.
 *
 * The writer (src/writer/) writes these strings and the readers
 * (src/summary/, tools/convert_*, through src/otf2read/) match them, so
 * each is spelled once, here: a renamed region cannot leave a reader
 * counting nothing. Only plain string macros (usable in static
 * initialisers, format strings and literal concatenation), no code and no
 * OTF2 types, so anything may include it: the writer's model and OTF2
 * layers, the readers, tests written in C. */
#ifndef TRACER_COMMON_TRACE_VOCAB_H
#define TRACER_COMMON_TRACE_VOCAB_H

/* The length of a string literal (a prefix to compare with strncmp). */
#define TRV_LEN(lit) (sizeof(lit "") - 1)

/* ---- the archive --------------------------------------------------------- */

#define TRV_ARCHIVE_NAME "traces"       /* OTF2_Archive_Open's archive name */
#define TRV_ANCHOR_NAME "traces.otf2"   /* the anchor file in the trace directory */
/* The run's journal beside it: a directory holding it and no (or an
 * empty) anchor is a run that has not written its trace (yet). */
#define TRV_JOURNAL_NAME "tracer.journal"

/* ---- canonical region names ---------------------------------------------- */

/* Target constructs (OMPT target kinds), in ompt_target_t order. */
#define TRV_REGION_TARGET "target"
#define TRV_REGION_TARGET_ENTER_DATA "target enter data"
#define TRV_REGION_TARGET_EXIT_DATA "target exit data"
#define TRV_REGION_TARGET_UPDATE "target update"
#define TRV_REGION_TARGET_NOWAIT "target nowait"
#define TRV_REGION_TARGET_ENTER_DATA_NOWAIT "target enter data nowait"
#define TRV_REGION_TARGET_EXIT_DATA_NOWAIT "target exit data nowait"
#define TRV_REGION_TARGET_UPDATE_NOWAIT "target update nowait"

/* Data operations the summary counts (allocations, deletes, transfers). */
#define TRV_REGION_ALLOC "alloc"
#define TRV_REGION_ALLOC_ASYNC "alloc async"
#define TRV_REGION_DELETE "delete"
#define TRV_REGION_DELETE_ASYNC "delete async"
#define TRV_REGION_TO_DEVICE "transfer to device"
#define TRV_REGION_TO_DEVICE_ASYNC "transfer to device async"
#define TRV_REGION_FROM_DEVICE "transfer from device"
#define TRV_REGION_FROM_DEVICE_ASYNC "transfer from device async"

/* A kernel's canonical name (its display name is the kernel's own). */
#define TRV_REGION_KERNEL "kernel"

/* Link variables: a mapping, and a reference pointer found stale. */
#define TRV_REGION_LINK_MAP "link map"
#define TRV_REGION_STALE_LINK "stale link pointer"

/* MPI_T: a drop report on a source's location. */
#define TRV_REGION_MPIT_DROPPED "MPI_T events dropped"

/* Host OpenMP: the regions a thread's work is in (role PARALLEL)... */
#define TRV_REGION_PARALLEL "parallel"
#define TRV_REGION_TEAMS "teams"
/* ...and its states; the waiting ones are "OMP wait" time. */
#define TRV_STATE_IMPLICIT_BARRIER "<OMP-implicit_barrier>"
#define TRV_STATE_EXPLICIT_BARRIER "<OMP-explicit_barrier>"
#define TRV_STATE_TASKWAIT "<OMP-taskwait>"
#define TRV_STATE_TASKGROUP "<OMP-taskgroup>"
#define TRV_STATE_REDUCTION "<OMP-reduction>"
#define TRV_STATE_LOCK_WAIT "<OMP-lock_wait>"
#define TRV_STATE_CRITICAL_WAIT "<OMP-critical_section_wait>"
#define TRV_STATE_ORDERED_WAIT "<OMP-ordered_section_wait>"
#define TRV_STATE_ATOMIC_WAIT "<OMP-atomic_wait>"
#define TRV_STATE_OVERHEAD "<OMP-overhead>"
#define TRV_STATE_IDLE "<OMP-idle>"

/* ---- attribute names ----------------------------------------------------- */

#define TRV_ATTR_BYTES "bytes"
#define TRV_ATTR_VARIABLE "variable"
#define TRV_ATTR_INCOMPLETE "incomplete"
#define TRV_ATTR_SRC_DEVICE "src_device"
#define TRV_ATTR_DST_DEVICE "dst_device"
#define TRV_ATTR_SRC_ADDR "src_addr"
#define TRV_ATTR_DST_ADDR "dst_addr"
/* data mapping advice (issue 37): the pattern a data op belongs to */
#define TRV_ATTR_ADVICE "advice"
#define TRV_ATTR_MPIT_DROPPED "mpit_dropped"
#define TRV_ATTR_MPIT_EVENT_TYPE "mpit_event_type"
#define TRV_ATTR_LOST "lost" /* MeasurementOnOff(OFF): events dropped in that gap */

/* ---- metric member names ------------------------------------------------- */

#define TRV_METRIC_DEVICE_MEMORY "device_memory_in_use"
#define TRV_METRIC_MPIT_DROPPED "MPI_T dropped events"
#define TRV_METRIC_OMP_WORK "OMP work"
#define TRV_METRIC_OMP_WAIT "OMP wait"

/* ---- location and group names -------------------------------------------- */

/* A CPU_THREAD location named "MPI_T source <name>" is an MPI_T source. */
#define TRV_MPIT_SOURCE_PREFIX "MPI_T source "
/* A job's process group: "rank <N>"; its devices "rank <N> device <d>". */
#define TRV_RANK_PREFIX "rank "
/* A device group "device <d>"; its RMA window "device <d> memory". */
#define TRV_DEVICE_WORD "device "
#define TRV_DEVICE_MEMORY_SUFFIX " memory"

/* ---- archive and location group properties ------------------------------- */

#define TRV_PROP_RUN_END "TRACER::RUN::END"
#define TRV_PROP_CONFIG_PREFIX "TRACER::CONFIG::"    /* + the variable's name */
#define TRV_PROP_MPIT_PREFIX "TRACER::MPIT::"        /* + STATUS or SOURCE::<name> */
#define TRV_PROP_MPIT_STATUS "STATUS"
#define TRV_PROP_MPIT_SOURCE "SOURCE::"
/* What TRACER_MIN_BYTES kept out of the events, per direction; the value
 * reads TRV_PROP_SMALL_VALUE_FMT. */
#define TRV_PROP_SMALL_PREFIX "TRACER::FILTERED::SMALL_TRANSFERS_"
#define TRV_PROP_SMALL_TO "TO_DEVICE"
#define TRV_PROP_SMALL_FROM "FROM_DEVICE"
#define TRV_PROP_SMALL_VALUE_FMT "%llu transfers, %llu bytes"

#endif
