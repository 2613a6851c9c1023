/* crash.h - signal handlers that save the journal of a dying process. */
#ifndef TR_SESSION_CRASH_H
#define TR_SESSION_CRASH_H

/* Installs the handlers, keeping the application's to restore; they write
 * to the journal (journal_write.h). */
void tr_crash_install(void);
/* A forked child must not write into its parent's journal. */
void tr_crash_forget_journal(void);

#endif
