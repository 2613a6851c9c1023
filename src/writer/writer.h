/* writer.h - turns the recorded streams into an OTF2 archive, once, at the
 * end of the run. */
#ifndef TR_WRITER_WRITER_H
#define TR_WRITER_WRITER_H

#include <stdint.h>

/* Makes the writer the lifecycle's end hook. Idempotent. */
void tr_writer_install(void);

/* Writes the archive from everything recorded; @end_ticks is the end time. */
void tr_writer_run(uint64_t end_ticks);

#endif
