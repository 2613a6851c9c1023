/* job_interpose.c - the MPI functions about the job's life cycle that
 * libtracer.so defines: MPI_Init, MPI_Init_thread, MPI_Finalize and
 * MPI_Abort (which saves every recorded event first: session.h). Around
 * the real ones they run MPI_T's steps (mpit/mpit_session.h: tracing starts
 * before MPI_Init, so its events are seen) and the job's (job.h: after
 * MPI_Init, before MPI_Finalize). They live here, not in mpit/, because the
 * job is the layer that composes the two: the MPI_T producer knows nothing
 * of the job. Forwarding as mpit/mpi_next.h says. */
#include <stdint.h>

#include "job/job.h"
#include "mpit/mpi_next.h"
#include "mpit/mpit_session.h"
#include "session/session.h"

TR_MPI_EXPORT int MPI_Init(int *argc, char ***argv);
TR_MPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
    TR_MPI_NEXT(MPI_Init, int (*)(int *, char ***));
    int outer = tr_mpit_before_init(TR_MPI_INIT);
    int rc = next(argc, argv);
    if (outer) {
        tr_mpit_after_init(TR_MPI_INIT, rc);
        tr_job_after_init(rc);
    }
    return rc;
}

TR_MPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
TR_MPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    TR_MPI_NEXT(MPI_Init_thread, int (*)(int *, char ***, int, int *));
    int outer = tr_mpit_before_init(TR_MPI_INIT_THREAD);
    int rc = next(argc, argv, required, provided);
    if (outer) {
        tr_mpit_after_init(TR_MPI_INIT_THREAD, rc);
        tr_job_after_init(rc);
    }
    return rc;
}

TR_MPI_EXPORT int MPI_Finalize(void);
TR_MPI_EXPORT int MPI_Finalize(void)
{
    TR_MPI_NEXT(MPI_Finalize, int (*)(void));
    tr_mpit_before_finalize();
    tr_job_before_finalize();
    int rc = next();
    tr_mpit_after_finalize(rc);
    return rc;
}

/* The communicator is passed through untouched, whatever the MPI family. */
TR_MPI_EXPORT int MPI_Abort(tr_mpi_word comm, int errorcode);
TR_MPI_EXPORT int MPI_Abort(tr_mpi_word comm, int errorcode)
{
    TR_MPI_NEXT(MPI_Abort, int (*)(tr_mpi_word, int));
    tr_session_before_abort(errorcode);
    return next(comm, errorcode);
}
