/* info_omp.c - `tracer info`'s OpenMP section: which OMPT callbacks the
 * OpenMP runtime grants tracer, and which devices it initialises.
 *
 * A forked child (info_child.c) loads libtracer.so globally, then libomp and
 * libomptarget, exactly as a preloaded program would see them: libomp finds
 * tracer's ompt_start_tool, tracer registers its callbacks, and the answers
 * are read back through tracer.h's inspection API. Its trace goes to a fresh
 * temporary directory that the parent removes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "info.h"

#define LLVM_LIBDIR "/usr/lib/llvm-19/lib"

static const char *const default_omp[] = {"libomp.so.5", LLVM_LIBDIR "/libomp.so.5", 0};
static const char *const default_omptarget[] = {"libomptarget.so.19.1", "libomptarget.so",
                                                LLVM_LIBDIR "/libomptarget.so.19.1",
                                                LLVM_LIBDIR "/libomptarget.so", 0};

struct omp_probe {
    const struct tr_info_opts *o;
    const char *lib;    /* libtracer.so, absolute */
    const char *outdir; /* TRACER_OUTPUT of the child */
};

/* libomptarget's registration structures. Their layout has been the same
 * since LLVM 7; the offload entries differ between versions, but no image
 * here has any. */
struct tgt_device_image {
    void *image_start, *image_end;
    void *entries_begin, *entries_end;
};
struct tgt_bin_desc {
    int32_t num_device_images;
    struct tgt_device_image *images;
    void *host_entries_begin, *host_entries_end;
};

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#else
#define HOST_MACHINE EM_NONE
#endif

/* LLVM 18+ only creates the devices of a plugin that accepts one of the
 * program's images, and tracer info has none. A bare ELF header for the host
 * machine is accepted by the host plugin; it is never loaded, because
 * nothing is launched on a device (omp_target_alloc loads no image). GPU
 * plugins would need an image for the exact GPU architecture, so only the
 * host devices can be listed this way. */
static Elf64_Ehdr host_image;
static struct tgt_device_image images[1];
static struct tgt_bin_desc desc = {1, images, 0, 0};

static void make_host_image(void)
{
    memcpy(host_image.e_ident, ELFMAG, SELFMAG);
    host_image.e_ident[EI_CLASS] = ELFCLASS64;
    host_image.e_ident[EI_DATA] = ELFDATA2LSB;
    host_image.e_ident[EI_VERSION] = EV_CURRENT;
    host_image.e_type = ET_DYN;
    host_image.e_machine = HOST_MACHINE;
    host_image.e_version = EV_CURRENT;
    host_image.e_ehsize = sizeof host_image;
    images[0].image_start = &host_image;
    images[0].image_end = (char *)&host_image + sizeof host_image;
}

static const char *result_name(int r)
{
    switch (r) {
    case 0: return "error";
    case 1: return "never";
    case 2: return "impossible";
    case 3: return "sometimes";
    case 4: return "sometimes paired";
    case 5: return "always";
    }
    return "unknown";
}

static void list(char *buf, size_t len, const char *const *names)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; names[i] && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", names[i]);
}

/* dlopens the first of @names (or only @override) that loads, globally:
 * libomptarget looks libomp's symbols up in the global scope. */
static void *open_first(const char *override, const char *const *defaults, char *tried, size_t triedlen)
{
    const char *one[] = {override, 0};
    const char *const *names = override ? one : defaults;
    list(tried, triedlen, names);
    for (int i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (h)
            return h;
    }
    return 0;
}

static const char *loaded_path(void *handle)
{
    struct link_map *lm = 0;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
        return "?";
    return lm->l_name;
}

static void print_library(FILE *out, const char *label, void *handle)
{
    const char *path = loaded_path(handle);
    char real[PATH_MAX];
    fprintf(out, "  %-17s %s", label, path);
    if (realpath(path, real) && strcmp(real, path))
        fprintf(out, " (%s)", real);
    fputc('\n', out);
}

