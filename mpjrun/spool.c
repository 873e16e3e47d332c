/*
 * A replica's output kept on disk: for each of its streams, a queue of
 * bytes in a ring of fixed capacity inside one temporary file, unlinked
 * as soon as it is made (nothing is left behind whatever happens to
 * p2prun).  Bytes are added at the tail and dropped from the head; the
 * file never grows beyond nstreams x capacity, and is emptied (truncated)
 * whenever every queue is empty, so a spool that is not needed costs no
 * disk.  Pure file I/O: no event loop, no output.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "mpjrun.h"
#include "xmalloc.h"

#define SPOOL_MAX_STREAMS 2

struct ring {
    uint64_t head, len; /* bytes [head, head + len) modulo the capacity */
};

struct spool {
    int fd;
    int nstreams;
    uint64_t cap;
    int dirty; /* something was written since the file was last emptied */
    struct ring r[SPOOL_MAX_STREAMS];
};

/* An unlinked file in dir, else $TMPDIR, else /tmp (fdio_tmpfile: never
 * on fd 0-2, since callers take a descriptor of 0 for "no file"). */
int
spool_tmpfile(const char *dir, char *err, size_t errlen)
{
    int fd;

    if (dir == NULL || *dir == '\0')
        dir = getenv("TMPDIR");
    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    if ((fd = fdio_tmpfile(dir, "p2prun-spool-")) == -1)
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
    return fd;
}

struct spool *
spool_open(const char *dir, int nstreams, uint64_t cap, char *err,
           size_t errlen)
{
    struct spool *sp;
    int fd;

    if (nstreams < 1 || nstreams > SPOOL_MAX_STREAMS || cap == 0) {
        snprintf(err, errlen, "bad spool geometry");
        return NULL;
    }
    if ((fd = spool_tmpfile(dir, err, errlen)) == -1)
        return NULL;
    sp = xcalloc(1, sizeof *sp);
    sp->fd = fd;
    sp->nstreams = nstreams;
    sp->cap = cap;
    return sp;
}

uint64_t
spool_len(const struct spool *sp, int stream)
{
    if (sp == NULL || stream < 0 || stream >= sp->nstreams)
        return 0;
    return sp->r[stream].len;
}

int
spool_put(struct spool *sp, int stream, const void *data, size_t n)
{
    struct ring *r;
    uint64_t base, at, first;

    if (stream < 0 || stream >= sp->nstreams) {
        errno = EINVAL;
        return -1;
    }
    r = &sp->r[stream];
    if (n > sp->cap - r->len) {
        errno = ENOSPC;
        return -1;
    }
    base = (uint64_t)stream * sp->cap;
    at = (r->head + r->len) % sp->cap;
    first = sp->cap - at < n ? sp->cap - at : n;
    if (fdio_pwrite_all(sp->fd, data, (size_t)first, base + at) == -1 ||
        fdio_pwrite_all(sp->fd, (const char *)data + first, (size_t)(n - first),
                        base) == -1)
        return -1;
    r->len += n;
    sp->dirty = 1;
    return 0;
}

size_t
spool_get(struct spool *sp, int stream, void *buf, size_t max)
{
    struct ring *r;
    uint64_t base, n, first;

    if (stream < 0 || stream >= sp->nstreams)
        return 0;
    r = &sp->r[stream];
    n = r->len < max ? r->len : max;
    base = (uint64_t)stream * sp->cap;
    first = sp->cap - r->head < n ? sp->cap - r->head : n;
    if (fdio_pread_all(sp->fd, buf, (size_t)first, base + r->head) == -1 ||
        fdio_pread_all(sp->fd, (char *)buf + first, (size_t)(n - first),
                       base) == -1)
        return 0;
    return (size_t)n;
}

void
spool_drop(struct spool *sp, int stream, uint64_t n)
{
    struct ring *r;
    int i;

    if (sp == NULL || stream < 0 || stream >= sp->nstreams)
        return;
    r = &sp->r[stream];
    if (n >= r->len) {
        r->head = r->len = 0;
    } else {
        r->head = (r->head + n) % sp->cap;
        r->len -= n;
    }
    /* Nothing kept anywhere: give the disk back. */
    for (i = 0; i < sp->nstreams; i++)
        if (sp->r[i].len > 0)
            return;
    if (sp->dirty && ftruncate(sp->fd, 0) == 0)
        sp->dirty = 0;
}

void
spool_close(struct spool *sp)
{
    if (sp == NULL)
        return;
    close(sp->fd);
    free(sp);
}
