#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include "journal/symbols.h"

#include <elfutils/libdw.h>
#include <link.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/offload_entry.h"
#include "journal/loaded_modules.h"
#include "journal/symbols_files.h"
#include "journal/symbols_maps.h"
#define MAX_MODULES 64

typedef struct entry {
    uint64_t addr; /* the region id the host passes to __tgt_target_kernel */
    char *name;
    char *function; /* parsed from name */
    int line;
} entry;

typedef struct module_entries {
    Dwfl_Module *module;
    entry *e;
    size_t n;
    uint64_t *link_ref_ptrs; /* host addresses of <var>_decl_tgt_ref_ptr */
    size_t nlinks;
} module_entries;

struct tr_symbols {
    Dwfl *dwfl;
    int never_end; /* the program may hold one of its descriptors' numbers */
    int offline;   /* tr_symbols_open_files: the modules are files, not this process */
    unsigned long long loads_seen;
    module_entries mods[MAX_MODULES];
    int nmods;
};

typedef struct code_location {
    const char *file; /* owned by libdw, valid until the module list is read again */
    int line;
} code_location;

/* A Dwfl of every module now loaded, or NULL. */
static Dwfl *report_all(void)
{
    tr_symbols_files_reset();
    Dwfl *d = dwfl_begin(tr_symbols_callbacks());
    if (d && (tr_symbols_report_loaded(d) != 0 || dwfl_report_end(d, 0, 0) != 0)) {
        dwfl_end(d);
        d = 0;
    }
    return d;
}

/* dwfl_end closes libdwfl's descriptors: when the program has put its own
 * file at one of those numbers, the Dwfl is left as it is instead (a leak,
 * never the program's file closed). */
static void end_dwfl(tr_symbols *s)
{
    if (s->dwfl && (s->offline || (!s->never_end && tr_symbols_files_safe())))
        dwfl_end(s->dwfl);
}

tr_symbols *tr_symbols_open(void)
{
    tr_symbols *s = calloc(1, sizeof *s);
    if (!s)
        return 0;
    s->loads_seen = tr_loader_adds();
    s->dwfl = report_all();
    if (!s->dwfl) {
        free(s);
        return 0;
    }
    return s;
}

tr_symbols *tr_symbols_open_files(const tr_symbols_file *files, size_t n)
{
    tr_symbols *s = calloc(1, sizeof *s);
    if (!s)
        return 0;
    s->offline = 1;
    tr_symbols_files_reset();
    s->dwfl = dwfl_begin(tr_symbols_callbacks());
    if (!s->dwfl) {
        free(s);
        return 0;
    }
    dwfl_report_begin(s->dwfl);
    for (size_t i = 0; i < n; i++) {
        /* ET_DYN: placed at its load bias; ET_EXEC: where it says. */
        int fd = dup(files[i].fd);
        if (fd >= 0 && !dwfl_report_elf(s->dwfl, files[i].path, files[i].path, fd, files[i].bias, true))
            close(fd);
    }
    dwfl_report_end(s->dwfl, 0, 0);
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
        free(s->mods[i].link_ref_ptrs);
    }
    end_dwfl(s);
    free(s);
}

/* clang emits no .debug_aranges, and elfutils 0.188 then finds no line for
 * an address; walking the compile units' address ranges does. */
static void locate_by_cu_walk(Dwfl_Module *m, Dwarf_Addr addr, code_location *loc)
{
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(m, &bias);
    if (!dw)
        return;
    Dwarf_Off off = 0, next;
    size_t header;
    while (dwarf_nextcu(dw, off, &next, &header, 0, 0, 0) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(dw, off + header, &cu) && dwarf_haspc(&cu, addr - bias) > 0) {
            Dwarf_Line *l = dwarf_getsrc_die(&cu, addr - bias);
            if (l) {
                loc->file = dwarf_linesrc(l, 0, 0);
                dwarf_lineno(l, &loc->line);
            }
            return;
        }
        off = next;
    }
}