/* What a preloaded libtracer sees in a program whose environment is clean:
 * the user's TRACER_* settings (TRACER_OMPT=none, TRACER_ENABLE=0) would
 * hide what the runtime offers, and OMP_TOOL=disabled would hide all of it. */
static void clean_environment(const struct omp_probe *p)
{
    extern char **environ;
    for (;;) {
        char name[256] = "";
        for (char **e = environ; e && *e; e++)
            if (!strncmp(*e, "TRACER_", 7)) {
                snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                break;
            }
        if (!name[0] || unsetenv(name) != 0)
            break;
    }
    setenv("TRACER_OUTPUT", p->outdir, 1);
    setenv("OMP_TOOL", "enabled", 1);
    setenv("OMP_TOOL_LIBRARIES", p->lib, 1); /* in case the runtime skips the global lookup */
    unsetenv("OMP_TARGET_OFFLOAD");          /* DISABLED hides the devices, MANDATORY may abort */
}

typedef int (*registration_fn)(unsigned, const char **, int *);
typedef int (*device_fn)(unsigned, int *, const char **);
typedef int (*connection_fn)(char *, size_t);

/* tracer_ompt_connection's answers (tracer.h). */
enum { CONNECTION_NONE = 0, CONNECTION_FAILED = 4, CONNECTION_LATE = 5 };

static void *loaded_tracer; /* the child's libtracer.so, once loaded */

