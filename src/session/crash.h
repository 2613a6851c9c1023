/* crash.h - signal handlers that save the journal of a dying process. */
#ifndef TR_SESSION_CRASH_H
#define TR_SESSION_CRASH_H

/* Installs the handlers, keeping the application's to restore; they write
 * to the journal (journal_write.h). */
void tr_crash_install(void);
/* Inside a handler of the program's that tracer's crash handler called (for
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT): that signal, else 0.
 * Async-signal-safe, as is the next. */
int tr_crash_chained_signal(void);
/* Appends everything unwritten and a CRASH frame for @sig to the journal,
 * once (a process about to end inside such a handler: _exit, exec). */
void tr_crash_save_journal(int sig);
/* A forked child must not write into its parent's journal; nor the end of
 * the run, once the journal is complete. */
void tr_crash_forget_journal(void);
/* The run's directory as the user named it, for the one line a death by a
 * signal prints (the journal there, 'tracer recover DIR'). Before
 * tr_crash_install; once. */
void tr_crash_set_dir(const char *dir_path);
/* This run prints nothing when it dies (an MPI job's rank). */
void tr_crash_quiet(void);
/* Nonzero from when the trace starts being written from the complete
 * journal until it is written: a death meanwhile removes the half-written
 * archive and says the journal is complete. */
void tr_crash_writing_trace(int writing);

#endif