static Dwfl_Module *module_of(tr_symbols *s, uint64_t addr);

/* Copies at most TR_SYMBOL_TEXT - 1 bytes of @src (NULL: "") to @dst. */
static void copy_text(char *dst, const char *src)
{
    size_t len = src ? strnlen(src, TR_SYMBOL_TEXT - 1) : 0;
    memcpy(dst, src ? src : "", len);
    dst[len] = 0;
}

/* Function, file and line of the call that returns to @codeptr_ra, in @m. */
static void locate(Dwfl_Module *m, uint64_t codeptr_ra, tr_code_description *out)
{
    /* The return address belongs to the instruction after the call. */
    Dwarf_Addr addr = codeptr_ra - 1;
    copy_text(out->function, dwfl_module_addrname(m, addr));
    code_location loc = {0, 0};
    Dwfl_Line *l = dwfl_module_getsrc(m, addr);
    if (l)
        loc.file = dwfl_lineinfo(l, 0, &loc.line, 0, 0, 0);
    else
        locate_by_cu_walk(m, addr, &loc);
    copy_text(out->file, loc.file);
    out->line = loc.line;
}

/* "__omp_offloading_<hex>_<hex>_<function>_l<line>" -> function, line. */
static int parse_entry_name(const char *name, char **function, int *line)
{
    const char *f;
    size_t len;
    if (tr_offload_entry_parse(name, &f, &len, line) != 0)
        return -1;
    *function = strndup(f, len);
    return *function ? 0 : -1;
}

/* Reads the process's own memory without trusting it to be mapped: the
 * program may dlclose a library between an event and this thread resolving
 * it (tests/test_unload.py), and a plain load would then fault. The kernel
 * checks the range and returns what it could read. */
static size_t safe_read(void *dst, uint64_t addr, size_t n)
{
    struct iovec local = {dst, n}, remote = {(void *)(uintptr_t)addr, n};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    return got > 0 ? (size_t)got : 0;
}

#if defined(__x86_64__)
#define TR_RELOC_RELATIVE R_X86_64_RELATIVE
#define TR_RELOC_ABSOLUTE(t) ((t) == R_X86_64_64 || (t) == R_X86_64_GLOB_DAT)
#else
#define TR_RELOC_RELATIVE (~0u)
#define TR_RELOC_ABSOLUTE(t) 0
#endif

/* What the loader wrote over [@va, @va + @n) of the file image in @dst (a
 * module's link-time addresses): the pointers the offload entry table and
 * the GOT hold once relocated against @bias. Only relocations the module
 * resolves itself (RELATIVE, and absolute ones against its own defined
 * symbols); RELR-packed relocations are not read. */
static void apply_relocations(Elf *elf, GElf_Addr bias, uint64_t va, unsigned char *dst, size_t n)
{
    for (Elf_Scn *scn = 0; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, 0);
        Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
        Elf_Data *syms = symscn ? elf_getdata(symscn, 0) : 0;
        size_t count = data ? data->d_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < count; i++) {
            GElf_Rela r;
            if (n < 8 || !gelf_getrela(data, (int)i, &r) || r.r_offset < va || r.r_offset - va > n - 8)
                continue;
            uint64_t type = GELF_R_TYPE(r.r_info), value;
            GElf_Sym sym;
            if (type == TR_RELOC_RELATIVE)
                value = bias + (uint64_t)r.r_addend;
            else if (TR_RELOC_ABSOLUTE(type) && syms && gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) &&
                     sym.st_shndx != SHN_UNDEF)
                value = bias + sym.st_value + (uint64_t)r.r_addend;
            else
                continue;
            memcpy(dst + (r.r_offset - va), &value, sizeof value);
        }
    }
}

/* As safe_read, from a module's file as the loader would have mapped it
 * (tr_symbols_open_files): the PT_LOAD segment holding @addr, zeros past
 * its file part (.bss), relocated if the segment is writable. */
