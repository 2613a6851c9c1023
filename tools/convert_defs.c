/* convert_defs.c - tracer convert's reader, before the events: the global
 * definitions become the tables of tc_state (convert_internal.h), location
 * groups become processes and locations tracks, the sink learns the layout,
 * and every location is opened with its local definitions.
 *
 * Every string of the definitions is repaired to valid UTF-8 once, here,
 * so nothing later has to check (convert_utf8.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "common/trace_vocab.h"
#include "convert_internal.h"
#include "convert_utf8.h"

static const char *const tc_paradigm_names[] = {
    [OTF2_PARADIGM_UNKNOWN] = "unknown", [OTF2_PARADIGM_USER] = "user",
    [OTF2_PARADIGM_COMPILER] = "compiler", [OTF2_PARADIGM_OPENMP] = "openmp",
    [OTF2_PARADIGM_MPI] = "mpi", [OTF2_PARADIGM_CUDA] = "cuda",
    [OTF2_PARADIGM_MEASUREMENT_SYSTEM] = "measurement", [OTF2_PARADIGM_PTHREAD] = "pthread",
    [OTF2_PARADIGM_HMPP] = "hmpp", [OTF2_PARADIGM_OMPSS] = "ompss",
    [OTF2_PARADIGM_HARDWARE] = "hardware", [OTF2_PARADIGM_GASPI] = "gaspi",
    [OTF2_PARADIGM_UPC] = "upc", [OTF2_PARADIGM_SHMEM] = "shmem",
    [OTF2_PARADIGM_WINTHREAD] = "winthread", [OTF2_PARADIGM_QTTHREAD] = "qtthread",
    [OTF2_PARADIGM_ACETHREAD] = "acethread", [OTF2_PARADIGM_TBBTHREAD] = "tbbthread",
    [OTF2_PARADIGM_OPENACC] = "openacc", [OTF2_PARADIGM_OPENCL] = "opencl",
    [OTF2_PARADIGM_MTAPI] = "mtapi", [OTF2_PARADIGM_SAMPLING] = "sampling",
    [OTF2_PARADIGM_NONE] = "none", [OTF2_PARADIGM_HIP] = "hip",
    [OTF2_PARADIGM_KOKKOS] = "kokkos",
};

/* ---- global definitions ------------------------------------------------------ */

