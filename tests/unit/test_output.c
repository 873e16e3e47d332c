/*
 * The job's output, once per rank: lines split across chunks, ranks never
 * mixing half lines, tags, stdout and stderr apart, backups hidden while
 * the master lives, failover continuing byte for byte where the master
 * stopped (checked over every pair of cut points), backups behind or far
 * ahead (kept on disk by the spool), the spool's quota asking for the
 * leading replica to be held and released, a spool that overflows or
 * cannot be made said on stderr and counted, the spool's ring itself,
 * dead replicas ignored, the last unterminated line, long lines, and a
 * slow non-blocking reader.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpjrun.h"
#include "test.h"

/* Output captured in two temporary files. */
struct cap {
    FILE *out, *err;
    char *text; /* last read, NUL-terminated */
    size_t len;
};

static void
cap_open(struct cap *c)
{
    memset(c, 0, sizeof *c);
    c->out = tmpfile();
    c->err = tmpfile();
}

/* Everything written to one file so far. */
static const char *
cap_read(struct cap *c, FILE *f)
{
    long size;
    int fd = fileno(f);
    ssize_t n;

    free(c->text);
    size = lseek(fd, 0, SEEK_END);
    c->text = calloc(1, (size_t)size + 1);
    c->len = 0;
    lseek(fd, 0, SEEK_SET);
    while (c->len < (size_t)size &&
           (n = read(fd, c->text + c->len, (size_t)size - c->len)) > 0)
        c->len += (size_t)n;
    lseek(fd, 0, SEEK_END);
    return c->text;
}

static const char *
cap_out(struct cap *c)
{
    return cap_read(c, c->out);
}

static const char *
cap_err(struct cap *c)
{
    return cap_read(c, c->err);
}

static void
cap_close(struct cap *c)
{
    fclose(c->out);
    fclose(c->err);
    free(c->text);
}

static struct output *
out_new(struct cap *c, int nranks, int nreplicas, int tag)
{
    cap_open(c);
    return output_new(nranks, nreplicas, tag, fileno(c->out), fileno(c->err));
}

/* A string to a replica's stdout. */
static void
put(struct output *o, int rank, int replica, const char *s)
{
    output_data(o, rank, replica, 1, s, strlen(s));
}

static void
t_r1_split_lines(void)
{
    struct cap c;
    struct output *o = out_new(&c, 1, 1, 0);

    put(o, 0, 0, "hel");
    CHECK_EQ_STR(cap_out(&c), "");
    put(o, 0, 0, "lo\nwor");
    CHECK_EQ_STR(cap_out(&c), "hello\n");
    put(o, 0, 0, "ld\n\n");
    CHECK_EQ_STR(cap_out(&c), "hello\nworld\n\n");
    put(o, 0, 0, "a\nb\nc");
    CHECK_EQ_STR(cap_out(&c), "hello\nworld\n\na\nb\n");
    output_rank_done(o, 0);
    CHECK_EQ_STR(cap_out(&c), "hello\nworld\n\na\nb\nc");
    CHECK_EQ_STR(cap_err(&c), "");
    output_free(o);
    cap_close(&c);
}

static void
t_ranks_never_mix_half_lines(void)
{
    struct cap c;
    struct output *o = out_new(&c, 3, 1, 0);

    put(o, 0, 0, "aaa");
    put(o, 1, 0, "bb");
    put(o, 2, 0, "c\ncc");
    put(o, 1, 0, "b\nB");
    put(o, 0, 0, "a\n");
    put(o, 2, 0, "c\n");
    put(o, 1, 0, "B\n");
    CHECK_EQ_STR(cap_out(&c), "c\nbbb\naaaa\nccc\nBB\n");
    output_free(o);
    cap_close(&c);
}

static void
t_tag_prefix(void)
{
    struct cap c;
    struct output *o = out_new(&c, 12, 1, 1);

    put(o, 3, 0, "hel");
    put(o, 11, 0, "x\ny\n");
    put(o, 3, 0, "lo\nworld\npart");
    CHECK_EQ_STR(cap_out(&c), "[11] x\n[11] y\n[3] hello\n[3] world\n");
    output_data(o, 3, 0, 2, "oops\n", 5);
    CHECK_EQ_STR(cap_err(&c), "[3] oops\n");
    put(o, 3, 0, "ial\n");
    CHECK_EQ_STR(cap_out(&c),
                 "[11] x\n[11] y\n[3] hello\n[3] world\n[3] partial\n");
    output_free(o);
    cap_close(&c);
}