static size_t file_read(Dwfl_Module *m, void *dst, uint64_t addr, size_t n)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(m, &bias);
    size_t nph, filesize;
    const char *raw = elf ? elf_rawfile(elf, &filesize) : 0;
    if (!raw || elf_getphdrnum(elf, &nph))
        return 0;
    uint64_t va = addr - bias;
    for (size_t k = 0; k < nph; k++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)k, &ph) || ph.p_type != PT_LOAD || va < ph.p_vaddr ||
            va - ph.p_vaddr >= ph.p_memsz)
            continue;
        uint64_t at = va - ph.p_vaddr;
        if (n > ph.p_memsz - at)
            n = ph.p_memsz - at;
        size_t from_file = at < ph.p_filesz ? (size_t)(ph.p_filesz - at < n ? ph.p_filesz - at : n) : 0;
        if (from_file && (ph.p_offset > filesize || at > filesize - ph.p_offset ||
                          from_file > filesize - ph.p_offset - at))
            return 0; /* a file cut short: nothing trusted */
        memcpy(dst, raw + ph.p_offset + at, from_file);
        memset((char *)dst + from_file, 0, n - from_file);
        if (ph.p_flags & PF_W)
            apply_relocations(elf, bias, va, dst, n);
        return n;
    }
    return 0;
}

/* A module's memory: this process's, or its file's offline. */
static size_t read_memory(const tr_symbols *s, Dwfl_Module *m, void *dst, uint64_t addr, size_t n)
{
    return s->offline ? file_read(m, dst, addr, n) : safe_read(dst, addr, n);
}

static int in_module(Dwfl_Module *m, uint64_t a)
{
    Dwarf_Addr lo, hi;
    dwfl_module_info(m, 0, &lo, &hi, 0, 0, 0, 0);
    return a >= lo && a < hi;
}

static char *read_name(tr_symbols *s, Dwfl_Module *m, uint64_t p)
{
    if (!in_module(m, p))
        return 0;
    /* The name lives in the module's read-only data of this very process;
     * a read that stops at an unmapped page still ends the string. */
    char buf[1025];
    size_t got = read_memory(s, m, buf, p, sizeof buf - 1);
    if (!got)
        return 0;
    buf[got] = 0;
    return strdup(buf);
}

static void add_entry(tr_symbols *s, module_entries *me, Dwfl_Module *m, uint64_t addr, uint64_t name_ptr)
{
    char *name = read_name(s, m, name_ptr);
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
    me->e[me->n++] = (entry){addr, name, function, line};
}

static void load_entries(tr_symbols *s, module_entries *me, Dwfl_Module *m)
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
        /* The table as relocated in this process (the file holds no
         * pointers before relocation). */
        unsigned char *base = sh.sh_size < (1u << 24) ? malloc(sh.sh_size) : 0;
        if (!base || read_memory(s, m, base, sh.sh_addr + bias, sh.sh_size) != sh.sh_size) {
            free(base);
            continue;
        }
        /* LLVM <= 19: {addr, name, size, int32 flags, int32 data} (32 bytes).
         * LLVM 20+:   {u64 reserved (0), u16 version, u16 kind, u32 flags,
         *              addr, name, u64 size, u64 data, aux} (56 bytes; checked
         *              against clang-22's tables: 7 entries in 0x188 bytes). */
        size_t stride = newer ? 56 : 32, addr_off = newer ? 16 : 0, name_off = newer ? 24 : 8;
        size_t flags_off = newer ? 12 : 24; /* u32 flags; bit 0 = declare target link */
        for (size_t off = 0; off + stride <= sh.sh_size; off += stride) {
            uint64_t addr, name_ptr, reserved;
            uint32_t flags;
            /* A nonzero reserved word means the layout is not the one above:
             * read nothing rather than misread pointers. */
            memcpy(&reserved, base + off, sizeof reserved);
            if (newer && reserved != 0)
                break;
            memcpy(&addr, base + off + addr_off, sizeof addr);
            memcpy(&name_ptr, base + off + name_off, sizeof name_ptr);
            memcpy(&flags, base + off + flags_off, sizeof flags);
            if (flags & 1) {
                uint64_t *l = realloc(me->link_ref_ptrs, (me->nlinks + 1) * sizeof *l);
                if (l) {
                    me->link_ref_ptrs = l;
                    l[me->nlinks++] = addr;
                }
                continue;
            }
            add_entry(s, me, m, addr, name_ptr);
        }
        free(base);
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
    *me = (module_entries){m, 0, 0, 0, 0};
    load_entries(s, me, m);
    return me;
}

