/* archive_stage.h - where OTF2 writes an archive before it is one.
 *
 * OTF2's POSIX substrate opens its files by path (fopen "wb": it follows a
 * symlink and truncates what it finds) and makes traces/ with mkdir. So OTF2
 * never writes in the trace directory itself, which may be a directory of
 * the user's that others can write to: it writes in a stage, a fresh
 * directory made inside it (mode 0700, a new random name, so nothing in it
 * can have been planted), reached through /proc/self/fd/N so that no name on
 * the way can be swapped for a link. When the archive is complete, its files
 * and traces/ lose write permission for others (whatever the umask) and are
 * renamed into the trace directory: traces/ and traces.def never over
 * anything already there, then the anchor traces.otf2 over the empty claim,
 * last, so that traces.otf2 is there only when the rest is. When writing
 * fails, the stage is removed and the trace directory holds what it held
 * before (the journal, the claim): `tracer recover` starts clean. */
#ifndef TR_WRITER_ARCHIVE_STAGE_H
#define TR_WRITER_ARCHIVE_STAGE_H

#include <stddef.h>

typedef struct tr_stage {
    int dir;          /* the trace directory (the caller's descriptor) */
    int fd;           /* the stage; -1 when none */
    char name[40];    /* its name in the trace directory */
    char path[4200];  /* what OTF2 is given */
} tr_stage;

/* Makes a stage in the directory @dir (@dir_path names it when /proc is not
 * mounted). Returns 0, or -1 with a reason in @err. */
int tr_stage_create(tr_stage *s, int dir, const char *dir_path, char *err, size_t size);

/* Another rank of an MPI job: opens the stage @name that rank 0 made, after
 * checking it is a directory of this user that no one else can enter.
 * Returns 0, or -1 with a reason in @err. */
int tr_stage_join(tr_stage *s, int dir, const char *dir_path, const char *name, char *err, size_t size);

/* Moves the archive from the stage into the trace directory and removes the
 * stage. Returns 0, or -1 with a reason in @err (the stage is then removed,
 * and nothing of it is left in the trace directory). */
int tr_stage_commit(tr_stage *s, char *err, size_t size);

/* The line for an archive that could not be written: "the archive could
 * not be written: " and OTF2's message @otf2 (NULL: unknown), the stage's
 * path in it shortened to the file's name in the archive. */
void tr_stage_error(const tr_stage *s, char *err, size_t size, const char *otf2);

/* Removes the stage and everything in it. */
void tr_stage_discard(tr_stage *s);

/* Closes the stage's descriptor and leaves the stage (an MPI rank that is
 * not the one that commits or discards). */
void tr_stage_leave(tr_stage *s);

/* The process is about to die of a signal (session/crash.c): removes the
 * stage this process made and is writing an archive in, if any, with
 * everything in it; the stage's later steps then do nothing. Returns 1 when
 * there was one. Async-signal-safe; once. */
int tr_stage_abandon(void);

#endif
