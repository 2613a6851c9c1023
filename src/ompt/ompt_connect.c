/* ompt_connect.c - ties libomptarget to the running libomp (see the header).
 *
 * Decided once, as soon as libomptarget is in the process: in libtracer's
 * constructor, which runs after every library the program was linked with
 * is initialised and before the program's own constructors (the first of
 * them registers its offload image, and that makes libomptarget connect),
 * or at the first registration of an image that a later dlopen brought. */
#define _GNU_SOURCE
#include "ompt/ompt_connect.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/unload.h"

#define ALIAS_FILE "libtracer-ompalias.so"
#define CONNECT_SYMBOL "ompt_libomp_connect"

typedef void (*connect_fn)(void *);

static pthread_mutex_t decide_lock = PTHREAD_MUTEX_INITIALIZER;
static int decided;
static tr_connect_state decision;
static char omptarget_path[PATH_MAX]; /* the libomptarget found */
static char omp_path[PATH_MAX];       /* the libomp it is bound to */
static char alias_helper[PATH_MAX + 32]; /* libtracer-ompalias.so */
static char alias_error[PATH_MAX + 512];

static int find_omptarget(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    /* libomptarget.so[.N], not its plugins (libomptarget.rtl.*.so). */
    if (strncmp(base, "libomptarget.so", 15) != 0)
        return 0;
    snprintf(arg, PATH_MAX, "%s", name);
    return 1;
}

/* ompt_libomp_connect as libomptarget's own symbol scope binds it: the
 * libomp it was linked with, which is the runtime the program runs. */
static connect_fn running_connect(const char *omptarget)
{
    void *h = dlopen(omptarget, RTLD_LAZY | RTLD_NOLOAD);
    connect_fn fn = h ? (connect_fn)(uintptr_t)dlsym(h, CONNECT_SYMBOL) : 0;
    if (h)
        dlclose(h);
    if (!fn) /* an offload runtime that does not depend on libomp itself */
        fn = (connect_fn)(uintptr_t)dlsym(RTLD_DEFAULT, CONNECT_SYMBOL);
    return fn;
}

/* Whether dlopen("libomp.so") finds @fn's library, loading nothing. A hit
 * of the same file also records the name on the loaded libomp, exactly as
 * libomptarget's own dlopen would. */
static int name_resolves_to(connect_fn fn)
{
    void *h = dlopen("libomp.so", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    int same = (connect_fn)(uintptr_t)dlsym(h, CONNECT_SYMBOL) == fn;
    dlclose(h);
    return same;
}

static void note_library(char *dst, const void *addr)
{
    Dl_info info;
    if (dladdr(addr, &info) && info.dli_fname)
        snprintf(dst, PATH_MAX, "%s", info.dli_fname);
    else
        snprintf(dst, PATH_MAX, "?");
}

/* The directory of libtracer.so, where its helpers are installed. */
static int own_dir(char *dst, size_t len)
{
    Dl_info self;
    char path[PATH_MAX];
    if (!dladdr((void *)(uintptr_t)tr_ompt_connect_prepare, &self) || !self.dli_fname ||
        !realpath(self.dli_fname, path))
        return -1;
    char *slash = strrchr(path, '/');
    *slash = 0;
    snprintf(dst, len, "%s", path);
    return 0;
}

typedef void *(*dlopen_fn)(const char *, int);

/* glibc's own dlopen, past any interposer (AddressSanitizer intercepts
 * dlopen): glibc takes the caller's RUNPATH from its return address, so the
 * alias helper must call glibc directly. In libc since glibc 2.34, in libdl
 * before. */
static dlopen_fn libc_dlopen(void)
{
    static const char *const libs[] = {"libc.so.6", "libdl.so.2"};
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
        dlopen_fn fn = h ? (dlopen_fn)(uintptr_t)dlsym(h, "dlopen") : 0;
        if (h)
            dlclose(h);
        if (fn)
            return fn;
    }
    return 0;
}

/* A private directory (mode 0700, a fresh name: nothing planted there can be
 * followed) holding "libomp.so" -> the running libomp and a link to the
 * alias helper, whose RUNPATH $ORIGIN is that directory (omp_name_alias.c). */
