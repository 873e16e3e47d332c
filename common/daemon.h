/*
 * Becoming a daemon and keeping a pid file.
 */
#ifndef P2P_DAEMON_H
#define P2P_DAEMON_H

#include <stddef.h>

/* Detach from the terminal: fork twice, new session, cwd "/", stdio to
 * /dev/null.  Only the grandchild returns; -1 on failure. */
int daemon_detach(void);
/* Write our pid to path, refusing when another live process holds it
 * (the file is locked for the process's life).  -1 with err. */
int daemon_pidfile(const char *path, char *err, size_t errlen);
/* Default pid file for a program: /run/p2p/NAME.pid as root, else
 * $XDG_RUNTIME_DIR/NAME.pid or /tmp/NAME-UID.pid.  Caller frees. */
char *daemon_default_pidfile(const char *name);

#endif
