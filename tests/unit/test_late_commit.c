/* A record reserved before recording stops and committed after the
 * journal's last flush is counted as lost (issue 18, B5).
 *
 * The real buffer, consumer thread and journal, driven in the order that
 * loses the record: a thread reserves a slot (recording is on), the end
 * comes (tr_buf_stop, then the consumer's final drain and flush, as
 * session_end does), and only then does the thread commit. That record can
 * no longer reach the journal; it must be counted with the events that came
 * too late (tr_buf_refused_total, the end-of-run line), so that what the
 * journal holds plus what is counted is what the program produced. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "journal/consumer.h"
#include "journal/journal_read.h"
#include "journal/journal_write.h"
#include "journal/symbols.h"

/* The consumer names what records reference; these records reference
 * nothing, so no symbol table or region name is ever asked for. */
tr_symbols *tr_symbols_open(void) { return 0; }
void tr_symbols_close(tr_symbols *s) { (void)s; }
void tr_symbols_describe(tr_symbols *s, uint64_t pc, tr_code_description *out) { (void)s, (void)pc, (void)out; }
int tr_symbols_variable(tr_symbols *s, uint64_t addr, tr_variable *out) { (void)s, (void)addr, (void)out; return 0; }
const char *tr_user_region_name(uint32_t id) { (void)id; return 0; }
int tr_lifecycle_active(void) { return 1; }

/* Records in the journal: each chunk counted once (the consumer may write a
 * chunk's prefix more than once), by its largest copy. */
#define MAX_CHUNKS 64
static struct { uint32_t loc; uint64_t seq, records; } seen[MAX_CHUNKS];
static int nseen;

static int visit(void *ctx, const tr_frame_header *h, const void *payload, uint64_t bytes)
{
    (void)ctx, (void)payload, (void)bytes;
    if (h->type != TR_FRAME_CHUNK)
        return 0;
    for (int i = 0; i < nseen; i++)
        if (seen[i].loc == h->location && seen[i].seq == h->seq) {
            if (h->records > seen[i].records)
                seen[i].records = h->records;
            return 0;
        }
    if (nseen < MAX_CHUNKS)
        seen[nseen++] = (__typeof__(seen[0])){h->location, h->seq, h->records};
    return 0;
}

static void put(tr_record *r, uint64_t i)
{
    *r = (tr_record){.time = i, .type = TR_REC_USER_MARK, .phase = TR_PHASE_POINT, .id = 1, .u = {i}};
}

int main(void)
{
    char dir[200];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tracer-late-commit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0 || tr_journal_open(dfd) || tr_buf_init(1 << 20, 1 << 20, 0, 0)) {
        printf("FAIL set-up\n");
        return 1;
    }
    tr_buf_start();
    if (tr_consumer_start(1000000000ull)) {
        printf("FAIL consumer start\n");
        return 1;
    }

    const uint64_t before = 3;
    for (uint64_t i = 0; i < before; i++) {
        tr_record *r = tr_buf_reserve();
        if (!r) {
            printf("FAIL no slot\n");
            return 1;
        }
        put(r, i);
        tr_buf_commit();
    }
    tr_record *late = tr_buf_reserve(); /* recording is still on */
    if (!late) {
        printf("FAIL no slot\n");
        return 1;
    }
    put(late, before);
    tr_buf_stop();      /* the end, as tr_lifecycle_end */
    tr_consumer_stop(); /* the consumer's final drain and flush, as session_end */
    tr_buf_commit();    /* after it */
    const uint64_t produced = before + 1;

    tr_fd j;
    tr_journal_detach(&j);
    char path[sizeof dir + 32];
    snprintf(path, sizeof path, "%s/%s", dir, TR_JOURNAL_NAME);
    tr_journal_stats st;
    if (tr_journal_scan(path, visit, 0, &st)) {
        printf("FAIL cannot read %s\n", path);
        return 1;
    }
    uint64_t written = 0;
    for (int i = 0; i < nseen; i++)
        written += seen[i].records;
    uint64_t counted = tr_buf_refused_total();
    printf("produced %llu, in the journal %llu, counted as late %llu\n", (unsigned long long)produced,
           (unsigned long long)written, (unsigned long long)counted);
    tr_fd_release(&j);
    unlink(path);
    rmdir(dir);
    if (written != before) {
        printf("FAIL the journal should hold the %llu records committed before the end\n",
               (unsigned long long)before);
        return 1;
    }
    if (written + counted != produced) {
        printf("FAIL %llu records neither in the journal nor counted\n",
               (unsigned long long)(produced - written - counted));
        return 1;
    }
    return 0;
}
