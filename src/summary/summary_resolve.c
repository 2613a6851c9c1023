/* summary_resolve.c - once every global definition is in: the
 * summary's tables sorted, regions classified by canonical name (the
 * vocabulary of common/trace_vocab.h, never display names) and grouped,
 * attribute and metric roles found, devices and location kinds set. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_vocab.h"
#include "summary/summary_internal.h"

/* The waiting states: their time is OMP wait. */
static const char *const tr_omp_wait_names[] = {
    TRV_STATE_IMPLICIT_BARRIER, TRV_STATE_EXPLICIT_BARRIER, TRV_STATE_TASKWAIT,
    TRV_STATE_TASKGROUP,        TRV_STATE_LOCK_WAIT,        TRV_STATE_CRITICAL_WAIT,
    TRV_STATE_ORDERED_WAIT,     TRV_STATE_ATOMIC_WAIT,
};

static const char *const tr_target_names[TR_TARGET_KIND_COUNT] = {
    [TR_TARGET] = TRV_REGION_TARGET,
    [TR_TARGET_ENTER_DATA] = TRV_REGION_TARGET_ENTER_DATA,
    [TR_TARGET_EXIT_DATA] = TRV_REGION_TARGET_EXIT_DATA,
    [TR_TARGET_UPDATE] = TRV_REGION_TARGET_UPDATE,
    [TR_TARGET_NOWAIT] = TRV_REGION_TARGET_NOWAIT,
    [TR_TARGET_ENTER_DATA_NOWAIT] = TRV_REGION_TARGET_ENTER_DATA_NOWAIT,
    [TR_TARGET_EXIT_DATA_NOWAIT] = TRV_REGION_TARGET_EXIT_DATA_NOWAIT,
    [TR_TARGET_UPDATE_NOWAIT] = TRV_REGION_TARGET_UPDATE_NOWAIT,
};

static const char *const tr_loc_kind_names[TR_LOC_KIND_COUNT] = {
    [TR_LOC_HOST] = "host thread",
    [TR_LOC_DEVICE] = "device stream",
    [TR_LOC_MPIT] = "MPI_T source",
    [TR_LOC_OTHER] = "other",
};

const char *tr_target_kind_name(enum tr_target_kind kind)
{
    return (unsigned)kind < TR_TARGET_KIND_COUNT ? tr_target_names[kind] : "?";
}

const char *tr_loc_kind_name(enum tr_loc_kind kind)
{
    return (unsigned)kind < TR_LOC_KIND_COUNT ? tr_loc_kind_names[kind] : "?";
}

static void tr_sort(struct otr_vec *vec, size_t size)
{
    if (vec->n > 1)
        qsort(vec->v, vec->n, size, tr_cmp_id);
}

static int tr_classify_name(const char *canon)
{
    for (int k = 0; k < TR_TARGET_KIND_COUNT; k++)
        if (strcmp(canon, tr_target_names[k]) == 0)
            return k;
    if (strcmp(canon, TRV_REGION_ALLOC) == 0 || strcmp(canon, TRV_REGION_ALLOC_ASYNC) == 0)
        return TR_R_ALLOC;
    if (strcmp(canon, TRV_REGION_DELETE) == 0 || strcmp(canon, TRV_REGION_DELETE_ASYNC) == 0)
        return TR_R_DELETE;
    if (strcmp(canon, TRV_REGION_KERNEL) == 0)
        return TR_R_KERNEL;
    if (strcmp(canon, TRV_REGION_LINK_MAP) == 0)
        return TR_R_LINK_MAP;
    if (strcmp(canon, TRV_REGION_STALE_LINK) == 0)
        return TR_R_STALE_LINK;
    return TR_R_OTHER;
}

/* Host OpenMP states by canonical name; a parallel region (or a host
 * league's `teams`, work as a parallel region is) also by its role, so a
 * user region called "parallel" is not one. */
static int tr_classify_omp(const char *canon, OTF2_RegionRole role)
{
    if ((strcmp(canon, TRV_REGION_PARALLEL) == 0 || strcmp(canon, TRV_REGION_TEAMS) == 0) && role == OTF2_REGION_ROLE_PARALLEL)
        return TR_OMP_R_PARALLEL;
    if (strcmp(canon, TRV_STATE_OVERHEAD) == 0)
        return TR_OMP_R_OVERHEAD;
    for (size_t i = 0; i < sizeof tr_omp_wait_names / sizeof *tr_omp_wait_names; i++)
        if (strcmp(canon, tr_omp_wait_names[i]) == 0)
            return TR_OMP_R_WAIT;
    return TR_OMP_R_NONE;
}

static int tr_classify_transfer(const char *canon)
{
    if (strcmp(canon, TRV_REGION_TO_DEVICE) == 0 || strcmp(canon, TRV_REGION_TO_DEVICE_ASYNC) == 0)
        return TR_XFER_TO;
    if (strcmp(canon, TRV_REGION_FROM_DEVICE) == 0 || strcmp(canon, TRV_REGION_FROM_DEVICE_ASYNC) == 0)
        return TR_XFER_FROM;
    return TR_XFER_NONE;
}

