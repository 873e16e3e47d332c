/*
 * One unprivileged uid for each running job, from the range in
 * [peer] job_uids (no passwd entries needed; the group is the same
 * number), so that jobs cannot signal, trace or read each other.
 *
 * A uid is handed out only when nothing else could be using it: not root
 * or peerd's own, not a uid with a passwd entry, no process running as
 * it, no file of it left in the machine's shared temporary directories,
 * and its lock free.  The lock (a file per uid in a directory every peerd
 * of the machine shares) is held for the job's life, so that several
 * peerds on one machine never give the same uid to two jobs; a lock is
 * released by the kernel when its peerd dies, which is how a restarted
 * peerd tells an earlier life's processes from another peerd's.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "peerd.h"
#include "xmalloc.h"

#define UIDS_MAX_RANGE 65536

struct uids {
    uid_t first, last;
    char *lockdir;
    int *lock; /* per uid of the range: its lock file, -1 when free */
};

/* Directories every user may write to: a uid that owns a file in one is
 * not fresh. */
static const char *const uids_shared_dirs[] = {"/tmp", "/var/tmp", "/dev/shm"};

int
uids_parse(const char *text, uid_t *first, uid_t *last, char *err,
           size_t errlen)
{
    unsigned long a, b;
    char *end;

    errno = 0;
    a = strtoul(text, &end, 10);
    if (end == text || errno != 0)
        goto bad;
    b = a;
    if (*end == '-') {
        const char *s = end + 1;

        b = strtoul(s, &end, 10);
        if (end == s || errno != 0)
            goto bad;
    }
    if (*end != '\0')
        goto bad;
    if (a == 0 || b < a || b - a >= UIDS_MAX_RANGE || b >= 0xfffffffeUL) {
        snprintf(err, errlen,
                 "[peer] job_uids %s: a range FIRST-LAST of at most %d uids, "
                 "none of them 0",
                 text, UIDS_MAX_RANGE);
        return -1;
    }
    *first = (uid_t)a;
    *last = (uid_t)b;
    return 0;
bad:
    snprintf(err, errlen, "[peer] job_uids %s: not a range like 61000-61063",
             text);
    return -1;
}

struct uids *
uids_open(const char *range, const char *lockdir, char *err, size_t errlen)
{
    struct uids *u;
    uid_t first, last, x;
    struct passwd *pw;
    size_t n, i;

    if (uids_parse(range, &first, &last, err, errlen) == -1)
        return NULL;
    if (geteuid() >= first && geteuid() <= last) {
        snprintf(err, errlen, "[peer] job_uids %s holds peerd's own uid %u",
                 range, (unsigned)geteuid());
        return NULL;
    }
    if (mkdir(lockdir, 0700) == -1 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", lockdir, strerror(errno));
        return NULL;
    }
    u = xcalloc(1, sizeof *u);
    u->first = first;
    u->last = last;
    u->lockdir = xstrdup(lockdir);
    n = (size_t)(last - first) + 1;
    u->lock = xcalloc(n, sizeof *u->lock);
    for (i = 0; i < n; i++)
        u->lock[i] = -1;
    /* Accounts of real users are never lent to strangers' jobs. */
    setpwent();
    while ((pw = getpwent()) != NULL)
        if (pw->pw_uid >= first && pw->pw_uid <= last)
            log_warnx("[peer] job_uids: uid %u is the account %s; not used",
                      (unsigned)pw->pw_uid, pw->pw_name);
    endpwent();
    for (x = first; x <= last && x != 0; x++)
        if (getpwuid(x) == NULL)
            return u;
    snprintf(err, errlen, "[peer] job_uids %s: every uid has an account",
             range);
    uids_close(u);
    return NULL;
}

void
uids_close(struct uids *u)
{
    size_t i;

    if (u == NULL)
        return;
    for (i = 0; i <= (size_t)(u->last - u->first); i++)
        if (u->lock[i] != -1)
            close(u->lock[i]);
    free(u->lock);
    free(u->lockdir);
    free(u);
}

/* The uid a live process runs as (the owner of /proc/PID); -1 for a
 * zombie, which runs nothing and only waits for its parent. */
