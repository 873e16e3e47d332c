/*
 * One log vocabulary for every daemon and tool (after OpenSMTPD's log.h):
 * log_warn adds strerror(errno), log_warnx does not, fatal/fatalx exit.
 * Daemons in the foreground log to stderr, detached ones to syslog.
 */
#ifndef P2P_LOG_H
#define P2P_LOG_H

#include <stdarg.h>

#define P2P_LOG_WARN 0
#define P2P_LOG_INFO 1
#define P2P_LOG_DEBUG 2
/* A verbosity below every level: nothing but fatal errors (a tool whose
 * own messages say what went wrong, as p2prun's do). */
#define P2P_LOG_QUIET (-1)

/* Where lines go; a program may install its own sink (the MPI runtime). */
typedef void (*log_sink_fn)(int level, const char *line);

void log_init(const char *progname, int to_stderr, int verbosity);
void log_set_sink(log_sink_fn);
void log_set_verbosity(int);
int log_get_verbosity(void);
const char *log_progname(void);

void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