static OTF2_CallbackCode tc_def_clock(void *user, uint64_t resolution, uint64_t offset, uint64_t length,
                                      uint64_t realtime)
{
    (void)length, (void)realtime;
    struct tc_state *st = user;
    st->resolution = resolution;
    st->offset = offset;
    st->have_clock = true;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_string(void *user, OTF2_StringRef self, const char *string)
{
    struct tc_state *st = user;
    /* Repaired once here, so that every name and string the sinks get is
     * valid UTF-8 (convert_utf8.h). */
    char *copy = tc_utf8_dup(string ? string : "");
    if (!copy) {
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    struct tc_string *s = otr_vec_push(&st->strings, sizeof *s);
    if (!s) {
        free(copy);
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    s->id = self;
    s->s = copy;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_region(void *user, OTF2_RegionRef self, OTF2_StringRef name,
                                       OTF2_StringRef canon, OTF2_StringRef desc, OTF2_RegionRole role,
                                       OTF2_Paradigm paradigm, OTF2_RegionFlag flags, OTF2_StringRef file,
                                       uint32_t begin_line, uint32_t end_line)
{
    (void)canon, (void)desc, (void)flags, (void)file, (void)begin_line, (void)end_line;
    struct tc_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->regions, struct tc_region, r, st->oom);
    r->id = self;
    r->name_ref = name;
    r->paradigm = paradigm;
    /* A point in time by design (tracer's MPI_T events, link maps, marks,
     * device events); a function that happened to take no time stays a
     * slice, so slices per track are the archive's regions. */
    r->point = role == OTF2_REGION_ROLE_ARTIFICIAL;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_attribute(void *user, OTF2_AttributeRef self, OTF2_StringRef name,
                                          OTF2_StringRef desc, OTF2_Type type)
{
    (void)desc, (void)type;
    struct tc_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->attrs, struct tc_attr, a, st->oom);
    a->id = self;
    a->name_ref = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_lgroup(void *user, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                       OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                       OTF2_LocationGroupRef creator)
{
    (void)parent;
    struct tc_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->lgroups, struct tc_lgroup, g, st->oom);
    g->id = self;
    g->name_ref = name;
    g->type = type;
    g->creator = creator;
    g->process = TC_NONE;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_location(void *user, OTF2_LocationRef self, OTF2_StringRef name,
                                         OTF2_LocationType type, uint64_t n_events,
                                         OTF2_LocationGroupRef group)
{
    struct tc_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->locs, struct tc_loc, l, st->oom);
    l->id = self;
    l->name_ref = name;
    l->type = type;
    l->nevents = n_events;
    l->group = group;
    st->total_events += n_events;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_member(void *user, OTF2_MetricMemberRef self, OTF2_StringRef name,
                                       OTF2_StringRef desc, OTF2_MetricType mtype, OTF2_MetricMode mode,
                                       OTF2_Type vtype, OTF2_Base base, int64_t exponent, OTF2_StringRef unit)
{
    (void)desc, (void)mtype, (void)mode, (void)vtype, (void)base, (void)exponent;
    struct tc_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->members, struct tc_member, m, st->oom);
    m->id = self;
    m->name_ref = name;
    m->unit_ref = unit;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_metric_class(void *user, OTF2_MetricRef self, uint8_t n,
                                             const OTF2_MetricMemberRef *members, OTF2_MetricOccurrence occ,
                                             OTF2_RecorderKind kind)
{
    (void)occ, (void)kind;
    struct tc_state *st = user;
    uint64_t *copy = malloc((n ? n : 1) * sizeof *copy);
    struct tc_metric *m = copy ? otr_vec_push(&st->metrics, sizeof *m) : NULL;
    if (!m) {
        free(copy);
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    for (uint8_t i = 0; i < n; i++)
        copy[i] = members[i];
    m->id = self;
    m->nmembers = n;
    m->members = copy;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_metric_instance(void *user, OTF2_MetricRef self, OTF2_MetricRef klass,
                                                OTF2_LocationRef recorder, OTF2_MetricScope scope_type,
                                                uint64_t scope)
{
    (void)recorder;
    struct tc_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->metrics, struct tc_metric, m, st->oom);
    m->id = self;
    m->instance = true;
    m->klass = klass;
    m->scope_type = scope_type;
    m->scope = scope;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_group(void *user, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
                                      OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t n,
                                      const uint64_t *members)
{
    (void)name, (void)flags;
    struct tc_state *st = user;
    uint64_t *copy = malloc((n ? n : 1) * sizeof *copy);
    struct tc_cgroup *g = copy ? otr_vec_push(&st->cgroups, sizeof *g) : NULL;
    if (!g) {
        free(copy);
        st->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (n)
        memcpy(copy, members, n * sizeof *copy);
    g->id = self;
    g->type = type;
    g->paradigm = paradigm;
    g->n = n;
    g->members = copy;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_comm(void *user, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                                     OTF2_CommRef parent, OTF2_CommFlag flags)
{
    (void)name, (void)parent, (void)flags;
    struct tc_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->comms, struct tc_comm, c, st->oom);
    c->id = self;
    c->group = group;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode tc_def_win(void *user, OTF2_RmaWinRef self, OTF2_StringRef name, OTF2_CommRef comm,
                                    OTF2_RmaWinFlag flags)
{
    (void)name, (void)flags;
    struct tc_state *st = user;
    OTR_PUSH_OR_INTERRUPT(&st->wins, struct tc_win, w, st->oom);
    w->id = self;
    w->comm = comm;
    return OTF2_CALLBACK_SUCCESS;
}

void tc_def_callbacks(OTF2_GlobalDefReaderCallbacks *cb)
{
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, tc_def_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, tc_def_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, tc_def_region);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, tc_def_attribute);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, tc_def_lgroup);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, tc_def_location);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, tc_def_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, tc_def_metric_class);
    OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(cb, tc_def_metric_instance);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, tc_def_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, tc_def_comm);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, tc_def_win);
}

/* ---- processes and tracks ---------------------------------------------------- */

static int tc_build_indexes(struct tc_state *st)
{
    return tc_index_build(&st->ix_strings, &st->strings, sizeof(struct tc_string))
        | tc_index_build(&st->ix_regions, &st->regions, sizeof(struct tc_region))
        | tc_index_build(&st->ix_attrs, &st->attrs, sizeof(struct tc_attr))
        | tc_index_build(&st->ix_lgroups, &st->lgroups, sizeof(struct tc_lgroup))
        | tc_index_build(&st->ix_locs, &st->locs, sizeof(struct tc_loc))
        | tc_index_build(&st->ix_members, &st->members, sizeof(struct tc_member))
        | tc_index_build(&st->ix_metrics, &st->metrics, sizeof(struct tc_metric))
        | tc_index_build(&st->ix_cgroups, &st->cgroups, sizeof(struct tc_cgroup))
        | tc_index_build(&st->ix_comms, &st->comms, sizeof(struct tc_comm))
        | tc_index_build(&st->ix_wins, &st->wins, sizeof(struct tc_win));
}

static int tc_add_process(struct tc_state *st, const char *name, uint32_t *id)
{
    tc_process *p = realloc(st->procs, (st->nprocs + 1) * sizeof *p);
    if (!p)
        return -1;
    st->procs = p;
    p[st->nprocs] = (tc_process){ st->nprocs, name };
    *id = st->nprocs++;
    return 0;
}

/* The process a location group belongs to: follow "created by" up to a
 * PROCESS group (a device group names the process that created it); a
 * group at the top of its chain that is no process stands for itself.
 * Processes are numbered in the order their groups are first met. */
static int tc_group_process(struct tc_state *st, struct tc_lgroup *g)
{
    struct tc_lgroup *root = g;
    for (int hops = 0; hops < 64 && root->type != OTF2_LOCATION_GROUP_TYPE_PROCESS; hops++) {
        struct tc_lgroup *up = root->creator == OTF2_UNDEFINED_LOCATION_GROUP
                                   ? NULL
                                   : TC_FIND(st, lgroups, tc_lgroup, root->creator);
        if (!up || up == root)
            break;
        root = up;
    }
    if (root->process == TC_NONE && tc_add_process(st, root->name, &root->process) != 0)
        return -1;
    g->process = root->process;
    return 0;
}

static enum tc_track_kind tc_track_kind_of(const struct tc_loc *l)
{
    if (l->type == OTF2_LOCATION_TYPE_CPU_THREAD)
        return strncmp(l->name, TRV_MPIT_SOURCE_PREFIX, TRV_LEN(TRV_MPIT_SOURCE_PREFIX)) == 0 ? TC_TRACK_MPIT
                                                                                         : TC_TRACK_THREAD;
    if (l->type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM)
        return TC_TRACK_DEVICE;
    return TC_TRACK_OTHER;
}

/* Definitions may come in any order, so names are resolved once all are in. */
int tc_resolve_defs(struct tc_state *st)
{
    if (tc_build_indexes(st) != 0)
        return -1;
    for (size_t i = 0; i < st->regions.n; i++) {
        struct tc_region *r = tc_region_at(st, i);
        r->name = tc_str_or(st, r->name_ref, "?");
        r->category = (unsigned)r->paradigm < sizeof tc_paradigm_names / sizeof tc_paradigm_names[0]
                              && tc_paradigm_names[r->paradigm]
                          ? tc_paradigm_names[r->paradigm]
                          : "other";
    }
    for (size_t i = 0; i < st->attrs.n; i++) {
        struct tc_attr *a = otr_vec_at(&st->attrs, sizeof *a, i);
        a->name = tc_str_or(st, a->name_ref, "?");
    }
    for (size_t i = 0; i < st->members.n; i++) {
        struct tc_member *m = otr_vec_at(&st->members, sizeof *m, i);
        m->name = tc_str_or(st, m->name_ref, "metric");
        m->unit = tc_str_or(st, m->unit_ref, "");
    }
    for (size_t i = 0; i < st->lgroups.n; i++) {
        struct tc_lgroup *g = otr_vec_at(&st->lgroups, sizeof *g, i);
        g->name = tc_str_or(st, g->name_ref, "process");
    }
    for (size_t i = 0; i < st->lgroups.n; i++)
        if (tc_group_process(st, otr_vec_at(&st->lgroups, sizeof(struct tc_lgroup), i)) != 0)
            return -1;
    uint32_t orphans = TC_NONE; /* the process of locations without a group */
    for (size_t i = 0; i < st->locs.n; i++) {
        struct tc_loc *l = tc_loc_at(st, i);
        l->name = tc_str_or(st, l->name_ref, "location");
        l->kind = tc_track_kind_of(l);
        struct tc_lgroup *g = TC_FIND(st, lgroups, tc_lgroup, l->group);
        l->group_pos = g ? (uint32_t)(g - (struct tc_lgroup *)st->lgroups.v) : TC_NONE;
        if (g) {
            l->process = g->process;
        } else {
            if (orphans == TC_NONE && tc_add_process(st, "unknown process", &orphans) != 0)
                return -1;
            l->process = orphans;
        }
    }
    for (size_t p = 0; p < sizeof st->comm_locations / sizeof st->comm_locations[0]; p++)
        st->comm_locations[p] = TC_NONE;
    for (size_t i = 0; i < st->cgroups.n; i++) {
        const struct tc_cgroup *g = otr_vec_at(&st->cgroups, sizeof *g, i);
        if (g->type == OTF2_GROUP_TYPE_COMM_LOCATIONS && (unsigned)g->paradigm < 32
            && st->comm_locations[g->paradigm] == TC_NONE)
            st->comm_locations[g->paradigm] = (uint32_t)i;
    }
    st->ntracks = (uint32_t)st->locs.n;
    if (!st->have_clock)
        st->resolution = 0;
    return 0;
}

int tc_sink_begin(struct tc_state *st)
{
    tc_track *tracks = malloc((st->locs.n ? st->locs.n : 1) * sizeof *tracks);
    if (!tracks) {
        st->oom = true;
        return -1;
    }
    for (size_t i = 0; i < st->locs.n; i++) {
        const struct tc_loc *l = tc_loc_at(st, i);
        tracks[i] = (tc_track){ (uint32_t)i, l->process, l->kind, l->name };
    }
    int rc = st->sink->begin(st->sink, st->procs, st->nprocs, tracks, (uint32_t)st->locs.n);
    free(tracks);
    if (rc != 0) {
        st->sink_failed = true;
        st->sink_errno = errno;
        return -1;
    }
    return 0;
}
