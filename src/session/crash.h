/* crash.h - signal handlers that save the journal of a dying process. */
#ifndef TR_SESSION_CRASH_H
#define TR_SESSION_CRASH_H

/* Installs the handlers, keeping the application's to restore. */
void tr_crash_install(int journal_fd);
/* A forked child must not write into its parent's journal. */
void tr_crash_forget_journal(void);

#endif
