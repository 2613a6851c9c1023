#include "writer/symbols.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREFIX "__omp_offloading_"
#define MAX_MODULES 64

typedef struct entry {
    char *name;
    char *function; /* parsed from name */
    int line;
} entry;

typedef struct module_entries {
    Dwfl_Module *module;
    entry *e;
    size_t n;
} module_entries;

struct tr_symbols {
    Dwfl *dwfl;
    module_entries mods[MAX_MODULES];
    int nmods;
};

tr_symbols *tr_symbols_open(void)
{
    static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
    };
    tr_symbols *s = calloc(1, sizeof *s);
    if (!s)
        return 0;
    s->dwfl = dwfl_begin(&callbacks);
    if (!s->dwfl || dwfl_linux_proc_report(s->dwfl, getpid()) != 0 ||
        dwfl_report_end(s->dwfl, 0, 0) != 0) {
        if (s->dwfl)
            dwfl_end(s->dwfl);
        free(s);
        return 0;
    }
    return s;
}

void tr_symbols_close(tr_symbols *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nmods; i++) {
        for (size_t j = 0; j < s->mods[i].n; j++) {
            free(s->mods[i].e[j].name);
            free(s->mods[i].e[j].function);
        }
        free(s->mods[i].e);
    }
    dwfl_end(s->dwfl);
    free(s);
}

tr_code_location tr_symbols_locate(tr_symbols *s, uint64_t codeptr_ra)
{
    tr_code_location loc = {0, 0, 0};
    if (!s || !codeptr_ra)
        return loc;
    /* The return address belongs to the instruction after the call. */
    Dwarf_Addr addr = codeptr_ra - 1;
    Dwfl_Module *m = dwfl_addrmodule(s->dwfl, addr);
    if (!m)
        return loc;
    loc.function = dwfl_module_addrname(m, addr);
    Dwfl_Line *l = dwfl_module_getsrc(m, addr);
    if (l) {
        int line = 0;
        const char *file = dwfl_lineinfo(l, 0, &line, 0, 0, 0);
        loc.file = file;
        loc.line = line;
    }
    return loc;
}

/* "__omp_offloading_<hex>_<hex>_<function>_l<line>" -> function, line. */
static int parse_entry_name(const char *name, char **function, int *line)
{
    if (strncmp(name, PREFIX, strlen(PREFIX)) != 0)
        return -1;
    const char *p = name + strlen(PREFIX);
    for (int field = 0; field < 2; field++) {
        p = strchr(p, '_');
        if (!p)
            return -1;
        p++;
    }
    const char *l = strrchr(p, '_');
    if (!l || l == p || l[1] != 'l' || !l[2])
        return -1;
    char *end;
    long v = strtol(l + 2, &end, 10);
    if (*end)
        return -1;
    *function = strndup(p, (size_t)(l - p));
    *line = (int)v;
    return *function ? 0 : -1;
}

static int in_module(Dwfl_Module *m, uint64_t a)
{
    Dwarf_Addr lo, hi;
    dwfl_module_info(m, 0, &lo, &hi, 0, 0, 0, 0);
    return a >= lo && a < hi;
}

static char *read_name(Dwfl_Module *m, uint64_t p)
{
    if (!in_module(m, p))
        return 0;
    /* The name lives in the module's read-only data of this very process. */
    return strndup((const char *)(uintptr_t)p, 1024);
}

static void add_entry(module_entries *me, Dwfl_Module *m, uint64_t name_ptr)
{
    char *name = read_name(m, name_ptr);
    if (!name)
        return;
    char *function;
    int line;
    if (parse_entry_name(name, &function, &line)) {
        free(name);
        return;
    }
    entry *e = realloc(me->e, (me->n + 1) * sizeof *e);
    if (!e) {
        free(name);
        free(function);
        return;
    }
    me->e = e;
    me->e[me->n++] = (entry){name, function, line};
}

static void load_entries(module_entries *me, Dwfl_Module *m)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(m, &bias);
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx))
        return;
    for (Elf_Scn *scn = 0; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (!name)
            continue;
        int newer = !strcmp(name, "llvm_offload_entries");
        if (!newer && strcmp(name, "omp_offloading_entries"))
            continue;
        const unsigned char *base = (const unsigned char *)(uintptr_t)(sh.sh_addr + bias);
        /* LLVM <= 19: {addr, name, size, int32 flags, int32 data} (32 bytes).
         * LLVM 20+:   {u64 reserved, u16 version, u16 kind, u32 flags, addr,
         *              name, u64 size, u64 data, aux} (64 bytes). */
        size_t stride = newer ? 64 : 32, name_off = newer ? 24 : 8;
        for (size_t off = 0; off + stride <= sh.sh_size; off += stride) {
            uint64_t name_ptr;
            memcpy(&name_ptr, base + off + name_off, sizeof name_ptr);
            add_entry(me, m, name_ptr);
        }
    }
}

static module_entries *entries_of(tr_symbols *s, Dwfl_Module *m)
{
    for (int i = 0; i < s->nmods; i++)
        if (s->mods[i].module == m)
            return &s->mods[i];
    if (s->nmods == MAX_MODULES)
        return 0;
    module_entries *me = &s->mods[s->nmods++];
    *me = (module_entries){m, 0, 0};
    load_entries(me, m);
    return me;
}

const char *tr_symbols_kernel_name(tr_symbols *s, uint64_t codeptr_ra)
{
    if (!s || !codeptr_ra)
        return 0;
    Dwfl_Module *m = dwfl_addrmodule(s->dwfl, codeptr_ra - 1);
    if (!m)
        return 0;
    module_entries *me = entries_of(s, m);
    tr_code_location loc = tr_symbols_locate(s, codeptr_ra);
    if (!me || !loc.function)
        return 0;
    const char *only = 0;
    int candidates = 0;
    for (size_t i = 0; i < me->n; i++) {
        if (strcmp(me->e[i].function, loc.function))
            continue;
        if (loc.line && me->e[i].line == loc.line)
            return me->e[i].name;
        only = me->e[i].name;
        candidates++;
    }
    /* Without a line match the name is certain only if the function has a
     * single target region. */
    return candidates == 1 ? only : 0;
}