static void
t_stderr_separate(void)
{
    struct cap c;
    struct output *o = out_new(&c, 1, 1, 0);

    output_data(o, 0, 0, 1, "out 1\nout", 9);
    output_data(o, 0, 0, 2, "err 1\nerr", 9);
    output_data(o, 0, 0, 2, " 2\n", 3);
    CHECK_EQ_STR(cap_out(&c), "out 1\n");
    CHECK_EQ_STR(cap_err(&c), "err 1\nerr 2\n");
    output_rank_done(o, 0);
    CHECK_EQ_STR(cap_out(&c), "out 1\nout");
    CHECK_EQ_STR(cap_err(&c), "err 1\nerr 2\n");
    output_free(o);
    cap_close(&c);
}

static void
t_backup_hidden(void)
{
    struct cap c;
    struct output *o = out_new(&c, 1, 2, 0);

    put(o, 0, 1, "x\ny\n");
    output_data(o, 0, 1, 2, "e\n", 2);
    CHECK_EQ_STR(cap_out(&c), "");
    CHECK_EQ_STR(cap_err(&c), "");
    put(o, 0, 0, "x\n");
    CHECK_EQ_STR(cap_out(&c), "x\n");
    put(o, 0, 0, "y\nz\n");
    put(o, 0, 1, "z\n");
    CHECK_EQ_STR(cap_out(&c), "x\ny\nz\n");
    output_rank_done(o, 0);
    CHECK_EQ_STR(cap_out(&c), "x\ny\nz\n");
    CHECK_EQ_STR(cap_err(&c), "");
    output_free(o);
    cap_close(&c);
}

static const char failover_text[] =
    "line one\nsecond\n\nthird is longer\nx\nend";

/* The next chunk length, 1 to 4 bytes. */
static size_t
chunk(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return 1 + (*seed >> 16) % 4;
}

/* Feed s[from..to) to a replica in small chunks. */
static void
feed(struct output *o, int replica, int stream, const char *s, size_t from,
     size_t to, unsigned *seed)
{
    size_t n;

    while (from < to) {
        n = chunk(seed);
        if (n > to - from)
            n = to - from;
        output_data(o, 0, replica, stream, s + from, n);
        from += n;
    }
}

/* Feed replica 0 up to m and replica 1 up to b, chunks interleaved. */
static void
feed_both(struct output *o, int stream, const char *s, size_t m, size_t b,
          unsigned *seed)
{
    size_t pos[2] = {0, 0}, to[2], n;
    int who;

    to[0] = m;
    to[1] = b;
    while (pos[0] < to[0] || pos[1] < to[1]) {
        who = pos[0] == to[0]   ? 1
              : pos[1] == to[1] ? 0
                                : (int)(chunk(seed) & 1);
        n = chunk(seed);
        if (n > to[who] - pos[who])
            n = to[who] - pos[who];
        output_data(o, 0, who, stream, s + pos[who], n);
        pos[who] += n;
    }
}

static void
t_failover_every_cut(void)
{
    const size_t len = sizeof failover_text - 1;
    unsigned seed = 7;
    size_t m, b;
    int tag, stream, bad = 0;

    /* The master reaches byte m, the backup byte b, the master dies, the
     * backup finishes: always the failure-free output. */
    for (tag = 0; tag < 2; tag++)
        for (m = 0; m <= len; m++)
            for (b = 0; b <= len; b++) {
                struct cap c, ref;
                struct output *o = out_new(&c, 1, 2, tag);
                struct output *r = out_new(&ref, 1, 1, tag);

                for (stream = 1; stream <= 2; stream++) {
                    feed(r, 0, stream, failover_text, 0, len, &seed);
                    feed_both(o, stream, failover_text, m, b, &seed);
                }
                output_replica_dead(o, 0, 0);
                for (stream = 1; stream <= 2; stream++)
                    feed(o, 1, stream, failover_text, b, len, &seed);
                output_rank_done(o, 0);
                output_rank_done(r, 0);
                cap_out(&ref);
                cap_out(&c);
                if (strcmp(c.text, ref.text) != 0 ||
                    strcmp(cap_err(&c), cap_err(&ref)) != 0) {
                    if (bad++ < 3) {
                        fprintf(stderr, "  tag=%d m=%zu b=%zu\n", tag, m, b);
                        CHECK_EQ_STR(c.text, ref.text);
                    }
                }
                output_free(o);
                output_free(r);
                cap_close(&c);
                cap_close(&ref);
            }
    CHECK_EQ_INT(bad, 0);
}

