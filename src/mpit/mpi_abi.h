/* mpi_abi.h - the part of mpi.h tracer uses, for whichever MPI the process
 * has loaded.
 *
 * tracer includes no mpi.h and links no MPI: one libtracer.so serves every
 * MPI family it knows. What differs between families is the representation
 * of handles and a few constants: MPICH's handles are 32-bit integers fixed
 * at compile time (MPI_INT is 0x4c000405), Open MPI's are the addresses of
 * objects inside its library (MPI_INT is &ompi_mpi_int). So every handle is
 * a 64-bit word here, and the predefined ones come from a table
 * (mpi_abi.c) chosen at run time by tr_mpi_abi_select() from
 * MPI_Get_library_version: MPICH's integers, or Open MPI's objects found
 * with dlsym. Nothing below may be used before a family is selected.
 *
 * Passing a 64-bit word where MPICH's function takes an int is correct on
 * the x86-64 and AArch64 calling conventions (the callee reads the low 32
 * bits), and an MPICH handle it writes into a zeroed word reads back as the
 * same number on little-endian machines. Arrays of handles and handles
 * behind a pointer the MPI hands us are the exception: they are read with
 * tr_mpi_handle_at(), which knows the family's handle size. */
#ifndef TR_MPI_ABI_H
#define TR_MPI_ABI_H

#ifdef MPI_VERSION
#error "mpi_abi.h stands in for mpi.h; include one or the other"
#endif

#include <stdint.h>
#include <string.h>

typedef uint64_t tr_mpi_handle;
typedef tr_mpi_handle MPI_Comm;
typedef tr_mpi_handle MPI_Datatype;
typedef tr_mpi_handle MPI_Op;
typedef tr_mpi_handle MPI_Info;
/* 64-bit in both families on LP64 machines. */
typedef long MPI_Aint;
typedef long long MPI_Count;
typedef long long MPI_Offset;
/* Only ever passed as MPI_STATUS_IGNORE. */
typedef struct tr_mpi_status MPI_Status;
/* Pointers in both families. */
typedef struct tr_mpi_t_enum *MPI_T_enum;
typedef struct tr_mpi_t_event_instance *MPI_T_event_instance;
typedef struct tr_mpi_t_event_registration *MPI_T_event_registration;
/* C enums in both families, with the same values. */
typedef int MPI_T_source_order;
typedef int MPI_T_cb_safety;
typedef void MPI_T_event_cb_function(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety, void *);
typedef void MPI_T_event_free_cb_function(MPI_T_event_registration, MPI_T_cb_safety, void *);
typedef void MPI_T_event_dropped_cb_function(MPI_Count, MPI_T_event_registration, int, MPI_T_cb_safety, void *);

/* Constants both families (MPICH 3.x/4.x, Open MPI 4.x-6.x) agree on. */
enum {
    MPI_SUCCESS = 0,
    MPI_ERR_COUNT = 2,
    MPI_THREAD_SINGLE = 0,
    MPI_THREAD_MULTIPLE = 3,
    MPI_UNDEFINED = -32766,
    MPI_T_SOURCE_ORDERED = 0,
    MPI_T_SOURCE_UNORDERED = 1,
    MPI_T_CB_REQUIRE_THREAD_SAFE = 2,
};
/* The larger of the two (MPICH 8192, Open MPI 256). */
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)

/* The predefined datatypes tracer knows: its name, MPICH's handle, the
 * Open MPI object that is the handle. */
#define TR_MPI_DATATYPES(X)                                                                                        \
    X(CHAR, 0x4c000101, "ompi_mpi_char")                                                                         \
    X(SIGNED_CHAR, 0x4c000118, "ompi_mpi_signed_char")                                                           \
    X(UNSIGNED_CHAR, 0x4c000102, "ompi_mpi_unsigned_char")                                                       \
    X(BYTE, 0x4c00010d, "ompi_mpi_byte")                                                                         \
    X(SHORT, 0x4c000203, "ompi_mpi_short")                                                                       \
    X(UNSIGNED_SHORT, 0x4c000204, "ompi_mpi_unsigned_short")                                                     \
    X(INT, 0x4c000405, "ompi_mpi_int")                                                                           \
    X(UNSIGNED, 0x4c000406, "ompi_mpi_unsigned")                                                                 \
    X(LONG, 0x4c000807, "ompi_mpi_long")                                                                         \
    X(UNSIGNED_LONG, 0x4c000808, "ompi_mpi_unsigned_long")                                                       \
    X(LONG_LONG, 0x4c000809, "ompi_mpi_long_long_int")                                                           \
    X(UNSIGNED_LONG_LONG, 0x4c000819, "ompi_mpi_unsigned_long_long")                                             \
    X(INT8_T, 0x4c000137, "ompi_mpi_int8_t")                                                                     \
    X(INT16_T, 0x4c000238, "ompi_mpi_int16_t")                                                                   \
    X(INT32_T, 0x4c000439, "ompi_mpi_int32_t")                                                                   \
    X(INT64_T, 0x4c00083a, "ompi_mpi_int64_t")                                                                   \
    X(UINT8_T, 0x4c00013b, "ompi_mpi_uint8_t")                                                                   \
    X(UINT16_T, 0x4c00023c, "ompi_mpi_uint16_t")                                                                 \
    X(UINT32_T, 0x4c00043d, "ompi_mpi_uint32_t")                                                                 \
    X(UINT64_T, 0x4c00083e, "ompi_mpi_uint64_t")                                                                 \
    X(FLOAT, 0x4c00040a, "ompi_mpi_float")                                                                       \
    X(DOUBLE, 0x4c00080b, "ompi_mpi_double")                                                                     \
    X(C_BOOL, 0x4c00013f, "ompi_mpi_c_bool")                                                                     \
    X(WCHAR, 0x4c00040e, "ompi_mpi_wchar")                                                                       \
    X(AINT, 0x4c000843, "ompi_mpi_aint")                                                                         \
    X(OFFSET, 0x4c000844, "ompi_mpi_offset")                                                                     \
    X(COUNT, 0x4c000845, "ompi_mpi_count")

