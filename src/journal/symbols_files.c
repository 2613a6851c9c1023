#include "journal/symbols_files.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fd_keep.h"
#include "journal/debug_files.h"

static tr_fd *held;
static size_t nheld, capheld;
static int overflow; /* a descriptor could not be remembered: never safe */

static void remember(const tr_fd *k)
{
    /* A number seen before was closed by libdwfl and reused: the old entry
     * is obsolete. */
    for (size_t i = 0; i < nheld; i++)
        if (held[i].fd == k->fd)
            held[i] = held[--nheld];
    if (nheld == capheld) {
        size_t cap = capheld ? 2 * capheld : 16;
        tr_fd *p = realloc(held, cap * sizeof *p);
        if (!p) {
            overflow = 1;
            return;
        }
        held = p;
        capheld = cap;
    }
    held[nheld++] = *k;
}

static int keep(int fd)
{
    tr_fd k;
    fd = tr_fd_keep(&k, fd);
    if (fd >= 0)
        remember(&k);
    return fd;
}

/* The main ELF file, mapped by libelf (ELF_C_FDREAD: it no longer needs the
 * descriptor), so that libdwfl gets the Elf and no descriptor. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                    Elf **elfp)
{
    int fd = dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
    if (fd < 0)
        return fd;
    int ours = !*elfp;
    if (ours)
        *elfp = elf_begin(fd, ELF_C_READ_MMAP, 0);
    if (*elfp && elf_cntl(*elfp, ELF_C_FDREAD) == 0) {
        close(fd);
        return -1;
    }
    if (ours && *elfp) {
        elf_end(*elfp);
        *elfp = 0;
    }
    return keep(fd); /* libdwfl reads it itself */
}

/* A debug file (also a .dwz file: libdwfl asks the same callback), whose
 * descriptor libdwfl opens the Elf from and holds. Found on this machine
 * only: never dwfl_standard_find_debuginfo, which ends with debuginfod
 * (debug_files.h). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
    (void)userdata, (void)modname, (void)base;
    int fd = tr_debug_file_find(mod, file_name, debuglink_file, debuglink_crc, debuginfo_file_name);
    return fd < 0 ? fd : keep(fd);
}

const Dwfl_Callbacks *tr_symbols_callbacks(void)
{
    static const Dwfl_Callbacks callbacks = {
        .find_elf = find_elf,
        .find_debuginfo = find_debuginfo,
    };
    return &callbacks;
}

void tr_symbols_files_reset(void)
{
    nheld = 0;
    overflow = 0;
}

int tr_symbols_files_safe(void)
{
    if (overflow)
        return 0;
    for (size_t i = 0; i < nheld;) {
        struct stat st;
        if (fstat(held[i].fd, &st) && errno == EBADF) {
            held[i] = held[--nheld]; /* closed: closing it again harms no one */
            continue;
        }
        if (!tr_fd_names(held[i].fd, &held[i]))
            return 0;
        i++;
    }
    return 1;
}
