/*
 * The staging cache: files that p2prun sends before a job, kept by content
 * in one directory (the caller passes STATE_DIR/cache) under the hex
 * BLAKE2b-256 of their bytes, so a peer that already holds some content is
 * never sent it again.  Content arrives in chunks into a temporary file
 * ("tmp.<random hex>"), hashed as it comes, and is renamed into place only
 * once its size and hash match what was announced; nothing is ever held
 * whole in memory.  A file's mtime is its last use; when the total goes
 * over the bound, the least recently used files go first, but never one
 * used in the last minute (a job about to start keeps its files), so the
 * bound may be exceeded for a while, and a transfer in progress is not
 * counted until it is finished.  There is no fsync: a file cut short by a
 * crash has the wrong size, so cache_has() misses it and it is sent again.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "peerd.h"
#include "sec.h"
#include "xmalloc.h"

#define CACHE_NAME_LEN (2 * SEC_HASH_LEN) /* hex characters */
#define CACHE_TMP_PREFIX "tmp."
#define CACHE_TMP_RANDOM 16      /* random bytes in a temporary name */
#define CACHE_KEEP_SECS 60       /* a file used this recently stays */
#define CACHE_BLOCK (64 * 1024)  /* read/write copy when the kernel can't */
#define CACHE_COPY_MAX (1 << 30) /* per copy_file_range call */

struct cache {
    char *dir;
    int dfd;
    uint64_t max_bytes;
    uint64_t bytes;       /* cached files, not transfers in progress */
    uint64_t inflight;    /* announced sizes of transfers in progress */
    struct cache_in *ins; /* transfers in progress, so close can end them */
};

struct cache_in {
    /* First: the hasher wants 64-byte alignment (cache_in_begin). */
    struct sec_hasher hasher;
    struct cache *cache; /* NULL once the cache is closed */
    struct cache_in *prev, *next;
    int fd;       /* -1 once closed or failed */
    int tmp_live; /* the temporary file exists */
    int failed;   /* a write failed: only abort (or finish) remains */
    char tmp[sizeof CACHE_TMP_PREFIX + 2 * CACHE_TMP_RANDOM];
    char name[CACHE_NAME_LEN + 1];
    uint8_t hash[SEC_HASH_LEN];
    uint64_t size;
    uint64_t received;
};

/* One cached file, as the eviction scan sees it. */
struct cache_entry {
    char name[CACHE_NAME_LEN + 1];
    uint64_t size;
    struct timespec mtime;
};

/* Non-zero when name is 64 lower-case hex digits (a cached file). */
static int
cache_is_hash_name(const char *name)
{
    size_t i;

    for (i = 0; i < CACHE_NAME_LEN; i++)
        if (!((name[i] >= '0' && name[i] <= '9') ||
              (name[i] >= 'a' && name[i] <= 'f')))
            return 0;
    return name[i] == '\0';
}

/* Mark a cached file as just used. */
static void
cache_touch(struct cache *c, const char *name)
{
    if (utimensat(c->dfd, name, NULL, AT_SYMLINK_NOFOLLOW) == -1)
        log_warn("cache: touch %s/%s", c->dir, name);
}

/* Order for eviction: oldest use first, then by name so ties are stable. */
static int
cache_entry_cmp(const void *a, const void *b)
{
    const struct cache_entry *ea = a, *eb = b;

    if (ea->mtime.tv_sec != eb->mtime.tv_sec)
        return ea->mtime.tv_sec < eb->mtime.tv_sec ? -1 : 1;
    if (ea->mtime.tv_nsec != eb->mtime.tv_nsec)
        return ea->mtime.tv_nsec < eb->mtime.tv_nsec ? -1 : 1;
    return strcmp(ea->name, eb->name);
}

/*
 * List the cached files and their total size.  At start-up, temporary
 * files are leftovers of an earlier run and go, and strangers are logged;
 * later they are transfers in progress and are left alone.
 */
