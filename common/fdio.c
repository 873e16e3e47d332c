/*
 * Whole transfers on a descriptor and anonymous temporary files (fdio.h).
 * Shared by p2prun's spools, peerd's spooled task inputs and the task
 * worker inside libp2pmpi, which is why it allocates, logs and exits
 * nothing: the library lives in user programs (it is compiled into
 * libp2pmpi and kept out of its exported names like every other
 * internal).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fdio.h"

enum fdio_op { FDIO_WRITE, FDIO_PWRITE, FDIO_PREAD };

/* The whole range through one call, retrying short transfers and EINTR
 * (the offset only for pwrite and pread). */
static int
fdio_all(int fd, enum fdio_op op, char *p, size_t n, uint64_t off)
{
    ssize_t k;

    while (n > 0) {
        if (op == FDIO_WRITE)
            k = write(fd, p, n);
        else if (op == FDIO_PWRITE)
            k = pwrite(fd, p, n, (off_t)off);
        else
            k = pread(fd, p, n, (off_t)off);
        if (k == -1 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return -1;
        }
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* write and pwrite only read the buffer: the casts drop nothing they
 * need. */
int
fdio_write_all(int fd, const void *p, size_t n)
{
    return fdio_all(fd, FDIO_WRITE, (char *)(uintptr_t)p, n, 0);
}

int
fdio_pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
    return fdio_all(fd, FDIO_PWRITE, (char *)(uintptr_t)p, n, off);
}

int
fdio_pread_all(int fd, void *p, size_t n, uint64_t off)
{
    return fdio_all(fd, FDIO_PREAD, p, n, off);
}

/* Move fd above stdio (closing the original); -1 with errno. */
static int
fdio_above_stdio(int fd)
{
    int moved, saved;

    if (fd > STDERR_FILENO)
        return fd;
    moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    saved = errno;
    close(fd);
    errno = saved;
    return moved;
}

int
fdio_tmpfile(const char *dir, const char *prefix)
{
    char path[PATH_MAX];
    int fd;

#ifdef O_TMPFILE
    if ((fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) != -1)
        return fdio_above_stdio(fd);
#endif
    if ((size_t)snprintf(path, sizeof path, "%s/%sXXXXXX", dir, prefix) >=
        sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if ((fd = mkostemp(path, O_CLOEXEC)) == -1)
        return -1;
    (void)unlink(path);
    return fdio_above_stdio(fd);
}
