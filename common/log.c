/*
 * Logging for daemons and command-line tools.  Lines are formatted once
 * and handed to a sink: stderr with the program name, or syslog.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *log_name = "p2p";
static int log_to_stderr = 1;
static int log_verbosity = P2P_LOG_INFO;
static log_sink_fn log_sink;

/* Prepare logging; to_stderr=0 sends lines to syslog instead. */
void
log_init(const char *progname, int to_stderr, int verbosity)
{
    log_name = progname;
    log_to_stderr = to_stderr;
    log_verbosity = verbosity;
    if (!to_stderr)
        openlog(progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_set_sink(log_sink_fn fn)
{
    log_sink = fn;
}

void
log_set_verbosity(int v)
{
    log_verbosity = v;
}

int
log_get_verbosity(void)
{
    return log_verbosity;
}

const char *
log_progname(void)
{
    return log_name;
}

static void
log_emit(int level, const char *line)
{
    static const int prio[] = {LOG_WARNING, LOG_INFO, LOG_DEBUG};
    struct timespec ts;
    struct tm tm;
    char stamp[32];

    if (level > log_verbosity)
        return;
    if (log_sink != NULL) {
        log_sink(level, line);
        return;
    }
    if (!log_to_stderr) {
        syslog(prio[level], "%s", line);
        return;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
    fprintf(stderr, "%s.%03ld %s[%d]: %s\n", stamp, ts.tv_nsec / 1000000,
            log_name, (int)getpid(), line);
}

static void
log_vformat(int level, int with_errno, const char *fmt, va_list ap)
{
    char msg[1024], line[1200];
    int saved = errno;

    vsnprintf(msg, sizeof msg, fmt, ap);
    if (with_errno)
        snprintf(line, sizeof line, "%s: %s", msg, strerror(saved));
    else
        snprintf(line, sizeof line, "%s", msg);
    log_emit(level, line);
    errno = saved;
}

void
log_warn(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_vformat(P2P_LOG_WARN, 1, fmt, ap);
    va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_vformat(P2P_LOG_WARN, 0, fmt, ap);
    va_end(ap);
}

void
log_info(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_vformat(P2P_LOG_INFO, 0, fmt, ap);
    va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_vformat(P2P_LOG_DEBUG, 0, fmt, ap);
    va_end(ap);
}

void
fatal(const char *fmt, ...)
{
    va_list ap;

    if (log_verbosity < P2P_LOG_WARN)
        log_verbosity = P2P_LOG_WARN; /* the last word is always said */
    va_start(ap, fmt);
    log_vformat(P2P_LOG_WARN, 1, fmt, ap);
    va_end(ap);
    exit(1);
}

void
fatalx(const char *fmt, ...)
{
    va_list ap;

    if (log_verbosity < P2P_LOG_WARN)
        log_verbosity = P2P_LOG_WARN; /* the last word is always said */
    va_start(ap, fmt);
    log_vformat(P2P_LOG_WARN, 0, fmt, ap);
    va_end(ap);
    exit(1);
}
