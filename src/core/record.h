/* record.h - the fixed-size record every producer writes into a thread buffer.
 *
 * One layout for every event keeps the hot path a 64-byte copy and lets the
 * writer (and later the journal) walk chunks as plain arrays. Field meaning
 * per record type is listed below; docs/trace-model.md says how each becomes
 * OTF2. */
#ifndef TR_CORE_RECORD_H
#define TR_CORE_RECORD_H

#include <stdint.h>

enum tr_rec_type {
    TR_REC_NONE = 0,
    TR_REC_TARGET,        /* id=target_id sub=ompt_target_t dev=device u0=codeptr_ra */
    TR_REC_DATA_OP,       /* id=host_op_id sub=optype dev=src dev2=dst
                           * begin: u0=target_id u1=src u2=dst u3=bytes
                           * end:   u0=codeptr   u1=src u2=dst u3=bytes
                           * (a copy of at most 8 bytes from the host to a device:
                           * end aux=TR_DATA_OP_VALUE, u1 = the bytes written; at 8
                           * bytes, the address a link pointer receives) */
    TR_REC_SUBMIT,        /* id=host_op_id dev=device u0=target_id u1=target codeptr aux=teams */
    TR_REC_DEVICE_INIT,   /* dev, u0=(const char *) type, copied */
    TR_REC_DEVICE_FINI,   /* dev */
    TR_REC_DEVICE_LOAD,   /* dev id=module_id u0=(const char *) file, copied
                           * u1=host_addr u2=bytes u3=device_addr */
    TR_REC_DEVICE_UNLOAD, /* dev id=module_id */
    TR_REC_TARGET_MAP,    /* id=target_id aux=nitems */
    TR_REC_USER_REGION,   /* id=tracer_region_t */
    TR_REC_USER_MARK,     /* id=tracer_region_t u0=value */
    TR_REC_LOSS,          /* drop mode: u0=records lost, u1/u2=first/last lost (ticks).
                           * Made by the journal reader at a gap in a thread's chunk seqs
                           * (never by a producer): u0=0, u1=the last event before the gap,
                           * u2=time, u3=chunks missing (their event count is unknown) */
    TR_REC_MPIT,          /* an MPI_T event instance: id=registration sub=source dev=event type
                           * dev2=TR_MPIT_F_* aux=payload slots u0=source tick u1..u3=slots 0..2 */
    TR_REC_MPIT_MORE,     /* the next 4 payload slots of the MPIT record before it: id=registration
                           * aux=index of this continuation (0 = slots 3..6) u0..u3 */
    TR_REC_MPIT_DROP,     /* dropped MPI_T events: id=registration sub=source dev=event type u0=count */
    TR_REC_MPI_CALL,      /* an interposed MPI call: id=enum tr_mpi_call, begin/end; end: u0=return code */
    TR_REC_OMP,           /* a host OpenMP event (TRACER_OMPT host_states): sub=enum tr_omp_event,
                           * fields per event below */
    TR_REC_DATA_HASH,     /* the content hash of a transfer's host bytes: id=host_op_id of the transfer
                           * u0=XXH3 64-bit hash u1=bytes hashed (TRACER_HASH) */
    TR_REC_TYPE_COUNT
};

enum tr_rec_phase {
    TR_PHASE_BEGIN = 1,
    TR_PHASE_END = 2,
    TR_PHASE_POINT = 3, /* an event with no duration (non-EMI fallbacks, marks) */
};

/* TR_REC_OMP sub: which OMPT host callback, on the thread that ran it.
 * Parallel and task ids are tracer's own, unique in the process (the
 * recording thread's index in the high bits, its counter below; never 0),
 * kept in the runtime's parallel_data / task_data. An implicit task's
 * task_data holds its parallel id, so an implicit task's "task id" in
 * TASK_SCHEDULE is its parallel id (0: the initial task). Where the runtime
 * passes no parallel_data (the end of an implicit barrier, of an implicit
 * task), the parallel id is the one the implicit task stored. */
