/* inflight_salvage.c - the in-flight file's chunks into the journal
 * (inflight_salvage.h). */
#include "journal/inflight_salvage.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/inflight.h"
#include "common/sort.h"
#include "journal/journal_format.h"
#include "journal/journal_read.h"

_Static_assert(offsetof(tr_chunk, rec) == 64, "a chunk's header is the 64 bytes the in-flight file shows");

/* One CHUNK frame of the journal, or one chunk taken from the file. */
typedef struct copy {
    uint32_t location, tid;
    uint64_t seq;
    uint32_t records;
    int inflight;
} copy;

typedef struct scan {
    copy *v;
    size_t n, cap;
    int oom;
    uint64_t pid, run_id;
    int named, salvaged;
    char path[128];
    char host[256];
    uint64_t end; /* where the last valid frame ends */
} scan;

static int push(scan *s, copy c)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        copy *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->oom = 1;
            return -1;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = c;
    return 0;
}

static void read_start(scan *s, const unsigned char *p, uint64_t n)
{
    uint64_t off = 0;
    uint16_t key;
    uint32_t len;
    const unsigned char *v;
    while (tr_kv_next(p, n, &off, &key, &v, &len)) {
        if (key == TR_KEY_HOSTNAME && len < sizeof s->host) {
            memcpy(s->host, v, len);
            s->host[len] = 0;
        } else if (key == TR_KEY_PID && len == 8) {
            memcpy(&s->pid, v, 8);
        } else if (key == TR_KEY_INFLIGHT && len > 8 && len - 8 < sizeof s->path) {
            memcpy(&s->run_id, v, 8);
            memcpy(s->path, v + 8, len - 8);
            s->path[len - 8] = 0;
            s->named = 1;
        }
    }
}

static int visit(void *ctx, const tr_frame_header *h, uint64_t offset, const void *payload, uint64_t bytes)
{
    scan *s = ctx;
    s->end = offset + h->payload_bytes;
    if (h->type == TR_FRAME_START)
        read_start(s, payload, bytes);
    else if (h->type == TR_FRAME_SALVAGED)
        s->salvaged = 1;
    else if (h->type == TR_FRAME_CHUNK && h->records)
        push(s, (copy){h->location, h->tid, h->seq, h->records, 0});
    return 0;
}

/* By thread and seq, the fullest copy first. */
static int by_location_seq(const void *a, const void *b)
{
    const copy *x = a, *y = b;
    if (x->location != y->location)
        return x->location < y->location ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return (x->records < y->records) - (x->records > y->records);
}

/* The journal's fullest copy of (@location, @seq) among the first @n
 * (sorted) copies: its record count, 0 if none. */
static uint32_t journal_records(const copy *v, size_t n, uint32_t location, uint64_t seq)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].location < location || (v[mid].location == location && v[mid].seq < seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].location == location && v[lo].seq == seq ? v[lo].records : 0;
}

/* One frame, one writev: appends from another process never interleave. */
static int append_frame(int fd, tr_frame_header *h, uint16_t type, const void *payload, uint64_t bytes)
{
    tr_frame_seal(h, type, payload, bytes);
    struct iovec iov[2] = {{h, sizeof *h}, {(void *)payload, (size_t)bytes}};
    ssize_t w;
    do
        w = writev(fd, iov, 2);
    while (w < 0 && errno == EINTR);
    if (w == (ssize_t)(sizeof *h + bytes))
        return 0;
    if (w >= 0)
        errno = ENOSPC;
    return -1;
}

static int append_chunk(int fd, const tr_chunk *c, uint32_t n)
{
    tr_frame_header h = {0};
    h.location = c->location;
    h.tid = c->tid;
    h.seq = c->seq;
    h.records = n;
    h.raw_bytes = (uint64_t)n * sizeof(tr_record);
    h.flags = TR_FRAME_RAW;
    return append_frame(fd, &h, TR_FRAME_CHUNK, c->rec, h.raw_bytes);
}

/* Says the file was taken: a later recover finds it gone and knows why. */
static int append_salvaged(int fd, uint64_t run_id)
{
    tr_frame_header h = {0};
    h.raw_bytes = 8;
    return append_frame(fd, &h, TR_FRAME_SALVAGED, &run_id, 8);
}

/* A chunk header written by a live pool, or garbage? */
static int plausible(const tr_chunk *c, uint32_t index)
{
    return c->state <= TR_CHUNK_TAKEN && c->count <= TR_CHUNK_RECORDS && c->index == index &&
           c->location < (1u << 24);
}

static int records_plausible(const tr_chunk *c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (c->rec[i].type == TR_REC_NONE || c->rec[i].type >= TR_REC_TYPE_COUNT)
            return 0;
    return 1;
}

/* Reads the file's first @nchunks chunks (those ever handed out); appends
 * to @jfd those that add records. */
