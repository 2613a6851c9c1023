#include "journal/journal_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "journal/record_delta.h"

static int header_ok(const tr_frame_header *h, uint64_t room)
{
    if (h->magic != TR_FRAME_MAGIC || h->version != TR_FRAME_VERSION)
        return 0;
    tr_frame_header copy = *h;
    copy.header_crc = 0;
    if (tr_crc32(0, &copy, sizeof copy) != h->header_crc)
        return 0;
    if (h->payload_bytes > TR_FRAME_MAX_PAYLOAD || h->raw_bytes > TR_FRAME_MAX_PAYLOAD)
        return 0;
    return h->payload_bytes <= room;
}

static int scan(const char *path, tr_journal_visit visit, tr_journal_visit_at visit_at, void *ctx,
                tr_journal_stats *st, int stored_chunks);

int tr_journal_scan(const char *path, tr_journal_visit visit, void *ctx, tr_journal_stats *st)
{
    return scan(path, visit, 0, ctx, st, 0);
}

int tr_journal_scan_stored(const char *path, tr_journal_visit visit, void *ctx, tr_journal_stats *st)
{
    return scan(path, visit, 0, ctx, st, 1);
}

int tr_journal_scan_at(const char *path, tr_journal_visit_at visit, void *ctx, tr_journal_stats *st)
{
    return scan(path, 0, visit, ctx, st, 1);
}

/* How much of the mapping the scan lets go of at once (a multiple of the page size). */
#define DROP_BEHIND (1u << 20)

static int scan(const char *path, tr_journal_visit visit, tr_journal_visit_at visit_at, void *ctx,
                tr_journal_stats *st, int stored_chunks)
{
    memset(st, 0, sizeof *st);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    uint64_t size = (uint64_t)sb.st_size;
    const unsigned char *map = 0;
    if (size) {
        map = mmap(0, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            close(fd);
            return -1;
        }
    }
    close(fd);
    void *raw = malloc(TR_FRAME_MAX_PAYLOAD);
    if (!raw) {
        if (map)
            munmap((void *)map, size);
        errno = ENOMEM;
        return -1;
    }
    uint64_t off = 0, dropped = 0;
    int in_damage = 0;
    while (off + sizeof(tr_frame_header) <= size) {
        /* The pages read stay in the process's memory until unmapped: a
         * journal of 20M events would add 20 MB to the writer's peak. Those
         * behind the scan are not needed again (file-backed: read back if
         * they were). */
        if (off - dropped >= DROP_BEHIND) {
            uint64_t upto = off & ~(uint64_t)(DROP_BEHIND - 1);
            madvise((void *)(map + dropped), upto - dropped, MADV_DONTNEED);
            dropped = upto;
        }
        tr_frame_header h;
        memcpy(&h, map + off, sizeof h);
        uint64_t room = size - off - sizeof h;
        int valid = header_ok(&h, room);
        const unsigned char *payload = map + off + sizeof h;
        if (valid && tr_crc32(0, payload, h.payload_bytes) != h.payload_crc)
            valid = 0;
        const void *data = payload;
        uint64_t bytes = h.payload_bytes;
        int zstd = tr_frame_is_zstd(h.flags);
        if (valid && h.flags == TR_FRAME_ZSTD_DELTA && h.type != TR_FRAME_CHUNK) {
            valid = 0;
        } else if (valid && zstd && stored_chunks && h.type == TR_FRAME_CHUNK) {
            valid = h.raw_bytes == (uint64_t)h.records * sizeof(tr_record);
        } else if (valid && zstd) {
            size_t n = ZSTD_decompress(raw, TR_FRAME_MAX_PAYLOAD, payload, h.payload_bytes);
            valid = !ZSTD_isError(n) && n == h.raw_bytes;
            data = raw;
            bytes = n;
        } else if (valid && h.flags != TR_FRAME_RAW) {
            valid = 0;
        }
        if (valid && h.type == TR_FRAME_CHUNK && !(stored_chunks && zstd) &&
            bytes != (uint64_t)h.records * sizeof(tr_record))
            valid = 0;
        if (valid && h.flags == TR_FRAME_ZSTD_DELTA && !stored_chunks)
            tr_records_undelta(raw, h.records);
        if (!valid) {
            /* A header that is intact but whose payload is cut off at the end
             * of the file is a truncation, not damage in the middle. */
            if (h.magic == TR_FRAME_MAGIC && h.payload_bytes > room && h.payload_bytes <= TR_FRAME_MAX_PAYLOAD) {
                tr_frame_header copy = h;
                copy.header_crc = 0;
                if (tr_crc32(0, &copy, sizeof copy) == h.header_crc) {
                    st->truncated = 1;
                    st->skipped_bytes += size - off;
                    off = size;
                    break;
                }
            }
            if (!in_damage)
                st->bad_frames++;
            in_damage = 1;
            st->skipped_bytes++;
            off++;
            continue;
        }
        in_damage = 0;
        st->frames++;
        if (h.type == TR_FRAME_CHUNK) {
            st->chunks++;
            st->records += h.records;
        } else if (h.type == TR_FRAME_END) {
            st->ended = 1;
        } else if (h.type == TR_FRAME_CRASH && bytes >= 4) {
            st->crashed = 1;
            memcpy(&st->crash_signal, data, 4);
        }
        if (visit && visit(ctx, &h, data, bytes))
            break;
        if (visit_at && visit_at(ctx, &h, off + sizeof h, data, bytes))
            break;
        off += sizeof h + h.payload_bytes;
    }
    if (off < size) {
        st->truncated = 1;
        st->skipped_bytes += size - off;
    }
    free(raw);
    if (map)
        munmap((void *)map, size);
    return 0;
}
