/* The shared library of programs/crash_names.c: one target region
 * (KERNEL:lib) mapping this library's global lib_g, named after a crash
 * from this file as the program's own are from its file. */
#define M 64

double lib_g[M];

void crash_names_work(double *x)
{
#pragma omp target map(tofrom : x[0:M], lib_g) /* KERNEL:lib */
    for (int i = 0; i < M; i++)
        x[i] += lib_g[i];
}
