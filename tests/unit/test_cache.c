/*
 * The staging cache: content in by chunks and out by copy, refused when it
 * does not match its announced hash and size, found again after a
 * restart (without the partial files of the earlier run), and evicted
 * least recently used first but never while recently used.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "peerd.h"
#include "sec.h"
#include "test.h"

#define BIG (20 * 1024 * 1024 + 12345)

/* A scratch directory for one case: base, and the cache inside it. */
struct scratch {
    char base[64];
    char dir[96];
};

static void
setup(struct scratch *s)
{
    static int done;

    if (!done) {
        if (sec_init() == -1)
            test_fail(__FILE__, __LINE__, "sec_init failed");
        done = 1;
    }
    snprintf(s->base, sizeof s->base, "/tmp/test_cache.XXXXXX");
    if (mkdtemp(s->base) == NULL)
        test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
    snprintf(s->dir, sizeof s->dir, "%s/cache", s->base);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* Remove a scratch directory and everything in it. */
static void
teardown(struct scratch *s)
{
    nftw(s->base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Path of a file in the scratch directory; static buffer. */
static const char *
in_base(const struct scratch *s, const char *name)
{
    static char path[160];

    snprintf(path, sizeof path, "%s/%s", s->base, name);
    return path;
}

/* Path of the cached file for hash; static buffer. */
static const char *
cached_path(const struct scratch *s, const uint8_t hash[SEC_HASH_LEN])
{
    static char path[512];
    char hex[2 * SEC_HASH_LEN + 1];

    snprintf(path, sizeof path, "%s/%s", s->dir,
             sec_hex(hex, hash, SEC_HASH_LEN));
    return path;
}

/* Present on disk (without touching it, unlike cache_has). */
static int
present(const struct scratch *s, const uint8_t hash[SEC_HASH_LEN])
{
    struct stat st;

    return stat(cached_path(s, hash), &st) == 0;
}

/* Number of temporary files in the cache directory. */
static int
count_tmp(const struct scratch *s)
{
    struct dirent *de;
    DIR *d;
    int n = 0;

    if ((d = opendir(s->dir)) == NULL)
        return -1;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, "tmp.", 4) == 0)
            n++;
    closedir(d);
    return n;
}

/* Set a file's times to secs seconds ago. */
static int
age(const char *path, long secs)
{
    struct timespec ts[2];

    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= secs;
    ts[1] = ts[0];
    return utimensat(AT_FDCWD, path, ts, 0);
}

/* The path of the one temporary file in the cache; static buffer. */
static const char *
tmp_path(const struct scratch *s)
{
    static char path[512];
    struct dirent *de;
    DIR *d;

    path[0] = '\0';
    if ((d = opendir(s->dir)) == NULL)
        return path;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, "tmp.", 4) == 0)
            snprintf(path, sizeof path, "%s/%s", s->dir, de->d_name);
    closedir(d);
    return path;
}