static int take_chunks(tr_salvage_report *r, scan *s, int ffd, int jfd, uint64_t nchunks, size_t njournal)
{
    tr_chunk *c = malloc(sizeof *c);
    if (!c) {
        snprintf(r->problem, sizeof r->problem, "out of memory");
        return -1;
    }
    int rc = 0;
    for (uint64_t i = 0; i < nchunks && !rc; i++) {
        off_t off = (off_t)TR_INFLIGHT_HEADER_BYTES + (off_t)i * (off_t)sizeof *c;
        if (pread(ffd, c, offsetof(tr_chunk, rec), off) != (ssize_t)offsetof(tr_chunk, rec))
            break;
        uint32_t n = c->count;
        if (!n && c->state == TR_CHUNK_FREE)
            continue; /* never used, or reused and not yet written: nothing */
        if (!plausible(c, (uint32_t)i)) {
            r->bad_chunks++;
            continue;
        }
        if (!n || n <= journal_records(s->v, njournal, c->location, c->seq))
            continue;
        size_t bytes = (size_t)n * sizeof(tr_record);
        if (pread(ffd, c->rec, bytes, off + (off_t)offsetof(tr_chunk, rec)) != (ssize_t)bytes ||
            !records_plausible(c, n)) {
            r->bad_chunks++;
            continue;
        }
        if (append_chunk(jfd, c, n)) {
            snprintf(r->problem, sizeof r->problem, "cannot append to the journal: %s", strerror(errno));
            rc = -1;
            break;
        }
        r->chunks_added++;
        push(s, (copy){c->location, c->tid, c->seq, n, 1});
    }
    free(c);
    return rc;
}

/* Per thread: records from each source, and the chunks missing between
 * kept ones (the reader marks each such gap measurement off). */
static void account(tr_salvage_report *r, scan *s)
{
    tr_sort(s->v, s->n, sizeof *s->v, by_location_seq);
    size_t nthreads = 0;
    for (size_t i = 0; i < s->n; i++)
        nthreads += i == 0 || s->v[i].location != s->v[i - 1].location;
    r->threads = calloc(nthreads ? nthreads : 1, sizeof *r->threads);
    if (!r->threads)
        return;
    for (size_t i = 0; i < s->n;) {
        tr_salvage_thread *t = &r->threads[r->nthreads++];
        t->location = s->v[i].location;
        t->tid = s->v[i].tid;
        uint64_t last_seq = 0;
        int any = 0;
        for (; i < s->n && s->v[i].location == t->location; i++) {
            const copy *c = &s->v[i];
            if (any && c->seq == last_seq)
                continue; /* a less full copy */
            if (any && c->seq > last_seq + 1) {
                if (!t->gaps)
                    t->first_gap_seq = last_seq + 1;
                t->gaps++;
                t->missing += c->seq - last_seq - 1;
            }
            /* The fullest copy: from the file only if the journal had less. */
            if (c->inflight) {
                uint32_t j = i + 1 < s->n && s->v[i + 1].location == c->location && s->v[i + 1].seq == c->seq
                                 ? s->v[i + 1].records
                                 : 0;
                t->journal_records += j;
                t->inflight_records += c->records - j;
                r->records_added += c->records - j;
            } else {
                t->journal_records += c->records;
            }
            last_seq = c->seq;
            any = 1;
        }
    }
}

/* The journal's frames into @s (emptied first); @r->problem on failure. */
static int scan_journal(const char *journal, scan *s, tr_journal_stats *st, tr_salvage_report *r)
{
    free(s->v);
    memset(s, 0, sizeof *s);
    if (tr_journal_scan_at(journal, visit, s, st) || s->oom) {
        int e = s->oom ? ENOMEM : errno;
        snprintf(r->problem, sizeof r->problem, "cannot read %s: %s", journal, strerror(e));
        errno = e;
        return -1;
    }
    tr_sort(s->v, s->n, sizeof *s->v, by_location_seq);
    return 0;
}

/* The file's header, checked against the journal's START frame. Returns
 * 0, or -1 with @r->problem said. */
static int read_header(int ffd, const scan *s, tr_inflight_header *h, tr_salvage_report *r)
{
    struct stat fs;
    if (fstat(ffd, &fs) || pread(ffd, h, sizeof *h, 0) != (ssize_t)sizeof *h || memcmp(h->magic, TR_INFLIGHT_MAGIC, 8) ||
        h->version != TR_INFLIGHT_VERSION || h->header_bytes != TR_INFLIGHT_HEADER_BYTES ||
        h->chunk_bytes != sizeof(tr_chunk) || h->record_bytes != sizeof(tr_record))
        snprintf(r->problem, sizeof r->problem, "not an in-flight file of this version of tracer");
    else if (h->pid != s->pid || h->run_id != s->run_id)
        snprintf(r->problem, sizeof r->problem, "the file is another run's");
    else if (h->handed_out > h->chunks || (uint64_t)fs.st_size < TR_INFLIGHT_HEADER_BYTES + h->chunks * sizeof(tr_chunk))
        snprintf(r->problem, sizeof r->problem, "the file is shorter than its header says");
    else
        return 0;
    return -1;
}

