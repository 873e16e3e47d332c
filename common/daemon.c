/*
 * Daemon start-up helpers.  The pid file stays locked (flock) while the
 * daemon lives, so a stale file from a crash does not block a restart and
 * a running daemon is never started twice on one pid file.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "xmalloc.h"

int
daemon_detach(void)
{
    pid_t pid;
    int fd;

    if ((pid = fork()) == -1)
        return -1;
    if (pid != 0)
        _exit(0);
    if (setsid() == -1)
        return -1;
    if ((pid = fork()) == -1)
        return -1;
    if (pid != 0)
        _exit(0);
    if (chdir("/") == -1)
        return -1;
    if ((fd = open("/dev/null", O_RDWR)) == -1)
        return -1;
    dup2(fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO)
        close(fd);
    return 0;
}

int
daemon_pidfile_open(const char *path, char *err, size_t errlen)
{
    char buf[32];
    int fd, n;

    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd == -1) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
        n = (int)read(fd, buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        snprintf(err, errlen, "%s: already running as pid %s", path, buf);
        close(fd);
        return -1;
    }
    return fd;
}

int
daemon_pidfile_write(int fd, char *err, size_t errlen)
{
    char buf[32];
    int n;

    n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) == -1 || pwrite(fd, buf, (size_t)n, 0) != n) {
        snprintf(err, errlen, "pid file: %s", strerror(errno));
        return -1;
    }
    /* The descriptor stays open, holding the lock, until we exit. */
    return 0;
}

char *
daemon_default_pidfile(const char *name)
{
    const char *rt;
    char *p;

    if (geteuid() == 0) {
        (void)mkdir("/run/p2p", 0755);
        xasprintf(&p, "/run/p2p/%s.pid", name);
    } else if ((rt = getenv("XDG_RUNTIME_DIR")) != NULL && *rt == '/')
        xasprintf(&p, "%s/%s.pid", rt, name);
    else
        xasprintf(&p, "/tmp/%s-%u.pid", name, (unsigned)getuid());
    return p;
}

void
daemon_start(const char *name, int foreground, const char *pidfile,
             int verbosity)
{
    char err[512], *defpid = NULL;
    int fd = -1;

    if (!foreground && pidfile == NULL)
        pidfile = defpid = daemon_default_pidfile(name);
    if (pidfile != NULL) {
        fd = daemon_pidfile_open(pidfile, err, sizeof err);
        free(defpid);
        if (fd == -1)
            fatalx("%s", err);
    }
    if (!foreground) {
        if (daemon_detach() == -1)
            fatal("cannot detach");
        log_init(name, 0, verbosity);
    }
    if (fd != -1 && daemon_pidfile_write(fd, err, sizeof err) == -1)
        fatalx("%s", err);
}