enum tr_mpi_dt {
#define TR_MPI_DT_ENUM(name, mpich, ompi) TR_MPI_DT_##name,
    TR_MPI_DATATYPES(TR_MPI_DT_ENUM)
#undef TR_MPI_DT_ENUM
    TR_MPI_NDATATYPES
};

enum tr_mpi_family { TR_MPI_UNKNOWN, TR_MPI_MPICH, TR_MPI_OPENMPI };

/* One family's handles and constants. */
typedef struct tr_mpi_abi {
    enum tr_mpi_family family;
    const char *name;          /* "MPICH", "Open MPI" */
    int handle_size;           /* bytes of a handle in memory: 4 or 8 */
    int verbosity_user_basic;  /* MPI_T_VERBOSITY_*: 9 consecutive values from here */
    int bind_no_object;        /* MPI_T_BIND_*: consecutive values from here */
    void *in_place;
    MPI_Status *status_ignore;
    MPI_Comm comm_world, comm_self, comm_null;
    MPI_Info info_null;
    MPI_Op op_sum, op_min;
    MPI_Datatype datatype_null;
    MPI_Datatype dt[TR_MPI_NDATATYPES];
} tr_mpi_abi;

/* The selected family's; all zero before one is selected. */
extern tr_mpi_abi tr_mpi;

/* Chooses the family of the loaded MPI from its MPI_Get_library_version
 * @text and the symbols it defines. Returns the family, or TR_MPI_UNKNOWN
 * (an MPI tracer does not know, or one whose handles it cannot find: then
 * nothing MPI may be touched). Idempotent; callable before MPI_Init. */
enum tr_mpi_family tr_mpi_abi_select(const char *text);

/* The handle stored at @p in the selected family's representation. */
static inline tr_mpi_handle tr_mpi_handle_at(const void *p)
{
    if (tr_mpi.handle_size == 4) {
        uint32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#define MPI_COMM_WORLD (tr_mpi.comm_world)
#define MPI_COMM_SELF (tr_mpi.comm_self)
#define MPI_COMM_NULL (tr_mpi.comm_null)
#define MPI_INFO_NULL (tr_mpi.info_null)
#define MPI_SUM (tr_mpi.op_sum)
#define MPI_MIN (tr_mpi.op_min)
#define MPI_IN_PLACE (tr_mpi.in_place)
#define MPI_STATUS_IGNORE (tr_mpi.status_ignore)
#define MPI_DATATYPE_NULL (tr_mpi.datatype_null)
#define MPI_CHAR (tr_mpi.dt[TR_MPI_DT_CHAR])
#define MPI_BYTE (tr_mpi.dt[TR_MPI_DT_BYTE])
#define MPI_INT (tr_mpi.dt[TR_MPI_DT_INT])
#define MPI_FLOAT (tr_mpi.dt[TR_MPI_DT_FLOAT])
#define MPI_DOUBLE (tr_mpi.dt[TR_MPI_DT_DOUBLE])
#define MPI_INT8_T (tr_mpi.dt[TR_MPI_DT_INT8_T])
#define MPI_INT16_T (tr_mpi.dt[TR_MPI_DT_INT16_T])
#define MPI_INT32_T (tr_mpi.dt[TR_MPI_DT_INT32_T])
#define MPI_INT64_T (tr_mpi.dt[TR_MPI_DT_INT64_T])
#define MPI_UINT8_T (tr_mpi.dt[TR_MPI_DT_UINT8_T])
#define MPI_UINT16_T (tr_mpi.dt[TR_MPI_DT_UINT16_T])
#define MPI_UINT32_T (tr_mpi.dt[TR_MPI_DT_UINT32_T])
#define MPI_UINT64_T (tr_mpi.dt[TR_MPI_DT_UINT64_T])

/* Both families number these in the standard's order, from different
 * bases. */
#define MPI_T_VERBOSITY_USER_BASIC (tr_mpi.verbosity_user_basic)
#define MPI_T_BIND_NO_OBJECT (tr_mpi.bind_no_object)
#define MPI_T_BIND_MPI_COMM (tr_mpi.bind_no_object + 1)

#endif
