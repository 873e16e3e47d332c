/*
 * The files of a cgroup tree: paths, small reads and writes, the pids
 * listed below a directory, removal children first.  Everything goes
 * through files under a file-system root that a unit test may point at a
 * fake tree (plain directories and files: cgs->fake lets writes create
 * them and rmdir clear them first).
 */
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroup_fs.h"
#include "xmalloc.h"

const char *const cg_ctl_name[CG_NCTL] = {"memory", "pids", "cpu"};

/* dir/file into path; -1 (ENAMETOOLONG) if it does not fit. */
int
cg_path(char *path, size_t len, const char *dir, const char *file)
{
    int n = snprintf(path, len, "%s/%s", dir, file);

    if (n < 0 || (size_t)n >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Write a whole small value to a cgroup file. */
int
cg_write(const struct cgroups *cgs, const char *dir, const char *file,
         const char *value)
{
    char path[PATH_MAX];
    size_t len = strlen(value);
    ssize_t n;
    int fd;

    if (cg_path(path, sizeof path, dir, file) == -1)
        return -1;
    fd = open(path, O_WRONLY | O_CLOEXEC | (cgs->fake ? O_CREAT | O_TRUNC : 0),
              0644);
    if (fd == -1)
        return -1;
    /* A limit being set may have to reclaim memory first, and a signal
     * (SIGCHLD) can interrupt that: try again. */
    do
        n = write(fd, value, len);
    while (n == -1 && errno == EINTR);
    if (close(fd) == -1 || n != (ssize_t)len)
        return -1;
    return 0;
}

/* Read a small cgroup file into buf (NUL-terminated); -1 if missing. */
int
cg_read(const char *dir, const char *file, char *buf, size_t len)
{
    char path[PATH_MAX];
    ssize_t n;
    int fd;

    if (cg_path(path, sizeof path, dir, file) == -1)
        return -1;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
        return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* The value of "key N" in a flat-keyed file (memory.events, ...); 0 when
 * absent. */
uint64_t
cg_read_key(const char *dir, const char *file, const char *key)
{
    char buf[2048], *p;
    size_t klen = strlen(key);

    if (cg_read(dir, file, buf, sizeof buf) == -1)
        return 0;
    for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
            return strtoull(p + klen + 1, NULL, 10);
    }
    return 0;
}

int
cg_is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int
cg_exists(const char *dir, const char *file)
{
    char path[PATH_MAX];

    if (cg_path(path, sizeof path, dir, file) == -1)
        return 0;
    return access(path, F_OK) == 0;
}

/* rmdir; in a fake tree the files we wrote go first. */
int
cg_rmdir(const struct cgroups *cgs, const char *dir)
{
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;

    if (rmdir(dir) == 0 || errno == ENOENT)
        return 0;
    if (!cgs->fake || errno != ENOTEMPTY || (d = opendir(dir)) == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (cg_path(path, sizeof path, dir, de->d_name) == -1)
            continue;
        if (de->d_type == DT_REG)
            (void)unlink(path);
    }
    closedir(d);
    return rmdir(dir);
}

/* Make dir (and its parents up from base).  0 if it exists after. */
int
cg_mkdir(const char *dir)
{
    return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* Call fn on every pid listed in dir and below; the number listed. */
int
cg_walk_pids(const char *dir, int depth, void (*fn)(pid_t))
{
    char path[PATH_MAX], *buf = NULL, *p, *end;
    size_t len = 0, cap = 0;
    struct dirent *de;
    int n = 0, fd;
    ssize_t r;
    DIR *d;
    long pid;

    if (cg_path(path, sizeof path, dir, "cgroup.procs") == 0 &&
        (fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
        /* The whole list first: a pid cut at a buffer's edge would be
         * two wrong pids, and these are killed. */
        for (;;) {
            if (cap - len < 4096) {
                cap = cap ? cap * 2 : 8192;
                buf = xreallocarray(buf, cap, 1);
            }
            r = read(fd, buf + len, cap - len - 1);
            if (r <= 0)
                break;
            len += (size_t)r;
        }
        close(fd);
        if (buf != NULL) {
            buf[len] = '\0';
            for (p = buf; *p != '\0'; p = end) {
                pid = strtol(p, &end, 10);
                if (end == p)
                    break;
                if (pid > 0) {
                    n++;
                    if (fn != NULL)
                        fn((pid_t)pid);
                }
                while (*end == '\n' || *end == ' ')
                    end++;
            }
            free(buf);
        }
    }
    if (depth > 4 || (d = opendir(dir)) == NULL)
        return n;
    while ((de = readdir(d)) != NULL)
        if (de->d_type == DT_DIR && de->d_name[0] != '.') {
            if (cg_path(path, sizeof path, dir, de->d_name) == -1)
                continue;
            n += cg_walk_pids(path, depth + 1, fn);
        }
    closedir(d);
    return n;
}

void
cg_sigkill(pid_t pid)
{
    (void)kill(pid, SIGKILL);
}

void
cg_sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};

    nanosleep(&ts, NULL);
}

/* Remove the node's directories, children first (what the unit test's
 * fake tree and a recovered job's unknown leaves need). */
int
cg_rmtree(const struct cgroups *cgs, const char *dir, int depth)
{
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;
    int rc = 0;

    if (depth < 4 && (d = opendir(dir)) != NULL) {
        while ((de = readdir(d)) != NULL)
            if (de->d_type == DT_DIR && de->d_name[0] != '.') {
                if (cg_path(path, sizeof path, dir, de->d_name) == -1)
                    continue;
                if (cg_rmtree(cgs, path, depth + 1) == -1)
                    rc = -1;
            }
        closedir(d);
    }
    if (cg_rmdir(cgs, dir) == -1)
        rc = -1;
    return rc;
}

/* Enable the v2 controllers we use in dir's subtree_control. */
int
cg_v2_delegate(struct cgroups *cgs, const char *dir)
{
    char buf[128] = "";
    size_t len = 0;
    int i;

    for (i = 0; i < CG_NCTL; i++)
        if (cgs->from[i] == CG_V2)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s+%s",
                                    len ? " " : "", cg_ctl_name[i]);
    return buf[0] == '\0' ? 0 : cg_write(cgs, dir, "cgroup.subtree_control", buf);
}
