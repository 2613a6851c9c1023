/* user_regions.c - see user_regions.h. */
#include "core/user_regions.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/lifecycle.h"

/* The off bit of a handle (api/tracer_api.c's TR_REGION_OFF). */
#define OFF_BIT 0x80000000u

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char **names; /* names[id - 1]; never freed: the consumer reads them */
static uint32_t names_count, names_cap;

uint32_t tr_user_region_add(const char *name)
{
    uint32_t id = 0;
    pthread_mutex_lock(&names_lock);
    for (uint32_t i = 0; i < names_count && !id; i++)
        if (!strcmp(names[i], name))
            id = i + 1;
    if (id)
        goto out;
    if (names_count == names_cap) {
        uint32_t cap = names_cap ? 2 * names_cap : 64;
        char **n = realloc(names, cap * sizeof *n);
        if (!n)
            goto out;
        names = n;
        names_cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        goto out;
    names[names_count++] = copy;
    id = names_count;
    tr_lifecycle_note_user_region(id, copy); /* under the lock: journaled in handle order */
out:
    pthread_mutex_unlock(&names_lock);
    return id;
}

const char *tr_user_region_name(uint32_t id)
{
    const char *s = 0;
    id &= ~OFF_BIT;
    pthread_mutex_lock(&names_lock);
    if (id >= 1 && id <= names_count)
        s = names[id - 1];
    pthread_mutex_unlock(&names_lock);
    return s;
}
