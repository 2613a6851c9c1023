/* offload_entry.h - the parts of an OpenMP offload entry's symbol.
 *
 * Clang names the kernel outlined from a target construct
 * __omp_offloading_<device id>_<file id>_<function>_l<line> (hex ids; the
 * enclosing function's linkage name, so mangled in C++; the construct's
 * line). The journal matches entries to constructs by function and line
 * (journal/symbols.c) and the writer names kernels after them
 * (writer/otf2_regions.c). */
#ifndef TRACER_COMMON_OFFLOAD_ENTRY_H
#define TRACER_COMMON_OFFLOAD_ENTRY_H

#include <stddef.h>

#define TR_OFFLOAD_ENTRY_PREFIX "__omp_offloading_"

/* The function Clang outlines a deferred target task into (a construct
 * with nowait): .omp_task_entry., .omp_task_entry..<n>. LLVM 19 reports
 * such constructs with the plain kinds (ompt_target, not
 * ompt_target_nowait); a call from one of these is a nowait construct. */
#define TR_OMP_TASK_ENTRY_PREFIX ".omp_task_entry."

/* Splits @name: *@function points into it (*@function_len bytes, not
 * NUL-terminated), *@line is the construct's line. Returns 0, or -1 when
 * @name is not such a symbol. */
int tr_offload_entry_parse(const char *name, const char **function, size_t *function_len, int *line);

#endif