/* Read a whole file (test sizes only); caller frees; NULL on error. */
static uint8_t *
slurp(const char *path, size_t *len)
{
    struct stat st;
    uint8_t *buf;
    ssize_t n;
    size_t off = 0;
    int fd;

    if ((fd = open(path, O_RDONLY)) == -1)
        return NULL;
    if (fstat(fd, &st) == -1) {
        close(fd);
        return NULL;
    }
    buf = malloc((size_t)st.st_size + 1);
    while (buf != NULL && off < (size_t)st.st_size) {
        n = read(fd, buf + off, (size_t)st.st_size - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(fd);
    *len = off;
    return buf;
}

/* Announce data by its hash and send it whole: the result of finish. */
static int
put(struct cache *c, const void *data, size_t len, uint8_t hash[SEC_HASH_LEN])
{
    struct cache_in *in;
    char err[256];

    sec_hash(hash, data, len);
    if ((in = cache_in_begin(c, hash, len, err, sizeof err)) == NULL)
        return -1;
    if (len > 0 && cache_in_write(in, data, len, err, sizeof err) == -1) {
        cache_in_abort(in);
        return -1;
    }
    return cache_in_finish(in, err, sizeof err);
}

/* A filler of len bytes, different for each seed. */
static void
fill(uint8_t *buf, size_t len, int seed)
{
    size_t i;

    for (i = 0; i < len; i++)
        buf[i] = (uint8_t)(seed * 131 + i * 7);
}

static void
t_small_roundtrip(void)
{
    static const char text[] = "a small program\n";
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    uint8_t hash[SEC_HASH_LEN], *got;
    struct stat st;
    char err[256];
    size_t len;
    mode_t old;

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    CHECK(stat(s.dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    sec_hash(hash, text, sizeof text);
    CHECK_EQ_INT(cache_has(c, hash, sizeof text), 0);
    in = cache_in_begin(c, hash, sizeof text, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(count_tmp(&s), 1);
    CHECK_EQ_INT(cache_in_write(in, text, 5, err, sizeof err), 0);
    CHECK_EQ_INT(cache_in_received(in), 5);
    CHECK_EQ_INT(cache_in_write(in, text + 5, sizeof text - 5, err, sizeof err),
                 0);
    CHECK_EQ_INT(cache_in_received(in), sizeof text);
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), 0);
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK_EQ_INT(cache_bytes(c), sizeof text);
    CHECK_EQ_INT(cache_has(c, hash, sizeof text), 1);
    CHECK_EQ_INT(cache_has(c, hash, sizeof text + 1), 0);
    CHECK_EQ_INT(cache_has(c, hash, sizeof text - 1), 0);
    /* Only peerd reads its cache. */
    CHECK(stat(cached_path(&s, hash), &st) == 0 && (st.st_mode & 0777) == 0600);

    /* The mode is exact, whatever the umask. */
    old = umask(077);
    CHECK_EQ_INT(
        cache_copy_out(c, hash, in_base(&s, "prog"), 0755, err, sizeof err), 0);
    umask(old);
    CHECK(stat(in_base(&s, "prog"), &st) == 0 && (st.st_mode & 07777) == 0755);
    got = slurp(in_base(&s, "prog"), &len);
    if (CHECK(got != NULL) && CHECK_EQ_INT(len, sizeof text))
        CHECK_MEM(got, text, sizeof text);
    free(got);
    CHECK_EQ_INT(
        cache_copy_out(c, hash, in_base(&s, "input"), 0640, err, sizeof err),
        0);
    CHECK(stat(in_base(&s, "input"), &st) == 0 && (st.st_mode & 07777) == 0640);
    /* Set-id bits do not come from the network. */
    CHECK_EQ_INT(
        cache_copy_out(c, hash, in_base(&s, "suid"), 04755, err, sizeof err),
        -1);
    CHECK(access(in_base(&s, "suid"), F_OK) == -1);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_large_roundtrip(void)
{
    struct scratch s;
    struct cache *c = NULL;
    struct cache_in *in;
    uint8_t hash[SEC_HASH_LEN], *data, *got = NULL;
    struct stat st;
    uint32_t r;
    size_t off, n, len;
    char err[256];
    int nwrites = 0;

    setup(&s);
    data = malloc(BIG);
    if (!CHECK(data != NULL))
        return;
    sec_random(data, BIG);
    sec_hash(hash, data, BIG);
    c = cache_open(s.dir, 64 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    in = cache_in_begin(c, hash, BIG, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    /* Chunks of random sizes, around those of the network's. */
    for (off = 0; off < BIG; off += n) {
        sec_random(&r, sizeof r);
        n = 1 + r % (120 * 1024);
        if (n > BIG - off)
            n = BIG - off;
        if (!CHECK_EQ_INT(cache_in_write(in, data + off, n, err, sizeof err),
                          0))
            break;
        nwrites++;
    }
    CHECK(nwrites > 100);
    CHECK_EQ_INT(cache_in_received(in), BIG);
    if (!CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), 0))
        fprintf(stderr, "finish: %s\n", err);
    CHECK_EQ_INT(cache_bytes(c), BIG);
    CHECK_EQ_INT(cache_has(c, hash, BIG), 1);
    CHECK_EQ_INT(
        cache_copy_out(c, hash, in_base(&s, "big"), 0600, err, sizeof err), 0);
    CHECK(stat(in_base(&s, "big"), &st) == 0 && (st.st_mode & 07777) == 0600);
    got = slurp(in_base(&s, "big"), &len);
    if (CHECK(got != NULL) && CHECK_EQ_INT(len, BIG))
        CHECK(memcmp(got, data, BIG) == 0);
out:
    free(got);
    free(data);
    cache_close(c);
    teardown(&s);
}

static void
t_hash_mismatch(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    uint8_t data[5000], hash[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(data, sizeof data, 1);
    sec_hash(hash, data, sizeof data);
    data[4321] ^= 0x01;
    in = cache_in_begin(c, hash, sizeof data, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, data, sizeof data, err, sizeof err), 0);
    err[0] = '\0';
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), -1);
    CHECK_CONTAINS(err, "does not match its hash");
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK(!present(&s, hash));
    CHECK_EQ_INT(cache_has(c, hash, sizeof data), 0);
    CHECK_EQ_INT(cache_bytes(c), 0);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_too_many_bytes(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    uint8_t data[11], hash[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(data, sizeof data, 2);
    sec_hash(hash, data, 10);
    in = cache_in_begin(c, hash, 10, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, data, 6, err, sizeof err), 0);
    err[0] = '\0';
    CHECK_EQ_INT(cache_in_write(in, data + 6, 5, err, sizeof err), -1);
    CHECK_CONTAINS(err, "more data than announced (10 bytes)");
    CHECK_EQ_INT(cache_in_received(in), 6);
    /* The file goes at once, and the transfer stays refused. */
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK_EQ_INT(cache_in_write(in, data + 6, 4, err, sizeof err), -1);
    cache_in_abort(in);
    CHECK_EQ_INT(cache_has(c, hash, 10), 0);
    CHECK_EQ_INT(cache_bytes(c), 0);

    /* One write larger than the whole announcement. */
    in = cache_in_begin(c, hash, 10, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, data, 11, err, sizeof err), -1);
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), -1);
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK(!present(&s, hash));
out:
    cache_close(c);
    teardown(&s);
}

