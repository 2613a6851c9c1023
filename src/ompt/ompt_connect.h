/* ompt_connect.h - that libomptarget reaches the OpenMP runtime the program
 * runs, so that target callbacks arrive at all.
 *
 * LLVM's libomptarget (17 and later) connects to libomp's OMPT interface with
 * dlopen("libomp.so") from inside libLLVM, whose search path rarely holds
 * that name: distributions ship libomp.so.5 and keep the bare name in a
 * compiler-private directory. When the name does not resolve to the running
 * libomp, tracer makes glibc record "libomp.so" as a name of the loaded
 * libomp (omp_name_alias.c), exactly what a search path holding it would
 * have done: dlopen("libomp.so") then returns the running runtime to every
 * caller. No dlopen is wrapped (a wrapper would change the caller, and with
 * it the $ORIGIN of every bare-name dlopen), no other name changes, and no
 * second OpenMP runtime is ever loaded. */
#ifndef TR_OMPT_CONNECT_H
#define TR_OMPT_CONNECT_H

#include <stddef.h>

typedef enum {
    TR_CONNECT_NO_OFFLOAD = 0, /* no libomptarget in the process */
    TR_CONNECT_BY_NAME,        /* "libomp.so" is the running libomp: nothing to do */
    TR_CONNECT_ALIASED,        /* tracer made "libomp.so" name the running libomp */
    TR_CONNECT_NO_INTERFACE,   /* no ompt_libomp_connect: an offload runtime older
                                * than LLVM 17, or not LLVM's; left alone */
    TR_CONNECT_FAILED,         /* the name does not resolve and tracer
                                * could not be made to */
    TR_CONNECT_LATE,           /* libomptarget appeared after start-up and
                                * connected (or failed to) before tracer
                                * could act: its registration bypassed us */
} tr_connect_state;

/* Looks for libomptarget and, when its dlopen("libomp.so") would miss the
 * running libomp, makes it do so. Idempotent and cheap once decided;
 * inert (loads nothing) in a process without libomptarget. Run by
 * libtracer's constructor, before the program's offload registration. */
tr_connect_state tr_ompt_connect_prepare(void);

/* The state now: for a process where libomptarget was loaded after start-up,
 * checks again whether the name resolves (loading nothing). */
tr_connect_state tr_ompt_connect_state(void);

/* One sentence (no "tracer:" prefix, no newline) on @state: what was found,
 * and for FAILED and LATE the cause and the fix. */
void tr_ompt_connect_describe(tr_connect_state state, char *buf, size_t len);

#endif