/* Kernels are grouped by display name, not region id: the writer defines
 * one region per name, but a merged archive might not. */
static int tr_kernel_slot(struct tr_summary *out, const char *name, size_t *slot)
{
    for (size_t i = 0; i < out->n_kernels; i++) {
        if (strcmp(out->kernels[i].name, name) == 0) {
            *slot = i;
            return 0;
        }
    }
    struct tr_kernel_count *k = realloc(out->kernels, (out->n_kernels + 1) * sizeof *k);
    if (!k)
        return -1;
    out->kernels = k;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    k[out->n_kernels] = (struct tr_kernel_count){ .name = copy, .count = 0 };
    *slot = out->n_kernels++;
    return 0;
}

struct tr_named {
    const char *name, *canon;
    size_t region;
};

static int tr_cmp_named(const void *a, const void *b)
{
    const struct tr_named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->canon, y->canon);
    if (!c)
        c = (x->region > y->region) - (x->region < y->region);
    return c;
}

/* Regions with the same display and canonical names become one group. */
static int tr_group_regions(struct tr_state *st)
{
    struct tr_region *regions = st->regions.v;
    size_t n = st->regions.n;
    if (!n)
        return 0;
    struct tr_named *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *name = tr_str(st, regions[i].name), *canon = tr_str(st, regions[i].canon);
        if (!name || !name[0])
            name = canon && canon[0] ? canon : "?";
        if (!canon || !canon[0])
            canon = name;
        v[i] = (struct tr_named){name, canon, i};
    }
    qsort(v, n, sizeof *v, tr_cmp_named);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(v[i].name, v[i - 1].name) || strcmp(v[i].canon, v[i - 1].canon)) {
            struct tr_rgroup *g = otr_vec_push(&st->rgroups, sizeof *g);
            if (!g) {
                free(v);
                return -1;
            }
            g->name = v[i].name;
            g->canon = v[i].canon;
        }
        regions[v[i].region].group = st->rgroups.n - 1;
    }
    free(v);
    return 0;
}

/* Definitions may arrive in any order, so names are resolved only once all
 * global definitions are in. */
