#include "journal/journal_write.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int tr_journal_create(int dirfd)
{
    return openat(dirfd, TR_JOURNAL_NAME, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666);
}

/* One writev per frame: Linux appends it as a unit to an O_APPEND file, so a
 * crash handler writing beside the consumer thread never splits a frame. */
int tr_journal_append(int fd, tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes)
{
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    tr_frame_seal(h, type, payload, bytes);
    struct iovec iov[2] = {{h, sizeof *h}, {(void *)payload, (size_t)bytes}};
    size_t total = sizeof *h + (size_t)bytes;
    for (;;) {
        ssize_t n = writev(fd, iov, bytes ? 2 : 1);
        if (n == (ssize_t)total)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n >= 0)
            errno = ENOSPC; /* a short append: the reader drops the torn frame */
        return -1;
    }
}

void tr_kv_add(tr_kv *kv, uint16_t key, const void *value, uint32_t len)
{
    if (kv->len + 8 + len > sizeof kv->data)
        return;
    uint16_t k[2] = {key, 0};
    memcpy(kv->data + kv->len, k, 4);
    memcpy(kv->data + kv->len + 4, &len, 4);
    memcpy(kv->data + kv->len + 8, value, len);
    kv->len += 8 + len;
}

void tr_kv_add_text(tr_kv *kv, uint16_t key, const char *text)
{
    tr_kv_add(kv, key, text, (uint32_t)strlen(text) + 1);
}