static const entry *entry_at(const module_entries *me, uint64_t addr)
{
    for (size_t i = 0; i < me->n; i++)
        if (me->e[i].addr == addr)
            return &me->e[i];
    return 0;
}

/* The host passes the kernel's region id to __tgt_target_kernel in a
 * register loaded just before the call whose return address is codeptr_ra:
 * `lea id(%rip), %reg` in PIC code, `mov $id, %reg32` otherwise. Scanning
 * back for an operand that is a known region id finds the kernel even when
 * the call has no line information (clang gives it line 0 at -O1 and up). */
static const entry *scan_for_region_id(tr_symbols *s, const module_entries *me, Dwfl_Module *m, uint64_t codeptr)
{
#if defined(__x86_64__)
    enum { WINDOW = 256 };
    Dwarf_Addr lo, hi;
    dwfl_module_info(m, 0, &lo, &hi, 0, 0, 0, 0);
    /* Only the calling function's own code: the end of the function before
     * it may load another construct's id (a nowait construct's small task
     * entry follows another's). */
    GElf_Off offset;
    GElf_Sym sym;
    if (dwfl_module_addrinfo(m, codeptr - 1, &offset, &sym, 0, 0, 0) && codeptr - 1 - offset > lo)
        lo = codeptr - 1 - offset;
    uint64_t from = codeptr - WINDOW >= lo && codeptr > WINDOW ? codeptr - WINDOW : lo;
    unsigned char p[WINDOW];
    size_t n = codeptr - from <= WINDOW ? codeptr - from : 0;
    if (read_memory(s, m, p, from, n) != n)
        return 0;
    const entry *best = 0;
    for (size_t i = 0; i + 7 <= n; i++) {
        int32_t disp;
        int rex_w = p[i] == 0x48 || p[i] == 0x4c;
        if (rex_w && p[i + 1] == 0x8d && (p[i + 2] & 0xc7) == 0x05) {
            memcpy(&disp, p + i + 3, 4);
            const entry *e = entry_at(me, from + i + 7 + (int64_t)disp);
            if (e)
                best = e;
        } else if (rex_w && p[i + 1] == 0x8b && (p[i + 2] & 0xc7) == 0x05) {
            /* `mov slot(%rip), %reg`: a shared library reaches its own
             * exported region id through its GOT. */
            uint64_t id;
            memcpy(&disp, p + i + 3, 4);
            if (read_memory(s, m, &id, from + i + 7 + (int64_t)disp, sizeof id) == sizeof id) {
                const entry *e = entry_at(me, id);
                if (e)
                    best = e;
            }
        } else if ((p[i] == 0x41 && p[i + 1] >= 0xb8 && p[i + 1] <= 0xbf) || (p[i] >= 0xb8 && p[i] <= 0xbf)) {
            uint32_t imm;
            memcpy(&imm, p + i + (p[i] == 0x41 ? 2 : 1), 4);
            const entry *e = entry_at(me, imm);
            if (e)
                best = e;
        }
    }
    return best;
#else
    (void)s, (void)me, (void)m, (void)codeptr;
    return 0;
#endif
}

