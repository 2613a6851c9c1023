#include "writer/chunk_pool.h"

#include <pthread.h>
#include <stdlib.h>

/* What one writer (OTF2's perBufferData) holds. */
typedef struct held {
    void **chunk; /* TR_CHUNK_POOL_PER_WRITER, or more past a budget */
    unsigned n, cap;
    uint32_t taken; /* chunks over the writer's life (tr_chunk_budget) */
    uint64_t size;
} held;

static void *spare[TR_CHUNK_POOL_SPARE];
static unsigned nspare;
static uint64_t spare_size; /* the size of every spare chunk */
/* Writing threads (otf2_workers.h) take and give back chunks side by side;
 * the budget is shared too. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void trim(void)
{
    while (nspare)
        free(spare[--nspare]);
}

static void give_back(void *chunk, uint64_t size)
{
    if (nspare && size != spare_size) /* another archive's size: the old spares go */
        trim();
    if (nspare < TR_CHUNK_POOL_SPARE) {
        spare_size = size;
        spare[nspare++] = chunk;
    } else {
        free(chunk);
    }
}

/* One more chunk for @h (pool_lock held). */
static void *take(tr_chunk_budget *budget, held *h, uint64_t size)
{
    if (budget && budget->max_chunks_per_file && h->taken >= budget->max_chunks_per_file)
        budget->exceeded = 1;
    /* Past the budget nothing is written any more (archive.c's pre-flush
     * callback says so), and the writer must get memory: OTF2 3.0.2 goes on
     * writing into a chunk it freed when an allocation fails after a flush. */
    if (h->n >= TR_CHUNK_POOL_PER_WRITER && !(budget && budget->exceeded))
        return 0; /* OTF2 then writes this writer's chunks out and hands them back */
    if (h->n == h->cap) {
        unsigned cap = h->cap ? 2 * h->cap : TR_CHUNK_POOL_PER_WRITER;
        void **grown = realloc(h->chunk, cap * sizeof *grown);
        if (!grown)
            return 0;
        h->chunk = grown;
        h->cap = cap;
    }
    void *c = nspare && spare_size == size ? spare[--nspare] : malloc(size);
    if (c) {
        h->chunk[h->n++] = c;
        h->taken++;
        h->size = size;
    }
    return c;
}

static void *allocate(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer, uint64_t size)
{
    (void)type, (void)loc;
    tr_chunk_budget *budget = user;
    held *h = *per_buffer;
    if (!h) {
        h = calloc(1, sizeof *h);
        if (!h)
            return 0;
        *per_buffer = h;
    }
    pthread_mutex_lock(&pool_lock);
    void *c = take(budget, h, size);
    pthread_mutex_unlock(&pool_lock);
    return c;
}

static void free_all(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer, bool final)
{
    (void)user, (void)type, (void)loc;
    held *h = *per_buffer;
    if (!h)
        return;
    pthread_mutex_lock(&pool_lock);
    for (unsigned i = 0; i < h->n; i++)
        give_back(h->chunk[i], h->size);
    pthread_mutex_unlock(&pool_lock);
    h->n = 0;
    if (final) {
        free(h->chunk);
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
    pthread_mutex_lock(&pool_lock);
    trim();
    pthread_mutex_unlock(&pool_lock);
}
