/* unknown_mpi_standin.c - TEST DOUBLE: a library that answers
 * MPI_Get_library_version like an MPI of a family tracer does not know.
 * Preloaded after libtracer.so into a real MPI program it makes the process
 * look like it runs such an MPI, which must make tracer leave MPI alone
 * with one line (it cannot know that MPI's handles). */
#include <string.h>

int MPI_Get_library_version(char *version, int *resultlen)
{
    strcpy(version, "Acme MPI 1.0 (a family tracer does not know)");
    *resultlen = (int)strlen(version);
    return 0;
}