static void
t_too_few_bytes(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    uint8_t data[10], hash[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(data, sizeof data, 3);
    sec_hash(hash, data, sizeof data);
    in = cache_in_begin(c, hash, sizeof data, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, data, 9, err, sizeof err), 0);
    err[0] = '\0';
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), -1);
    CHECK_CONTAINS(err, "9 of 10 bytes");
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK(!present(&s, hash));
    CHECK_EQ_INT(cache_bytes(c), 0);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_empty_file(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    uint8_t hash[SEC_HASH_LEN], *got;
    struct stat st;
    char err[256];
    size_t len = 99;

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    sec_hash(hash, "", 0);
    in = cache_in_begin(c, hash, 0, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, "", 0, err, sizeof err), 0);
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), 0);
    CHECK_EQ_INT(cache_has(c, hash, 0), 1);
    CHECK_EQ_INT(cache_has(c, hash, 1), 0);
    CHECK_EQ_INT(cache_bytes(c), 0);
    CHECK_EQ_INT(
        cache_copy_out(c, hash, in_base(&s, "empty"), 0644, err, sizeof err),
        0);
    CHECK(stat(in_base(&s, "empty"), &st) == 0 && st.st_size == 0 &&
          (st.st_mode & 07777) == 0644);
    got = slurp(in_base(&s, "empty"), &len);
    CHECK(got != NULL && len == 0);
    free(got);
    /* Not the empty file: a byte is more than announced. */
    in = cache_in_begin(c, hash, 0, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, "x", 1, err, sizeof err), -1);
    cache_in_abort(in);
    CHECK_EQ_INT(count_tmp(&s), 0);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_too_large(void)
{
    struct scratch s;
    struct cache *c;
    uint8_t hash[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    c = cache_open(s.dir, 1000, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    memset(hash, 0xab, sizeof hash);
    err[0] = '\0';
    CHECK(cache_in_begin(c, hash, 1001, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "larger than the cache");
    CHECK(cache_in_begin(c, hash, UINT64_MAX, err, sizeof err) == NULL);
    CHECK_EQ_INT(count_tmp(&s), 0);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_reopen(void)
{
    struct scratch s;
    struct cache *c;
    uint8_t a[3000], b[700], ha[SEC_HASH_LEN], hb[SEC_HASH_LEN];
    char err[256], path[200];
    FILE *f;

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(a, sizeof a, 4);
    fill(b, sizeof b, 5);
    CHECK_EQ_INT(put(c, a, sizeof a, ha), 0);
    CHECK_EQ_INT(put(c, b, sizeof b, hb), 0);
    cache_close(c);

    /* A crash left two partial files; someone left a note. */
    snprintf(path, sizeof path, "%s/tmp.0123456789abcdef", s.dir);
    if ((f = fopen(path, "w")) != NULL) {
        fputs("partial", f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/tmp.x", s.dir);
    if ((f = fopen(path, "w")) != NULL)
        fclose(f);
    snprintf(path, sizeof path, "%s/notes.txt", s.dir);
    if ((f = fopen(path, "w")) != NULL) {
        fputs("not a cached file, twenty bytes", f);
        fclose(f);
    }
    CHECK_EQ_INT(count_tmp(&s), 2);

    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK(access(path, F_OK) == 0);
    CHECK_EQ_INT(cache_bytes(c), sizeof a + sizeof b);
    CHECK_EQ_INT(cache_has(c, ha, sizeof a), 1);
    CHECK_EQ_INT(cache_has(c, hb, sizeof b), 1);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_evict_lru(void)
{
    struct scratch s;
    struct cache *c;
    uint8_t data[4][1000], h[4][SEC_HASH_LEN];
    struct stat st;
    struct timespec now;
    char err[256];
    int i;

    setup(&s);
    c = cache_open(s.dir, 3000, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    for (i = 0; i < 4; i++)
        fill(data[i], sizeof data[i], 10 + i);
    for (i = 0; i < 3; i++)
        CHECK_EQ_INT(put(c, data[i], sizeof data[i], h[i]), 0);
    CHECK_EQ_INT(cache_bytes(c), 3000);
    /* Last used: 0 an hour ago, 1 two hours ago, 2 three hours ago. */
    CHECK_EQ_INT(age(cached_path(&s, h[0]), 3600), 0);
    CHECK_EQ_INT(age(cached_path(&s, h[1]), 7200), 0);
    CHECK_EQ_INT(age(cached_path(&s, h[2]), 10800), 0);
    /* Asking for 2 is a use: now 1 is the least recently used. */
    CHECK_EQ_INT(cache_has(c, h[2], sizeof data[2]), 1);
    clock_gettime(CLOCK_REALTIME, &now);
    CHECK(stat(cached_path(&s, h[2]), &st) == 0 &&
          st.st_mtim.tv_sec >= now.tv_sec - 5);
    CHECK(age(cached_path(&s, h[2]), 1800) == 0);

    CHECK_EQ_INT(put(c, data[3], sizeof data[3], h[3]), 0);
    CHECK_EQ_INT(cache_bytes(c), 3000);
    CHECK(present(&s, h[0]));
    CHECK(!present(&s, h[1]));
    CHECK(present(&s, h[2]));
    CHECK(present(&s, h[3]));
    CHECK_EQ_INT(cache_has(c, h[1], sizeof data[1]), 0);

    /* Copying out is a use too: 0 outlives 2. */
    CHECK_EQ_INT(
        cache_copy_out(c, h[0], in_base(&s, "f0"), 0644, err, sizeof err), 0);
    CHECK_EQ_INT(put(c, data[1], sizeof data[1], h[1]), 0);
    CHECK(present(&s, h[0]));
    CHECK(present(&s, h[1]));
    CHECK(!present(&s, h[2]));
    CHECK(present(&s, h[3]));
    CHECK_EQ_INT(cache_bytes(c), 3000);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_evict_spares_recent(void)
{
    struct scratch s;
    struct cache *c;
    uint8_t data[4][1000], h[4][SEC_HASH_LEN];
    char err[256];
    int i;

    setup(&s);
    c = cache_open(s.dir, 2000, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    for (i = 0; i < 4; i++)
        fill(data[i], sizeof data[i], 20 + i);
    /* All used within the minute: the bound gives way. */
    for (i = 0; i < 3; i++)
        CHECK_EQ_INT(put(c, data[i], sizeof data[i], h[i]), 0);
    CHECK_EQ_INT(cache_bytes(c), 3000);
    for (i = 0; i < 3; i++)
        CHECK(present(&s, h[i]));
    /* 0 used just over a minute ago, 1 just under: only 0 may go. */
    CHECK_EQ_INT(age(cached_path(&s, h[0]), 65), 0);
    CHECK_EQ_INT(age(cached_path(&s, h[1]), 50), 0);
    CHECK_EQ_INT(put(c, data[3], sizeof data[3], h[3]), 0);
    CHECK(!present(&s, h[0]));
    for (i = 1; i < 4; i++)
        CHECK(present(&s, h[i]));
    CHECK_EQ_INT(cache_bytes(c), 3000);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_evict_spares_new(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    uint8_t a[1000], b[1000], ha[SEC_HASH_LEN], hb[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    c = cache_open(s.dir, 1500, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(a, sizeof a, 30);
    fill(b, sizeof b, 31);
    CHECK_EQ_INT(put(c, a, sizeof a, ha), 0);
    CHECK_EQ_INT(age(cached_path(&s, ha), 3600), 0);
    sec_hash(hb, b, sizeof b);
    in = cache_in_begin(c, hb, sizeof b, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, b, sizeof b, err, sizeof err), 0);
    /* The new file looks older than anything: it stays all the same. */
    CHECK_EQ_INT(age(tmp_path(&s), 86400), 0);
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), 0);
    CHECK(present(&s, hb));
    CHECK(!present(&s, ha));
    CHECK_EQ_INT(cache_bytes(c), 1000);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_same_content_twice(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in1, *in2;
    uint8_t data[2000], hash[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(data, sizeof data, 40);
    sec_hash(hash, data, sizeof data);
    in1 = cache_in_begin(c, hash, sizeof data, err, sizeof err);
    in2 = cache_in_begin(c, hash, sizeof data, err, sizeof err);
    if (!CHECK(in1 != NULL && in2 != NULL)) {
        cache_in_abort(in1);
        cache_in_abort(in2);
        goto out;
    }
    CHECK_EQ_INT(count_tmp(&s), 2);
    CHECK_EQ_INT(cache_in_write(in1, data, sizeof data, err, sizeof err), 0);
    CHECK_EQ_INT(cache_in_write(in2, data, sizeof data, err, sizeof err), 0);
    CHECK_EQ_INT(cache_in_finish(in1, err, sizeof err), 0);
    CHECK_EQ_INT(cache_in_finish(in2, err, sizeof err), 0);
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK_EQ_INT(cache_bytes(c), sizeof data);
    CHECK_EQ_INT(cache_has(c, hash, sizeof data), 1);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_copy_out_no_clobber(void)
{
    static const char keep[] = "precious";
    struct scratch s;
    struct cache *c;
    uint8_t data[100], hash[SEC_HASH_LEN], *got;
    char err[256];
    size_t len;
    FILE *f;

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(data, sizeof data, 50);
    CHECK_EQ_INT(put(c, data, sizeof data, hash), 0);
    if ((f = fopen(in_base(&s, "taken"), "w")) != NULL) {
        fputs(keep, f);
        fclose(f);
    }
    err[0] = '\0';
    CHECK_EQ_INT(
        cache_copy_out(c, hash, in_base(&s, "taken"), 0644, err, sizeof err),
        -1);
    CHECK_CONTAINS(err, strerror(EEXIST));
    got = slurp(in_base(&s, "taken"), &len);
    if (CHECK(got != NULL) && CHECK_EQ_INT(len, strlen(keep)))
        CHECK_MEM(got, keep, len);
    free(got);

    /* Content we do not have: an error, and no file left behind. */
    hash[0] ^= 0xff;
    err[0] = '\0';
    CHECK_EQ_INT(
        cache_copy_out(c, hash, in_base(&s, "missing"), 0644, err, sizeof err),
        -1);
    CHECK_CONTAINS(err, "not in the cache");
    CHECK(access(in_base(&s, "missing"), F_OK) == -1);
out:
    cache_close(c);
    teardown(&s);
}

static void
t_copy_out_other_fs(void)
{
    struct scratch s;
    struct cache *c;
    uint8_t data[300000], hash[SEC_HASH_LEN], *got;
    char err[256], other[64], path[96];
    size_t len;

    /* /dev/shm is often another file system: the read/write path. */
    snprintf(other, sizeof other, "/dev/shm/test_cache.XXXXXX");
    if (mkdtemp(other) == NULL)
        return;
    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(data, sizeof data, 60);
    CHECK_EQ_INT(put(c, data, sizeof data, hash), 0);
    snprintf(path, sizeof path, "%s/f", other);
    CHECK_EQ_INT(cache_copy_out(c, hash, path, 0600, err, sizeof err), 0);
    got = slurp(path, &len);
    if (CHECK(got != NULL) && CHECK_EQ_INT(len, sizeof data))
        CHECK_MEM(got, data, sizeof data);
    free(got);
    unlink(path);
out:
    rmdir(other);
    cache_close(c);
    teardown(&s);
}

static void
t_evict_spares_transfers(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    uint8_t data[3][1000], h[3][SEC_HASH_LEN];
    char err[256];
    int i;

    setup(&s);
    c = cache_open(s.dir, 1500, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    for (i = 0; i < 3; i++)
        fill(data[i], sizeof data[i], 80 + i);
    CHECK_EQ_INT(put(c, data[0], sizeof data[0], h[0]), 0);
    CHECK_EQ_INT(age(cached_path(&s, h[0]), 3600), 0);
    /* A transfer half done while another one's finish evicts.  (Both
     * transfers together stay within the bound: 500 + 1000 <= 1500.) */
    sec_hash(h[1], data[1], 500);
    in = cache_in_begin(c, h[1], 500, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, data[1], 250, err, sizeof err), 0);
    CHECK_EQ_INT(put(c, data[2], sizeof data[2], h[2]), 0);
    CHECK(!present(&s, h[0]));
    CHECK_EQ_INT(count_tmp(&s), 1);
    CHECK_EQ_INT(cache_in_write(in, data[1] + 250, 250, err, sizeof err), 0);
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), 0);
    CHECK(present(&s, h[1]));
    CHECK(present(&s, h[2]));
    CHECK_EQ_INT(cache_bytes(c), 1500);
out:
    cache_close(c);
    teardown(&s);
}

/* Transfers in progress reserve their announced size: together they
 * never exceed the bound, however many are announced (a peer offered 64
 * files of the bound's size must not reserve 64 times the bound). */
static void
t_inflight_bounded(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *a, *b;
    uint8_t h1[SEC_HASH_LEN], h2[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    c = cache_open(s.dir, 1000, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    memset(h1, 1, sizeof h1);
    memset(h2, 2, sizeof h2);
    a = cache_in_begin(c, h1, 800, err, sizeof err);
    CHECK(a != NULL);
    b = cache_in_begin(c, h2, 300, err, sizeof err);
    CHECK(b == NULL);
    CHECK_CONTAINS(err, "busy");
    cache_in_abort(a);
    b = cache_in_begin(c, h2, 300, err, sizeof err);
    CHECK(b != NULL);
    cache_in_abort(b);
out:
    cache_close(c);
    teardown(&s);
}

/* Limit the size of files this process writes (0: no limit). */
static void
limit_file_size(rlim_t max)
{
    struct rlimit rl;

    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = max ? max : rl.rlim_max;
    setrlimit(RLIMIT_FSIZE, &rl);
}

static void
t_io_errors(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    static uint8_t data[300000];
    uint8_t hash[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    signal(SIGXFSZ, SIG_IGN);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(data, sizeof data, 90);
    CHECK_EQ_INT(put(c, data, sizeof data, hash), 0);

    /* A file that cannot grow: the copy fails and leaves nothing. */
    limit_file_size(100000);
    err[0] = '\0';
    CHECK_EQ_INT(
        cache_copy_out(c, hash, in_base(&s, "out"), 0644, err, sizeof err), -1);
    CHECK_CONTAINS(err, strerror(EFBIG));
    CHECK(access(in_base(&s, "out"), F_OK) == -1);

    /* Nor can the temporary file: the write fails and it goes. */
    limit_file_size(0);
    in = cache_in_begin(c, hash, sizeof data, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    limit_file_size(100000);
    err[0] = '\0';
    CHECK_EQ_INT(cache_in_write(in, data, sizeof data, err, sizeof err), -1);
    CHECK_CONTAINS(err, strerror(EFBIG));
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), -1);
out:
    limit_file_size(0);
    signal(SIGXFSZ, SIG_DFL);
    cache_close(c);
    teardown(&s);
}

static void
t_abort(void)
{
    struct scratch s;
    struct cache *c;
    struct cache_in *in;
    uint8_t data[500], hash[SEC_HASH_LEN];
    char err[256];

    setup(&s);
    c = cache_open(s.dir, 1 << 20, err, sizeof err);
    if (!CHECK(c != NULL))
        goto out;
    fill(data, sizeof data, 70);
    sec_hash(hash, data, sizeof data);
    in = cache_in_begin(c, hash, sizeof data, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, data, 200, err, sizeof err), 0);
    CHECK_EQ_INT(count_tmp(&s), 1);
    cache_in_abort(in);
    CHECK_EQ_INT(count_tmp(&s), 0);
    cache_in_abort(NULL);
    CHECK_EQ_INT(cache_has(c, hash, sizeof data), 0);
    CHECK_EQ_INT(cache_bytes(c), 0);

    /* Closing the cache ends transfers still open; they must be freed. */
    in = cache_in_begin(c, hash, sizeof data, err, sizeof err);
    if (!CHECK(in != NULL))
        goto out;
    CHECK_EQ_INT(cache_in_write(in, data, sizeof data, err, sizeof err), 0);
    cache_close(c);
    c = NULL;
    CHECK_EQ_INT(count_tmp(&s), 0);
    CHECK_EQ_INT(cache_in_write(in, data, 1, err, sizeof err), -1);
    CHECK_EQ_INT(cache_in_finish(in, err, sizeof err), -1);
    CHECK(!present(&s, hash));
out:
    cache_close(c);
    teardown(&s);
}

static const struct test_case cases[] = {
    {"transfers in progress stay within the bound", t_inflight_bounded},
    {"small_roundtrip", t_small_roundtrip},
    {"large_roundtrip", t_large_roundtrip},
    {"hash_mismatch", t_hash_mismatch},
    {"too_many_bytes", t_too_many_bytes},
    {"too_few_bytes", t_too_few_bytes},
    {"empty_file", t_empty_file},
    {"too_large", t_too_large},
    {"reopen", t_reopen},
    {"evict_lru", t_evict_lru},
    {"evict_spares_recent", t_evict_spares_recent},
    {"evict_spares_new", t_evict_spares_new},
    {"same_content_twice", t_same_content_twice},
    {"copy_out_no_clobber", t_copy_out_no_clobber},
    {"copy_out_other_fs", t_copy_out_other_fs},
    {"evict_spares_transfers", t_evict_spares_transfers},
    {"io_errors", t_io_errors},
    {"abort", t_abort},
};

TEST_MAIN(cases)
