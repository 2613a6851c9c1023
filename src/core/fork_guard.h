/* fork_guard.h - tells the process that started tracing from its children,
 * however they were made.
 *
 * fork() runs the atfork handlers, which leave a child untraced. glibc's
 * _Fork() and a raw clone/SYS_clone without CLONE_VM run none: the child
 * has a copy of every variable that says "tracing", but not the pool (it is
 * MADV_DONTFORK), not the journal's writer thread, and the journal's file
 * is its parent's. So "is this the process that started tracing?" is asked
 * on every path that assumes the consumer thread or the buffers, and the
 * answer lives on a page the kernel zeroes in every child
 * (MADV_WIPEONFORK, Linux 4.14): a plain load, fit for the hot path. Where
 * the kernel has no such page, the pid taken at the claim stands in (a
 * system call, so not on the hot path: there a child made without atfork
 * handlers that records faults, as before). */
#ifndef TR_CORE_FORK_GUARD_H
#define TR_CORE_FORK_GUARD_H

/* This process starts tracing (activation, before the buffers exist).
 * Returns 0, or -1 when no page is wiped in children (the pid stands in). */
int tr_fork_guard_claim(void);

/* 1 in the process that claimed, and in one that never did; 0 in a child
 * of the claimer. Async-signal-safe. */
int tr_fork_guard_here(void);

/* An int that reads 0 in every child of this process (the claimer), once
 * claimed; NULL before the claim or without MADV_WIPEONFORK. Each call
 * gives another (a handful in all); never freed. */
int *tr_fork_guard_word(void);

#endif