static int
cache_scan(struct cache *c, int startup, struct cache_entry **entries,
           size_t *nentries, uint64_t *total)
{
    struct cache_entry *list = NULL;
    struct dirent *de;
    struct stat st;
    size_t n = 0, cap = 0;
    DIR *d;
    int fd;

    *total = 0;
    if ((fd = openat(c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
        return -1;
    if ((d = fdopendir(fd)) == NULL) {
        close(fd);
        return -1;
    }
    while ((errno = 0, de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (strncmp(de->d_name, CACHE_TMP_PREFIX, strlen(CACHE_TMP_PREFIX)) ==
            0) {
            if (!startup)
                continue;
            if (unlinkat(c->dfd, de->d_name, 0) == -1 && errno != ENOENT)
                log_warn("cache: remove %s/%s", c->dir, de->d_name);
            else
                log_info("cache: removed partial file %s/%s", c->dir,
                         de->d_name);
            continue;
        }
        if (!cache_is_hash_name(de->d_name) ||
            fstatat(c->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
            !S_ISREG(st.st_mode)) {
            if (startup)
                log_warnx("cache: ignoring %s/%s: not a cached file", c->dir,
                          de->d_name);
            continue;
        }
        *total += (uint64_t)st.st_size;
        if (entries == NULL)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            list = xreallocarray(list, cap, sizeof *list);
        }
        memcpy(list[n].name, de->d_name, CACHE_NAME_LEN + 1);
        list[n].size = (uint64_t)st.st_size;
        list[n].mtime = st.st_mtim;
        n++;
    }
    if (errno != 0) {
        closedir(d);
        free(list);
        return -1;
    }
    closedir(d);
    if (entries != NULL) {
        *entries = list;
        *nentries = n;
    }
    return 0;
}

/*
 * Bring the total within the bound, least recently used first, sparing
 * keep (the file just added, or NULL) and anything used in the last
 * minute: those may hold the total above the bound until they age.
 */
static void
cache_evict(struct cache *c, const char *keep)
{
    struct cache_entry *list;
    struct timespec now;
    uint64_t total;
    size_t i, n;

    if (c->bytes <= c->max_bytes)
        return;
    if (cache_scan(c, 0, &list, &n, &total) == -1) {
        log_warn("cache: scan %s", c->dir);
        return;
    }
    /* Recounted from the disk, so the figure cannot drift. */
    c->bytes = total;
    qsort(list, n, sizeof *list, cache_entry_cmp);
    clock_gettime(CLOCK_REALTIME, &now);
    for (i = 0; i < n && c->bytes > c->max_bytes; i++) {
        if (keep != NULL && strcmp(list[i].name, keep) == 0)
            continue;
        /* Sorted by last use: everything after this one is recent too. */
        if (list[i].mtime.tv_sec > now.tv_sec - CACHE_KEEP_SECS)
            break;
        if (unlinkat(c->dfd, list[i].name, 0) == -1 && errno != ENOENT) {
            log_warn("cache: evict %s/%s", c->dir, list[i].name);
            continue;
        }
        c->bytes -= list[i].size;
        log_info("cache: evicted %s (%" PRIu64 " bytes)", list[i].name,
                 list[i].size);
    }
    if (c->bytes > c->max_bytes)
        log_info("cache: %" PRIu64 " bytes, over its bound of %" PRIu64
                 " until files used in the last minute age",
                 c->bytes, c->max_bytes);
    free(list);
}

/* Open the cache directory dir (not the state directory itself). */
struct cache *
cache_open(const char *dir, uint64_t max_bytes, char *err, size_t errlen)
{
    struct cache *c;
    int dfd;

    if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
        snprintf(err, errlen, "cache %s: %s", dir, strerror(errno));
        return NULL;
    }
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd == -1) {
        snprintf(err, errlen, "cache %s: %s", dir, strerror(errno));
        return NULL;
    }
    c = xcalloc(1, sizeof *c);
    c->dir = xstrdup(dir);
    c->dfd = dfd;
    c->max_bytes = max_bytes;
    if (cache_scan(c, 1, NULL, NULL, &c->bytes) == -1) {
        snprintf(err, errlen, "cache %s: %s", dir, strerror(errno));
        cache_close(c);
        return NULL;
    }
    log_debug("cache: %s holds %" PRIu64 " bytes, bound %" PRIu64, dir,
              c->bytes, max_bytes);
    /* The bound may have been lowered since the last run. */
    cache_evict(c, NULL);
    return c;
}

/* Close the temporary file of a transfer and remove it. */
static void
cache_in_discard(struct cache_in *in)
{
    if (in->fd != -1) {
        close(in->fd);
        in->fd = -1;
    }
    if (in->tmp_live && in->cache != NULL) {
        if (unlinkat(in->cache->dfd, in->tmp, 0) == -1 && errno != ENOENT)
            log_warn("cache: remove %s/%s", in->cache->dir, in->tmp);
    }
    in->tmp_live = 0;
}

/* Discard a transfer's file and free it. */
static void
cache_in_free(struct cache_in *in)
{
    cache_in_discard(in);
    if (in->cache != NULL) {
        in->cache->inflight -= in->size;
        if (in->prev != NULL)
            in->prev->next = in->next;
        else
            in->cache->ins = in->next;
        if (in->next != NULL)
            in->next->prev = in->prev;
    }
    sec_wipe(&in->hasher, sizeof in->hasher);
    free(in);
}

void
cache_close(struct cache *c)
{
    struct cache_in *in;

    if (c == NULL)
        return;
    /* Transfers still open lose their file; the owner must still free. */
    while ((in = c->ins) != NULL) {
        cache_in_discard(in);
        in->failed = 1;
        in->cache = NULL;
        c->ins = in->next;
        in->prev = in->next = NULL;
    }
    if (c->dfd != -1)
        close(c->dfd);
    free(c->dir);
    free(c);
}

int
cache_has(struct cache *c, const uint8_t hash[SEC_HASH_LEN], uint64_t size)
{
    char name[CACHE_NAME_LEN + 1];
    struct stat st;

    sec_hex(name, hash, SEC_HASH_LEN);
    if (fstatat(c->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
        return 0;
    /* Another size is a wrong announcement or a file cut short by a
     * crash: either way, not a hit (a good copy will replace it). */
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != size)
        return 0;
    cache_touch(c, name);
    return 1;
}

struct cache_in *
cache_in_begin(struct cache *c, const uint8_t hash[SEC_HASH_LEN], uint64_t size,
               char *err, size_t errlen)
{
    uint8_t rnd[CACHE_TMP_RANDOM];
    char hex[2 * CACHE_TMP_RANDOM + 1];
    struct cache_in *in;

    if (size > c->max_bytes || size > (uint64_t)INT64_MAX) {
        snprintf(err, errlen,
                 "file of %" PRIu64 " bytes is larger than the cache "
                 "(%" PRIu64 " bytes)",
                 size, c->max_bytes);
        return NULL;
    }
    /* Announced sizes are reserved on disk: all transfers in progress
     * together stay within the bound, whoever announces them. */
    if (size > c->max_bytes - c->inflight) {
        snprintf(err, errlen,
                 "cache busy: %" PRIu64 " bytes already arriving, bound %" PRIu64,
                 c->inflight, c->max_bytes);
        return NULL;
    }
    /* sec_hasher is 64-byte aligned, more than malloc promises. */
    in = aligned_alloc(_Alignof(struct cache_in), sizeof *in);
    if (in == NULL)
        fatal("%s", __func__);
    memset(in, 0, sizeof *in);
    in->cache = c;
    in->size = size;
    c->inflight += size;
    memcpy(in->hash, hash, SEC_HASH_LEN);
    sec_hex(in->name, hash, SEC_HASH_LEN);
    sec_hasher_init(&in->hasher, NULL);
    sec_random(rnd, sizeof rnd);
    snprintf(in->tmp, sizeof in->tmp, "%s%s", CACHE_TMP_PREFIX,
             sec_hex(hex, rnd, sizeof rnd));
    in->fd = openat(c->dfd, in->tmp,
                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (in->fd == -1) {
        snprintf(err, errlen, "cache %s: %s", c->dir, strerror(errno));
        free(in);
        return NULL;
    }
    in->tmp_live = 1;
    in->next = c->ins;
    if (c->ins != NULL)
        c->ins->prev = in;
    c->ins = in;
    /*
     * Reserve the space now, so a full disk is reported before the
     * transfer rather than in the middle of it; file systems that cannot
     * do so are fine.
     */
    if (size > 0 &&
        fallocate(in->fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)size) == -1) {
        if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG) {
            snprintf(err, errlen, "file of %" PRIu64 " bytes: %s", size,
                     strerror(errno));
            cache_in_free(in);
            return NULL;
        }
    }
    return in;
}

int
cache_in_write(struct cache_in *in, const void *buf, size_t len, char *err,
               size_t errlen)
{
    const uint8_t *p = buf;
    size_t done = 0;
    ssize_t n;

    if (in->failed || in->fd == -1) {
        snprintf(err, errlen, "transfer already failed");
        return -1;
    }
    if (len > in->size - in->received) {
        snprintf(err, errlen, "more data than announced (%" PRIu64 " bytes)",
                 in->size);
        goto error;
    }
    while (done < len) {
        n = write(in->fd, p + done, len - done);
        if (n == -1 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, errlen, "cache write: %s",
                     strerror(n == 0 ? EIO : errno));
            goto error;
        }
        done += (size_t)n;
    }
    sec_hasher_update(&in->hasher, buf, len);
    in->received += len;
    return 0;

error:
    /* The space goes back now, not when the owner gets round to abort. */
    cache_in_discard(in);
    in->failed = 1;
    return -1;
}

uint64_t
cache_in_received(const struct cache_in *in)
{
    return in->received;
}

int
cache_in_finish(struct cache_in *in, char *err, size_t errlen)
{
    uint8_t got[SEC_HASH_LEN];
    struct cache *c = in->cache;
    struct stat st;
    uint64_t old = 0;
    int fd, rc = -1;

    if (c == NULL || in->failed || in->fd == -1) {
        snprintf(err, errlen, "transfer already failed");
        goto error;
    }
    if (in->received != in->size) {
        snprintf(err, errlen,
                 "incomplete: %" PRIu64 " of %" PRIu64 " bytes received",
                 in->received, in->size);
        goto error;
    }
    sec_hasher_final(&in->hasher, got);
    if (!sec_equal(got, in->hash, SEC_HASH_LEN)) {
        snprintf(err, errlen, "content does not match its hash");
        goto error;
    }
    fd = in->fd;
    in->fd = -1;
    if (close(fd) == -1) {
        snprintf(err, errlen, "cache write: %s", strerror(errno));
        goto error;
    }
    /* Another transfer of the same content may have finished first. */
    if (fstatat(c->dfd, in->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode))
        old = (uint64_t)st.st_size;
    if (renameat(c->dfd, in->tmp, c->dfd, in->name) == -1) {
        snprintf(err, errlen, "cache %s: %s", c->dir, strerror(errno));
        goto error;
    }
    in->tmp_live = 0;
    c->bytes -= old < c->bytes ? old : c->bytes;
    c->bytes += in->size;
    log_debug("cache: added %s (%" PRIu64 " bytes)", in->name, in->size);
    cache_evict(c, in->name);
    rc = 0;

error:
    cache_in_free(in);
    return rc;
}

void
cache_in_abort(struct cache_in *in)
{
    if (in != NULL)
        cache_in_free(in);
}

/* Copy the rest of in to out with read and write, one block at a time. */
static int
cache_copy_rw(int in, int out, uint64_t *copied, char *err, size_t errlen)
{
    uint8_t *buf;
    ssize_t n, w, off;

    buf = xmalloc(CACHE_BLOCK);
    for (;;) {
        n = read(in, buf, CACHE_BLOCK);
        if (n == -1 && errno == EINTR)
            continue;
        if (n == -1) {
            snprintf(err, errlen, "cache read: %s", strerror(errno));
            goto error;
        }
        if (n == 0)
            break;
        for (off = 0; off < n; off += w) {
            w = write(out, buf + off, (size_t)(n - off));
            if (w == -1 && errno == EINTR) {
                w = 0;
                continue;
            }
            if (w <= 0) {
                snprintf(err, errlen, "%s", strerror(w == 0 ? EIO : errno));
                goto error;
            }
        }
        *copied += (uint64_t)n;
    }
    free(buf);
    return 0;

error:
    free(buf);
    return -1;
}

/*
 * Copy size bytes from in to out in the kernel, or by hand where the
 * kernel cannot (other file systems, old kernels).
 */
static int
cache_copy_fd(int in, int out, uint64_t size, uint64_t *copied, char *err,
              size_t errlen)
{
    ssize_t n;

    *copied = 0;
    while (*copied < size) {
        n = copy_file_range(in, NULL, out, NULL, CACHE_COPY_MAX, 0);
        if (n > 0) {
            *copied += (uint64_t)n;
            continue;
        }
        if (n == -1 && errno == EINTR)
            continue;
        /* Both offsets have moved on: read and write carry on from there. */
        if (n == 0 || errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
            errno == EOPNOTSUPP)
            return cache_copy_rw(in, out, copied, err, errlen);
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    return 0;
}

int
cache_copy_out(struct cache *c, const uint8_t hash[SEC_HASH_LEN],
               const char *path, int mode, char *err, size_t errlen)
{
    char name[CACHE_NAME_LEN + 1];
    char why[128];
    struct stat st;
    uint64_t copied;
    int in, out = -1, created = 0;

    /* Permission bits only: no set-id or sticky bits from the network. */
    if (mode < 0 || mode > 0777) {
        snprintf(err, errlen, "%s: invalid mode %o", path, (unsigned)mode);
        return -1;
    }
    sec_hex(name, hash, SEC_HASH_LEN);
    in = openat(c->dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in == -1) {
        if (errno == ENOENT)
            snprintf(err, errlen, "%s is not in the cache", name);
        else
            snprintf(err, errlen, "cache %s/%s: %s", c->dir, name,
                     strerror(errno));
        return -1;
    }
    if (fstat(in, &st) == -1 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "cache %s/%s: not a regular file", c->dir, name);
        goto error;
    }
    out =
        open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    if (out == -1) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto error;
    }
    created = 1;
    /* Exactly mode, whatever the umask. */
    if (fchmod(out, (mode_t)mode) == -1) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto error;
    }
    if (cache_copy_fd(in, out, (uint64_t)st.st_size, &copied, why,
                      sizeof why) == -1) {
        snprintf(err, errlen, "%s: %s", path, why);
        goto error;
    }
    if (copied != (uint64_t)st.st_size) {
        snprintf(err, errlen, "%s: cached file changed while copying", path);
        goto error;
    }
    if (close(out) == -1) {
        out = -1;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto error;
    }
    close(in);
    cache_touch(c, name);
    return 0;

error:
    if (out != -1)
        close(out);
    if (created && unlink(path) == -1)
        log_warn("cache: remove %s", path);
    close(in);
    return -1;
}

uint64_t
cache_bytes(const struct cache *c)
{
    return c->bytes;
}