static const entry *kernel_entry(tr_symbols *s, Dwfl_Module *m, uint64_t codeptr_ra)
{
    module_entries *me = entries_of(s, m);
    if (!me || !me->n)
        return 0;
    const entry *e = scan_for_region_id(s, me, m, codeptr_ra);
    if (e)
        return e;
    Dwarf_Addr addr = codeptr_ra - 1;
    const char *function = dwfl_module_addrname(m, addr);
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(m, addr);
    if (l)
        dwfl_lineinfo(l, 0, &line, 0, 0, 0);
    if (!function)
        return 0;
    const entry *only = 0;
    int candidates = 0;
    for (size_t i = 0; i < me->n; i++) {
        if (strcmp(me->e[i].function, function))
            continue;
        if (line && me->e[i].line == line)
            return &me->e[i];
        only = &me->e[i];
        candidates++;
    }
    /* Without an operand or line match the name is certain only if the
     * function has a single target region. */
    return candidates == 1 ? only : 0;
}

/* The module is looked up once: a second lookup may read the module list
 * again (the program loaded a library meanwhile), which frees what libdw
 * returned from the first and every entry's name; all is copied before. */
/* The function whose code takes the address @target (`lea target(%rip)`
 * in PIC code, `mov $target, %reg32` otherwise), or NULL: read from the
 * module's executable segments in this process's memory. */
static const char *referrer(tr_symbols *s, Dwfl_Module *m, uint64_t target)
{
#if defined(__x86_64__)
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(m, &bias);
    size_t nph;
    if (!elf || elf_getphdrnum(elf, &nph))
        return 0;
    enum { BLOCK = 65536, OVERLAP = 8 };
    unsigned char *p = malloc(BLOCK + OVERLAP);
    const char *found = 0;
    for (size_t k = 0; p && !found && k < nph; k++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)k, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
            continue;
        uint64_t lo = ph.p_vaddr + bias, hi = lo + ph.p_memsz;
        for (uint64_t from = lo; !found && from < hi; from += BLOCK) {
            size_t want = hi - from < BLOCK + OVERLAP ? (size_t)(hi - from) : BLOCK + OVERLAP;
            size_t n = read_memory(s, m, p, from, want);
            for (size_t i = 0; !found && i + 7 <= n && i < BLOCK; i++) {
                int32_t disp;
                uint32_t imm;
                uint64_t at = 0;
                if ((p[i] == 0x48 || p[i] == 0x4c) && p[i + 1] == 0x8d && (p[i + 2] & 0xc7) == 0x05) {
                    memcpy(&disp, p + i + 3, 4);
                    if (from + i + 7 + (int64_t)disp == target)
                        at = from + i;
                } else if (p[i] >= 0xb8 && p[i] <= 0xbf) {
                    memcpy(&imm, p + i + 1, 4);
                    if (imm == target)
                        at = from + i;
                }
                const char *name = at ? dwfl_module_addrname(m, at) : 0;
                if (name && strncmp(name, TR_OMP_TASK_ENTRY_PREFIX, strlen(TR_OMP_TASK_ENTRY_PREFIX)))
                    found = name;
            }
        }
    }
    free(p);
    return found;
#else
    (void)s, (void)m, (void)target;
#endif
    return 0;
}

/* A call in a compiler-made task entry: the function that creates the task. */
static void find_task_creator(tr_symbols *s, Dwfl_Module *m, uint64_t codeptr_ra, tr_code_description *out)
{
    if (strncmp(out->function, TR_OMP_TASK_ENTRY_PREFIX, strlen(TR_OMP_TASK_ENTRY_PREFIX)))
        return;
    GElf_Off offset;
    GElf_Sym sym;
    if (dwfl_module_addrinfo(m, codeptr_ra - 1, &offset, &sym, 0, 0, 0))
        copy_text(out->task_of, referrer(s, m, codeptr_ra - 1 - offset));
}

void tr_symbols_describe(tr_symbols *s, uint64_t codeptr_ra, tr_code_description *out)
{
    *out->function = *out->file = *out->kernel = *out->task_of = 0;
    out->line = out->kernel_line = 0;
    Dwfl_Module *m = s && codeptr_ra ? module_of(s, codeptr_ra - 1) : 0;
    if (!m)
        return;
    locate(m, codeptr_ra, out);
    find_task_creator(s, m, codeptr_ra, out);
    const entry *e = kernel_entry(s, m, codeptr_ra);
    if (e) {
        copy_text(out->kernel, e->name);
        out->kernel_line = e->line;
    }
}

