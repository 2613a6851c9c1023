/* info.h - the engines behind `tracer info`, one per file:
 * info_omp.c (OpenMP runtime and devices), info_gpu.c (the GPU driver), info_mpi.c (MPI library and
 * MPI_T), info_config.c (the TRACER_* table), info_child.c (running a probe
 * in a forked child) and find_lib.c (where libtracer.so is). */
#ifndef TRACER_TOOLS_INFO_H
#define TRACER_TOOLS_INFO_H

#include <stddef.h>
#include <stdio.h>

struct tr_info_opts {
    const char *lib;           /* --lib: libtracer.so to load, NULL: search */
    const char *omp_lib;       /* --omp-lib, NULL: the defaults */
    const char *omptarget_lib; /* --omptarget-lib, NULL: the defaults */
    const char *mpi_lib;       /* --mpi-lib, NULL: the defaults */
};

/* Finds libtracer.so: @override when given, else next to the executable (build
 * tree, then install tree), else the paths known at build time. On success
 * writes an absolute path to @out and returns 0; else returns -1 and lists
 * the paths tried in @tried. */
int tr_find_libtracer(const char *override, char *out, size_t outlen, char *tried, size_t triedlen);

/* Runs @probe(@arg, out) in a forked child whose stdout is a pipe and whose
 * stderr is /dev/null, and copies what it prints to @dest. Returns the
 * child's exit status, or -1 (after one "tracer: info:" line on stderr) when
 * it could not run or died of a signal. @what names the probe in that line. */
int tr_info_in_child(int (*probe)(void *arg, FILE *out), void *arg, FILE *dest, const char *what,
                     unsigned timeout_s);

/* Each prints its section to @out; none fails the command. */
void tr_info_omp(FILE *out, const struct tr_info_opts *o);
void tr_info_mpi(FILE *out, const struct tr_info_opts *o);
/* The CUDA driver libomptarget's plugin would load, and its devices with
 * the type the plugin reports (sm_NN): GPUs the OpenMP section cannot list
 * without a program's image for them. */
void tr_info_gpu(FILE *out);
/* The TRACER_* table with each variable's value in @envp and its source, and
 * the unknown TRACER_* names in @envp with the closest known one. */
void tr_info_config(FILE *out, char *const *envp);
/* The README's table: exactly the lines between the markers. */
void tr_info_config_markdown(FILE *out);

#endif
