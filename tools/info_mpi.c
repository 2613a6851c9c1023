/* info_mpi.c - `tracer info`'s MPI section: which MPI library a process
 * would load, and the MPI_T event sources and event types it offers.
 *
 * The library is dlopened in a forked child (info_child.c), never linked:
 * tracer must not pull an MPI into programs that have none. The calls use
 * MPICH's mpi.h, the MPI tracer is built against; MPI_T handles and
 * constants are not portable between implementations, so another MPI is
 * named but not inspected. MPI_Get_library_version and MPI_T may be called
 * before MPI_Init. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "info.h"

#ifdef TRACER_HAVE_MPICH_H
#include <mpi.h>
#endif

/* Names and descriptions come from the library; keep control bytes (and
 * MPICH's tabs) out. */
static void put_text(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, out);
}

static const char *const default_mpi[] = {"libmpich.so.12", "libmpi.so.40", "libmpi.so.12", 0};

#ifdef TRACER_HAVE_MPICH_H

#define SYM(h, name) ((__typeof__(name) *)(uintptr_t)dlsym(h, #name))

static const char *verbosity_name(int v)
{
    switch (v) {
    case MPI_T_VERBOSITY_USER_BASIC: return "user basic";
    case MPI_T_VERBOSITY_USER_DETAIL: return "user detail";
    case MPI_T_VERBOSITY_USER_ALL: return "user all";
    case MPI_T_VERBOSITY_TUNER_BASIC: return "tuner basic";
    case MPI_T_VERBOSITY_TUNER_DETAIL: return "tuner detail";
    case MPI_T_VERBOSITY_TUNER_ALL: return "tuner all";
    case MPI_T_VERBOSITY_MPIDEV_BASIC: return "mpidev basic";
    case MPI_T_VERBOSITY_MPIDEV_DETAIL: return "mpidev detail";
    case MPI_T_VERBOSITY_MPIDEV_ALL: return "mpidev all";
    }
    return "unknown verbosity";
}

static const char *bind_name(int b)
{
    switch (b) {
    case MPI_T_BIND_NO_OBJECT: return "no object";
    case MPI_T_BIND_MPI_COMM: return "communicator";
    case MPI_T_BIND_MPI_DATATYPE: return "datatype";
    case MPI_T_BIND_MPI_ERRHANDLER: return "error handler";
    case MPI_T_BIND_MPI_FILE: return "file";
    case MPI_T_BIND_MPI_GROUP: return "group";
    case MPI_T_BIND_MPI_OP: return "reduction operation";
    case MPI_T_BIND_MPI_REQUEST: return "request";
    case MPI_T_BIND_MPI_WIN: return "window";
    case MPI_T_BIND_MPI_MESSAGE: return "message";
    case MPI_T_BIND_MPI_INFO: return "info";
    }
    return "unknown object";
}

/* MPICH's datatype handles are compile-time constants, so the handles the
 * library returns compare equal to the ones in mpi.h. */