static void
t_master_dies_mid_line(void)
{
    struct cap c;
    struct output *o = out_new(&c, 1, 3, 0);

    put(o, 0, 0, "alpha\nbeta\ngam");
    put(o, 0, 1, "alpha\nbeta\ngamma\ndel");
    put(o, 0, 2, "alpha\n");
    CHECK_EQ_STR(cap_out(&c), "alpha\nbeta\n");
    output_replica_dead(o, 0, 0);
    /* The new master's complete line shows at once, its partial waits. */
    CHECK_EQ_STR(cap_out(&c), "alpha\nbeta\ngamma\n");
    put(o, 0, 1, "ta\nepsi");
    CHECK_EQ_STR(cap_out(&c), "alpha\nbeta\ngamma\ndelta\n");
    put(o, 0, 2, "beta\ngamma\ndelta\nepsilon\nzeta\n");
    output_replica_dead(o, 0, 1);
    CHECK_EQ_STR(cap_out(&c), "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\n");
    output_free(o);
    cap_close(&c);
}

static void
t_backup_behind(void)
{
    struct cap c;
    struct output *o = out_new(&c, 1, 2, 0);

    put(o, 0, 0, "a\nb\nc\n");
    put(o, 0, 1, "a\n");
    output_replica_dead(o, 0, 0);
    CHECK_EQ_STR(cap_out(&c), "a\nb\nc\n");
    put(o, 0, 1, "b\n");
    put(o, 0, 1, "c");
    CHECK_EQ_STR(cap_out(&c), "a\nb\nc\n");
    put(o, 0, 1, "\nd");
    put(o, 0, 1, "\n");
    CHECK_EQ_STR(cap_out(&c), "a\nb\nc\nd\n");
    output_free(o);
    cap_close(&c);
}

static void
t_dead_replica_ignored(void)
{
    struct cap c;
    struct output *o = out_new(&c, 1, 3, 0);

    put(o, 0, 0, "a\n");
    output_replica_dead(o, 0, 1);
    put(o, 0, 1, "a\nGARBAGE\n");
    put(o, 0, 2, "a\nb\n");
    output_replica_dead(o, 0, 0);
    put(o, 0, 0, "ZOMBIE\n");
    output_replica_dead(o, 0, 0); /* twice is harmless */
    put(o, 0, 2, "c\n");
    CHECK_EQ_STR(cap_out(&c), "a\nb\nc\n");
    output_free(o);
    cap_close(&c);
}

static void
t_rank_done_flushes(void)
{
    struct cap c;
    struct output *o = out_new(&c, 2, 1, 0);

    output_data(o, 0, 0, 1, "no newline", 10);
    output_data(o, 0, 0, 2, "err tail", 8);
    CHECK_EQ_STR(cap_out(&c), "");
    output_rank_done(o, 0);
    CHECK_EQ_STR(cap_out(&c), "no newline");
    CHECK_EQ_STR(cap_err(&c), "err tail");
    output_rank_done(o, 0);
    CHECK_EQ_STR(cap_out(&c), "no newline");
    output_free(o);
    cap_close(&c);

    /* Tagged, the flushed line gets its tag and ends its display line. */
    o = out_new(&c, 2, 1, 1);
    output_data(o, 1, 0, 1, "done\nlast", 9);
    output_data(o, 1, 0, 2, "warn", 4);
    output_rank_done(o, 1);
    CHECK_EQ_STR(cap_out(&c), "[1] done\n[1] last\n");
    CHECK_EQ_STR(cap_err(&c), "[1] warn\n");
    output_free(o);
    cap_close(&c);
}

