/* mpit_session.c - see mpit_session.h. */
#include "mpit/mpit_session.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/lifecycle.h"
#include "core/log.h"
#include "mpit/mpit_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int init_seen, start_attempted, t_ready, thread_multiple;
/* MPI_T stays up while the world model (MPI_Init) or a session is live. */
static int world_live, sessions_live;
static char library[MPI_MAX_LIBRARY_VERSION_STRING];
static tr_mpit_catalogue cat;
static int nsources_done, ntypes_done;
/* Per type index: its layout when selected (NULL otherwise). */
static tr_mpit_layout **layouts;
static int nlayouts;
static tr_mpit_reg *regs;
static uint32_t next_reg_id = 1, nregs_live;

/* MPI_T_VERBOSITY_* in increasing order (consecutive in every family):
 * TRACER_MPIT_LEVEL's 1..9. */
static int verbosity_level(int v)
{
    int k = v - MPI_T_VERBOSITY_USER_BASIC;
    return k >= 0 && k < 9 ? k + 1 : 0;
}

/* --- notes for the journal ---------------------------------------------------
 * What the writer needs to interpret the records, handed up as typed notes
 * (core/mpit_note.h); journal/ lays them out as MPIT frames. */

static void journal_status(const char *what)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING + 256];
    size_t line = strcspn(library, "\n");
    snprintf(text, sizeof text, "%.*s: %s", (int)line, library[0] ? library : "no MPI library", what);
    for (char *c = text; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' '; /* MPICH's version text has tabs */
    tr_mpit_note note = {.kind = TR_MPIT_NOTE_STATUS, .text = text};
    tr_lifecycle_note_mpit(&note);
}

static void journal_catalogue_status(void)
{
    char what[200];
    snprintf(what, sizeof what, "MPI_T events: %d sources, %d event types, %u registrations made, %u live",
             cat.nsources, cat.ntypes, next_reg_id - 1, nregs_live);
    journal_status(what);
}

static void journal_source(int i)
{
    const tr_mpit_source *s = &cat.sources[i];
    tr_mpit_note note = {.kind = TR_MPIT_NOTE_SOURCE,
                         .source = {.index = (uint32_t)i, .ordered = s->ordered,
                                    .adhoc_timestamps = s->adhoc_timestamps,
                                    .ticks_per_second = s->ticks_per_second, .max_ticks = s->max_ticks,
                                    .name = s->name, .desc = s->desc}};
    tr_lifecycle_note_mpit(&note);
}

static void journal_type(int i, int registered)
{
    const tr_mpit_event_type *t = &cat.types[i];
    tr_mpit_note_element el[TR_MPIT_MAX_ELEMENTS];
    int nel = t->nelements < TR_MPIT_MAX_ELEMENTS ? t->nelements : TR_MPIT_MAX_ELEMENTS;
    for (int e = 0; e < nel; e++) {
        const tr_mpit_element *te = &t->elements[e];
        el[e] = (tr_mpit_note_element){.displacement = te->displacement, .size = te->size,
                                       .is_signed = te->is_signed, .is_float = te->is_float,
                                       .known = te->known, .type_name = te->type_name};
    }
    tr_mpit_note note = {.kind = TR_MPIT_NOTE_TYPE,
                         .type = {.index = (uint32_t)t->index, .verbosity_level = verbosity_level(t->verbosity),
                                  .bind = t->bind, .nelements = t->nelements, .registered = registered,
                                  .has_enum = t->has_enum, .name = t->name, .desc = t->desc,
                                  .bind_name = tr_mpit_bind_name(t->bind), .elements = el}};
    tr_lifecycle_note_mpit(&note);
}

static void journal_reg(enum tr_mpit_note_kind kind, const tr_mpit_reg *r, const char *object_name)
{
    tr_mpit_note note = {.kind = kind,
                         .reg = {.id = r->id, .type_index = (uint32_t)r->layout->type_index, .bound = r->bound,
                                 .object = r->object, .object_name = object_name}};
    tr_lifecycle_note_mpit(&note);
}

/* --- clocks ----------------------------------------------------------------- */

/* One pair per source: its tick between two host clock reads. The narrowest
 * of three windows is kept: an MPI may do work inside the call (Open MPI
 * delivers pending events from it). */
