/*
 * A private mount namespace for each job: /tmp, /var/tmp and /dev/shm are
 * fresh, size-limited tmpfs that no other job sees and that vanish with
 * the job's last process.  Everything else is the machine's own view.
 *
 * A helper child makes the namespace (unshare, mounts) and waits while
 * peerd opens it by /proc/PID/ns/mnt; peerd keeps that descriptor for the
 * job's life and each of the job's processes enters it (setns) before it
 * drops privileges.  When the job directory itself lies under one of the
 * masked directories (a state directory in /tmp), it is carried over into
 * the new tmpfs at the same path as a detached bind mount (open_tree), so
 * the job keeps its files and its paths.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peerd.h"
#include "xmalloc.h"

static const char *const mntns_masked[] = {"/tmp", "/var/tmp", "/dev/shm"};
#define MNTNS_NMASKED (sizeof mntns_masked / sizeof *mntns_masked)

/* Is path at or below dir? */
static int
mntns_below(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* In the child: report the failed step and die. */
static void __attribute__((noreturn))
mntns_fail(int fd, const char *step, const char *what)
{
    char msg[256];
    int n;

    n = snprintf(msg, sizeof msg, "%s %s: %s", step, what, strerror(errno));
    if (n > 0)
        (void)!write(fd, msg, (size_t)n);
    _exit(1);
}

/* mkdir -p of the directories above path inside a fresh tmpfs, then path
 * itself as an empty mount point. */
static int
mntns_make_path(const char *path)
{
    char *p, *slash;

    p = xstrdup(path);
    for (slash = strchr(p + 1, '/'); slash != NULL;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(p, 0711) == -1 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *slash = '/';
    }
    free(p);
    return mkdir(path, 0700) == -1 && errno != EEXIST ? -1 : 0;
}

static void __attribute__((noreturn))
mntns_child(const char *jobdir, uint64_t size, int report, int go)
{
    char opts[64];
    int tree = -1;
    size_t i;
    char c;

    if (unshare(CLONE_NEWNS) == -1)
        mntns_fail(report, "unshare", "mount namespace");
    /* Nothing mounted here reaches the machine's own namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
        mntns_fail(report, "mount", "/ private");
    for (i = 0; i < MNTNS_NMASKED; i++)
        if (mntns_below(jobdir, mntns_masked[i]) &&
            (tree = (int)open_tree(AT_FDCWD, jobdir,
                                   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) == -1)
            mntns_fail(report, "open_tree", jobdir);
    snprintf(opts, sizeof opts, "size=%llu,mode=1777",
             (unsigned long long)size);
    for (i = 0; i < MNTNS_NMASKED; i++) {
        if (access(mntns_masked[i], F_OK) == -1)
            continue;
        if (mount("tmpfs", mntns_masked[i], "tmpfs",
                  MS_NOSUID | MS_NODEV, opts) == -1)
            mntns_fail(report, "mount tmpfs on", mntns_masked[i]);
    }
    if (tree != -1 &&
        (mntns_make_path(jobdir) == -1 ||
         move_mount(tree, "", AT_FDCWD, jobdir, MOVE_MOUNT_F_EMPTY_PATH) ==
             -1))
        mntns_fail(report, "move_mount", jobdir);
    /* Ready: the namespace lives as long as peerd holds it open. */
    close(report);
    while (read(go, &c, 1) == -1 && errno == EINTR)
        ;
    _exit(0);
}

int
mntns_new(const char *jobdir, uint64_t tmp_bytes, char *why, size_t whylen)
{
    int rp[2] = {-1, -1}, gp[2] = {-1, -1}, fd = -1, status;
    char msg[256], path[64];
    ssize_t n;
    pid_t pid;

    if (pipe2(rp, O_CLOEXEC) == -1 || pipe2(gp, O_CLOEXEC) == -1) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        goto out;
    }
    if ((pid = fork()) == -1) {
        snprintf(why, whylen, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        close(rp[0]);
        close(gp[1]);
        mntns_child(jobdir, tmp_bytes, rp[1], gp[0]);
    }
    close(rp[1]);
    rp[1] = -1;
    close(gp[0]);
    gp[0] = -1;
    do
        n = read(rp[0], msg, sizeof msg - 1);
    while (n == -1 && errno == EINTR);
    if (n > 0) {
        msg[n] = '\0';
        snprintf(why, whylen, "private /tmp: %s", msg);
    } else {
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
            snprintf(why, whylen, "%s: %s", path, strerror(errno));
    }
    close(gp[1]);
    gp[1] = -1;
    while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
        ;
out:
    for (n = 0; n < 2; n++) {
        if (rp[n] != -1)
            close(rp[n]);
        if (gp[n] != -1)
            close(gp[n]);
    }
    return fd;
}
