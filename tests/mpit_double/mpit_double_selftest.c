/* mpit_double_selftest.c - self-test of the MPI_T event provider TEST DOUBLE.
 *
 * TEST DOUBLE: libmpit_double.so stands in for an MPI library that raises
 * MPI_T events (Debian's MPICH 4.0.2 raises none); see mpit_double.h for
 * what it implements and what not. This program is an ordinary MPI program
 * acting as an MPI_T tool against it, linked with MPICH only: the double is
 * LD_PRELOADed, and its control functions are found with dlsym. Without the
 * double (or with MPIT_DOUBLE_EMPTY=1) it checks that MPI_T reports no
 * sources and no event types, and that MPI still works.
 *
 * It initializes MPI_T (nested, twice) before MPI_Init, checks the
 * catalogue, registers a callback and a dropped handler for every
 * NO_OBJECT event type (communicator_created also gets a THREAD_SAFE callback
 * that must never be chosen; the memory-release event also gets a
 * registration with only a dropped handler), then, after MPI_Init, binds
 * communicator_name_set to MPI_COMM_WORLD and to a duplicate, and runs
 * MPI_Comm_dup / _set_name / _split / _free, some control-API steps and
 * MPI_Finalize. Semantics are checked here; every instance received is also
 * written to $SELFTEST_RECV ("%p" = pid) in the double's MPIT_DOUBLE_LOG
 * value format, for test_mpit_double.py to compare with the double's log:
 *   recv name=N source=S tick=T values=V1,...
 *   dropped name=N source=S count=C
 * Exit status 0 when all checks pass, 1 otherwise.
 */
#define _GNU_SOURCE 1 /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
static FILE *recv_out;

#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            failures++;                                                                                               \
            fprintf(stderr, "selftest[%d] FAIL %s:%d: ", (int)getpid(), __FILE__, __LINE__);                         \
            fprintf(stderr, __VA_ARGS__);                                                                             \
            fputc('\n', stderr);                                                                                      \
        }                                                                                                             \
    } while (0)

#define MAXEV 32
#define MAXEL 16

typedef struct {
    int index;
    char name[128];
    int nelem;
    MPI_Datatype type[MAXEL];
    MPI_Aint disp[MAXEL];
    int bind;
    int verbosity;
    int source; /* expected */
    MPI_Comm bound; /* for bound registrations */
    int received;
    long long dropped;
} evinfo_t;

static evinfo_t ev[MAXEV];
static int nev;
static MPI_Count max_ticks0 = -1;
static MPI_Count last_tick0 = -1;
static int free_cbs;
static int wrong_safety_calls;

/* Known element sizes; 0 for a datatype this tool does not know. */
static int type_size(MPI_Datatype t)
{
    if (t == MPI_INT32_T)
        return 4;
    if (t == MPI_UINT64_T || t == MPI_COUNT || t == MPI_AINT || t == MPI_OFFSET)
        return 8;
    return 0;
}

static int unknown_size(MPI_Datatype t)
{
    int init = 0, sz = 0;
    MPI_Initialized(&init);
    if (t == MPI_2INT && init && MPI_Type_size(t, &sz) == MPI_SUCCESS)
        return sz;
    return 8; /* a made-up handle: no MPI call on it; the double copies 8 */
}

static void format_values(MPI_T_event_instance inst, const evinfo_t *e, char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < e->nelem; i++) {
        unsigned char buf[64];
        memset(buf, 0, sizeof buf);
        int rc = MPI_T_event_read(inst, i, buf);
        CHECK(rc == MPI_SUCCESS, "%s: MPI_T_event_read(%d) = %d", e->name, i, rc);
        const char *sep = i ? "," : "";
        int n;
        MPI_Datatype t = e->type[i];
        if (t == MPI_INT32_T) {
            int32_t v;
            memcpy(&v, buf, 4);
            n = snprintf(out + used, len - used, "%s%d", sep, (int)v);
        } else if (t == MPI_UINT64_T) {
            uint64_t v;
            memcpy(&v, buf, 8);
            n = snprintf(out + used, len - used, "%s%llu", sep, (unsigned long long)v);
        } else if (type_size(t) == 8) {
            int64_t v;
            memcpy(&v, buf, 8);
            n = snprintf(out + used, len - used, "%s%lld", sep, (long long)v);
        } else {
            int sz = unknown_size(t);
            n = snprintf(out + used, len - used, "%sx", sep);
            for (int b = 0; b < sz && b < 64; b++)
                n += snprintf(out + used + n, len - used - n, "%02x", buf[b]);
        }
        used += (size_t)n;
        if (used >= len)
            break;
    }
}