static void clock_pairs(void)
{
    for (int i = 0; i < cat.nsources; i++) {
        if (!cat.sources[i].adhoc_timestamps)
            continue;
        tr_mpit_note best = {.kind = TR_MPIT_NOTE_CLOCK, .clock = {.source = (uint32_t)i}};
        uint64_t width = UINT64_MAX;
        for (int k = 0; k < 3; k++) {
            MPI_Count t;
            uint64_t h0 = tr_clock_ticks();
            int rc = tr_mpit_live.source_get_timestamp(i, &t);
            uint64_t h1 = tr_clock_ticks();
            if (rc == MPI_SUCCESS && h1 - h0 < width) {
                width = h1 - h0;
                best.clock.source_tick = t;
                best.clock.host_before = h0;
                best.clock.host_after = h1;
            }
        }
        if (width == UINT64_MAX)
            continue;
        tr_lifecycle_note_mpit(&best);
    }
}

/* On the journal's writer thread, every flush interval. Skips a turn rather
 * than wait: the lock holder may be waiting for this very thread. */
static void interval_pairs(void)
{
    if (pthread_mutex_trylock(&lock))
        return;
    if (t_ready)
        clock_pairs();
    pthread_mutex_unlock(&lock);
}

/* --- registration ----------------------------------------------------------- */

static tr_mpit_layout *make_layout(int i)
{
    const tr_mpit_event_type *t = &cat.types[i];
    tr_mpit_layout *l = calloc(1, sizeof *l);
    if (!l)
        return 0;
    l->type_index = t->index;
    l->nelements = t->nelements;
    l->copy_ok = 1;
    for (int e = 0; e < t->nelements; e++) {
        const tr_mpit_element *el = &t->elements[e];
        l->el[e].displacement = (int32_t)el->displacement;
        l->el[e].size = el->size;
        l->el[e].slot = l->nslots;
        l->nslots += (el->size + 7) / 8;
        long long end = el->displacement + el->size;
        if (!el->known || el->displacement < 0 || end > TR_MPIT_COPY_MAX)
            l->copy_ok = 0;
        else if (end > l->extent)
            l->extent = (int)end;
    }
    return l;
}

static int selected(const tr_mpit_event_type *t)
{
    int level = verbosity_level(t->verbosity);
    return tr_globs_match(&tr_cfg.mpit_events, t->name) && (level ? level : 9) <= tr_cfg.mpit_level;
}

static void free_done(MPI_T_event_registration h, MPI_T_cb_safety s, void *user_data)
{
    (void)h, (void)s, (void)user_data;
}

/* Registers type @i (bound to *@object when @bound). */
static void register_type(int i, const void *object_handle, uint64_t object, int bound, const char *object_name)
{
    static int alloc_once, cb_once, drop_once;
    tr_mpit_reg *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->id = next_reg_id++;
    r->layout = layouts[i];
    r->object = object;
    r->bound = bound;
    if (tr_mpit_live.event_handle_alloc(cat.types[i].index, (void *)object_handle, MPI_INFO_NULL, &r->handle) !=
        MPI_SUCCESS) {
        tr_log_once(&alloc_once, "MPI_T: cannot register event type %s (MPI_T_event_handle_alloc failed); its "
                                 "events are not recorded",
                    cat.types[i].name);
        free(r);
        return;
    }
    if (tr_mpit_live.event_register_callback(r->handle, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, r,
                                             tr_mpit_on_event) != MPI_SUCCESS) {
        tr_log_once(&cb_once, "MPI_T: the MPI refused a thread-safe callback for %s; its events are not recorded",
                    cat.types[i].name);
        tr_mpit_live.event_handle_free(r->handle, 0, free_done);
        free(r);
        return;
    }
    if (tr_mpit_live.event_set_dropped_handler(r->handle, tr_mpit_on_dropped) != MPI_SUCCESS)
        tr_log_once(&drop_once, "MPI_T: no dropped-event handler for %s; drops of it are not counted",
                    cat.types[i].name);
    r->live = 1;
    r->next = regs;
    regs = r;
    nregs_live++;
    journal_reg(TR_MPIT_NOTE_REG, r, object_name);
}

/* Type @i, bound to communicators, on the predefined ones. */
static void bind_predefined(int i)
{
    register_type(i, &(MPI_Comm){MPI_COMM_WORLD}, MPI_COMM_WORLD, 1, "MPI_COMM_WORLD");
    register_type(i, &(MPI_Comm){MPI_COMM_SELF}, MPI_COMM_SELF, 1, "MPI_COMM_SELF");
}

static void bind_comm(MPI_Comm comm, const char *name)
{
    for (int i = 0; i < nlayouts; i++)
        if (layouts[i] && cat.types[i].bind == MPI_T_BIND_MPI_COMM)
            register_type(i, &comm, comm, 1, name);
}

/* Discovers what is new, journals it, registers the selected unbound types
 * (and, with @comms, binds the new communicator-bound ones to the
 * predefined communicators). */
