#define _GNU_SOURCE 1 /* asprintf */
#include "journal/debug_files.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_format.h" /* tr_crc32: zlib's CRC-32, the one .gnu_debuglink holds */

#define DEBUG_ROOT "/usr/lib/debug"
#define MAX_ID 64 /* bytes of a build id; usually 20 */

typedef struct build_id {
    unsigned char bits[MAX_ID];
    size_t len; /* 0: none */
} build_id;

/* What a candidate must be to be taken. */
typedef struct wanted {
    struct stat main;  /* never the file the lookup is for */
    GElf_Word crc;     /* 0: not checked */
    const build_id *id; /* NULL or len 0: not checked */
} wanted;

/* 1 when the ELF file at @fd has the build id note @id. */
static int has_build_id(int fd, const build_id *id)
{
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, 0);
    if (!elf)
        return 0;
    const void *bits;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    int same = n > 0 && (size_t)n == id->len && !memcmp(bits, id->bits, id->len);
    elf_end(elf);
    return same;
}

/* 1 when the whole file's CRC is @crc. */
static int crc_matches(int fd, GElf_Word crc)
{
    enum { CHUNK = 1 << 16 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf)
        return 0;
    uint32_t c = 0;
    off_t at = 0;
    for (;;) {
        ssize_t got = pread(fd, buf, CHUNK, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(buf);
            return 0;
        }
        if (!got)
            break;
        c = tr_crc32(c, buf, (uint64_t)got);
        at += got;
    }
    free(buf);
    return c == crc;
}

/* Opens @path if it is a debug file @w accepts: returns the descriptor and
 * sets *@name to a copy of @path, or returns -1. */