static tr_connect_state make_alias(void)
{
    char helper[PATH_MAX], target[PATH_MAX], dir[PATH_MAX] = "", name_link[PATH_MAX + 32],
        helper_link[PATH_MAX + 64];
    if (own_dir(helper, sizeof helper) != 0 || !realpath(omp_path, target)) {
        snprintf(alias_error, sizeof alias_error, "the directory of libtracer.so is unknown");
        return TR_CONNECT_FAILED;
    }
    snprintf(alias_helper, sizeof alias_helper, "%s/%s", helper, ALIAS_FILE);
    if (access(alias_helper, R_OK) != 0) {
        snprintf(alias_error, sizeof alias_error, "%s: %s", alias_helper, strerror(errno));
        return TR_CONNECT_FAILED;
    }
    const char *tmp = getenv("TMPDIR");
    const char *const bases[] = {tmp && tmp[0] == '/' ? tmp : "/tmp", "/tmp", "/dev/shm", "/var/tmp"};
    for (size_t i = 0; i < sizeof bases / sizeof *bases && !dir[0]; i++) {
        snprintf(dir, sizeof dir, "%s/tracer-ompalias-XXXXXX", bases[i]);
        if (!mkdtemp(dir))
            dir[0] = 0;
    }
    if (!dir[0]) {
        snprintf(alias_error, sizeof alias_error, "no writable temporary directory: %s",
                 strerror(errno));
        return TR_CONNECT_FAILED;
    }
    snprintf(name_link, sizeof name_link, "%s/libomp.so", dir);
    snprintf(helper_link, sizeof helper_link, "%s/%s", dir, ALIAS_FILE);
    tr_connect_state result = TR_CONNECT_FAILED;
    if (symlink(target, name_link) != 0 || symlink(alias_helper, helper_link) != 0) {
        snprintf(alias_error, sizeof alias_error, "cannot link in %s: %s", dir, strerror(errno));
    } else {
        void *h = dlopen(helper_link, RTLD_NOW | RTLD_LOCAL);
        int (*alias)(dlopen_fn) = h ? (int (*)(dlopen_fn))(uintptr_t)dlsym(h, "tracer_alias_libomp") : 0;
        if (!h) {
            const char *e = dlerror();
            snprintf(alias_error, sizeof alias_error, "%s", e ? e : "dlopen failed");
        } else if (!alias) {
            snprintf(alias_error, sizeof alias_error, "%s is not tracer's helper", ALIAS_FILE);
        } else if (!alias(libc_dlopen())) {
            snprintf(alias_error, sizeof alias_error, "glibc did not take the name");
        } else {
            result = TR_CONNECT_ALIASED;
        }
        if (h)
            dlclose(h);
    }
    unlink(helper_link);
    unlink(name_link);
    rmdir(dir);
    return result;
}

/* TRACER_ENABLE=0 leaves the process alone entirely; a value that does not
 * parse is reported once tracing starts, not here. */
static int tracing_disabled(void)
{
    const char *v = getenv("TRACER_ENABLE");
    const tr_cfg_var *var = tr_cfg_find("TRACER_ENABLE");
    int on = 1;
    char err[128];
    return v && var && tr_cfg_parse(var, v, &on, err, sizeof err) == 0 && !on;
}

tr_connect_state tr_ompt_connect_prepare(void)
{
    /* Once decided, every registration passes here without the lock. */
    if (__atomic_load_n(&decided, __ATOMIC_ACQUIRE))
        return decision;
    pthread_mutex_lock(&decide_lock);
    if (!decided && !tracing_disabled()) {
        char found[PATH_MAX] = "";
        if (dl_iterate_phdr(find_omptarget, found)) {
            snprintf(omptarget_path, sizeof omptarget_path, "%s", found);
            connect_fn fn = running_connect(found);
            if (!fn) {
                decision = TR_CONNECT_NO_INTERFACE;
            } else {
                note_library(omp_path, (const void *)(uintptr_t)fn);
                decision = name_resolves_to(fn) ? TR_CONNECT_BY_NAME : make_alias();
                if (decision == TR_CONNECT_ALIASED && !name_resolves_to(fn)) {
                    snprintf(alias_error, sizeof alias_error,
                             "\"libomp.so\" names another library already loaded");
                    decision = TR_CONNECT_FAILED;
                }
            }
            __atomic_store_n(&decided, 1, __ATOMIC_RELEASE);
        }
    }
    tr_connect_state s = decided ? decision : TR_CONNECT_NO_OFFLOAD;
    pthread_mutex_unlock(&decide_lock);
    return s;
}

tr_connect_state tr_ompt_connect_state(void)
{
    pthread_mutex_lock(&decide_lock);
    tr_connect_state s = decided ? decision : TR_CONNECT_NO_OFFLOAD;
    int late = !decided;
    pthread_mutex_unlock(&decide_lock);
    if (!late)
        return s;
    /* Not there at start-up: libomptarget was loaded later, by dlopen, and
     * has connected (or failed to) on its own. */
    char found[PATH_MAX] = "";
    if (tracing_disabled() || !dl_iterate_phdr(find_omptarget, found))
        return TR_CONNECT_NO_OFFLOAD;
    connect_fn fn = running_connect(found);
    if (!fn)
        return TR_CONNECT_NO_INTERFACE;
    pthread_mutex_lock(&decide_lock);
    snprintf(omptarget_path, sizeof omptarget_path, "%s", found);
    note_library(omp_path, (const void *)(uintptr_t)fn);
    pthread_mutex_unlock(&decide_lock);
    return name_resolves_to(fn) ? TR_CONNECT_BY_NAME : TR_CONNECT_LATE;
}

/* The advice for a user whose libomptarget cannot find the runtime: a
 * directory that holds "libomp.so" as the running libomp, for
 * LD_LIBRARY_PATH (the runtime's directory as loaded, or as the links
 * resolve: Debian's /lib/x86_64-linux-gnu/libomp.so.5 is a link into
 * /usr/lib/llvm-19/lib); otherwise, a link to make. */