static int
uids_proc_uid(const char *pid, uid_t *uid)
{
    char path[64], buf[256], *p;
    struct stat st;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%s", pid);
    if (stat(path, &st) == -1)
        return -1;
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
        return -1;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if ((p = strrchr(buf, ')')) == NULL || p[1] == '\0' || p[2] == 'Z')
        return -1;
    *uid = st.st_uid;
    return 0;
}

/* Mark in busy[] (one byte per uid of the range) every uid that runs a
 * process. */
static void
uids_scan_procs(const struct uids *u, uint8_t *busy)
{
    struct dirent *de;
    uid_t uid;
    DIR *d;

    if ((d = opendir("/proc")) == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        if (uids_proc_uid(de->d_name, &uid) == 0 && uid >= u->first &&
            uid <= u->last)
            busy[uid - u->first] = 1;
    }
    closedir(d);
}

/* Likewise for files in the shared temporary directories. */
static void
uids_scan_files(const struct uids *u, uint8_t *busy)
{
    char path[PATH_MAX];
    struct dirent *de;
    struct stat st;
    size_t i;
    DIR *d;

    for (i = 0; i < sizeof uids_shared_dirs / sizeof *uids_shared_dirs; i++) {
        if ((d = opendir(uids_shared_dirs[i])) == NULL)
            continue;
        while ((de = readdir(d)) != NULL) {
            snprintf(path, sizeof path, "%s/%s", uids_shared_dirs[i],
                     de->d_name);
            if (lstat(path, &st) == 0 && st.st_uid >= u->first &&
                st.st_uid <= u->last)
                busy[st.st_uid - u->first] = 1;
        }
        closedir(d);
    }
}

/* Take uid x's lock; its descriptor, or -1 when another holds it. */
static int
uids_lock(const struct uids *u, uid_t x)
{
    char path[PATH_MAX];
    int fd;

    snprintf(path, sizeof path, "%s/%u", u->lockdir, (unsigned)x);
    if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) ==
        -1)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
        close(fd);
        return -1;
    }
    return fd;
}

int
uids_take(struct uids *u, uid_t *out)
{
    size_t n = (size_t)(u->last - u->first) + 1, i, start;
    static unsigned rot;
    uint8_t *busy;
    uid_t x;
    int fd;

    busy = xcalloc(n, 1);
    uids_scan_procs(u, busy);
    uids_scan_files(u, busy);
    /* Start somewhere else each time, so that peers of one machine do
     * not all try the same uid first. */
    start = (size_t)(getpid() + rot++) % n;
    for (i = 0; i < n; i++) {
        size_t k = (start + i) % n;

        x = u->first + (uid_t)k;
        if (busy[k] || u->lock[k] != -1 || getpwuid(x) != NULL)
            continue;
        if ((fd = uids_lock(u, x)) == -1)
            continue;
        u->lock[k] = fd;
        free(busy);
        *out = x;
        return 0;
    }
    free(busy);
    return -1;
}

void
uids_give(struct uids *u, uid_t x)
{
    size_t k;

    if (x < u->first || x > u->last)
        return;
    k = x - u->first;
    if (u->lock[k] != -1) {
        close(u->lock[k]);
        u->lock[k] = -1;
    }
}

int
uids_recover(struct uids *u)
{
    size_t n = (size_t)(u->last - u->first) + 1, k;
    struct timespec ms = {0, 1000000};
    uint8_t *busy;
    int fd, killed = 0, round;
    struct dirent *de;
    uid_t uid;
    DIR *d;

    busy = xcalloc(n, 1);
    uids_scan_procs(u, busy);
    for (k = 0; k < n; k++) {
        if (!busy[k] || (fd = uids_lock(u, u->first + (uid_t)k)) == -1)
            continue;
        /* Nobody holds it: what runs as it is an earlier life's. */
        for (round = 0; round < 100; round++) {
            int seen = 0;

            if ((d = opendir("/proc")) == NULL)
                break;
            while ((de = readdir(d)) != NULL) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                    continue;
                if (uids_proc_uid(de->d_name, &uid) == 0 &&
                    uid == u->first + (uid_t)k) {
                    seen = 1;
                    if (kill((pid_t)atoi(de->d_name), SIGKILL) == 0)
                        killed++;
                }
            }
            closedir(d);
            if (!seen)
                break;
            nanosleep(&ms, NULL);
        }
        close(fd);
    }
    free(busy);
    return killed;
}
