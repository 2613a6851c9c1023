/* output_dir.h - where the archive goes, created safely.
 *
 * The directory is created by tracer with mkdir(2), so the user's umask
 * applies, a planted symlink is refused (mkdir and rename never follow one)
 * and an existing trace is never overwritten: a taken name gets a .1, .2,
 * ... suffix.
 * Part of the composition root (linked into libtracer.so only): session/ and
 * job/ include it; the writer library never does. */
#ifndef TR_SESSION_OUTPUT_DIR_H
#define TR_SESSION_OUTPUT_DIR_H

#include <stddef.h>

/* Fills @dir with a fresh directory for the archive and returns a descriptor
 * of it (O_NOFOLLOW, close-on-exec) that the caller closes; returns -1 after
 * printing one tracer: line. *created tells whether tracer made it. A
 * directory tracer makes is never seen without its claim (an empty
 * traces.otf2): it is made under a temporary name and renamed into place.
 * When the name was taken and a suffixed one is used, one tracer: line says
 * so - or, with @note, that line is left in @note ("" when none), for the
 * caller to print once it knows the directory stays: a rank's directory,
 * made before MPI_Init, is removed when the rank joins its job's. */
int tr_output_dir_create(char *dir, size_t size, int *created, char *note, size_t note_size);

/* The same for an MPI job's shared directory: no .rank<N> suffix. */
int tr_output_dir_create_job(char *dir, size_t size, int *created);

#endif