#define MAXREG 64
static struct {
    MPI_T_event_registration reg;
    evinfo_t *ev;
} regs[MAXREG];
static int nregs;

static evinfo_t *ev_of_reg(MPI_T_event_registration r)
{
    for (int i = 0; i < nregs; i++)
        if (regs[i].reg == r)
            return regs[i].ev;
    return NULL;
}

static void event_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *data)
{
    (void)reg;
    evinfo_t *e = data;
    e->received++;
    CHECK(safety == MPI_T_CB_REQUIRE_NONE, "%s: cb_safety %d", e->name, (int)safety);
    int src = -1;
    MPI_Count ts = -1;
    CHECK(MPI_T_event_get_source(inst, &src) == MPI_SUCCESS, "get_source");
    CHECK(MPI_T_event_get_timestamp(inst, &ts) == MPI_SUCCESS, "get_timestamp");
    CHECK(src == e->source, "%s: source %d, want %d", e->name, src, e->source);
    if (src == 0) {
        CHECK(ts >= 0 && ts <= max_ticks0, "%s: tick %lld outside [0, max_ticks]", e->name, (long long)ts);
        /* ordered: non-decreasing, except across a wrap of max_ticks */
        CHECK(last_tick0 < 0 || ts >= last_tick0 || last_tick0 - ts > max_ticks0 / 2,
              "%s: ordered source went back from %lld to %lld", e->name, (long long)last_tick0, (long long)ts);
        last_tick0 = ts;
    }
    unsigned char scratch[8];
    CHECK(MPI_T_event_read(inst, e->nelem, scratch) == MPI_T_ERR_INVALID_INDEX, "read past the last element");

    /* MPI_T_event_copy gives the same bytes at the displacements. */
    unsigned char whole[256], one[64];
    memset(whole, 0, sizeof whole);
    CHECK(MPI_T_event_copy(inst, whole) == MPI_SUCCESS, "event_copy");
    for (int i = 0; i < e->nelem; i++) {
        int sz = type_size(e->type[i]) ? type_size(e->type[i]) : unknown_size(e->type[i]);
        memset(one, 0, sizeof one);
        MPI_T_event_read(inst, i, one);
        CHECK(!memcmp(whole + e->disp[i], one, (size_t)sz), "%s: copy and read differ at element %d", e->name, i);
    }
    if (e->bind == MPI_T_BIND_MPI_COMM) {
        uint64_t h = 0;
        MPI_T_event_read(inst, 0, &h);
        CHECK(h == (uint64_t)(uint32_t)e->bound, "%s: handle %#llx on a registration bound to %#x", e->name,
              (unsigned long long)h, (unsigned)e->bound);
        /* The name is read from the communicator, not the payload. */
        char nm[MPI_MAX_OBJECT_NAME];
        int l = 0;
        CHECK(MPI_Comm_get_name(e->bound, nm, &l) == MPI_SUCCESS && l > 0, "name of the bound communicator");
    }
    char values[1024];
    format_values(inst, e, values, sizeof values);
    fprintf(recv_out, "recv name=%s source=%d tick=%lld values=%s\n", e->name, src, (long long)ts, values);
}

static void wrong_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *data)
{
    (void)inst, (void)reg, (void)safety, (void)data;
    wrong_safety_calls++;
}

static void dropped_cb(MPI_Count count, MPI_T_event_registration reg, int source, MPI_T_cb_safety safety, void *data)
{
    (void)safety, (void)data;
    /* data is the callback's user_data (NULL without a callback): the event
     * type is found from the registration. */
    evinfo_t *t = ev_of_reg(reg);
    CHECK(t != NULL, "dropped: unknown registration");
    if (!t)
        return;
    CHECK(count > 0, "dropped count %lld", (long long)count);
    CHECK(source == t->source, "%s: dropped source %d", t->name, source);
    t->dropped += count;
    fprintf(recv_out, "dropped name=%s source=%d count=%lld\n", t->name, source, (long long)count);
}

static void free_cb(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *data)
{
    (void)reg, (void)safety, (void)data;
    free_cbs++;
}

static evinfo_t *find(const char *name)
{
    for (int i = 0; i < nev; i++)
        if (!strcmp(ev[i].name, name))
            return &ev[i];
    return NULL;
}