static void discover(int comms)
{
    if (tr_mpit_discover(&tr_mpit_live, &cat) < 0) {
        static int once;
        tr_log_once(&once, "MPI_T: out of memory while discovering event types; some are not recorded");
    }
    for (; nsources_done < cat.nsources; nsources_done++)
        journal_source(nsources_done);
    if (cat.ntypes > nlayouts) {
        tr_mpit_layout **l = realloc(layouts, (size_t)cat.ntypes * sizeof *l);
        if (!l)
            return;
        memset(l + nlayouts, 0, (size_t)(cat.ntypes - nlayouts) * sizeof *l);
        layouts = l;
        nlayouts = cat.ntypes;
    }
    for (; ntypes_done < cat.ntypes; ntypes_done++) {
        int i = ntypes_done, sel = selected(&cat.types[i]);
        int bind = cat.types[i].bind;
        int supported = bind == MPI_T_BIND_NO_OBJECT || bind == MPI_T_BIND_MPI_COMM;
        if (sel && supported)
            layouts[i] = make_layout(i);
        journal_type(i, !sel ? 0 : !supported ? -1 : layouts[i] ? 1 : 0);
        if (layouts[i] && bind == MPI_T_BIND_NO_OBJECT)
            register_type(i, 0, 0, 0, "");
        else if (layouts[i] && comms)
            bind_predefined(i);
    }
}

/* --- the MPI calls ---------------------------------------------------------- */

static void end_of_run(void);

/* Starts MPI_T for tracer; the lock is held. */
static void start(void)
{
    if (start_attempted)
        return;
    start_attempted = 1;
    enum tr_mpit_status st = tr_mpit_resolve(&tr_mpit_live, library, sizeof library);
    size_t line = strcspn(library, "\n");
    switch (st) {
    case TR_MPIT_NO_MPI:
        journal_status("no MPI library found");
        return;
    case TR_MPIT_OTHER_MPI:
        tr_log("MPI_T: this process uses %.*s, an MPI whose handles tracer does not know (it knows MPICH and "
               "Open MPI); MPI is left alone and MPI_T events are not recorded",
               (int)line, library);
        journal_status("an MPI tracer does not know; MPI_T not used");
        return;
    case TR_MPIT_NO_EVENTS:
        if (tr_cfg.verbose)
            tr_log("MPI_T: %.*s has no MPI_T events interface", (int)line, library);
        journal_status("no MPI_T events interface");
        return;
    case TR_MPIT_READY: break;
    }
    int provided = MPI_THREAD_SINGLE;
    if (tr_mpit_live.init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        tr_log("MPI_T: MPI_T_init_thread failed; MPI_T events are not recorded");
        journal_status("MPI_T_init_thread failed");
        return;
    }
    t_ready = 1;
    thread_multiple = provided == MPI_THREAD_MULTIPLE;
    discover(0);
    clock_pairs();
    tr_lifecycle_set_end_hook(end_of_run);
    /* Pairs from the writer thread need MPI_T to be thread-safe; without it
     * they are taken only in the MPI calls tracer sees. */
    if (thread_multiple)
        tr_lifecycle_set_interval_hook(interval_pairs);
    journal_catalogue_status();
}

int tr_mpit_before_init(enum tr_mpi_call call)
{
    pthread_mutex_lock(&lock);
    int outer = !init_seen;
    init_seen = 1;
    pthread_mutex_unlock(&lock);
    if (!outer)
        return outer;
    if (!tr_lifecycle_activate("mpi"))
        return outer;
    tr_mpit_record_call(call, 0, 0);
    pthread_mutex_lock(&lock);
    start();
    pthread_mutex_unlock(&lock);
    return outer;
}

void tr_mpit_after_init(enum tr_mpi_call call, int rc)
{
    if (!tr_lifecycle_active())
        return;
    pthread_mutex_lock(&lock);
    if (rc == MPI_SUCCESS)
        world_live = 1;
    if (t_ready && rc == MPI_SUCCESS) {
        discover(1);
        /* Types registered before init that are bound to communicators get
         * the predefined ones now that they exist. */
        for (int i = 0; i < nlayouts; i++)
            if (layouts[i] && cat.types[i].bind == MPI_T_BIND_MPI_COMM) {
                int have = 0;
                for (tr_mpit_reg *r = regs; r; r = r->next)
                    have |= r->live && r->layout == layouts[i];
                if (!have)
                    bind_predefined(i);
            }
        clock_pairs();
        journal_catalogue_status();
    }
    pthread_mutex_unlock(&lock);
    tr_mpit_record_call(call, 1, rc);
}