/* Appends to @journal what the unheld file @ffd adds. */
static int take_file(const char *journal, tr_salvage_report *r, scan *s, int ffd, const tr_inflight_header *h)
{
    int rc = 0;
    struct stat js;
    int jfd = open(journal, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    /* A frame torn by the death hides whatever follows it. */
    if (jfd < 0 || fstat(jfd, &js) || ((uint64_t)js.st_size > s->end && ftruncate(jfd, (off_t)s->end))) {
        snprintf(r->problem, sizeof r->problem, "cannot append to the journal: %s", strerror(errno));
        rc = -1;
    } else {
        r->state = TR_SALVAGE_TAKEN;
        rc = take_chunks(r, s, ffd, jfd, h->handed_out, s->n);
        if (!rc && append_salvaged(jfd, s->run_id)) {
            snprintf(r->problem, sizeof r->problem, "cannot append to the journal: %s", strerror(errno));
            rc = -1;
        }
    }
    if (jfd >= 0 && close(jfd) && !rc) {
        snprintf(r->problem, sizeof r->problem, "cannot append to the journal: %s", strerror(errno));
        rc = -1;
    }
    return rc;
}

int tr_inflight_salvage(const char *journal, tr_holder_wait *w, tr_salvage_report *r)
{
    memset(r, 0, sizeof *r);
    scan s = {0};
    tr_journal_stats st;
    struct stat js;
    if (scan_journal(journal, &s, &st, r) || stat(journal, &js)) {
        if (!r->problem[0])
            snprintf(r->problem, sizeof r->problem, "cannot read %s: %s", journal, strerror(errno));
        free(s.v);
        return -1;
    }
    int rc = 0;
    snprintf(r->path, sizeof r->path, "%s", s.path);
    snprintf(r->host, sizeof r->host, "%s", s.host);
    r->state = s.named ? TR_SALVAGE_GONE : TR_SALVAGE_NONE;
    int ffd = s.named ? tr_inflight_open_checked(s.path, js.st_uid, r->problem, sizeof r->problem) : -1;
    int absent = ffd < 0 && errno == ENOENT;
    if (ffd < 0 && s.named && !absent) {
        r->state = TR_SALVAGE_BAD;
    } else if (ffd < 0 && s.named && !st.ended && !st.crashed && !s.salvaged && !st.truncated &&
               !st.skipped_bytes) {
        /* The run saved nothing at its end, yet its file is not here. (A
         * damaged journal lost its end frame to the damage, which recover
         * reports on its own line.) */
        char here[256] = "";
        gethostname(here, sizeof here - 1);
        r->state = s.host[0] && strcmp(here, s.host) ? TR_SALVAGE_ELSEWHERE : TR_SALVAGE_LOST;
    }
    if (absent)
        r->problem[0] = 0;
    if (ffd >= 0) {
        r->state = TR_SALVAGE_BAD;
        int waited = 0;
        int held = tr_inflight_wait_unheld(ffd, w, &waited);
        struct stat fs;
        tr_inflight_header h;
        if (held > 0) {
            r->state = TR_SALVAGE_LIVE;
        } else if (held < 0 || fstat(ffd, &fs)) {
            snprintf(r->problem, sizeof r->problem, "cannot tell whether the run still holds it: %s",
                     strerror(errno));
        } else if (waited && scan_journal(journal, &s, &st, r)) {
            /* The run ended meanwhile: what it saved counts. Its journal
             * is gone when it wrote its trace (and did not keep it). */
            if (errno == ENOENT) {
                r->state = TR_SALVAGE_GONE;
                r->problem[0] = 0;
            } else {
                rc = -1;
            }
        } else if (!fs.st_nlink) {
            r->state = TR_SALVAGE_GONE; /* and it removed its file, every chunk saved */
        } else if (!read_header(ffd, &s, &h, r)) {
            r->dev = fs.st_dev;
            r->ino = fs.st_ino;
            rc = take_file(journal, r, &s, ffd, &h);
        }
        close(ffd);
    }
    account(r, &s);
    free(s.v);
    return rc;
}

void tr_inflight_salvage_remove(const tr_salvage_report *r)
{
    /* Only the file that was read: anyone may have put another at its name
     * meanwhile (/dev/shm is sticky: none can remove or rename ours). */
    struct stat st;
    if (r->state == TR_SALVAGE_TAKEN && r->path[0] && !lstat(r->path, &st) && st.st_dev == r->dev &&
        st.st_ino == r->ino)
        unlink(r->path);
}

void tr_salvage_report_free(tr_salvage_report *r)
{
    free(r->threads);
    r->threads = 0;
    r->nthreads = 0;
}