static void
t_long_line(void)
{
    const size_t len = 200 * 1024;
    char *big = malloc(len + 1);
    struct cap c;
    struct output *o = out_new(&c, 2, 2, 0);
    size_t i;

    for (i = 0; i < len; i++)
        big[i] = (char)('a' + i % 26);
    big[len] = '\n';
    put(o, 1, 0, "short\n");
    for (i = 0; i < 100 * 1024; i += 1000)
        output_data(o, 0, 0, 1, big + i, 1000);
    /* Shown in pieces before its newline: at least the first 64 KiB. */
    cap_out(&c);
    CHECK(c.len >= 6 + 64 * 1024 && c.len <= 6 + 100 * 1024);
    /* A backup continues the long line from the same byte. */
    output_data(o, 0, 1, 1, big, 150 * 1024);
    output_replica_dead(o, 0, 0);
    output_data(o, 0, 1, 1, big + 150 * 1024, len + 1 - 150 * 1024);
    cap_out(&c);
    if (CHECK_EQ_INT(c.len, 6 + len + 1)) {
        CHECK_MEM(c.text, "short\n", 6);
        CHECK_MEM(c.text + 6, big, len + 1);
    }
    output_free(o);
    cap_close(&c);

    /* Tagged, each piece is a tagged display line. */
    o = out_new(&c, 1, 1, 1);
    output_data(o, 0, 0, 1, big, 70 * 1024);
    cap_out(&c);
    CHECK_EQ_INT(c.len, 4 + 70 * 1024 + 1);
    CHECK_MEM(c.text, "[0] ", 4);
    output_free(o);
    cap_close(&c);
    free(big);
}

/* Lines of 64 bytes, digits then a newline. */
static char *
lines(size_t len)
{
    char *data = malloc(len);
    size_t i;

    for (i = 0; i < len; i++)
        data[i] = i % 64 == 63 ? '\n' : (char)('0' + i % 10);
    return data;
}

/* Feed a replica len bytes in chunks as the peer sends them. */
static void
feed_mb(struct output *o, int rank, int replica, const char *data, size_t len)
{
    size_t i;

    for (i = 0; i < len; i += 60 * 1024)
        output_data(o, rank, replica, 1, data + i,
                    len - i < 60 * 1024 ? len - i : 60 * 1024);
}

static void
t_backup_far_ahead(void)
{
    const size_t len = 12 * 1024 * 1024;
    char *data = lines(len);
    struct cap c;
    struct output *o = out_new(&c, 1, 2, 0);

    /* Ahead while the master keeps up: exact. */
    output_data(o, 0, 1, 1, data, 3 * 1024 * 1024);
    output_data(o, 0, 0, 1, data, 3 * 1024 * 1024 - 10);
    output_data(o, 0, 1, 1, data + 3 * 1024 * 1024, 3 * 1024 * 1024);
    output_replica_dead(o, 0, 0);
    cap_out(&c);
    if (CHECK_EQ_INT(c.len, 6 * 1024 * 1024))
        CHECK_MEM(c.text, data, 6 * 1024 * 1024);
    output_free(o);
    cap_close(&c);

    /* Far ahead (the old in-memory limit was 4 MB): the spool keeps it
     * all, the switch continues byte for byte (issue 10). */
    o = out_new(&c, 1, 2, 0);
    output_data(o, 0, 0, 1, data, 64);
    feed_mb(o, 0, 1, data, len);
    output_replica_dead(o, 0, 0);
    cap_out(&c);
    if (CHECK_EQ_INT(c.len, len))
        CHECK_MEM(c.text, data, len);
    CHECK_EQ_STR(cap_err(&c), "");
    CHECK_EQ_INT(output_lost(o), 0);
    output_free(o);
    cap_close(&c);

    /* A third replica, behind, takes over from the second: nothing
     * repeated, nothing skipped. */
    o = out_new(&c, 1, 3, 0);
    output_data(o, 0, 0, 1, data, 64);
    feed_mb(o, 0, 1, data, len);
    feed_mb(o, 0, 2, data, len - 1024 * 1024);
    output_replica_dead(o, 0, 0);
    output_replica_dead(o, 0, 1);
    output_data(o, 0, 2, 1, data + len - 1024 * 1024, 1024 * 1024);
    output_data(o, 0, 2, 1, "tail\n", 5);
    cap_out(&c);
    if (CHECK_EQ_INT(c.len, len + 5)) {
        CHECK_MEM(c.text, data, len);
        CHECK_MEM(c.text + len, "tail\n", 5);
    }
    output_free(o);
    cap_close(&c);
    free(data);
}