void tr_mpit_before_finalize(void)
{
    if (!tr_lifecycle_active())
        return;
    tr_mpit_record_call(TR_MPI_FINALIZE, 0, 0);
    pthread_mutex_lock(&lock);
    if (t_ready)
        clock_pairs();
    pthread_mutex_unlock(&lock);
}

/* Frees every registration and ends tracer's MPI_T; the lock is held. */
static void stop(void)
{
    tr_lifecycle_set_interval_hook(0);
    clock_pairs();
    for (tr_mpit_reg *r = regs; r; r = r->next) {
        if (!r->live)
            continue;
        r->live = 0;
        nregs_live--;
        tr_mpit_live.event_handle_free(r->handle, 0, free_done);
    }
    journal_catalogue_status();
    tr_mpit_live.finalize();
    t_ready = 0;
}

void tr_mpit_after_finalize(int rc)
{
    /* Even when recording already ended (an MPI job's archive is written
     * inside MPI_Finalize): tracer's MPI_T use is balanced all the same. */
    pthread_mutex_lock(&lock);
    world_live = 0;
    if (t_ready && !sessions_live)
        stop();
    pthread_mutex_unlock(&lock);
    if (tr_lifecycle_active())
        tr_mpit_record_call(TR_MPI_FINALIZE, 1, rc);
}

/* The run ends without MPI_Finalize (exit, abort): the last pairs only; MPI
 * may be in no state for more. */
static void end_of_run(void)
{
    tr_lifecycle_set_interval_hook(0);
    pthread_mutex_lock(&lock);
    if (t_ready)
        clock_pairs();
    pthread_mutex_unlock(&lock);
}

void tr_mpit_comm_created(const void *newcomm)
{
    if (!__atomic_load_n(&t_ready, __ATOMIC_ACQUIRE) || !newcomm)
        return;
    pthread_mutex_lock(&lock);
    MPI_Comm c = tr_mpi_handle_at(newcomm);
    uint32_t before = next_reg_id;
    if (t_ready && c != MPI_COMM_NULL)
        bind_comm(c, "");
    if (next_reg_id != before)
        journal_catalogue_status();
    pthread_mutex_unlock(&lock);
}

void tr_mpit_comm_freeing(const void *comm)
{
    if (!__atomic_load_n(&t_ready, __ATOMIC_ACQUIRE) || !comm)
        return;
    pthread_mutex_lock(&lock);
    uint64_t c = tr_mpi_handle_at(comm);
    for (tr_mpit_reg *r = regs; t_ready && r; r = r->next) {
        if (!r->live || !r->bound || r->object != c)
            continue;
        r->live = 0;
        nregs_live--;
        tr_mpit_live.event_handle_free(r->handle, 0, free_done);
        journal_reg(TR_MPIT_NOTE_UNREG, r, "");
        journal_catalogue_status();
    }
    pthread_mutex_unlock(&lock);
}

/* --- the session model (MPI 4.0) ------------------------------------------- */

void tr_mpit_before_session_init(void)
{
    if (!tr_lifecycle_activate("mpi"))
        return;
    tr_mpit_record_call(TR_MPI_SESSION_INIT, 0, 0);
    pthread_mutex_lock(&lock);
    start();
    pthread_mutex_unlock(&lock);
}

void tr_mpit_after_session_init(int rc)
{
    pthread_mutex_lock(&lock);
    if (rc == MPI_SUCCESS)
        sessions_live++;
    /* No predefined communicators exist in this model: nothing to bind. */
    if (t_ready && rc == MPI_SUCCESS && tr_lifecycle_active()) {
        discover(0);
        clock_pairs();
        journal_catalogue_status();
    }
    pthread_mutex_unlock(&lock);
    if (tr_lifecycle_active())
        tr_mpit_record_call(TR_MPI_SESSION_INIT, 1, rc);
}

void tr_mpit_before_session_finalize(void)
{
    if (!tr_lifecycle_active())
        return;
    tr_mpit_record_call(TR_MPI_SESSION_FINALIZE, 0, 0);
    pthread_mutex_lock(&lock);
    if (t_ready)
        clock_pairs();
    pthread_mutex_unlock(&lock);
}

void tr_mpit_after_session_finalize(int rc)
{
    pthread_mutex_lock(&lock);
    if (rc == MPI_SUCCESS && sessions_live > 0)
        sessions_live--;
    if (t_ready && !sessions_live && !world_live)
        stop();
    pthread_mutex_unlock(&lock);
    if (tr_lifecycle_active())
        tr_mpit_record_call(TR_MPI_SESSION_FINALIZE, 1, rc);
}
