/* info_gpu.c - `tracer info`'s GPU section: the CUDA driver that
 * libomptarget's CUDA plugin would load, and its devices.
 *
 * LLVM 18+ creates a plugin's devices only for a program that brings an
 * image for them, so the OpenMP section lists host devices alone. This
 * section asks the driver itself, loaded by the name the plugin uses
 * (dlopen("libcuda.so")), in a forked child: a driver that crashes or hangs
 * must not take `tracer info` with it. The type printed is the one the
 * plugin reports in device_initialize (sm_<major><minor>), so a user can
 * check it against the --offload-arch their program was built for. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "info.h"

/* The driver API's types, as far as this section uses them (cuda.h is not
 * in Debian's archive; these signatures are stable since CUDA 4). */
typedef int cu_result;
typedef cu_result (*cu_init_fn)(unsigned);
typedef cu_result (*cu_version_fn)(int *);
typedef cu_result (*cu_count_fn)(int *);
typedef cu_result (*cu_get_fn)(int *, int);
typedef cu_result (*cu_name_fn)(char *, int, int);
typedef cu_result (*cu_attr_fn)(int *, int, int);
typedef cu_result (*cu_mem_fn)(size_t *, int);
typedef cu_result (*cu_error_fn)(cu_result, const char **);

#define CU_ATTR_CC_MAJOR 75
#define CU_ATTR_CC_MINOR 76
#define CUDA_LIB "libcuda.so"

static void *sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

static const char *error_text(cu_error_fn err, cu_result r)
{
    const char *s = NULL;
    if (!err || err(r, &s) != 0 || !s)
        return "no description";
    return s;
}

static int cuda_probe(void *arg, FILE *out)
{
    (void)arg;
    void *lib = dlopen(CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(out, "  CUDA driver:      %s not found (no NVIDIA GPU offload on this machine)\n", CUDA_LIB);
        return 0;
    }
    cu_init_fn init = (cu_init_fn)(uintptr_t)sym(lib, "cuInit");
    cu_version_fn version = (cu_version_fn)(uintptr_t)sym(lib, "cuDriverGetVersion");
    cu_count_fn count = (cu_count_fn)(uintptr_t)sym(lib, "cuDeviceGetCount");
    cu_get_fn get = (cu_get_fn)(uintptr_t)sym(lib, "cuDeviceGet");
    cu_name_fn name = (cu_name_fn)(uintptr_t)sym(lib, "cuDeviceGetName");
    cu_attr_fn attr = (cu_attr_fn)(uintptr_t)sym(lib, "cuDeviceGetAttribute");
    cu_mem_fn mem = (cu_mem_fn)(uintptr_t)sym(lib, "cuDeviceTotalMem_v2");
    cu_error_fn err = (cu_error_fn)(uintptr_t)sym(lib, "cuGetErrorString");
    if (!init || !version || !count || !get || !name || !attr || !mem) {
        fprintf(out, "  CUDA driver:      %s lacks the driver API (cuInit, cuDeviceGet...): not a CUDA driver\n",
                CUDA_LIB);
        return 0;
    }
    int v = 0, n = 0;
    cu_result r = init(0);
    if (r != 0) {
        fprintf(out, "  CUDA driver:      %s loaded, but cuInit failed: %s (CUDA error %d); libomptarget "
                "will see no NVIDIA device\n", CUDA_LIB, error_text(err, r), r);
        return 0;
    }
    if (version(&v) != 0)
        v = 0;
    if ((r = count(&n)) != 0) {
        fprintf(out, "  CUDA driver:      %s, cuDeviceGetCount failed: %s (CUDA error %d)\n", CUDA_LIB,
                error_text(err, r), r);
        return 0;
    }
    fprintf(out, "  CUDA driver:      %s, version %d.%d, %d device%s\n", CUDA_LIB, v / 1000, v % 1000 / 10, n,
            n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
        int dev, major = 0, minor = 0;
        char text[256] = "?";
        size_t bytes = 0;
        if (get(&dev, i) != 0) {
            fprintf(out, "  CUDA device %d:    cannot be opened\n", i);
            continue;
        }
        if (name(text, sizeof text, dev) != 0)
            strcpy(text, "?");
        attr(&major, CU_ATTR_CC_MAJOR, dev);
        attr(&minor, CU_ATTR_CC_MINOR, dev);
        mem(&bytes, dev);
        char label[32];
        snprintf(label, sizeof label, "CUDA device %d:", i);
        fprintf(out, "  %-18s%s, sm_%d%d, %zu MiB\n", label, text, major, minor, bytes >> 20);
    }
    return 0;
}

void tr_info_gpu(FILE *out)
{
    fputs("GPU drivers (what libomptarget's plugins load):\n", out);
    fflush(out);
    tr_info_in_child(cuda_probe, NULL, out, "GPU", 60);
}
