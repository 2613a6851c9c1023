/* otf2_mpi.h - OTF2's collective callbacks over MPI, so that every rank of a
 * job opens the one archive and writes its own locations' files, while OTF2
 * (through these) lets rank 0 create the directories and write the anchor
 * and the global definitions. The global communicator context handed to
 * OTF2_Archive_SetCollectiveCallbacks is a tr_job_comm (job_tree.h). */
#ifndef TR_JOB_OTF2_MPI_H
#define TR_JOB_OTF2_MPI_H

#include <otf2/otf2.h>

#include "job/job_tree.h"

const OTF2_CollectiveCallbacks *tr_otf2_mpi_callbacks(void);

#endif