static int probe_body(void *arg, FILE *out)
{
    const struct omp_probe *p = arg;
    char tried[2048];
    clean_environment(p);
    fputs("OpenMP:\n", out);
    void *tracer = dlopen(p->lib, RTLD_NOW | RTLD_GLOBAL);
    if (!tracer) {
        fprintf(out, "  cannot load %s: %s\n", p->lib, dlerror());
        return 0;
    }
    loaded_tracer = tracer;
    registration_fn registration = (registration_fn)(uintptr_t)dlsym(tracer, "tracer_ompt_registration");
    device_fn device = (device_fn)(uintptr_t)dlsym(tracer, "tracer_ompt_device");
    connection_fn connection = (connection_fn)(uintptr_t)dlsym(tracer, "tracer_ompt_connection");
    if (!registration || !device || !connection) {
        fprintf(out, "  %s lacks tracer_ompt_registration/_device/_connection (an older libtracer?)\n", p->lib);
        return 0;
    }
    void *omp = open_first(p->o->omp_lib, default_omp, tried, sizeof tried);
    if (!omp) {
        fprintf(out, "  no OpenMP runtime found (tried %s)\n", tried);
        return 0;
    }
    print_library(out, "runtime:", omp);
    void *target = open_first(p->o->omptarget_lib, default_omptarget, tried, sizeof tried);
    if (target)
        print_library(out, "offload runtime:", target);
    else
        fprintf(out, "  offload runtime:  none found (tried %s); no target callbacks, no devices\n", tried);

    int ndev = 0, connected = CONNECTION_NONE;
    void (*unregister)(struct tgt_bin_desc *) = 0;
    if (target) {
        /* What libtracer's constructor does in a program linked with
         * libomptarget; here libomptarget was loaded after it. */
        char how[4 * 4096];
        connected = connection(how, sizeof how);
        fprintf(out, "  connection:       %s\n", how);
        /* LLVM 19 sets the offload runtime up on the first registration
         * (older ones in a constructor); __tgt_rtl_init is the explicit form. */
        void (*rtl_init)(void) = (void (*)(void))(uintptr_t)dlsym(target, "__tgt_rtl_init");
        void (*reg)(struct tgt_bin_desc *) = (void (*)(struct tgt_bin_desc *))(uintptr_t)dlsym(target, "__tgt_register_lib");
        unregister = (void (*)(struct tgt_bin_desc *))(uintptr_t)dlsym(target, "__tgt_unregister_lib");
        if (rtl_init)
            rtl_init();
        if (reg && HOST_MACHINE != EM_NONE) {
            make_host_image();
            reg(&desc);
        }
        int (*num_devices)(void) = (int (*)(void))(uintptr_t)dlsym(target, "omp_get_num_devices");
        void *(*alloc)(size_t, int) = (void *(*)(size_t, int))(uintptr_t)dlsym(target, "omp_target_alloc");
        void (*release)(void *, int) = (void (*)(void *, int))(uintptr_t)dlsym(target, "omp_target_free");
        ndev = num_devices ? num_devices() : 0;
        /* Older runtimes initialise a device on its first use. */
        for (int d = 0; d < ndev && alloc && release; d++) {
            void *mem = alloc(8, d);
            if (mem)
                release(mem, d);
        }
    } else {
        /* Without libomptarget, libomp starts its tool on its first call. */
        int (*max_threads)(void) = (int (*)(void))(uintptr_t)dlsym(omp, "omp_get_max_threads");
        if (max_threads)
            (void)max_threads();
    }

    const char *name;
    int result;
    unsigned i = 0;
    for (; registration(i, &name, &result) == 0; i++) {
        if (!i)
            fputs("  OMPT callbacks (the runtime's answer to tracer's registration):\n", out);
        fprintf(out, "    %-36s %s\n", name, result_name(result));
    }
    if (!i && (connected == CONNECTION_FAILED || connected == CONNECTION_LATE))
        fputs("  OMPT: no callbacks were registered: libomptarget cannot reach the OpenMP runtime "
              "(see connection above), so neither can tracer's tool\n", out);
    else if (!i)
        fputs("  OMPT: the runtime did not start tracer's tool; no callbacks were registered\n", out);

    int num;
    const char *type;
    unsigned seen = 0;
    for (; device(seen, &num, &type) == 0; seen++)
        ;
    if (!ndev && !seen)
        fputs("  devices: none\n", out);
    else
        fprintf(out, "  devices: %d, %u initialised%s\n", ndev, seen,
                target && HOST_MACHINE != EM_NONE ? " (host devices only: a GPU shows up when a program brings an image for it; GPU drivers below)" : "");
    for (unsigned k = 0; k < seen && device(k, &num, &type) == 0; k++)
        fprintf(out, "    device %d: %s\n", num, type ? type : "?");
    if (unregister && images[0].image_start)
        unregister(&desc);
    return 0;
}

/* The child ends in _exit (info_child.c), and the one it calls is libc's:
 * this executable was linked before libtracer.so was loaded. That _exit
 * would end the process but not tracer's run, and the run's in-flight pool
 * file (inflight.h) would stay in /dev/shm, memory that only a reboot
 * frees, after every `tracer info`. libtracer's own _exit ends the run as
 * in any program that calls _exit: its chunks saved to the temporary
 * directory, the pool file removed. */
static int omp_probe(void *arg, FILE *out)
{
    int rc = probe_body(arg, out);
    if (loaded_tracer) {
        void (*tracer_exit)(int) = (void (*)(int))(uintptr_t)dlsym(loaded_tracer, "_exit");
        fflush(out);
        if (tracer_exit)
            tracer_exit(rc & 0x7f);
    }
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void tr_info_omp(FILE *out, const struct tr_info_opts *o)
{
    char lib[PATH_MAX], tried[2048];
    if (tr_find_libtracer(o->lib, lib, sizeof lib, tried, sizeof tried) != 0) {
        fprintf(out, "OpenMP:\n  not inspected: libtracer.so not found (tried %s); give --lib PATH\n", tried);
        return;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/tracer-info-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "tracer: info: cannot create a temporary directory %s: %s\n", dir, strerror(errno));
        return;
    }
    struct omp_probe p = {o, lib, dir};
    tr_info_in_child(omp_probe, &p, out, "OpenMP", 120);
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
