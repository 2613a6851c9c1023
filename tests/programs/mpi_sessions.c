/* mpi_sessions.c - an MPI program of the session model (MPI 4.0): no
 * MPI_Init, no MPI_COMM_WORLD. It makes a communicator from the session's
 * world process set, names it (the MPI_T test double raises a
 * communicator-bound event for that), raises one more MPI_T event through
 * the double's control API when the double is loaded, frees everything and
 * exits with status 6. Prints the communicator's handle. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

int main(void)
{
    MPI_Session session;
    MPI_Group group;
    MPI_Comm comm;
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS ||
        MPI_Group_from_session_pset(session, "mpi://WORLD", &group) != MPI_SUCCESS ||
        MPI_Comm_create_from_group(group, "tracer.test.sessions", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm) !=
            MPI_SUCCESS) {
        printf("session setup failed\n");
        return 1;
    }
    MPI_Comm_set_name(comm, "sessions-comm");
    int (*raise)(const char *, ...) = (int (*)(const char *, ...))dlsym(RTLD_DEFAULT, "mpit_double_raise");
    if (raise)
        raise("ompi.mpi.communicator_created", 5, 0x1234ull);
    int size;
    MPI_Comm_size(comm, &size);
    printf("comm 0x%x size %d\n", (unsigned)comm, size);
    MPI_Comm_free(&comm);
    MPI_Group_free(&group);
    MPI_Session_finalize(&session);
    return 6;
}