static int try_path(const char *path, const wanted *w, char **name)
{
    /* O_NONBLOCK: a FIFO put at that path never blocks the open; a
     * regular file's reads ignore the flag. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    int ok = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
             !(st.st_dev == w->main.st_dev && st.st_ino == w->main.st_ino);
    /* The build id first: reading its note is cheap, the CRC reads the
     * whole file. */
    if (ok && w->id && w->id->len)
        ok = has_build_id(fd, w->id);
    if (ok && w->crc)
        ok = crc_matches(fd, w->crc);
    if (ok)
        ok = (*name = strdup(path)) != 0;
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Like try_path, for a name asprintf'ed from @fmt (NULL: out of memory). */
static int try_fmt(const wanted *w, char **name, const char *fmt, const char *a, const char *b)
{
    char *path;
    if (asprintf(&path, fmt, a, b) < 0)
        return -1;
    int fd = try_path(path, w, name);
    free(path);
    return fd;
}

/* /usr/lib/debug/.build-id/<2 hex>/<rest>.debug, checked to be @id's. */
static int by_build_id(const build_id *id, const wanted *w, char **name)
{
    if (id->len < 2)
        return -1;
    char path[sizeof DEBUG_ROOT "/.build-id/" + 2 * MAX_ID + 1 + sizeof ".debug"];
    int n = snprintf(path, sizeof path, DEBUG_ROOT "/.build-id/%02x/", id->bits[0]);
    for (size_t i = 1; i < id->len; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "%02x", id->bits[i]);
    snprintf(path + n, sizeof path - (size_t)n, ".debug");
    wanted by_id = *w;
    by_id.id = id;
    return try_path(path, &by_id, name);
}

/* The directory part of @file_name, malloc'ed; NULL when it has none: the
 * modules of /proc/self/maps have absolute names, and a pseudo-name such
 * as "[vdso: 1]" must not send the lookup to the current directory. */
static char *dir_of(const char *file_name)
{
    const char *slash = file_name ? strrchr(file_name, '/') : 0;
    return slash ? strndup(file_name, (size_t)(slash - file_name)) : 0;
}

/* The build id @file_name's .gnu_debugaltlink names, into *@id, when that
 * link's file name is @link: then libdwfl asks for the .dwz file. */
static int altlink_id(const char *file_name, const char *link, build_id *id)
{
    int fd = file_name ? open(file_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
    if (fd < 0)
        return 0;
    struct stat st;
    Elf *elf = !fstat(fd, &st) && S_ISREG(st.st_mode) ? elf_begin(fd, ELF_C_READ_MMAP, 0) : 0;
    size_t shstrndx;
    int found = 0;
    if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
        for (Elf_Scn *scn = 0; !found && (scn = elf_nextscn(elf, scn));) {
            GElf_Shdr sh;
            const char *sname = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : 0;
            if (!sname || strcmp(sname, ".gnu_debugaltlink"))
                continue;
            /* The link's name, its NUL, then the build id. */
            Elf_Data *d = elf_getdata(scn, 0);
            const char *p = d ? d->d_buf : 0;
            const char *nul = p ? memchr(p, 0, d->d_size) : 0;
            if (!nul || strcmp(p, link))
                break;
            size_t len = d->d_size - (size_t)(nul + 1 - p);
            if (len && len <= MAX_ID) {
                memcpy(id->bits, nul + 1, len);
                id->len = len;
                found = 1;
            }
        }
    }
    elf_end(elf);
    close(fd);
    return found;
}

/* The .dwz file named @link by @file_name's .gnu_debugaltlink. */
static int find_alt(const char *file_name, const char *link, const build_id *id, wanted *w, char **name)
{
    w->crc = 0;
    w->id = id; /* a .dwz file is always checked by its build id */
    int fd = by_build_id(id, w, name);
    if (fd >= 0)
        return fd;
    if (link[0] == '/')
        return try_path(link, w, name);
    char *dir = dir_of(file_name);
    if (dir) {
        fd = try_fmt(w, name, "%s/%s", dir, link);
        free(dir);
    }
    if (fd < 0) {
        const char *base = strrchr(link, '/');
        fd = try_fmt(w, name, "%s/%s", DEBUG_ROOT "/.dwz", base ? base + 1 : link);
    }
    return fd;
}

/* The module's debug file, by its build id, then by its .gnu_debuglink. */
static int find_debug(Dwfl_Module *mod, const char *file_name, const char *link, GElf_Word crc, wanted *w,
                      char **name)
{
    build_id id = {.len = 0};
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    if (n > 0 && (size_t)n <= MAX_ID) {
        memcpy(id.bits, bits, (size_t)n);
        id.len = (size_t)n;
        int fd = by_build_id(&id, w, name);
        if (fd >= 0)
            return fd;
    }
    if (!link || strchr(link, '/'))
        return -1; /* a debuglink is a file name, never a path */
    w->crc = crc;
    w->id = &id; /* when the module has one, the debug file has it too */
    char *dir = dir_of(file_name);
    if (!dir)
        return -1;
    int fd = try_fmt(w, name, "%s/%s", dir, link);
    if (fd < 0)
        fd = try_fmt(w, name, "%s/.debug/%s", dir, link);
    if (fd < 0 && dir[0] == '/') {
        char *sub;
        if (asprintf(&sub, DEBUG_ROOT "%s", dir) >= 0) {
            fd = try_fmt(w, name, "%s/%s", sub, link);
            free(sub);
        }
    }
    free(dir);
    return fd;
}

/* 1 when @link and @crc are the main file's own .gnu_debuglink: libdwfl
 * asks for the module's debug file, not for a .dwz file. */
static int is_main_debuglink(Dwfl_Module *mod, const char *link, GElf_Word crc)
{
    if (!link)
        return 1;
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias); /* already open: libdwfl asks after reading it */
    GElf_Word main_crc = 0;
    const char *main_link = elf ? dwelf_elf_gnu_debuglink(elf, &main_crc) : 0;
    return main_link && !strcmp(main_link, link) && main_crc == crc;
}

int tr_debug_file_find(Dwfl_Module *mod, const char *file_name, const char *debuglink_file,
                       GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    if (!mod)
        return -1;
    wanted w = {.crc = 0, .id = 0};
    if (!file_name || stat(file_name, &w.main)) {
        w.main.st_dev = 0;
        w.main.st_ino = 0;
    }
    int fd;
    build_id alt = {.len = 0};
    if (is_main_debuglink(mod, debuglink_file, debuglink_crc))
        fd = find_debug(mod, file_name, debuglink_file, debuglink_crc, &w, debuginfo_file_name);
    else if (!debuglink_crc && altlink_id(file_name, debuglink_file, &alt))
        fd = find_alt(file_name, debuglink_file, &alt, &w, debuginfo_file_name);
    else
        fd = -1; /* neither: nothing this lookup can check */
    if (fd < 0)
        errno = 0; /* libdwfl: nothing found, not a failure */
    return fd;
}