/* The module list is read again whenever the loader loaded something since
 * it was read, BEFORE any module found in it is trusted: a library dlopen'ed
 * since is missing from it, and one loaded where something else was mapped
 * when the list was read (a file some runtime mapped for a while) would be
 * taken for that older mapping, which has no symbols: its kernels went
 * unnamed ("kernel"), and being named once per address, stayed so (test
 * unload, about 1 run in 8 under UBSan). Comparing the count costs one
 * dl_iterate_phdr per address named, and each address is named once. */
static Dwfl_Module *module_of(tr_symbols *s, uint64_t addr)
{
    if (s->offline)
        return dwfl_addrmodule(s->dwfl, addr); /* the files reported, once */
    unsigned long long adds = tr_loader_adds();
    if (adds == s->loads_seen)
        return dwfl_addrmodule(s->dwfl, addr);
    s->loads_seen = adds;
    for (int i = 0; i < s->nmods; i++) {
        for (size_t j = 0; j < s->mods[i].n; j++) {
            free(s->mods[i].e[j].name);
            free(s->mods[i].e[j].function);
        }
        free(s->mods[i].e);
        free(s->mods[i].link_ref_ptrs);
    }
    s->nmods = 0;
    if (!tr_symbols_files_safe()) {
        /* A new report drops modules, closing their descriptors: start a
         * new Dwfl instead. */
        Dwfl *d = report_all();
        if (!d) {
            s->never_end = 1; /* what it holds is no longer remembered */
            return 0;
        }
        s->dwfl = d;
    } else {
        dwfl_report_begin(s->dwfl);
        if (tr_symbols_report_loaded(s->dwfl) == 0)
            dwfl_report_end(s->dwfl, 0, 0);
    }
    return dwfl_addrmodule(s->dwfl, addr);
}

/* The loaded object whose PT_LOAD segments, .bss included, hold an
 * address; its first segment's start is in its file mapping. */
struct object_of {
    uint64_t addr, start;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct object_of *o = data;
    uint64_t first = 0;
    int have_first = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr;
        if (!have_first) {
            first = lo;
            have_first = 1;
        }
        if (o->addr >= lo && o->addr - lo < ph->p_memsz) {
            o->start = first;
            return 1;
        }
    }
    return 0;
}

/* A global in .bss past the last page backed by the file lies in an
 * anonymous mapping, which /proc/self/maps (what libdwfl reads) gives to no
 * module; the loader's own segments (memsz) still say whose it is. */
static Dwfl_Module *variable_module(tr_symbols *s, uint64_t addr)
{
    Dwfl_Module *m = module_of(s, addr);
    if (m || s->offline) /* a file's module holds all of its segments */
        return m;
    struct object_of o = {addr, 0};
    if (!dl_iterate_phdr(find_object, &o) || !o.start)
        return 0;
    return module_of(s, o.start);
}

int tr_symbols_variable(tr_symbols *s, uint64_t addr, tr_variable *out)
{
    if (!s || !addr)
        return 0;
    Dwfl_Module *m = variable_module(s, addr);
    if (!m)
        return 0;
    GElf_Off offset;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(m, addr, &offset, &sym, 0, 0, 0);
    if (!name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || offset >= sym.st_size)
        return 0;
    out->name = name;
    out->base = addr - offset;
    out->size = sym.st_size;
    out->ref_ptr = 0;
    /* A link variable's reference pointer holds its host address. */
    module_entries *me = entries_of(s, m);
    for (size_t i = 0; me && i < me->nlinks; i++) {
        uint64_t held;
        if (read_memory(s, m, &held, me->link_ref_ptrs[i], sizeof held) == sizeof held && held == out->base) {
            out->ref_ptr = me->link_ref_ptrs[i];
            break;
        }
    }
    return 1;
}
