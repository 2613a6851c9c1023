/* other_mpi_standin.c - TEST DOUBLE: a library that answers
 * MPI_Get_library_version like Open MPI. Preloaded before MPICH it makes the
 * process look like it runs another MPI than the one tracer was built for,
 * which must make tracer leave MPI alone (its handles would not match). */
#include <string.h>

int MPI_Get_library_version(char *version, int *resultlen)
{
    strcpy(version, "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4");
    *resultlen = (int)strlen(version);
    return 0;
}