int tr_resolve_defs(struct tr_state *st)
{
    tr_sort(&st->strings, sizeof(struct tr_string));
    tr_sort(&st->regions, sizeof(struct tr_region));
    tr_sort(&st->groups, sizeof(struct tr_group));
    tr_sort(&st->wins, sizeof(struct tr_rma_win));
    tr_sort(&st->members, sizeof(struct tr_metric_member));
    tr_sort(&st->metrics, sizeof(struct tr_metric));
    if (st->locations.n > 1)
        qsort(st->locations.v, st->locations.n, sizeof(struct tr_loc), tr_cmp_id64);

    struct tr_region *regions = st->regions.v;
    for (size_t i = 0; i < st->regions.n; i++) {
        struct tr_region *r = &regions[i];
        const char *name = tr_str(st, r->name);
        const char *canon = tr_str(st, r->canon);
        /* Archives from other writers may leave the canonical name out. */
        if (!canon || !canon[0])
            canon = name;
        if (!canon)
            continue;
        r->cls = tr_classify_name(canon);
        r->xfer = tr_classify_transfer(canon);
        r->mpit_drop = strcmp(canon, TRV_REGION_MPIT_DROPPED) == 0;
        r->omp = tr_classify_omp(canon, r->role);
        if (r->cls == TR_R_KERNEL
            && tr_kernel_slot(st->out, name && name[0] ? name : canon, &r->kernel) != 0)
            return -1;
    }
    if (tr_group_regions(st) != 0)
        return -1;

    const struct tr_attr *attrs = st->attrs.v;
    static const char *const attr_names[] = {TRV_ATTR_BYTES, TRV_ATTR_VARIABLE, TRV_ATTR_INCOMPLETE,
                                             TRV_ATTR_SRC_DEVICE, TRV_ATTR_DST_DEVICE,
                                             TRV_ATTR_MPIT_DROPPED, TRV_ATTR_MPIT_EVENT_TYPE, TRV_ATTR_LOST,
                                             TRV_ATTR_ADVICE, TRV_ATTR_SRC_ADDR, TRV_ATTR_DST_ADDR};
    OTF2_AttributeRef *attr_refs[] = {&st->attr_bytes, &st->attr_variable, &st->attr_incomplete,
                                      &st->attr_src_device, &st->attr_dst_device, &st->attr_mpit_dropped,
                                      &st->attr_mpit_event_type, &st->attr_lost, &st->attr_advice,
                                      &st->attr_src_addr, &st->attr_dst_addr};
    for (size_t i = 0; i < st->attrs.n; i++) {
        const char *name = tr_str(st, attrs[i].name);
        for (size_t k = 0; name && k < sizeof attr_names / sizeof *attr_names; k++)
            if (strcmp(name, attr_names[k]) == 0 && *attr_refs[k] == OTF2_UNDEFINED_ATTRIBUTE)
                *attr_refs[k] = attrs[i].id;
    }

    /* Metrics: which member of each class is device_memory_in_use or the
     * MPI_T drop count. */
    struct tr_metric *metrics = st->metrics.v;
    for (size_t i = 0; i < st->metrics.n; i++) {
        struct tr_metric *m = &metrics[i];
        m->mem_index = m->drop_index = m->work_index = m->wait_index = -1;
        for (uint8_t k = 0; m->members && k < m->n; k++) {
            const struct tr_metric_member *mm = tr_find(&st->members, sizeof *mm, m->members[k]);
            const char *name = mm ? tr_str(st, mm->name) : NULL;
            if (name && strcmp(name, TRV_METRIC_DEVICE_MEMORY) == 0 && m->mem_index < 0)
                m->mem_index = k;
            else if (name && strcmp(name, TRV_METRIC_MPIT_DROPPED) == 0 && m->drop_index < 0)
                m->drop_index = k;
            else if (name && strcmp(name, TRV_METRIC_OMP_WORK) == 0 && m->work_index < 0)
                m->work_index = k;
            else if (name && strcmp(name, TRV_METRIC_OMP_WAIT) == 0 && m->wait_index < 0)
                m->wait_index = k;
        }
    }

    /* Devices: every accelerator group, by (creating process, number). */
    struct tr_group *groups = st->groups.v;
    for (size_t i = 0; i < st->groups.n; i++) {
        if (groups[i].type != OTF2_LOCATION_GROUP_TYPE_ACCELERATOR)
            continue;
        const char *name = tr_str(st, groups[i].name);
        int64_t d = tr_device_number(name, "");
        /* A name that says no number (another writer): a key no transfer has. */
        uint64_t key = d >= 0 ? tr_dev_key(groups[i].creator, d)
                              : tr_dev_key(groups[i].creator, 0x80000000u | (groups[i].id & 0x7fffffffu));
        if (!tr_dev_new(st, key, name ? name : "device ?"))
            return -1;
    }
    if (st->devs.n > 1)
        qsort(st->devs.v, st->devs.n, sizeof(struct tr_dev), tr_cmp_id64);
    /* Two groups with one key: keep both, the lookup finds one. */
    st->n_devs_sorted = st->devs.n;
    struct tr_dev *devs = st->devs.v;
    for (size_t i = 0; i < st->groups.n; i++) {
        if (groups[i].type != OTF2_LOCATION_GROUP_TYPE_ACCELERATOR)
            continue;
        int64_t d = tr_device_number(tr_str(st, groups[i].name), "");
        uint64_t key = d >= 0 ? tr_dev_key(groups[i].creator, d)
                              : tr_dev_key(groups[i].creator, 0x80000000u | (groups[i].id & 0x7fffffffu));
        const struct tr_dev *found = bsearch(&key, devs, st->n_devs_sorted, sizeof *devs, tr_cmp_id64);
        groups[i].dev = found ? (size_t)(found - devs) + 1 : 0;
    }

    /* Locations: kind, device, MPI_T source. */
    struct tr_loc *locs = st->locations.v;
    for (size_t i = 0; i < st->locations.n; i++) {
        struct tr_loc *l = &locs[i];
        const char *lname = tr_str(st, l->name);
        const struct tr_group *g = tr_find(&st->groups, sizeof *g, l->group);
        if (l->type == OTF2_LOCATION_TYPE_CPU_THREAD && lname &&
            strncmp(lname, TRV_MPIT_SOURCE_PREFIX, strlen(TRV_MPIT_SOURCE_PREFIX)) == 0) {
            l->kind = TR_LOC_MPIT;
            const char *src = lname + strlen(TRV_MPIT_SOURCE_PREFIX);
            struct tr_mpit_source_stat *s = st->mpit.v;
            size_t k = 0;
            while (k < st->mpit.n && strcmp(s[k].name, src))
                k++;
            if (k == st->mpit.n) {
                char *copy = strdup(src);
                struct tr_mpit_source_stat *ns = copy ? otr_vec_push(&st->mpit, sizeof *ns) : NULL;
                if (!ns) {
                    free(copy);
                    return -1;
                }
                ns->name = copy;
            }
            ((struct tr_mpit_source_stat *)st->mpit.v)[k].locations++;
            l->mpit_source = k + 1;
        } else if (l->type == OTF2_LOCATION_TYPE_CPU_THREAD) {
            l->kind = TR_LOC_HOST;
        } else if (l->type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM) {
            l->kind = TR_LOC_DEVICE;
            l->dev = g ? g->dev : 0;
        } else {
            l->kind = TR_LOC_OTHER;
        }
    }
    return 0;
}
