/*
 * Removing a job's directory tree, whatever the job left in it: modes
 * that forbid reading or writing (a directory of mode 000), links (never
 * followed: every step is relative to a directory descriptor opened with
 * O_NOFOLLOW), and nesting as deep as it likes (a directory found too
 * deep is moved up to the top and removed from there, so neither the
 * stack nor the descriptors grow with the depth).
 *
 * It is meant for a tree nobody changes any more (the job's processes are
 * gone), but a change racing it can make it fail, never reach outside.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "peerd.h"

#define RMTREE_DEPTH 32 /* deeper directories are moved to the top */

struct rmtree {
    int top;          /* the tree's root directory */
    unsigned moved;   /* names given to moved directories */
    int again;        /* something was moved up: another pass */
    int err;          /* first errno */
};

static void
rm_fail(struct rmtree *rt)
{
    if (rt->err == 0)
        rt->err = errno;
}

/* Open dir name in dfd for removal, granting ourselves rwx on it first
 * (by descriptor: a link put in its place is not followed). */
static int
rm_open_dir(int dfd, const char *name)
{
    char proc[64];
    struct stat st;
    int pfd, fd;

    pfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    if (pfd == -1)
        return -1;
    if (fstat(pfd, &st) == 0 && (st.st_mode & 0700) != 0700) {
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
        (void)chmod(proc, (st.st_mode & 07777) | 0700);
    }
    fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(pfd);
    return fd;
}

static void rm_contents(struct rmtree *, int dfd, int depth);

/* Remove entry name of directory dfd. */
static void
rm_entry(struct rmtree *rt, int dfd, const char *name, int depth)
{
    char moved[64];
    int fd;

    if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
        return;
    if (errno != EISDIR && errno != EPERM) {
        rm_fail(rt);
        return;
    }
    if (depth >= RMTREE_DEPTH) {
        /* Too deep to descend further from here: move it to the top. */
        snprintf(moved, sizeof moved, ".rmtree-%u", rt->moved++);
        if (renameat(dfd, name, rt->top, moved) == 0)
            rt->again = 1;
        else
            rm_fail(rt);
        return;
    }
    if ((fd = rm_open_dir(dfd, name)) == -1) {
        rm_fail(rt);
        return;
    }
    rm_contents(rt, fd, depth + 1);
    close(fd);
    if (unlinkat(dfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT &&
        !rt->again)
        rm_fail(rt);
}

/* Remove everything in directory dfd (which stays open). */
static void
rm_contents(struct rmtree *rt, int dfd, int depth)
{
    struct dirent *de;
    DIR *d;
    int fd;

    /* fdopendir takes the descriptor: give it a copy. */
    if ((fd = dup(dfd)) == -1 || (d = fdopendir(fd)) == NULL) {
        if (fd != -1)
            close(fd);
        rm_fail(rt);
        return;
    }
    /* The copy shares the position with dfd: from the start each time. */
    rewinddir(d);
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        rm_entry(rt, dfd, de->d_name, depth);
        /* The directory changed under the stream: start it again. */
        if (depth == 0 && rt->again)
            break;
    }
    closedir(d);
}

int
rmtree(const char *path)
{
    struct rmtree rt;
    int passes;

    memset(&rt, 0, sizeof rt);
    if ((rt.top = rm_open_dir(AT_FDCWD, path)) == -1)
        return errno == ENOENT ? 0 : -1;
    for (passes = 0; passes < 1000000; passes++) {
        rt.again = 0;
        rm_contents(&rt, rt.top, 0);
        if (!rt.again)
            break;
    }
    close(rt.top);
    if (rmdir(path) == -1 && errno != ENOENT && rt.err == 0)
        rt.err = errno;
    if (rt.err != 0) {
        errno = rt.err;
        return -1;
    }
    return 0;
}
