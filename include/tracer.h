/* tracer.h - public API of libtracer.
 *
 * Introduction
 * ------------
 * libtracer records what the OpenMP offload runtime does without any change
 * to the program: preload it (LD_PRELOAD=libtracer.so ./app) and the OpenMP
 * runtime's OMPT interface reports to it. This header is only needed to add
 * events of your own to the same trace: named regions (begin/end pairs) and
 * instant marks with a value. They go through the same per-thread lock-free
 * buffers as the OpenMP events, so they cost the same few nanoseconds.
 *
 * Register a name once (slow: takes a lock and copies the string), then use
 * the returned handle on the hot path:
 *
 *     static tracer_region_t solve;
 *     if (!solve) solve = tracer_region_register("solve");
 *     tracer_region_begin(solve);
 *     ...
 *     tracer_region_end(solve);
 *
 * Calling any function here turns tracing on in a program that has no OpenMP.
 * Every function is safe to call when tracing is off or disabled
 * (TRACER_ENABLE=0): it then does nothing.
 *
 * Build with `cc app.c $(pkg-config --cflags --libs tracer)` (tracer.pc is
 * installed with the library; README "Adding your own events"), or preload
 * libtracer.so and declare the functions weak to keep the program runnable
 * without it.
 */
#ifndef TRACER_H
#define TRACER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRACER_VERSION_MAJOR 0
#define TRACER_VERSION_MINOR 1
#define TRACER_VERSION_PATCH 0

/** Opaque handle of a registered region or mark name; 0 is never valid. */
typedef uint32_t tracer_region_t;

/*! tracer_region_register() :
 *  Registers @name for regions and marks, and turns tracing on.
 *  @name : NUL-terminated; copied, so the caller keeps ownership. NULL is
 *          refused. Registering the same name twice returns the same handle.
 *  @return : a handle > 0, also when tracing is off (TRACER_ENABLE=0, a
 *            configuration error, no place to write): then its events are
 *            simply not recorded. 0 only for a NULL name or out of memory;
 *            passing 0 to the functions below is harmless. When TRACER_REGIONS does not select @name, the handle
 *            is valid but its events are not recorded (they cost one branch).
 *  Thread-safe (takes a lock). Not async-signal-safe. Do not call it from
 *  inside an OMPT callback. Since 0.1.0. */
tracer_region_t tracer_region_register(const char *name);

/*! tracer_region_begin() / tracer_region_end() :
 *  Opens / closes a region on the calling thread. Regions must nest per
 *  thread; an end for a region that is not the innermost open one closes the
 *  inner ones, marked incomplete, and a begin that never ends is closed at the
 *  end of the run, marked incomplete.
 *  @return : 0 on success, when TRACER_REGIONS filters the region out and
 *            when tracing is off; -1 for handle 0 and for an event lost in a
 *            traced run (TRACER_ON_FULL=drop; the trace counts the loss).
 *  Thread-safe, lock-free, no syscall or malloc in the steady state.
 *  Not async-signal-safe. Since 0.1.0. */
int tracer_region_begin(tracer_region_t region);
int tracer_region_end(tracer_region_t region);

/*! tracer_mark() :
 *  Records an instant event named by @region with a 64-bit @value.
 *  @return, thread-safety : as tracer_region_begin(). Since 0.1.0. */
int tracer_mark(tracer_region_t region, uint64_t value);

/* ----- Inspection (used by `tracer info`; handy in tests) ----------------- */

/*! tracer_ompt_registration() :
 *  Reports the @index-th OMPT callback tracer asked the OpenMP runtime for.
 *  @callback : set to its name, e.g. "ompt_callback_target_emi" (static).
 *  @result : set to the runtime's answer, an ompt_set_result_t:
 *            1 never, 2 impossible (not used), 3 sometimes, 4 sometimes paired,
 *            5 always; 0 error.
 *  @return : 0, or -1 when @index is past the last one (or OMPT never started).
 *  Thread-safe once OMPT has initialised. Since 0.1.0. */
int tracer_ompt_registration(unsigned index, const char **callback, int *result);

/*! tracer_ompt_device() :
 *  Reports the @index-th device the runtime initialised (device_initialize).
 *  @device_num, @type : its OpenMP number and the runtime's type string
 *            (owned by tracer, valid until exit).
 *  @return : 0, or -1 when @index is past the last one.
 *  Thread-safe. Since 0.1.0. */
int tracer_ompt_device(unsigned index, int *device_num, const char **type);

/*! tracer_ompt_connection() :
 *  Makes sure the offload runtime (libomptarget) can reach the OpenMP runtime
 *  the process runs, then describes how it does. LLVM's libomptarget looks
 *  for libomp as "libomp.so"; where that name is not on the library search
 *  path (Debian's libomp-19-dev), tracer makes it name the running libomp,
 *  with the helper libtracer-ompalias.so from libtracer.so's directory.
 *  libtracer.so does this by itself when loaded and at every offload image
 *  registration; `tracer info` calls this after loading libomptarget.
 *  @buf, @len : receive one sentence (may be NULL, 0).
 *  @return : 0 no libomptarget loaded; 1 it finds libomp by name; 2 it does
 *            because tracer made the name resolve; 3 it has no OMPT connection to
 *            libomp (LLVM < 17); 4 it cannot connect (the sentence says how to fix
 *            it); 5 it was loaded after start-up and cannot connect.
 *  Not for the hot path (it may dlopen). Since 0.1.0. */
int tracer_ompt_connection(char *buf, size_t len);

/*! tracer_version_string() :
 *  @return : the library's version, e.g. "0.1.0" (static storage). */
const char *tracer_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACER_H */
