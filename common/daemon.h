/*
 * Becoming a daemon and keeping a pid file.
 */
#ifndef P2P_DAEMON_H
#define P2P_DAEMON_H

#include <stddef.h>

/* Detach from the terminal: fork twice, new session, cwd "/", stdio to
 * /dev/null.  Only the grandchild returns; -1 on failure. */
int daemon_detach(void);
/* Open and lock a pid file, before detaching so that a refusal reaches
 * the terminal and a relative path means the current directory.  The lock
 * is inherited by the detached child and lasts for the process's life.
 * Returns the descriptor, or -1 with err ("already running as pid N"). */
int daemon_pidfile_open(const char *path, char *err, size_t errlen);
/* Write our pid (after detaching) into a file from daemon_pidfile_open. */
int daemon_pidfile_write(int fd, char *err, size_t errlen);
/* Become what the flags ask for: lock the pid file (given, else the
 * default one when detaching), detach unless foreground (logging then goes
 * to syslog at the given verbosity), and write the pid.  Exits with a
 * message on failure, which reaches the terminal. */
void daemon_start(const char *name, int foreground, const char *pidfile,
                  int verbosity);
/* Default pid file for a program: /run/p2p/NAME.pid as root, else
 * $XDG_RUNTIME_DIR/NAME.pid or /tmp/NAME-UID.pid.  Caller frees. */
char *daemon_default_pidfile(const char *name);

#endif
