/* fd_keep.h - the descriptors tracer holds for the whole run: the journal,
 * the trace directory, an MPI job's directory, the debug files libdwfl reads.
 *
 * A program may close every descriptor from 3 up (daemons, code that spawns
 * children) and open its own files, which then get the same numbers, or dup2
 * its own descriptors over them. So each kept descriptor is moved out of the
 * way (a high number, close-on-exec) and its file is remembered (st_dev,
 * st_ino): before tracer writes through, reads through or closes one, it
 * checks that the number still names that file. A number that no longer does
 * is the program's: tracer never writes to it nor closes it, and may reopen
 * its file by path (tr_fd_reclaim). */
#ifndef TR_CORE_FD_KEEP_H
#define TR_CORE_FD_KEEP_H

#include <stddef.h>
#include <sys/types.h>

typedef struct tr_fd {
    int fd; /* -1: none; read and written atomically */
    dev_t dev;
    ino_t ino;
} tr_fd;

#define TR_FD_NONE {-1, 0, 0}

/* Moves @fd to a high number (close-on-exec; @fd itself is closed) and
 * remembers its file in *k. Returns the descriptor now kept, or -1 (errno
 * set; @fd is closed). */
int tr_fd_keep(tr_fd *k, int fd);

/* 1 when @fd names the file *k remembers. Async-signal-safe. */
int tr_fd_names(int fd, const tr_fd *k);

/* k->fd when it still names its file, else -1. Async-signal-safe. */
int tr_fd_get(const tr_fd *k);

/* The kept descriptor, reopened from @path when the program took or closed
 * its number: @path is opened O_PATH (a FIFO or device put there is never
 * opened for real) without following a last symlink, and kept only when it
 * is the same file, then opened with @flags through /proc/self/fd. Returns
 * the descriptor or -1 (errno set; ESTALE: @path is another file now; EBADF:
 * none was kept, or it was released). Not async-signal-safe. */
int tr_fd_reclaim(tr_fd *k, const char *path, int flags);

/* Closes k->fd if it still names its file (else it is the program's and is
 * left alone) and forgets it. */
void tr_fd_release(tr_fd *k);

/* Gives the calling thread a descriptor table of its own (unshare
 * CLONE_FILES) that holds only @keep, stderr (a reference to the one the
 * program had then) and /dev/null as stdin and stdout: from then on the
 * program's closes, opens and dup2s never reach a descriptor this thread
 * uses, this thread's never reach the program's, and it holds none of the
 * program's files open (POSIX locks belong to a table, so the program's are
 * untouched). Returns 0, or -1 (errno set; a seccomp filter may refuse
 * unshare: then the table is still the process's). */
int tr_fd_private_table(int keep);

/* The absolute path the kernel has for @fd (readlink /proc/self/fd/N), for
 * tr_fd_reclaim when the program changes directory. Returns 0, or -1. */
int tr_fd_path(int fd, char *path, size_t size);

#endif
