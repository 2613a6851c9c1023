/* mpit_double_internal.h - what the files of the MPI_T provider TEST DOUBLE
 * share (nothing here is exported from libmpit_double.so):
 *   mpit_double.c          the MPI_T event provider and its events;
 *   mpit_double_handles.c  the dialects' handles: MPICH's integers, or Open
 *                          MPI's pointers mapped to MPICH's integers;
 *   mpit_double_mpi.c      the MPI functions the double wraps, where
 *                          handles cross from the caller's dialect to
 *                          MPICH's (it has no mpi.h: its parameters must
 *                          take a pointer-sized handle).
 * Every handle below is MPICH's (an int) unless it is an md_word. */
#ifndef MPIT_DOUBLE_INTERNAL_H
#define MPIT_DOUBLE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define MD_HIDDEN __attribute__((visibility("hidden")))

/* A handle as the caller passed it: MPICH's int in the low 32 bits (the
 * upper ones undefined), or an Open MPI-style object address. */
typedef uint64_t md_word;

/* MPIT_DOUBLE_DIALECT=ompi (mpit_double.c's header says what it covers). */
MD_HIDDEN int md_ompi(void);

/* Open MPI's predefined objects, by the names its mpi.h gives them, and the
 * MPICH handle each stands for (expanded only where mpi.h is included). */
#define MD_OMPI_OBJECTS(X)                                                                                        \
    X(ompi_mpi_comm_world, MPI_COMM_WORLD)                                                                      \
    X(ompi_mpi_comm_self, MPI_COMM_SELF)                                                                        \
    X(ompi_mpi_comm_null, MPI_COMM_NULL)                                                                        \
    X(ompi_mpi_info_null, MPI_INFO_NULL)                                                                        \
    X(ompi_mpi_op_sum, MPI_SUM)                                                                                 \
    X(ompi_mpi_op_min, MPI_MIN)                                                                                 \
    X(ompi_mpi_op_max, MPI_MAX)                                                                                 \
    X(ompi_mpi_datatype_null, MPI_DATATYPE_NULL)                                                                \
    X(ompi_mpi_errhandler_null, MPI_ERRHANDLER_NULL)                                                            \
    X(ompi_mpi_char, MPI_CHAR)                                                                                  \
    X(ompi_mpi_signed_char, MPI_SIGNED_CHAR)                                                                    \
    X(ompi_mpi_unsigned_char, MPI_UNSIGNED_CHAR)                                                                \
    X(ompi_mpi_byte, MPI_BYTE)                                                                                  \
    X(ompi_mpi_short, MPI_SHORT)                                                                                \
    X(ompi_mpi_unsigned_short, MPI_UNSIGNED_SHORT)                                                              \
    X(ompi_mpi_int, MPI_INT)                                                                                    \
    X(ompi_mpi_unsigned, MPI_UNSIGNED)                                                                          \
    X(ompi_mpi_long, MPI_LONG)                                                                                  \
    X(ompi_mpi_unsigned_long, MPI_UNSIGNED_LONG)                                                                \
    X(ompi_mpi_long_long_int, MPI_LONG_LONG_INT)                                                                \
    X(ompi_mpi_unsigned_long_long, MPI_UNSIGNED_LONG_LONG)                                                      \
    X(ompi_mpi_int8_t, MPI_INT8_T)                                                                              \
    X(ompi_mpi_int16_t, MPI_INT16_T)                                                                            \
    X(ompi_mpi_int32_t, MPI_INT32_T)                                                                            \
    X(ompi_mpi_int64_t, MPI_INT64_T)                                                                            \
    X(ompi_mpi_uint8_t, MPI_UINT8_T)                                                                            \
    X(ompi_mpi_uint16_t, MPI_UINT16_T)                                                                          \
    X(ompi_mpi_uint32_t, MPI_UINT32_T)                                                                          \
    X(ompi_mpi_uint64_t, MPI_UINT64_T)                                                                          \
    X(ompi_mpi_float, MPI_FLOAT)                                                                                \
    X(ompi_mpi_double, MPI_DOUBLE)                                                                              \
    X(ompi_mpi_c_bool, MPI_C_BOOL)                                                                              \
    X(ompi_mpi_wchar, MPI_WCHAR)                                                                                \
    X(ompi_mpi_aint, MPI_AINT)                                                                                  \
    X(ompi_mpi_offset, MPI_OFFSET)                                                                              \
    X(ompi_mpi_count, MPI_COUNT)                                                                                \
    X(ompi_mpi_2int, MPI_2INT)

#define MD_OMPI_DECLARE(object, mpich) extern char object[64];
MD_OMPI_OBJECTS(MD_OMPI_DECLARE)
#undef MD_OMPI_DECLARE

/* MPICH's constants mpit_double_mpi.c needs. */
typedef struct {
    int comm_world, comm_null;
    void *in_place;
    void *status_ignore;
} md_mpich_t;
MD_HIDDEN extern const md_mpich_t md_mpich;

/* Handles at the boundary. @o: translate (the Open MPI dialect, and the
 * caller is not itself below the boundary); otherwise MPICH's handles pass
 * as they are. */
MD_HIDDEN int md_in(int o, md_word h);               /* the caller's handle -> MPICH's */
MD_HIDDEN int md_get(int o, const void *p);          /* the caller's handle stored at @p -> MPICH's */
MD_HIDDEN void md_put(int o, void *p, int h);        /* stores MPICH's @h at @p as the caller's */
MD_HIDDEN const void *md_buf(int o, const void *b);  /* Open MPI's MPI_IN_PLACE -> MPICH's */
MD_HIDDEN void md_forget(int h);                     /* @h was freed: its object may serve another */
/* The dialect's value of MPICH's @h: (uint32_t)h, or its object's address
 * (one is made for a handle not seen before). What events carry. */
MD_HIDDEN uint64_t md_out(int h);
/* Open MPI's MPI_Status from MPICH's (source, tag, error, byte count). */
MD_HIDDEN void md_status_out(void *ompi_status, const void *mpich_status);
MD_HIDDEN size_t md_mpich_status_size(void);

/* Events around the wrapped calls (mpit_double.c), MPICH's handles. */
MD_HIDDEN void md_init_done(int rank, int size, int provided); /* MPI_Init returned */
MD_HIDDEN void md_finalizing(void);                           /* MPI_Finalize, before MPICH's */
MD_HIDDEN void md_created(int comm, int size);
MD_HIDDEN void md_freeing(int comm);
MD_HIDDEN void md_name_set(int comm);
MD_HIDDEN void md_errhandler(int comm, int code, int errhandler);
MD_HIDDEN int md_auto(void); /* automatic events are on */

#endif