/* What the hold hook was told. */
struct holds {
    int n, rank, replica, on;
};

static void
record_hold(void *arg, int rank, int replica, int on)
{
    struct holds *h = arg;

    h->n++;
    h->rank = rank;
    h->replica = replica;
    h->on = on;
}

static void
t_spool_quota_holds_the_leader(void)
{
    const size_t mb = 1024 * 1024, len = 8 * mb;
    char *data = lines(len);
    struct holds h = {0, -1, -1, -1};
    struct cap c;
    struct output *o = out_new(&c, 2, 2, 0);

    output_set_spool(o, mb, NULL, record_hold, &h);
    output_data(o, 0, 0, 1, data, 64);
    /* Below the quota ahead of the display: no hold. */
    output_data(o, 0, 1, 1, data, mb / 2);
    CHECK_EQ_INT(h.n, 0);
    /* The backup reaches the quota: its peer is asked to hold it, once;
     * the master is never held. */
    feed_mb(o, 0, 1, data + mb / 2, 3 * mb / 2);
    CHECK_EQ_INT(h.n, 1);
    CHECK_EQ_INT(h.rank, 0);
    CHECK_EQ_INT(h.replica, 1);
    CHECK_EQ_INT(h.on, 1);
    feed_mb(o, 0, 0, data + 64, mb);
    CHECK_EQ_INT(h.n, 1);
    /* The master catches up to within half the quota: read again. */
    output_data(o, 0, 0, 1, data + 64 + mb, mb / 2);
    CHECK_EQ_INT(h.n, 2);
    CHECK_EQ_INT(h.on, 0);
    /* Ahead again, held again; then the master dies: the backup takes
     * over, is read again, and the output is whole. */
    feed_mb(o, 0, 1, data + 2 * mb, 3 * mb);
    CHECK_EQ_INT(h.n, 3);
    CHECK_EQ_INT(h.on, 1);
    output_replica_dead(o, 0, 0);
    CHECK_EQ_INT(h.n, 4);
    CHECK_EQ_INT(h.on, 0);
    feed_mb(o, 0, 1, data + 5 * mb, len - 5 * mb);
    output_rank_done(o, 0);
    cap_out(&c);
    if (CHECK_EQ_INT(c.len, len))
        CHECK_MEM(c.text, data, len);
    CHECK_EQ_INT(output_lost(o), 0);
    /* A dead backup is never held: nothing to ask. */
    output_data(o, 1, 0, 1, "x\n", 2);
    feed_mb(o, 1, 1, data, 2 * mb);
    CHECK_EQ_INT(h.n, 5);
    CHECK_EQ_INT(h.rank, 1);
    output_replica_dead(o, 1, 1);
    CHECK_EQ_INT(h.n, 5);
    output_free(o);
    cap_close(&c);
    free(data);
}

