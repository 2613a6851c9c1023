/* convert_sink.h - what `tracer convert` hands an output format.
 *
 * The reader (convert_read.c, with convert_defs.c and convert_events.c)
 * reads an OTF2 archive (any writer's, not only tracer's) through the OTF2
 * reader API, in runs of locations (a process with its devices stays in
 * one run), each run in timestamp order over its locations (OTF2's global
 * event reader, clock offsets applied by OTF2), and turns it into the calls
 * below; a format (perfetto_sink.c, json_sink.c) writes them out as they
 * come. Nothing is kept per event, so memory is bounded by the definitions
 * and the open slices, however large the archive.
 *
 * Times are nanoseconds since the archive's global offset (ClockProperties),
 * non-decreasing over the calls of one run; the next run (next_run) starts
 * again from its own earliest time. Calls for one track are in time order
 * over the whole sequence. Strings passed to a call are
 * valid only during the call. Every string the reader passes is valid UTF-8:
 * it repairs the strings of the definitions once as it reads them
 * (convert_utf8.h), so a format need not check per event; the names it
 * builds from them are cut only at a character boundary.
 *
 * Who calls what: tc_convert() calls begin (once the archive has opened:
 * a bad archive leaves nothing half-written) and end (once every event is
 * read); the caller, who made the sink, calls free, whether tc_convert()
 * succeeded or not. */
#ifndef TR_TOOLS_CONVERT_SINK_H
#define TR_TOOLS_CONVERT_SINK_H

#include <stdint.h>
#include <stdio.h>

/* What a location is drawn as. */
enum tc_track_kind {
    TC_TRACK_THREAD,  /* a host thread (OTF2 CPU_THREAD) */
    TC_TRACK_DEVICE,  /* a device stream (ACCELERATOR_STREAM) */
    TC_TRACK_MPIT,    /* an MPI_T source ("MPI_T source <name>") */
    TC_TRACK_OTHER,
};

/* A process: an OTF2 location group of type PROCESS ("rank 3", "process
 * 4711"), with the groups below it (devices) folded in. */
typedef struct tc_process {
    uint32_t id;      /* 0.., dense: also Perfetto's pid and JSON's "pid" (+1) */
    const char *name;
} tc_process;

/* A track: one OTF2 location, or a track tracer adds (a device's transfers,
 * TC_TRACK_OTHER with parent_location set). */
typedef struct tc_track {
    uint32_t id;      /* 0.., dense over every track */
    uint32_t process; /* tc_process.id */
    enum tc_track_kind kind;
    const char *name; /* "host thread 0", "device 0 stream", "device 0 transfers" */
} tc_track;

/* One argument of a slice or instant: an OTF2 attribute, by name. */
enum tc_arg_type { TC_ARG_INT, TC_ARG_UINT, TC_ARG_DOUBLE, TC_ARG_STRING };
typedef struct tc_arg {
    const char *name;
    enum tc_arg_type type;
    union {
        int64_t i;
        uint64_t u;
        double d;
        const char *s;
    } v;
} tc_arg;

/* A counter: an OTF2 metric member on one location group, or a count
 * tracer derives (MPI_T numeric payloads, drops). */
typedef struct tc_counter {
    uint32_t id;      /* 0.., dense */
    uint32_t process;
    const char *name; /* "device 0 memory in use", "MPI_T dropped events (ompi)" */
    const char *unit; /* "bytes", "events", "" */
} tc_counter;

typedef struct tc_sink tc_sink;
struct tc_sink {
    void *ctx;
    /* Before anything else: every process and every track of the archive
     * (tracks added later are announced with add_track first). */
    int (*begin)(tc_sink *s, const tc_process *procs, uint32_t nprocs, const tc_track *tracks, uint32_t ntracks);
    int (*add_track)(tc_sink *s, const tc_track *t);
    int (*add_counter)(tc_sink *s, const tc_counter *c);
    /* A slice on @track: begin and end nest properly per track. @flow_out:
     * a flow starts at this slice (0: none); @flow_in: one ends here. */
    int (*slice_begin)(tc_sink *s, uint32_t track, uint64_t ts, const char *name, const char *category,
                       const tc_arg *args, uint32_t nargs, uint64_t flow_out, uint64_t flow_in);
    int (*slice_end)(tc_sink *s, uint32_t track, uint64_t ts);
    /* A zero-length event (an MPI_T event, a link map, a mark). */
    int (*instant)(tc_sink *s, uint32_t track, uint64_t ts, const char *name, const char *category,
                   const tc_arg *args, uint32_t nargs);
    int (*counter)(tc_sink *s, uint32_t counter, uint64_t ts, double value);
    /* The calls that follow are another run of locations: their times may
     * be earlier than those before (NULL: the format does not care). */
    int (*next_run)(tc_sink *s);
    /* After the last event: flush, close. Returns 0 or -1. */
    int (*end)(tc_sink *s);
    /* Frees the sink (after end, or instead of it on failure). */
    void (*free)(tc_sink *s);
};

/* The formats. @out is the open output file; the sink does not close it. */
tc_sink *tc_perfetto_sink(FILE *out);
tc_sink *tc_json_sink(FILE *out);

typedef struct tc_stats {
    uint64_t events;      /* OTF2 events read */
    uint64_t slices, instants, counters, flows;
    uint64_t locations;
} tc_stats;

/* Reads the archive at @path (a trace directory or its traces.otf2) into
 * @sink, at most @at_once locations at once (each holds a chunk of its
 * event file, up to 4 MiB in tracer's archives; 0: OTR_OPEN_MAX, 64). @progress: report
 * progress on stderr (the caller decides: only when stderr is a
 * terminal). Returns 0, or -1 with a one-line reason in @err (a damaged
 * archive is an error, never a crash). */
int tc_convert(const char *path, tc_sink *sink, int progress, uint32_t at_once, tc_stats *st, char *err,
               size_t errlen);

#endif