static const char *datatype_name(MPI_Datatype t, char *buf, size_t len)
{
    static const struct {
        MPI_Datatype type;
        const char *name;
    } known[] = {
        {MPI_CHAR, "MPI_CHAR"},           {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"}, {MPI_BYTE, "MPI_BYTE"},
        {MPI_SHORT, "MPI_SHORT"},         {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"},
        {MPI_INT, "MPI_INT"},             {MPI_UNSIGNED, "MPI_UNSIGNED"},
        {MPI_LONG, "MPI_LONG"},           {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"},
        {MPI_LONG_LONG, "MPI_LONG_LONG"}, {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"},
        {MPI_FLOAT, "MPI_FLOAT"},         {MPI_DOUBLE, "MPI_DOUBLE"},
        {MPI_INT8_T, "MPI_INT8_T"},       {MPI_UINT8_T, "MPI_UINT8_T"},
        {MPI_INT16_T, "MPI_INT16_T"},     {MPI_UINT16_T, "MPI_UINT16_T"},
        {MPI_INT32_T, "MPI_INT32_T"},     {MPI_UINT32_T, "MPI_UINT32_T"},
        {MPI_INT64_T, "MPI_INT64_T"},     {MPI_UINT64_T, "MPI_UINT64_T"},
        {MPI_AINT, "MPI_AINT"},           {MPI_OFFSET, "MPI_OFFSET"},
        {MPI_COUNT, "MPI_COUNT"},         {MPI_C_BOOL, "MPI_C_BOOL"},
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (known[i].type == t)
            return known[i].name;
    snprintf(buf, len, "unknown datatype 0x%llx", (unsigned long long)(uintptr_t)t);
    return buf;
}


static void print_sources(FILE *out, void *h)
{
    __typeof__(MPI_T_source_get_num) *get_num = SYM(h, MPI_T_source_get_num);
    __typeof__(MPI_T_source_get_info) *get_info = SYM(h, MPI_T_source_get_info);
    int n = 0;
    if (!get_num || !get_info || get_num(&n) != MPI_SUCCESS) {
        fputs("  MPI_T event sources: not offered (no MPI_T_source_get_num)\n", out);
        return;
    }
    fprintf(out, "  MPI_T event sources: %d\n", n);
    for (int i = 0; i < n; i++) {
        char name[256] = "", desc[1024] = "";
        int name_len = sizeof name, desc_len = sizeof desc;
        MPI_T_source_order order = MPI_T_SOURCE_ORDERED;
        MPI_Count ticks = 0, max_ticks = 0;
        MPI_Info info = MPI_INFO_NULL;
        if (get_info(i, name, &name_len, desc, &desc_len, &order, &ticks, &max_ticks, &info) != MPI_SUCCESS) {
            fprintf(out, "    source %d: MPI_T_source_get_info failed\n", i);
            continue;
        }
        fprintf(out, "    source %d: ", i);
        put_text(out, name);
        fprintf(out, " (%s, %lld ticks/s, max %lld ticks): ", order == MPI_T_SOURCE_ORDERED ? "ordered" : "unordered",
                (long long)ticks, (long long)max_ticks);
        put_text(out, desc);
        fputc('\n', out);
    }
}

#define MAX_ELEMENTS 64

static void print_events(FILE *out, void *h)
{
    __typeof__(MPI_T_event_get_num) *get_num = SYM(h, MPI_T_event_get_num);
    __typeof__(MPI_T_event_get_info) *get_info = SYM(h, MPI_T_event_get_info);
    int n = 0;
    if (!get_num || !get_info || get_num(&n) != MPI_SUCCESS) {
        fputs("  MPI_T event types: not offered (no MPI_T_event_get_num)\n", out);
        return;
    }
    if (!n) {
        fputs("  MPI_T event types: 0 (this MPI offers no MPI_T events; nothing to record from MPI_T)\n", out);
        return;
    }
    fprintf(out, "  MPI_T event types: %d\n", n);
    for (int i = 0; i < n; i++) {
        char name[256] = "", desc[1024] = "", tbuf[64];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0;
        int nelem = 0;
        MPI_T_enum enumtype;
        MPI_Info info = MPI_INFO_NULL;
        /* First ask how many elements, then read their types. */
        if (get_info(i, name, &name_len, &verbosity, NULL, NULL, &nelem, &enumtype, &info, desc, &desc_len,
                     &bind) != MPI_SUCCESS) {
            fprintf(out, "    event %d: MPI_T_event_get_info failed\n", i);
            continue;
        }
        MPI_Datatype types[MAX_ELEMENTS];
        MPI_Aint displs[MAX_ELEMENTS];
        int shown = nelem < MAX_ELEMENTS ? nelem : MAX_ELEMENTS, got = shown;
        name_len = sizeof name;
        desc_len = sizeof desc;
        if (shown && get_info(i, name, &name_len, &verbosity, types, displs, &got, &enumtype, &info, desc,
                              &desc_len, &bind) != MPI_SUCCESS)
            shown = 0;
        fprintf(out, "    event %d: ", i);
        put_text(out, name);
        fprintf(out, " (%s, bound to %s, %d element%s", verbosity_name(verbosity), bind_name(bind), nelem,
                nelem == 1 ? "" : "s");
        for (int k = 0; k < shown; k++)
            fprintf(out, "%s%s", k ? ", " : ": ", datatype_name(types[k], tbuf, sizeof tbuf));
        if (shown < nelem)
            fputs(", ...", out);
        fputs(")", out);
        if (desc[0]) {
            fputs(": ", out);
            put_text(out, desc);
        }
        fputc('\n', out);
    }
}

static void inspect_mpit(FILE *out, void *h)
{
    __typeof__(MPI_T_init_thread) *init = SYM(h, MPI_T_init_thread);
    __typeof__(MPI_T_finalize) *fini = SYM(h, MPI_T_finalize);
    int provided = 0;
    if (!init || !fini) {
        fputs("  MPI_T: not offered by this library\n", out);
        return;
    }
    int rc = init(MPI_THREAD_SINGLE, &provided);
    if (rc != MPI_SUCCESS) {
        fprintf(out, "  MPI_T: MPI_T_init_thread failed (error %d)\n", rc);
        return;
    }
    print_sources(out, h);
    print_events(out, h);
    fini();
}
#endif /* TRACER_HAVE_MPICH_H */

static int mpi_probe(void *arg, FILE *out)
{
    const struct tr_info_opts *o = arg;
    const char *one[] = {o->mpi_lib, 0};
    const char *const *names = o->mpi_lib ? one : default_mpi;
    fputs("MPI:\n", out);
    void *h = 0;
    const char *opened = 0;
    for (int i = 0; names[i] && !h; i++)
        if ((h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL)))
            opened = names[i];
    if (!h) {
        fputs("  no MPI library found (tried ", out);
        for (int i = 0; names[i]; i++)
            fprintf(out, "%s%s", i ? ", " : "", names[i]);
        fputs(")\n", out);
        return 0;
    }
    fprintf(out, "  library:          %s\n", opened);
    int (*get_version)(char *, int *) = (int (*)(char *, int *))(uintptr_t)dlsym(h, "MPI_Get_library_version");
    /* MPI_MAX_LIBRARY_VERSION_STRING is 8192 in MPICH, 256 in Open MPI. */
    static char version[8192 + 1];
    int len = 0;
    if (!get_version || get_version(version, &len) != 0) {
        fputs("  version:          unknown (no MPI_Get_library_version)\n", out);
        return 0;
    }
    version[len > 0 && len < (int)sizeof version ? len : 0] = 0;
    /* The version text spans lines; the first says what it is. */
    version[strcspn(version, "\r\n")] = 0;
    fputs("  version:          ", out);
    put_text(out, version);
    fputc('\n', out);
#ifdef TRACER_HAVE_MPICH_H
    if (!strstr(version, "MPICH")) {
        fprintf(out, "  this MPI differs from the one tracer was built against (MPICH %s);\n"
                     "  MPI_T is not inspected, because its handles differ between implementations\n",
                MPICH_VERSION);
        return 0;
    }
    inspect_mpit(out, h);
#else
    fputs("  MPI_T is not inspected: tracer was built without MPICH's mpi.h\n", out);
#endif
    return 0;
}

void tr_info_mpi(FILE *out, const struct tr_info_opts *o)
{
    tr_info_in_child(mpi_probe, (void *)o, out, "MPI", 60);
}