static void
t_spool_overflow_is_said(void)
{
    const size_t mb = 1024 * 1024, len = 40 * mb;
    char *data = lines(len);
    struct cap c;
    struct output *o;
    const char *err;

    /* A peer that does not hold: the backup overflows its spool (quota
     * plus slack), and takes over before the display passes the gap.
     * The hole is said, naming the rank, and counted. */
    o = out_new(&c, 2, 2, 0);
    output_set_spool(o, mb, NULL, NULL, NULL);
    output_data(o, 1, 0, 1, data, 64);
    feed_mb(o, 1, 1, data, len);
    output_replica_dead(o, 1, 0);
    output_rank_done(o, 1);
    cap_out(&c);
    CHECK(c.len < len);
    CHECK_EQ_INT(output_lost(o), 1);
    err = cap_err(&c);
    CHECK(strstr(err, "rank 1: ") != NULL);
    CHECK(strstr(err, "lost") != NULL);
    output_free(o);
    cap_close(&c);

    /* The same overflow, but the master passes the gap before it dies:
     * nothing is missing and nothing is said. */
    o = out_new(&c, 1, 2, 0);
    output_set_spool(o, mb, NULL, NULL, NULL);
    output_data(o, 0, 0, 1, data, 64);
    feed_mb(o, 0, 1, data, len);
    feed_mb(o, 0, 0, data + 64, len - 2 * mb - 64);
    output_replica_dead(o, 0, 0);
    output_rank_done(o, 0);
    cap_out(&c);
    if (CHECK_EQ_INT(c.len, len))
        CHECK_MEM(c.text, data, len);
    CHECK_EQ_STR(cap_err(&c), "");
    CHECK_EQ_INT(output_lost(o), 0);
    output_free(o);
    cap_close(&c);

    /* A spool that cannot be made is a gap too, said when it matters. */
    o = out_new(&c, 1, 2, 0);
    output_set_spool(o, mb, "/nonexistent/dir", NULL, NULL);
    output_data(o, 0, 0, 1, data, 64);
    output_data(o, 0, 1, 1, data, 128);
    output_replica_dead(o, 0, 0);
    CHECK_EQ_INT(output_lost(o), 1);
    CHECK(strstr(cap_err(&c), "/nonexistent/dir") != NULL);
    output_free(o);
    cap_close(&c);
    free(data);
}

static void
t_spool_ring(void)
{
    char err[128], buf[64];
    struct spool *sp;
    int i;

    sp = spool_open(NULL, 2, 10, err, sizeof err);
    if (!CHECK(sp != NULL))
        return;
    CHECK_EQ_INT(spool_put(sp, 0, "abcdefgh", 8), 0);
    CHECK_EQ_INT(spool_put(sp, 1, "XY", 2), 0);
    CHECK_EQ_INT(spool_len(sp, 0), 8);
    /* Beyond the capacity: refused, nothing changed. */
    CHECK_EQ_INT(spool_put(sp, 0, "123", 3), -1);
    CHECK_EQ_INT(errno, ENOSPC);
    CHECK_EQ_INT(spool_len(sp, 0), 8);
    spool_drop(sp, 0, 6);
    /* Wraps around the end of the ring. */
    CHECK_EQ_INT(spool_put(sp, 0, "ijklmnop", 8), 0);
    CHECK_EQ_INT(spool_get(sp, 0, buf, sizeof buf), 10);
    CHECK_MEM(buf, "ghijklmnop", 10);
    CHECK_EQ_INT(spool_get(sp, 0, buf, 3), 3);
    CHECK_MEM(buf, "ghi", 3);
    /* The streams are apart. */
    CHECK_EQ_INT(spool_get(sp, 1, buf, sizeof buf), 2);
    CHECK_MEM(buf, "XY", 2);
    spool_drop(sp, 0, 100);
    CHECK_EQ_INT(spool_len(sp, 0), 0);
    for (i = 0; i < 100; i++) {
        CHECK_EQ_INT(spool_put(sp, 0, "0123456", 7), 0);
        CHECK_EQ_INT(spool_get(sp, 0, buf, 7), 7);
        CHECK_MEM(buf, "0123456", 7);
        spool_drop(sp, 0, 7);
    }
    spool_close(sp);
    spool_close(NULL);
    CHECK(spool_open("/nonexistent/dir", 1, 10, err, sizeof err) == NULL);
    CHECK(strstr(err, "/nonexistent/dir") != NULL);
}

