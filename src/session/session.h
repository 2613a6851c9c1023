/* session.h - one traced run: its directory, its journal, its consumer
 * thread and crash handlers, from activation to the OTF2 archive. */
#ifndef TR_SESSION_H
#define TR_SESSION_H

/* Installs the session as the lifecycle's start and end hooks. Idempotent. */
void tr_session_install(void);

#endif
