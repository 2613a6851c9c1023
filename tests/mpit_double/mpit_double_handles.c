/* mpit_double_handles.c - the TEST DOUBLE's two dialects of MPI handles.
 *
 * MPICH's dialect: a handle is MPICH's int, passed through untouched.
 * Open MPI's dialect (MPIT_DOUBLE_DIALECT=ompi): a handle is the address of
 * an object, as in Open MPI. The predefined ones are the ompi_mpi_* objects
 * below (exported under Open MPI's names, so a tool's dlsym and a program
 * written against Open MPI's ABI find them); every other handle MPICH hands
 * out (a new communicator, an error handler) gets a 64-byte object from a
 * fixed pool the first time it crosses the boundary, and keeps it until it is
 * freed. MPICH underneath only ever sees its own ints. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpit_double_internal.h"

#define EXPORT __attribute__((visibility("default")))

int md_ompi(void)
{
    static int d = -1;
    if (d < 0) {
        const char *v = getenv("MPIT_DOUBLE_DIALECT");
        d = v && !strcmp(v, "ompi");
    }
    return d;
}

/* Defined in both dialects; only the Open MPI dialect uses them. */
#define MD_OMPI_DEFINE(object, mpich) EXPORT char object[64];
MD_OMPI_OBJECTS(MD_OMPI_DEFINE)
#undef MD_OMPI_DEFINE

static const struct {
    const char *object;
    int mpich;
} predefined[] = {
#define MD_OMPI_PAIR(object, mpich) {object, (int)(mpich)},
    MD_OMPI_OBJECTS(MD_OMPI_PAIR)
#undef MD_OMPI_PAIR
};
#define NPREDEFINED (sizeof predefined / sizeof *predefined)

const md_mpich_t md_mpich = {
    .comm_world = (int)MPI_COMM_WORLD,
    .comm_null = (int)MPI_COMM_NULL,
    .in_place = MPI_IN_PLACE,
    .status_ignore = MPI_STATUS_IGNORE,
};

/* The objects of handles that are not predefined. Handed out round robin,
 * so a freed communicator's address is not the next one's at once. */
#define NOBJECTS 1024
static char objects[NOBJECTS][64];
static struct {
    int mpich;
    int live;
} owner[NOBJECTS];
static int next_object;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *what, unsigned long long h)
{
    fprintf(stderr,
            "mpit_double: %s 0x%llx: not a handle of the Open MPI dialect (MPIT_DOUBLE_DIALECT=ompi) - see "
            "mpit_double.c's header for what it translates\n",
            what, h);
    abort();
}

static int mpich_of(md_word h)
{
    for (size_t i = 0; i < NPREDEFINED; i++)
        if ((uintptr_t)predefined[i].object == h)
            return predefined[i].mpich;
    uintptr_t base = (uintptr_t)objects;
    if (h >= base && h < base + sizeof objects && (h - base) % 64 == 0) {
        size_t k = (size_t)(h - base) / 64;
        pthread_mutex_lock(&lock);
        int live = owner[k].live, m = owner[k].mpich;
        pthread_mutex_unlock(&lock);
        if (live)
            return m;
    }
    die("handle", (unsigned long long)h);
    return 0;
}

uint64_t md_out(int h)
{
    if (!md_ompi())
        return (uint32_t)h;
    for (size_t i = 0; i < NPREDEFINED; i++)
        if (predefined[i].mpich == h)
            return (uintptr_t)predefined[i].object;
    pthread_mutex_lock(&lock);
    int k = -1;
    for (int i = 0; i < NOBJECTS && k < 0; i++)
        if (owner[i].live && owner[i].mpich == h)
            k = i;
    for (int n = 0; n < NOBJECTS && k < 0; n++) {
        int i = (next_object + n) % NOBJECTS;
        if (!owner[i].live) {
            k = i;
            owner[i].live = 1;
            owner[i].mpich = h;
            next_object = (i + 1) % NOBJECTS;
        }
    }
    pthread_mutex_unlock(&lock);
    if (k < 0)
        die("out of objects for MPICH handle", (unsigned)h);
    return (uintptr_t)objects[k];
}

void md_forget(int h)
{
    if (!md_ompi())
        return;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < NOBJECTS; i++)
        if (owner[i].live && owner[i].mpich == h)
            owner[i].live = 0;
    pthread_mutex_unlock(&lock);
}

int md_in(int o, md_word h)
{
    return o ? mpich_of(h) : (int)(uint32_t)h;
}

int md_get(int o, const void *p)
{
    if (!o) {
        int v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    md_word w;
    memcpy(&w, p, sizeof w);
    return mpich_of(w);
}

void md_put(int o, void *p, int h)
{
    if (!o) {
        memcpy(p, &h, sizeof h);
        return;
    }
    md_word w = md_out(h);
    memcpy(p, &w, sizeof w);
}

const void *md_buf(int o, const void *b)
{
    if (!o)
        return b;
    if (b == MPI_IN_PLACE) /* (void *)-1: a caller that took MPICH's constant */
        die("buffer", (unsigned long long)(uintptr_t)b);
    return b == (const void *)1 ? MPI_IN_PLACE : b; /* Open MPI's MPI_IN_PLACE is (void *)1 */
}

size_t md_mpich_status_size(void)
{
    return sizeof(MPI_Status);
}

/* Open MPI's public MPI_Status: MPI_SOURCE, MPI_TAG, MPI_ERROR, _cancelled,
 * then _ucount, the bytes received. */
struct ompi_status {
    int source, tag, error, cancelled;
    size_t ucount;
};

void md_status_out(void *ompi_status, const void *mpich_status)
{
    MPI_Status s;
    memcpy(&s, mpich_status, sizeof s);
    MPI_Count bytes = 0;
    int cancelled = 0;
    PMPI_Get_elements_x(&s, MPI_BYTE, &bytes);
    PMPI_Test_cancelled(&s, &cancelled);
    struct ompi_status o = {s.MPI_SOURCE, s.MPI_TAG, s.MPI_ERROR, cancelled, (size_t)bytes};
    memcpy(ompi_status, &o, sizeof o);
}
