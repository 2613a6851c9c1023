/* info_mpi.c - `tracer info`'s MPI section: which MPI library a process
 * would load, and the MPI_T event sources and event types it offers.
 *
 * Each library is dlopened in its own forked child (info_child.c), never
 * linked: tracer must not pull an MPI into programs that have none. Every
 * default name that loads is described, so a machine with MPICH and Open
 * MPI shows both. The family (MPICH or Open MPI) is recognised the way a
 * traced process does it (src/mpit/mpi_abi.h); an MPI of another family is
 * named but not inspected, because its handles are not known.
 * MPI_Get_library_version and MPI_T may be called before MPI_Init. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "info.h"

#ifdef TRACER_HAVE_MPI
#include "mpit/mpit_catalogue.h"
#endif

/* Names and descriptions come from the library; keep control bytes (and
 * MPICH's tabs) out. */
static void put_text(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, out);
}

/* MPICH, Open MPI 3.x-5.x, MPICH elsewhere, Open MPI 6. */
static const char *const default_mpi[] = {"libmpich.so.12", "libmpi.so.40", "libmpi.so.12", "libmpi.so.0", 0};

#ifdef TRACER_HAVE_MPI


/* The same discovery tracer runs in a traced process (src/mpit/), so what
 * `tracer info` lists is what tracing would find. */
static void inspect_mpit(FILE *out, void *h)
{
    (void)h; /* dlopened RTLD_GLOBAL: tr_mpit_resolve finds it by name */
    tr_mpit_api api;
    enum tr_mpit_status st = tr_mpit_resolve(&api, 0, 0);
    if (st == TR_MPIT_OTHER_MPI) {
        fputs("  family:           unknown: tracer knows the handles of MPICH and Open MPI only;\n"
              "  MPI_T is not inspected, and a traced process leaves this MPI alone\n",
              out);
        return;
    }
    if (st != TR_MPIT_NO_MPI)
        fprintf(out, "  family:           %s (%s handles)\n", tr_mpi.name,
                tr_mpi.handle_size == 4 ? "integer" : "pointer");
    if (st != TR_MPIT_READY) {
        fputs("  MPI_T: this library offers no MPI_T events interface\n", out);
        return;
    }
    int provided = 0, rc = api.init_thread(MPI_THREAD_SINGLE, &provided);
    if (rc != MPI_SUCCESS) {
        fprintf(out, "  MPI_T: MPI_T_init_thread failed (error %d)\n", rc);
        return;
    }
    tr_mpit_catalogue cat = {0};
    if (tr_mpit_discover(&api, &cat) < 0) {
        fputs("  MPI_T: out of memory while listing events\n", out);
        api.finalize();
        return;
    }
    fprintf(out, "  MPI_T event sources: %d\n", cat.nsources);
    for (int i = 0; i < cat.nsources; i++) {
        const tr_mpit_source *s = &cat.sources[i];
        fprintf(out, "    source %d: ", i);
        put_text(out, s->name);
        fprintf(out, " (%s, %lld ticks/s, max %lld ticks, %s): ", s->ordered ? "ordered" : "unordered",
                s->ticks_per_second, s->max_ticks, s->adhoc_timestamps ? "ad-hoc timestamps" : "no ad-hoc timestamps");
        put_text(out, s->desc);
        fputc('\n', out);
    }
    if (!cat.ntypes)
        fputs("  MPI_T event types: 0 (this MPI offers no MPI_T events; nothing to record from MPI_T)\n", out);
    else
        fprintf(out, "  MPI_T event types: %d\n", cat.ntypes);
    for (int i = 0; i < cat.ntypes; i++) {
        const tr_mpit_event_type *t = &cat.types[i];
        fprintf(out, "    event %d: ", i);
        put_text(out, t->name);
        fprintf(out, " (%s, bound to %s, %d element%s", tr_mpit_verbosity_name(t->verbosity),
                tr_mpit_bind_name(t->bind), t->nelements, t->nelements == 1 ? "" : "s");
        for (int k = 0; k < t->nelements; k++) {
            const tr_mpit_element *e = &t->elements[k];
            if (e->known)
                fprintf(out, "%s%s@%lld", k ? ", " : ": ", e->type_name, e->displacement);
            else
                fprintf(out, "%sunknown datatype 0x%llx@%lld (kept as %d raw bytes)", k ? ", " : ": ",
                        (unsigned long long)e->datatype, e->displacement, e->size);
        }
        fputs(")", out);
        if (t->desc[0]) {
            fputs(": ", out);
            put_text(out, t->desc);
        }
        fputc('\n', out);
    }
    tr_mpit_catalogue_free(&cat);
    api.finalize();
}
#endif /* TRACER_HAVE_MPI */

/* In the child: describes library @arg; exits 1 when it does not load. */
static int mpi_probe(void *arg, FILE *out)
{
    const char *name = arg;
    void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        return 1;
    fprintf(out, "  library:          %s\n", name);
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
#ifdef TRACER_HAVE_MPI
    inspect_mpit(out, h);
#else
    fputs("  MPI_T is not inspected: tracer was built without MPI support (-Dmpi=)\n", out);
#endif
    return 0;
}

void tr_info_mpi(FILE *out, const struct tr_info_opts *o)
{
    const char *one[] = {o->mpi_lib, 0};
    const char *const *names = o->mpi_lib ? one : default_mpi;
    fputs("MPI:\n", out);
    int found = 0;
    for (int i = 0; names[i]; i++)
        found += tr_info_in_child(mpi_probe, (void *)names[i], out, "MPI", 60) == 0;
    if (found)
        return;
    fputs("  no MPI library found (tried ", out);
    for (int i = 0; names[i]; i++)
        fprintf(out, "%s%s", i ? ", " : "", names[i]);
    fputs(")\n", out);
}