static int holds_name(const char *path, const struct stat *want, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    char candidate[PATH_MAX];
    struct stat got;
    if (!slash || slash - path > PATH_MAX - 16)
        return 0;
    snprintf(candidate, sizeof candidate, "%.*s/libomp.so", (int)(slash - path), path);
    if (stat(candidate, &got) != 0 || got.st_dev != want->st_dev || got.st_ino != want->st_ino)
        return 0;
    snprintf(dir, len, "%.*s", (int)(slash - path), path);
    return 1;
}

static void library_path_fix(char *dst, size_t len)
{
    char real[PATH_MAX], dir[PATH_MAX];
    struct stat want;
    if (!realpath(omp_path, real) || stat(real, &want) != 0)
        snprintf(dst, len, "put a link named libomp.so to the OpenMP runtime on LD_LIBRARY_PATH");
    else if (holds_name(omp_path, &want, dir, sizeof dir) || holds_name(real, &want, dir, sizeof dir))
        snprintf(dst, len, "set LD_LIBRARY_PATH=%s", dir);
    else
        snprintf(dst, len, "put a link named libomp.so to %s in a directory on LD_LIBRARY_PATH", real);
}

void tr_ompt_connect_describe(tr_connect_state state, char *buf, size_t len)
{
    char fix[2 * PATH_MAX];
    if (state == TR_CONNECT_FAILED || state == TR_CONNECT_LATE)
        library_path_fix(fix, sizeof fix);
    switch (state) {
    case TR_CONNECT_NO_OFFLOAD:
        snprintf(buf, len, "no offload runtime (libomptarget) is loaded");
        break;
    case TR_CONNECT_BY_NAME:
        snprintf(buf, len, "libomptarget finds the running OpenMP runtime %s as \"libomp.so\"", omp_path);
        break;
    case TR_CONNECT_ALIASED:
        snprintf(buf, len,
                 "\"libomp.so\" was not on the library search path; tracer made it name the running OpenMP "
                 "runtime %s (with %s), so libomptarget finds it",
                 omp_path, alias_helper);
        break;
    case TR_CONNECT_NO_INTERFACE:
        snprintf(buf, len,
                 "the offload runtime %s has no OMPT connection to libomp (LLVM before 17, or not LLVM's); "
                 "target callbacks depend on the runtime alone",
                 omptarget_path);
        break;
    case TR_CONNECT_FAILED:
        snprintf(buf, len,
                 "libomptarget (%s) looks for the OpenMP runtime as \"libomp.so\", which is not on the library "
                 "search path, and tracer could not make that name resolve (%s); to fix it, install %s beside "
                 "libtracer.so, or %s",
                 omptarget_path, alias_error, ALIAS_FILE, fix);
        break;
    case TR_CONNECT_LATE:
        snprintf(buf, len,
                 "libomptarget (%s) was loaded after start-up and registered an offload image without "
                 "passing through libtracer.so, so it looked for the OpenMP runtime as \"libomp.so\", which is "
                 "not on the library search path; to fix it, %s, or preload libtracer.so",
                 omptarget_path, fix);
        break;
    }
}

__attribute__((constructor)) static void connect_at_load(void)
{
    tr_ompt_connect_prepare();
}

/* An offload image registering itself: the program's constructor, or that
 * of a library the program dlopens later (a Python extension, a plugin),
 * which loads libomptarget after tracer's constructor has run. Registration
 * is what makes libomptarget connect to libomp, so the name must resolve
 * first. The real function is libomptarget's: the next definition in the
 * global scope, or, for a libomptarget loaded locally by dlopen, the one in
 * its own scope. */
typedef void (*register_fn)(void *desc);

static register_fn real_register(const char *name)
{
    register_fn fn = (register_fn)(uintptr_t)dlsym(RTLD_NEXT, name);
    char found[PATH_MAX] = "";
    if (!fn && dl_iterate_phdr(find_omptarget, found)) {
        void *h = dlopen(found, RTLD_LAZY | RTLD_NOLOAD);
        fn = h ? (register_fn)(uintptr_t)dlsym(h, name) : 0;
        if (h)
            dlclose(h);
    }
    return fn;
}

__attribute__((visibility("default"))) void __tgt_register_lib(void *desc)
{
    static register_fn real;
    register_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = real_register("__tgt_register_lib");
        __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
    }
    tr_ompt_connect_prepare();
    if (fn && fn != __tgt_register_lib)
        fn(desc);
}

/* An offload image going away: at exit, or from the destructor of a library
 * the program dlcloses, which is still mapped now and will not be after.
 * The consumer names the kernels and variables recorded so far first, while
 * their code and tables can still be read, and the addresses the image
 * frees get new names from now on (core/unload.h). */
__attribute__((visibility("default"))) void __tgt_unregister_lib(void *desc)
{
    static register_fn real;
    register_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = real_register("__tgt_unregister_lib");
        __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
    }
    /* The descriptor lies in the image's own data: its object is the one
     * going away (its destructor called us, if there is none). */
    tr_before_unload(desc ? desc : __builtin_return_address(0));
    if (fn && fn != __tgt_unregister_lib)
        fn(desc);
}
