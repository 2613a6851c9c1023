#include "writer/chunk_pool.h"

#include <stdlib.h>

/* What one writer (OTF2's perBufferData) holds. */
typedef struct held {
    void *chunk[TR_CHUNK_POOL_PER_WRITER];
    unsigned n;
    uint64_t size;
} held;

static void *spare[TR_CHUNK_POOL_SPARE];
static unsigned nspare;
static uint64_t spare_size; /* the size of every spare chunk */

static void give_back(void *chunk, uint64_t size)
{
    if (nspare && size != spare_size) /* another archive's size: the old spares go */
        tr_chunk_pool_trim();
    if (nspare < TR_CHUNK_POOL_SPARE) {
        spare_size = size;
        spare[nspare++] = chunk;
    } else {
        free(chunk);
    }
}

static void *allocate(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer, uint64_t size)
{
    (void)user, (void)type, (void)loc;
    held *h = *per_buffer;
    if (!h) {
        h = calloc(1, sizeof *h);
        if (!h)
            return 0;
        *per_buffer = h;
    }
    if (h->n == TR_CHUNK_POOL_PER_WRITER)
        return 0; /* OTF2 then writes this writer's chunks out and hands them back */
    void *c = nspare && spare_size == size ? spare[--nspare] : malloc(size);
    if (c) {
        h->chunk[h->n++] = c;
        h->size = size;
    }
    return c;
}

static void free_all(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer, bool final)
{
    (void)user, (void)type, (void)loc;
    held *h = *per_buffer;
    if (!h)
        return;
    for (unsigned i = 0; i < h->n; i++)
        give_back(h->chunk[i], h->size);
    h->n = 0;
    if (final) {
        free(h);
        *per_buffer = 0;
    }
}

const OTF2_MemoryCallbacks *tr_chunk_pool_callbacks(void)
{
    static const OTF2_MemoryCallbacks callbacks = {.otf2_allocate = allocate, .otf2_free_all = free_all};
    return &callbacks;
}

void tr_chunk_pool_trim(void)
{
    while (nspare)
        free(spare[--nspare]);
}
