/* omp_name_alias.c - libtracer-ompalias.so: makes "libomp.so" name the
 * OpenMP runtime the process already runs.
 *
 * LLVM's libomptarget (17 and later) reaches libomp's OMPT interface with
 * dlopen("libomp.so"). Distributions install libomp as libomp.so.5 and keep
 * the bare name in a compiler-private directory (Debian: /usr/lib/llvm-19/lib),
 * so that dlopen fails and no tool ever receives a target callback.
 *
 * libtracer loads this library through a symbolic link in a private
 * temporary directory that also holds "libomp.so", a link to the running
 * libomp. Its RUNPATH is $ORIGIN, so its dlopen("libomp.so", RTLD_NOLOAD)
 * finds that link; glibc sees the file is already loaded, loads nothing, and
 * records "libomp.so" as a name of the loaded libomp. From then on every
 * dlopen("libomp.so") in the process, libomptarget's included, returns the
 * running libomp by name, as it would had that directory been on the search
 * path. The call must come from here: glibc searches with the caller's
 * RUNPATH. libtracer removes the directory right after. */
#include <dlfcn.h>

typedef void *(*dlopen_fn)(const char *, int);

/* 1 when "libomp.so" now names a loaded library, 0 otherwise.
 * @libc_dlopen is glibc's own dlopen, called directly: an interposed dlopen
 * (AddressSanitizer's, for one) would call glibc from its own frame, and
 * glibc would search with the interposer's RUNPATH instead of ours. NULL:
 * the dlopen this library binds to. */
__attribute__((visibility("default"))) int tracer_alias_libomp(dlopen_fn libc_dlopen)
{
    void *h = (libc_dlopen ? libc_dlopen : dlopen)("libomp.so", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    dlclose(h);
    return 1;
}
