/* rank_desc.h - what the global definitions and the archive's properties
 * need to know of one journal's part of an archive, apart from its strings,
 * regions and attributes (tr_defs): its process, its locations and their
 * event counts, its devices, its MPI_T sources and communicators, its time
 * span and how its run ended.
 *
 * A lone journal's part and every rank's part of a job are described this
 * way, so one function writes the global definitions of both; in a job the
 * descriptions travel up the ranks' reduction tree to rank 0 (packed with
 * tr_rank_desc_pack), which writes them. Everything is by value: a
 * description refers to nothing in the rank that made it. */
#ifndef TR_WRITER_RANK_DESC_H
#define TR_WRITER_RANK_DESC_H

#include <stdint.h>

#include "common/blob.h"

typedef struct tr_desc_device {
    int32_t num;             /* OpenMP device number */
    uint32_t nlanes;         /* its streams (locations) */
    uint64_t *lanes;         /* the location of each, relative to the part's loc_base */
} tr_desc_device;

typedef struct tr_desc_mpit {
    uint64_t location;       /* relative to loc_base */
    char *name;              /* "MPI_T source <name>" */
} tr_desc_mpit;

/* A communicator MPI_T registrations were bound to (not WORLD). */
typedef struct tr_desc_comm {
    uint64_t handle;
    uint8_t self;            /* 1: MPI_COMM_SELF */
} tr_desc_comm;

typedef struct tr_desc_prop {
    char *name, *value;
} tr_desc_prop;

typedef struct tr_rank_desc {
    int32_t rank;            /* -1: a lone journal */
    uint64_t pid;
    char *hostname;          /* NULL: unknown */
    uint8_t empty;           /* the journal held no event: no location, no group */
    uint8_t ended, crashed, truncated;
    /* Its journal was lost (unreadable, or cut short before it named its
     * rank): only its rank is known, from the journal's file name. */
    uint8_t journal_lost;
    int32_t crash_signal;
    uint64_t small_count[2], small_bytes[2]; /* the size filter's totals */

    /* Ids in the archive: locations loc_base.., process group group_base
     * (its devices' groups follow), windows win_base + device index
     * (devices in the order the model found them). */
    uint64_t loc_base;
    uint32_t group_base, win_base;
    uint64_t nlocations;
    uint64_t *events;        /* written, per location */
    uint32_t nhost;          /* host threads' locations: 0..nhost-1 (a thread at a time each) */
    uint32_t ndevices;
    tr_desc_device *devices;
    uint32_t nmpit;
    tr_desc_mpit *mpit;      /* MPI_T sources that have a location */
    uint32_t ncomms;
    tr_desc_comm *comms;     /* in registration order, each once */
    uint8_t omp_metrics;     /* its host threads have the metrics OMP work and OMP wait */

    uint64_t t_min, t_max;   /* first and last event, on rank 0's clock */
    int64_t realtime_shift;  /* CLOCK_REALTIME ns = rank 0 time + this */

    /* Properties of this part, full names (TRACER::MPIT::RANK<N>::...). */
    uint32_t nprops;
    tr_desc_prop *props;
    /* TRACER_* as "NAME=value" (only the part that speaks for the archive's
     * configuration carries them; 0 otherwise). */
    uint32_t nconfig;
    char **config;

    /* For the conversion report. */
    uint64_t records, events_total, lost, skipped_bytes, bad_frames;
} tr_rank_desc;

/* Appends @d to @b. */
void tr_rank_desc_pack(const tr_rank_desc *d, tr_blob *b);
/* Reads what tr_rank_desc_pack wrote into @d. Returns 0, or -1 on a
 * malformed blob or out of memory (@d is then freed). */
int tr_rank_desc_unpack(tr_blob_reader *r, tr_rank_desc *d);
void tr_rank_desc_free(tr_rank_desc *d);

#endif