static void
t_all_dead(void)
{
    struct cap c;
    struct output *o = out_new(&c, 2, 2, 1);

    put(o, 0, 0, "a\npartial");
    put(o, 0, 1, "a\npartial and more\n");
    output_replica_dead(o, 0, 0);
    output_replica_dead(o, 0, 1);
    CHECK_EQ_STR(cap_out(&c), "[0] a\n[0] partial and more\n");
    put(o, 0, 0, "x\n");
    put(o, 0, 1, "y\n");
    output_rank_done(o, 0);
    output_replica_dead(o, 0, 1);
    put(o, 1, 1, "rank one\n");
    output_replica_dead(o, 1, 0);
    CHECK_EQ_STR(cap_out(&c), "[0] a\n[0] partial and more\n[1] rank one\n");
    output_free(o);
    cap_close(&c);
}

static void
t_bad_arguments(void)
{
    struct cap c;
    struct output *o = out_new(&c, 2, 2, 0);

    output_data(o, -1, 0, 1, "x\n", 2);
    output_data(o, 2, 0, 1, "x\n", 2);
    output_data(o, 0, -1, 1, "x\n", 2);
    output_data(o, 0, 2, 1, "x\n", 2);
    output_data(o, 0, 0, 0, "x\n", 2);
    output_data(o, 0, 0, 3, "x\n", 2);
    output_data(o, 0, 0, 1, NULL, 2);
    output_data(o, 0, 0, 1, "", 0);
    output_replica_dead(o, 5, 0);
    output_replica_dead(o, 0, 9);
    output_rank_done(o, -1);
    output_rank_done(o, 2);
    CHECK_EQ_STR(cap_out(&c), "");
    CHECK_EQ_STR(cap_err(&c), "");
    output_free(o);
    cap_close(&c);
    output_data(NULL, 0, 0, 1, "x", 1);
    output_replica_dead(NULL, 0, 0);
    output_rank_done(NULL, 0);
    output_free(NULL);
    CHECK(output_new(0, 1, 0, 1, 2) == NULL);
    CHECK(output_new(1, 0, 0, 1, 2) == NULL);
}

static void
t_slow_nonblocking_reader(void)
{
    const size_t len = 1024 * 1024;
    char *data = malloc(len), *got;
    struct output *o;
    size_t i, n;
    ssize_t rd;
    int p[2], status;
    pid_t pid;

    for (i = 0; i < len; i++)
        data[i] = i % 100 == 99 ? '\n' : (char)('a' + i % 7);
    if (!CHECK(pipe(p) == 0))
        return;
    signal(SIGPIPE, SIG_IGN);
    pid = fork();
    if (pid == 0) {
        /* Read slowly, then compare. */
        close(p[1]);
        got = malloc(len);
        n = 0;
        usleep(100 * 1000);
        while (n < len && (rd = read(p[0], got + n, 4096)) > 0) {
            n += (size_t)rd;
            if (n % (64 * 4096) == 0)
                usleep(10 * 1000);
        }
        _exit(n == len && memcmp(got, data, len) == 0 ? 0 : 1);
    }
    close(p[0]);
    fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
    o = output_new(1, 1, 0, p[1], p[1]);
    for (i = 0; i < len; i += 30000)
        output_data(o, 0, 0, 1, data + i, len - i < 30000 ? len - i : 30000);
    output_rank_done(o, 0);
    output_free(o);
    close(p[1]);
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(data);
}

static const struct test_case cases[] = {
    {"r1_split_lines", t_r1_split_lines},
    {"ranks_never_mix_half_lines", t_ranks_never_mix_half_lines},
    {"tag_prefix", t_tag_prefix},
    {"stderr_separate", t_stderr_separate},
    {"backup_hidden", t_backup_hidden},
    {"failover_every_cut", t_failover_every_cut},
    {"master_dies_mid_line", t_master_dies_mid_line},
    {"backup_behind", t_backup_behind},
    {"dead_replica_ignored", t_dead_replica_ignored},
    {"rank_done_flushes", t_rank_done_flushes},
    {"long_line", t_long_line},
    {"backup_far_ahead", t_backup_far_ahead},
    {"spool_quota_holds_the_leader", t_spool_quota_holds_the_leader},
    {"spool_overflow_is_said", t_spool_overflow_is_said},
    {"spool_ring", t_spool_ring},
    {"all_dead", t_all_dead},
    {"bad_arguments", t_bad_arguments},
    {"slow_nonblocking_reader", t_slow_nonblocking_reader},
};

TEST_MAIN(cases)