enum tr_omp_event {
    TR_OMP_THREAD = 1,     /* thread_begin/end: dev=ompt_thread_t */
    TR_OMP_PARALLEL,       /* parallel_begin/end (encountering thread): dev=ompt_parallel_flag_t flags
                            * id=parallel id u0=codeptr_ra; begin: u1=requested team size,
                            * u2=1 when codeptr_ra is in the OpenMP runtime itself (its own
                            * team: libomp's hidden helpers), else 0 */
    TR_OMP_IMPLICIT_TASK,  /* implicit_task begin/end: dev=flags (ompt_task_initial/_implicit)
                            * id=parallel id (0 for the initial task) u1=actual team size
                            * u2=thread number in the team (end: as the runtime gives them) */
    TR_OMP_WORK,           /* work begin/end: dev=ompt_work_t id=parallel id u0=codeptr_ra u1=count */
    TR_OMP_MASKED,         /* masked begin/end: id=parallel id u0=codeptr_ra */
    TR_OMP_SYNC,           /* sync_region begin/end: dev=ompt_sync_region_t id=parallel id u0=codeptr_ra */
    TR_OMP_SYNC_WAIT,      /* sync_region_wait begin/end: as TR_OMP_SYNC */
    TR_OMP_REDUCTION,      /* reduction begin/end: id=parallel id u0=codeptr_ra */
    TR_OMP_MUTEX_WAIT,     /* mutex_acquire (begin) .. mutex_acquired (end): dev=ompt_mutex_t
                            * id=wait_id u0=codeptr_ra; begin: u1=hint u2=impl. A test_lock or
                            * test_nest_lock does not wait (and may fail): no WAIT records. The
                            * re-acquisition of a nest lock the thread holds ends its wait at
                            * the runtime's nest_lock begin */
    TR_OMP_MUTEX_HELD,     /* mutex_acquired (begin) .. mutex_released (end): dev=ompt_mutex_t
                            * id=wait_id u0=codeptr_ra; a nest lock's inner levels are not
                            * recorded: its HELD spans the outermost level */
    TR_OMP_TASK_CREATE,    /* task_create, point: dev=flags id=new task id u0=codeptr_ra */
    TR_OMP_TASK_SCHEDULE,  /* task_schedule, point: dev=prior_task_status id=prior task id
                            * u0=next task id */
};

enum tr_mpi_call { TR_MPI_INIT = 1, TR_MPI_INIT_THREAD, TR_MPI_FINALIZE, TR_MPI_SESSION_INIT, TR_MPI_SESSION_FINALIZE };

/* TR_REC_MPIT dev2 flags. */
enum {
    TR_MPIT_F_TICK = 1,      /* u0 holds the source tick (MPI_T_event_get_timestamp worked) */
    TR_MPIT_F_READ_FAILED = 2, /* an element could not be read; its slots are 0 */
};

/* An MPI_T payload element occupies ceil(size / 8) 8-byte slots, in element
 * order, bytes as in memory; 3 slots ride in the event record, 4 in each
 * continuation. */
#define TR_MPIT_HEAD_SLOTS 3
#define TR_MPIT_MORE_SLOTS 4

/* TR_REC_DATA_OP aux: the end record's u1 holds the bytes copied, not the source address. */
#define TR_DATA_OP_VALUE 1u

typedef struct tr_record {
    uint64_t time;  /* raw clock ticks, see clock.h */
    uint8_t type;   /* enum tr_rec_type */
    uint8_t phase;  /* enum tr_rec_phase */
    uint16_t sub;
    int32_t dev;
    int32_t dev2;
    uint32_t aux;
    uint64_t id;
    uint64_t u[4];
} tr_record;

_Static_assert(sizeof(tr_record) == 64, "a record is one cache line");

#endif
