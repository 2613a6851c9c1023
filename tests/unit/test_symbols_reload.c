/* test_symbols_reload.c - naming a code address while the program loads
 * and unloads libraries (journal/symbols.h).
 *
 * The consumer names target constructs while the program runs on; when the
 * loader's count changed since the module list was read, the next lookup
 * reads it again. Two bugs there, found when ASan reported a
 * heap-use-after-free in the consumer's write_symbol (freed by dwarf_end)
 * in a 16-thread offload run in CI:
 *
 *  1. libelf maps the files it reads, often just below the library read,
 *     and libdwfl took that mapping for part of the library: after any
 *     later load the library was reported again starting a few pages early,
 *     with the wrong bias, so its addresses named nothing, and the old
 *     module was freed (symbols_maps.h).
 *  2. The consumer located the call (function, file), looked the kernel up
 *     (a second lookup, which may read the list again and free the first
 *     one's texts), and only then copied the texts (tr_symbols_describe now
 *     looks up once and copies).
 *
 * argv[1..3]: A and B, two builds of symbols_reload_lib.c, and C, of
 * symbols_reload_other.c. After A's
 * call site is described once, B is loaded and the description must still
 * name A's function, file and line (1). Then dl_iterate_phdr (how
 * symbols.c reads the loader's count) is wrapped so that its second call
 * unloads A and loads C: an implementation that looks the module up twice
 * reads freed memory there (ASan, or a crash) or names nothing (2). B's and
 * C's call sites must describe as theirs.
 *
 * Prints one line per check and exits 1 if any fails. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal/symbols.h"

static int failures;

static void check(const char *name, int ok, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail);
    failures += !ok;
}

static const char *path_c;
static void *lib_a, *lib_c;
static int armed, calls;

int __real_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);
int __wrap_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    if (armed && ++calls == 2) {
        armed = 0;
        dlclose(lib_a);
        lib_a = 0;
        lib_c = dlopen(path_c, RTLD_NOW | RTLD_LOCAL);
    }
    return __real_dl_iterate_phdr(cb, data);
}

static uint64_t call_site(void *lib, const char *name)
{
    void *(*site)(void) = (void *(*)(void))dlsym(lib, name);
    return site ? (uint64_t)(uintptr_t)site() : 0;
}

static int line_of_call(void *lib, const char *name)
{
    int (*line)(void) = (int (*)(void))dlsym(lib, name);
    return line ? line() : -1;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

static void expect_site(const char *what, const tr_code_description *d, const char *function, const char *file,
                        int line)
{
    char detail[3 * TR_SYMBOL_TEXT + 64];
    snprintf(detail, sizeof detail, "function '%s' file '%s' line %d (want %d)", d->function, d->file, d->line,
             line);
    check(what, !strcmp(d->function, function) && ends_with(d->file, file) &&
                    d->line == line && !d->kernel[0],
          detail);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s LIB_A LIB_B LIB_C\n", argv[0]);
        return 2;
    }
    path_c = argv[3];
    lib_a = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib_a) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 2;
    }
    uint64_t site_a = call_site(lib_a, "reload_site");
    int line = line_of_call(lib_a, "reload_line_of_call");
    tr_symbols *s = tr_symbols_open();
    check("open", s != 0, "");
    tr_code_description d;

    tr_symbols_describe(s, site_a, &d);
    expect_site("A", &d, "reload_site", "symbols_reload_lib.c", line);

    /* 1: the list is read again after B's load, with A's file mapped. */
    void *lib_b = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    check("B loaded", lib_b != 0, "");
    tr_symbols_describe(s, site_a, &d);
    expect_site("A after another library was loaded", &d, "reload_site", "symbols_reload_lib.c", line);
    if (lib_b) {
        tr_symbols_describe(s, call_site(lib_b, "reload_site"), &d);
        expect_site("B", &d, "reload_site", "symbols_reload_lib.c", line);
    }

    /* 2: A is unloaded by the next lookup but one. */
    armed = 1, calls = 0;
    tr_symbols_describe(s, site_a, &d);
    expect_site("A, unloaded during its description by a second lookup", &d, "reload_site", "symbols_reload_lib.c", line);
    /* Looking up once, the description has not unloaded A: the next lookup
     * does, and reads the list again (C may be mapped where A was, so what
     * A's old address names now is not checked). */
    if (armed)
        tr_symbols_describe(s, site_a, &d);
    check("A unloaded, C loaded", !lib_a && lib_c, "");
    if (lib_c) {
        tr_symbols_describe(s, call_site(lib_c, "other_site"), &d);
        expect_site("C", &d, "other_site", "symbols_reload_other.c", line_of_call(lib_c, "other_line_of_call"));
    }

    tr_symbols_describe(0, site_a, &d);
    check("no symbol table: unknown", !d.function[0] && !d.file[0] && !d.line, "");
    tr_symbols_close(s);
    if (lib_c)
        dlclose(lib_c);
    if (lib_b)
        dlclose(lib_b);
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