static MPI_T_event_registration add_reg(evinfo_t *e, void *obj, MPI_T_cb_safety safety, int with_cb,
                                        int with_dropped)
{
    MPI_T_event_registration r = NULL;
    int rc = MPI_T_event_handle_alloc(e->index, obj, MPI_INFO_NULL, &r);
    CHECK(rc == MPI_SUCCESS, "%s: handle_alloc = %d", e->name, rc);
    if (rc != MPI_SUCCESS)
        return NULL;
    if (with_cb)
        CHECK(MPI_T_event_register_callback(r, safety, MPI_INFO_NULL, e, event_cb) == MPI_SUCCESS, "register");
    if (with_dropped)
        CHECK(MPI_T_event_set_dropped_handler(r, dropped_cb) == MPI_SUCCESS, "dropped handler");
    if (nregs < MAXREG) {
        regs[nregs].reg = r;
        regs[nregs].ev = e;
        nregs++;
    }
    return r;
}

static void discover(void)
{
    int ns = -1;
    CHECK(MPI_T_source_get_num(&ns) == MPI_SUCCESS, "source_get_num");
    CHECK(ns == 2, "%d sources, want 2", ns);
    for (int i = 0; i < ns; i++) {
        char name[64], desc[256];
        int nl = 0, dl = sizeof desc;
        MPI_T_source_order order;
        MPI_Count tps = 0, maxt = 0;
        MPI_Info info;
        /* length query first, as a careful tool does */
        CHECK(MPI_T_source_get_info(i, NULL, &nl, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_SUCCESS, "len query");
        CHECK(nl > 1 && nl <= (int)sizeof name, "name length %d", nl);
        CHECK(MPI_T_source_get_info(i, name, &nl, desc, &dl, &order, &tps, &maxt, &info) == MPI_SUCCESS,
              "source_get_info");
        CHECK(nl == (int)strlen(name) + 1, "name_len %d for %s", nl, name);
        if (i == 0) {
            CHECK(!strcmp(name, "ompi") && order == MPI_T_SOURCE_ORDERED && tps == 1000000 &&
                      maxt == ((MPI_Count)1 << 40) - 1,
                  "source 0: %s %d %lld %lld", name, (int)order, (long long)tps, (long long)maxt);
            max_ticks0 = maxt;
        } else {
            CHECK(!strcmp(name, "ompi.unordered") && order == MPI_T_SOURCE_UNORDERED && tps == 1000000000,
                  "source 1: %s %d %lld", name, (int)order, (long long)tps);
        }
        MPI_Count a = -1, b = -1;
        CHECK(MPI_T_source_get_timestamp(i, &a) == MPI_SUCCESS && MPI_T_source_get_timestamp(i, &b) == MPI_SUCCESS,
              "source_get_timestamp");
        CHECK(a >= 0 && (b >= a || (i == 0 && a - b > maxt / 2)), "ad-hoc ticks %lld then %lld", (long long)a,
              (long long)b);
    }
    char small[4];
    int sl = sizeof small;
    CHECK(MPI_T_source_get_info(0, small, &sl, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_SUCCESS && sl == 4 &&
              !strcmp(small, "omp"),
          "truncated name '%s' len %d", small, sl);
    CHECK(MPI_T_source_get_info(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
          "bad source index");

    int n = -1;
    CHECK(MPI_T_event_get_num(&n) == MPI_SUCCESS, "event_get_num");
    CHECK(n == 8, "%d event types, want 8", n);
    for (int i = 0; i < n && nev < MAXEV; i++) {
        evinfo_t *e = &ev[nev];
        int nl = sizeof e->name, num = MAXEL, dl = 0;
        MPI_T_enum en;
        MPI_Info info;
        int rc = MPI_T_event_get_info(i, e->name, &nl, &e->verbosity, e->type, e->disp, &num, &en, &info, NULL, &dl,
                                      &e->bind);
        CHECK(rc == MPI_SUCCESS, "event_get_info(%d) = %d", i, rc);
        e->index = i;
        e->nelem = num;
        e->source = strstr(e->name, "memory") ? 1 : 0;
        int idx = -1;
        CHECK(MPI_T_event_get_index(e->name, &idx) == MPI_SUCCESS && idx == i, "get_index(%s)", e->name);
        nev++;
    }
    int idx;
    CHECK(MPI_T_event_get_index("no.such.event", &idx) == MPI_T_ERR_INVALID_NAME, "unknown name");
    CHECK(MPI_T_event_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              MPI_T_ERR_INVALID_INDEX,
          "bad event index");

    /* The catalogue the seed describes. */
    evinfo_t *e;
    CHECK((e = find("ompi.mpi.initialization")) && e->nelem == 5 && e->type[0] == MPI_INT32_T &&
              e->type[4] == MPI_UINT64_T && e->disp[4] == 16 && e->verbosity == MPI_T_VERBOSITY_USER_DETAIL &&
              e->bind == MPI_T_BIND_NO_OBJECT,
          "initialization layout");
    CHECK((e = find("ompi.mpi.communicator_created")) && e->nelem == 2 && e->type[0] == MPI_INT32_T &&
              e->type[1] == MPI_UINT64_T && e->disp[1] == 8,
          "communicator_created layout");
    CHECK((e = find("ompi.mpi.communicator_name_set")) && e->bind == MPI_T_BIND_MPI_COMM &&
              e->verbosity == MPI_T_VERBOSITY_TUNER_BASIC,
          "communicator_name_set");
    CHECK((e = find("ompi.mca.memory.patcher.released")) && e->nelem == 2, "released");
    CHECK((e = find("double.weird")) && e->nelem == 5 && e->type[1] == MPI_COUNT && e->type[2] == MPI_AINT &&
              e->type[3] == MPI_OFFSET && type_size(e->type[4]) == 0 && e->disp[1] == 8 && e->disp[4] == 32,
          "double.weird layout");
    /* a short array: num_elements says how many there are */
    MPI_Datatype one_t[1];
    MPI_Aint one_d[1];
    int num = 1;
    CHECK(MPI_T_event_get_info(0, NULL, NULL, NULL, one_t, one_d, &num, NULL, NULL, NULL, NULL, NULL) ==
                  MPI_SUCCESS &&
              num == 5 && one_t[0] == MPI_INT32_T,
          "short arrays");
}

int main(int argc, char **argv)
{
    const char *path = getenv("SELFTEST_RECV");
    recv_out = stdout;
    if (path && *path) {
        char p[4096];
        size_t o = 0;
        for (const char *c = path; *c && o < sizeof p - 16; c++) {
            if (c[0] == '%' && c[1] == 'p') {
                o += (size_t)snprintf(p + o, sizeof p - o, "%d", (int)getpid());
                c++;
            } else
                p[o++] = *c;
        }
        p[o] = 0;
        recv_out = fopen(p, "w");
        if (!recv_out) {
            perror(p);
            return 2;
        }
    }
    union {
        void *p;
        int (*f)(const char *);
    } run_u = {dlsym(RTLD_DEFAULT, "mpit_double_run")};
    union {
        void *p;
        void (*f)(unsigned long long, unsigned long long);
    } release_u = {dlsym(RTLD_DEFAULT, "mpit_double_release")};
    int (*run)(const char *) = run_u.p ? run_u.f : NULL;
    void (*release)(unsigned long long, unsigned long long) = release_u.p ? release_u.f : NULL;
    const char *empty_env = getenv("MPIT_DOUBLE_EMPTY");
    int have_double = run && release && !(empty_env && atoi(empty_env));

    int provided = -1;
    CHECK(MPI_T_event_get_num(&(int){0}) == MPI_T_ERR_NOT_INITIALIZED, "get_num before MPI_T_init_thread");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "nested MPI_T_init_thread");
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "nested MPI_T_finalize");

    if (!have_double) {
        int ns = -1, n = -1;
        CHECK(MPI_T_source_get_num(&ns) == MPI_SUCCESS && ns == 0, "no double: %d sources", ns);
        CHECK(MPI_T_event_get_num(&n) == MPI_SUCCESS && n == 0, "no double: %d event types", n);
        MPI_Init(&argc, &argv);
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_free(&d);
        MPI_Finalize();
        CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize");
        printf("selftest: no events offered (%s)\n", run ? "MPIT_DOUBLE_EMPTY" : "no double");
        return failures ? 1 : 0;
    }

    discover();
    evinfo_t *created = find("ompi.mpi.communicator_created");
    evinfo_t *name_set = find("ompi.mpi.communicator_name_set");
    evinfo_t *released = find("ompi.mca.memory.patcher.released");
    if (!created || !name_set || !released) {
        fprintf(stderr, "selftest: catalogue incomplete\n");
        return 1;
    }
    CHECK(MPI_T_event_handle_alloc(name_set->index, NULL, MPI_INFO_NULL, &(MPI_T_event_registration){0}) !=
              MPI_SUCCESS,
          "a bound event type needs an object");
    for (int i = 0; i < nev; i++) {
        if (ev[i].bind != MPI_T_BIND_NO_OBJECT)
            continue;
        MPI_T_cb_safety s = !strcmp(ev[i].name, "ompi.mpi.initialization") ? MPI_T_CB_REQUIRE_THREAD_SAFE
                                                                           : MPI_T_CB_REQUIRE_NONE;
        MPI_T_event_registration r = add_reg(&ev[i], NULL, s, 1, 1);
        if (&ev[i] == created && r) /* never chosen: NONE is there too */
            MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL, wrong_cb);
    }
    /* only a dropped handler: aggregated batches arrive as drops */
    add_reg(released, NULL, MPI_T_CB_REQUIRE_NONE, 0, 1);

    CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS, "MPI_Init");
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(find("ompi.mpi.initialization")->received == 1, "initialization received %d times",
          find("ompi.mpi.initialization")->received);

    /* bind name_set to MPI_COMM_WORLD and to a duplicate */
    static evinfo_t bound_world, bound_dup;
    bound_world = *name_set;
    bound_world.bound = MPI_COMM_WORLD;
    add_reg(&bound_world, &(MPI_Comm){MPI_COMM_WORLD}, MPI_T_CB_REQUIRE_NONE, 1, 1);

    MPI_Comm d = MPI_COMM_NULL, s = MPI_COMM_NULL;
    int before = created->received;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    CHECK(created->received == before + 1, "communicator_created for MPI_Comm_dup");
    bound_dup = *name_set;
    bound_dup.bound = d;
    add_reg(&bound_dup, &d, MPI_T_CB_REQUIRE_NONE, 1, 1);
    MPI_Comm_set_name(MPI_COMM_WORLD, "selftest-world");
    MPI_Comm_set_name(d, "selftest-dup");
    MPI_Comm_set_name(MPI_COMM_SELF, "selftest-self"); /* nobody bound */
    CHECK(bound_world.received == 1 && bound_dup.received == 1, "bound deliveries %d %d", bound_world.received,
          bound_dup.received);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &s);
    MPI_Comm_free(&s);
    MPI_Comm_free(&d);
    CHECK(find("ompi.mpi.communicator_freed")->received == 2, "freed %d", find("ompi.mpi.communicator_freed")->received);

    /* the control API: an aggregated release, drained by an ad-hoc read */
    int rb = released->received;
    long long db = released->dropped;
    release(2, 8192);
    release(1, 4096);
    CHECK(released->received == rb, "the sink must wait for a drain point");
    MPI_Count t1;
    MPI_T_source_get_timestamp(1, &t1);
    CHECK(released->received == rb + 1, "one aggregated delivery");
    CHECK(released->dropped == db + 1, "the dropped-only registration sees one drop");
    CHECK(run("drop:ompi.mpi.communicator_freed:3;weird:11;errhandler:5:9701:0x54000000:world") == 0, "run");
    CHECK(find("ompi.mpi.communicator_freed")->dropped == 3, "3 dropped");
    CHECK(find("double.weird")->received >= 1, "weird received");
    CHECK(run("no_such_step") != 0, "a bad step is refused");

    MPI_Count a0;
    MPI_T_source_get_timestamp(0, &a0);
    CHECK(last_tick0 < 0 || a0 >= last_tick0 || last_tick0 - a0 > max_ticks0 / 2, "ad-hoc tick %lld before %lld",
          (long long)a0, (long long)last_tick0);

    int fin_before = find("ompi.mpi.finalization")->received;
    MPI_Finalize();
    CHECK(find("ompi.mpi.finalization")->received == fin_before + 1, "finalization received");
    CHECK(wrong_safety_calls == 0, "the THREAD_SAFE callback was chosen over the NONE one");

    for (int i = 0; i < nregs; i++)
        CHECK(MPI_T_event_handle_free(regs[i].reg, NULL, free_cb) == MPI_SUCCESS, "handle_free");
    CHECK(free_cbs == nregs, "free callbacks %d of %d", free_cbs, nregs);
    if (nregs)
        CHECK(MPI_T_event_handle_free(regs[0].reg, NULL, NULL) == MPI_T_ERR_INVALID_HANDLE, "double free");
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize");
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "one MPI_T_finalize too many");
    CHECK(MPI_T_event_get_num(&(int){0}) == MPI_T_ERR_NOT_INITIALIZED, "get_num after the last MPI_T_finalize");
    fflush(recv_out);
    if (failures)
        fprintf(stderr, "selftest[%d]: %d failure(s)\n", (int)getpid(), failures);
    else
        printf("selftest[%d] rank %d of %d: OK\n", (int)getpid(), rank, size);
    return failures ? 1 : 0;
}
