/* inflight.c - the chunk pool in a /dev/shm file (inflight.h). */
#define _GNU_SOURCE 1 /* fallocate, F_OFD_SETLK */
#include "core/inflight.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/fd_keep.h"
#include "core/log.h"

static char path[96];
static tr_fd kept = TR_FD_NONE;
static char *chunks_base;
static tr_inflight_header *header;
static size_t chunk_size;
static uint64_t run_id;
static int full_once;

static uint64_t random_id(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = tr_clock_mono_ns() ^ ((uint64_t)getpid() << 40);
    return v ? v : 1;
}

static void *fail(const char *what, int err)
{
    tr_log("%s %s: %s; events not yet in the journal are lost if the process is killed by SIGKILL "
           "(at most TRACER_FLUSH_INTERVAL of them)",
           what, path[0] ? path : TR_INFLIGHT_DIR, strerror(err));
    tr_fd_release(&kept);
    if (path[0])
        unlink(path);
    path[0] = 0;
    return 0;
}

void *tr_inflight_create(uint64_t chunks, size_t chunk_bytes)
{
    struct statfs fs;
    if (statfs(TR_INFLIGHT_DIR, &fs))
        return fail("cannot use", errno);
    if (fs.f_type != TMPFS_MAGIC)
        return fail("cannot use (not a tmpfs)", ENOTSUP);
    run_id = random_id();
    snprintf(path, sizeof path, TR_INFLIGHT_DIR "/tracer-%ld-%016llx", (long)getpid(), (unsigned long long)run_id);
    /* O_EXCL and O_NOFOLLOW: /dev/shm is writable by everyone. 0600: the
     * records hold addresses and names of this program. */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int err = errno;
        path[0] = 0;
        return fail("cannot create a file in", err);
    }
    /* Kept out of the program's way: a program that closes every descriptor,
     * or takes this number, never has its own file grown here. */
    fd = tr_fd_keep(&kept, fd);
    if (fd < 0)
        return fail("cannot keep", errno);
    /* Says "this run is alive" to `tracer recover` until the process is
     * gone. Without it recover could not tell, and might take a live file. */
    struct flock alive = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_OFD_SETLK, &alive))
        return fail("cannot lock", errno);
    size_t bytes = TR_INFLIGHT_HEADER_BYTES + (size_t)chunks * chunk_bytes;
    if (ftruncate(fd, (off_t)bytes))
        return fail("cannot size", errno);
    char *map = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (map == MAP_FAILED)
        return fail("cannot map", errno);
    /* A forked child gets no copy: it records nothing, and must never write
     * into the parent's records. */
    madvise(map, bytes, MADV_DONTFORK);
    if (fallocate(fd, 0, 0, TR_INFLIGHT_HEADER_BYTES)) {
        int err = errno;
        munmap(map, bytes);
        return fail("cannot write to", err);
    }
    tr_inflight_header h = {.version = TR_INFLIGHT_VERSION, .header_bytes = TR_INFLIGHT_HEADER_BYTES,
                            .chunk_bytes = (uint32_t)chunk_bytes, .record_bytes = 64, .chunks = chunks,
                            .pid = (uint64_t)getpid(), .run_id = run_id};
    memcpy(h.magic, TR_INFLIGHT_MAGIC, 8);
    memcpy(map, &h, sizeof h);
    header = (tr_inflight_header *)map;
    chunks_base = map + TR_INFLIGHT_HEADER_BYTES;
    chunk_size = chunk_bytes;
    return chunks_base;
}

void tr_inflight_reserve(uint32_t i)
{
    if (!chunks_base)
        return;
    off_t off = (off_t)TR_INFLIGHT_HEADER_BYTES + (off_t)i * (off_t)chunk_size;
    int saved = errno;
    /* A program that closed every descriptor took ours: the file is
     * reopened by its name, only if it is still the same file. */
    int fd = tr_fd_get(&kept);
    errno = EBADF;
    if (fd < 0 && path[0])
        fd = tr_fd_reclaim(&kept, path, O_RDWR | O_CLOEXEC);
    if (fd >= 0 && !fallocate(fd, 0, off, (off_t)chunk_size)) {
        /* Before the chunk's first record: a chunk above the mark never
         * held one. Threads take fresh chunks concurrently: only raise. */
        uint64_t mark = __atomic_load_n(&header->handed_out, __ATOMIC_RELAXED);
        while (mark < (uint64_t)i + 1 && !__atomic_compare_exchange_n(&header->handed_out, &mark, (uint64_t)i + 1, 1,
                                                                      __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            ;
        errno = saved;
        return;
    }
    int err = errno;
    /* A store into a page tmpfs cannot give is a SIGBUS: this chunk becomes
     * private memory, at the same address. */
    mmap(chunks_base + (size_t)i * chunk_size, chunk_size, PROT_READ | PROT_WRITE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    tr_log_once(&full_once, "%s: %s; chunks beyond it are private memory, and a SIGKILL may lose their "
                            "events not yet in the journal",
                path, strerror(err));
    errno = saved;
}

const char *tr_inflight_path(void) { return path; }
uint64_t tr_inflight_run_id(void) { return run_id; }

void tr_inflight_remove(void)
{
    if (path[0])
        unlink(path);
    path[0] = 0;
}

void tr_inflight_forget(void)
{
    path[0] = 0;
    chunks_base = 0;
    header = 0;
    /* The parent's open file description, and so its lock, stays held by
     * the parent's descriptor and mapping; only this copy goes (if the
     * number still names the file: else it is the program's). */
    tr_fd_release(&kept);
}
