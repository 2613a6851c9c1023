/* summary_devices.c - the devices of the summary's report, keyed by
 * the process group that created them and their number, named like the
 * writer names device groups. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

/* The device number in "device <d>", "rank <N> device <d>" or "... device
 * <d> memory" (END: what must follow the number). Returns -1 if none. */
int64_t tr_device_number(const char *name, const char *end)
{
    const char *p = name ? strstr(name, TRV_DEVICE_WORD) : NULL;
    if (!p)
        return -1;
    for (const char *q; (q = strstr(p + 1, TRV_DEVICE_WORD)) != NULL;)
        p = q;
    p += TRV_LEN(TRV_DEVICE_WORD);
    if (*p < '0' || *p > '9')
        return -1;
    char *e = NULL;
    errno = 0;
    unsigned long d = strtoul(p, &e, 10);
    if (errno || d > INT32_MAX || strcmp(e, end) != 0)
        return -1;
    return (int64_t)d;
}

uint64_t tr_dev_key(uint32_t process_group, int64_t device)
{
    return (uint64_t)process_group << 32 | (uint32_t)device;
}

struct tr_dev *tr_dev_new(struct tr_state *st, uint64_t key, const char *name)
{
    char *copy = strdup(name);
    struct tr_dev *d = copy ? otr_vec_push(&st->devs, sizeof *d) : NULL;
    if (!d) {
        free(copy);
        st->oom = true;
        return NULL;
    }
    d->key = key;
    d->s.name = copy;
    return d;
}

/* 1 + the index of the device DEVICE of the process whose location group
 * is PROCESS_GROUP, made when only transfers name it; 0 out of memory. */
size_t tr_dev_slot(struct tr_state *st, uint32_t process_group, int64_t device)
{
    uint64_t key = tr_dev_key(process_group, device);
    struct tr_dev *devs = st->devs.v;
    const struct tr_dev *d =
        st->n_devs_sorted ? bsearch(&key, devs, st->n_devs_sorted, sizeof *devs, tr_cmp_id64) : NULL;
    if (d)
        return (size_t)(d - devs) + 1;
    for (size_t i = st->n_devs_sorted; i < st->devs.n; i++)
        if (devs[i].key == key)
            return i + 1;
    /* Named like the writer names device groups: "rank <N> device <d>"
     * in a job's archive, "device <d>" otherwise. */
    const struct tr_group *g = tr_find(&st->groups, sizeof *g, process_group);
    const char *gname = g ? tr_str(st, g->name) : NULL;
    char name[300];
    if (gname && strncmp(gname, TRV_RANK_PREFIX, TRV_LEN(TRV_RANK_PREFIX)) == 0)
        snprintf(name, sizeof name, "%.200s " TRV_DEVICE_WORD "%lld", gname, (long long)device);
    else
        snprintf(name, sizeof name, TRV_DEVICE_WORD "%lld", (long long)device);
    return tr_dev_new(st, key, name) ? st->devs.n : 0;
}
