/* mpi_abi.c - see mpi_abi.h: one small table per MPI family. */
#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#include "mpit/mpi_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

tr_mpi_abi tr_mpi;

/* MPICH 3.x and 4.x (and the MPIs of the MPICH ABI initiative): integer
 * constants, the same in every release since MPICH 3.1. */
static void mpich(tr_mpi_abi *a)
{
    static const uint32_t dts[TR_MPI_NDATATYPES] = {
#define TR_MPI_DT_MPICH(name, mpich, ompi) [TR_MPI_DT_##name] = mpich,
        TR_MPI_DATATYPES(TR_MPI_DT_MPICH)
#undef TR_MPI_DT_MPICH
    };
    a->family = TR_MPI_MPICH;
    a->name = "MPICH";
    a->handle_size = 4;
    a->verbosity_user_basic = 221;
    a->bind_no_object = 9700;
    a->in_place = (void *)-1;
    a->status_ignore = (MPI_Status *)1;
    a->comm_world = 0x44000000;
    a->comm_self = 0x44000001;
    a->comm_null = 0x04000000;
    a->info_null = 0x1c000000;
    a->op_min = 0x58000002;
    a->op_sum = 0x58000003;
    a->datatype_null = 0x0c000000;
    for (int i = 0; i < TR_MPI_NDATATYPES; i++)
        a->dt[i] = dts[i];
}

/* Open MPI: a predefined handle is the address of an object in its library.
 * Every one must be found, or the MPI is not one tracer can use. */
static int openmpi(tr_mpi_abi *a)
{
    static const char *const dts[TR_MPI_NDATATYPES] = {
#define TR_MPI_DT_OMPI(name, mpich, ompi) [TR_MPI_DT_##name] = ompi,
        TR_MPI_DATATYPES(TR_MPI_DT_OMPI)
#undef TR_MPI_DT_OMPI
    };
    static const struct {
        const char *symbol;
        size_t field;
    } objects[] = {
        {"ompi_mpi_comm_world", offsetof(tr_mpi_abi, comm_world)},
        {"ompi_mpi_comm_self", offsetof(tr_mpi_abi, comm_self)},
        {"ompi_mpi_comm_null", offsetof(tr_mpi_abi, comm_null)},
        {"ompi_mpi_info_null", offsetof(tr_mpi_abi, info_null)},
        {"ompi_mpi_op_sum", offsetof(tr_mpi_abi, op_sum)},
        {"ompi_mpi_op_min", offsetof(tr_mpi_abi, op_min)},
        {"ompi_mpi_datatype_null", offsetof(tr_mpi_abi, datatype_null)},
    };
    a->family = TR_MPI_OPENMPI;
    a->name = "Open MPI";
    a->handle_size = sizeof(void *);
    a->verbosity_user_basic = 0;
    a->bind_no_object = 0;
    a->in_place = (void *)1;
    a->status_ignore = (MPI_Status *)0;
    for (size_t i = 0; i < sizeof objects / sizeof *objects; i++) {
        void *p = dlsym(RTLD_DEFAULT, objects[i].symbol);
        if (!p)
            return -1;
        tr_mpi_handle h = (uintptr_t)p;
        memcpy((char *)a + objects[i].field, &h, sizeof h);
    }
    for (int i = 0; i < TR_MPI_NDATATYPES; i++) {
        void *p = dlsym(RTLD_DEFAULT, dts[i]);
        if (!p)
            return -1;
        a->dt[i] = (uintptr_t)p;
    }
    return 0;
}

enum tr_mpi_family tr_mpi_abi_select(const char *text)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!tr_mpi.family) {
        tr_mpi_abi a = {0};
        if (strstr(text, "MPICH"))
            mpich(&a);
        else if (strstr(text, "Open MPI") && openmpi(&a) != 0)
            a = (tr_mpi_abi){0};
        tr_mpi = a;
    }
    enum tr_mpi_family f = tr_mpi.family;
    pthread_mutex_unlock(&lock);
    return f;
}
