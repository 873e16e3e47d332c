/*
 * Shared-memory rings between two processes of a job
 * (mpjrun/mpi/shm.c): a segment is made, found by its name, unlinked once
 * both ends have it, and refused when its name is not a plain hex name or
 * the file is not a private one of the right size; bytes go through
 * whole and in order across the ring's end in both directions, a full
 * ring takes only what fits, frames written in place are found by their
 * first byte, a sleeping side is rung exactly when
 * something happens, and a stream crosses between two real processes.
 * Single copy: each side's probe at setup finds it can read the other,
 * P2P_SHM_CMA=0 makes it fail, a refusal stops announcements, reads
 * come whole in pieces from another process and fail with ESRCH once it
 * is gone, a peer in another pid namespace fails both probes, and
 * announcements are kept and taken by id.
 */
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm.h"
#include "test.h"

/* A name of our own for each segment. */
static const char *
fresh_name(void)
{
    static char name[SHM_NAME_LEN + 1];
    static unsigned n;

    snprintf(name, sizeof name, "%016lx%016x", (unsigned long)getpid(), ++n);
    return name;
}

static int
exists(const char *name)
{
    char path[128];

    snprintf(path, sizeof path, "/dev/shm/p2pmpi-%s", name);
    return access(path, F_OK) == 0;
}

static void
t_create_attach(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b;

    if (!CHECK(a != NULL))
        return;
    CHECK(exists(name));
    /* A second segment of the same name is refused (O_EXCL). */
    CHECK(shm_create(name) == NULL);
    b = shm_attach(name);
    CHECK(b != NULL);
    CHECK(!exists(name)); /* both have it: the name is gone */
    CHECK_EQ_INT(shm_attached(a), 1);
    shm_free(b);
    shm_free(a);
}

static void
t_not_attached(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name);

    if (!CHECK(a != NULL))
        return;
    CHECK_EQ_INT(shm_attached(a), 0);
    CHECK(!exists(name)); /* unlinked either way */
    CHECK(shm_attach(name) == NULL);
    shm_free(a);
}

static void
t_names_refused(void)
{
    static const char *const bad[] = {
        "", "../../../../tmp/x", "0123456789abcdef0123456789ABCDEF",
        "0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdef0",
        "0123456789abcdef/123456789abcdef",
    };
    size_t i;

    for (i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(shm_create(bad[i]) == NULL);
        CHECK(shm_attach(bad[i]) == NULL);
    }
    CHECK(shm_attach(fresh_name()) == NULL); /* none there */
}

/* A file of that name that is not a private segment of the right size. */
static void
t_foreign_refused(void)
{
    const char *name = fresh_name();
    char path[128];
    int fd;

    snprintf(path, sizeof path, "/dev/shm/p2pmpi-%s", name);
    fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (!CHECK(fd != -1))
        return;
    CHECK(ftruncate(fd, 4096) == 0);
    CHECK(shm_attach(name) == NULL); /* wrong size */
    close(fd);
    unlink(path);
    {
        struct shm_chan *a = shm_create(name);

        if (!CHECK(a != NULL))
            return;
        CHECK(chmod(path, 0644) == 0);
        CHECK(shm_attach(name) == NULL); /* others may read it */
        shm_free(a);
    }
    CHECK(!exists(name));
}

static void
fill(uint8_t *b, size_t n, unsigned seed)
{
    size_t i;

    for (i = 0; i < n; i++)
        b[i] = (uint8_t)(seed + i * 7 + (i >> 9));
}

/* Bytes through both rings in odd sizes, over the ring's end many times;
 * a full ring takes what fits, an empty one gives nothing. */
static void
t_round_trip(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b = shm_attach(name);
    static uint8_t out[300000], in[300000];
    struct iovec iov[2];
    size_t sizes[] = {1, 64, 65, 4095, 100000, 299999};
    size_t i, k, got, put, total = 0;
    int round;

    if (!CHECK(a != NULL && b != NULL))
        goto done;
    CHECK_EQ_INT((long long)shm_read(b, in, sizeof in), 0);
    for (round = 0; round < 60; round++)
        for (i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            struct shm_chan *w = round & 1 ? b : a, *r = round & 1 ? a : b;

            fill(out, sizes[i], (unsigned)(round * 31 + i));
            /* Header and payload as transport.c writes them. */
            k = sizes[i] / 3;
            iov[0].iov_base = out;
            iov[0].iov_len = k;
            iov[1].iov_base = out + k;
            iov[1].iov_len = sizes[i] - k;
            put = shm_writev(w, iov, 2);
            CHECK_EQ_INT((long long)put, (long long)sizes[i]);
            got = 0;
            while (got < sizes[i]) {
                size_t n = shm_read(r, in + got, sizes[i] - got);

                if (!CHECK(n > 0))
                    break;
                got += n;
            }
            CHECK_MEM(in, out, sizes[i]);
            CHECK_EQ_INT((long long)shm_read(r, in, 1), 0);
            total += sizes[i];
        }
    CHECK(total > 16 * 1024 * 1024); /* each ring wrapped several times */
    /* Full: a write larger than the ring takes only the ring's size. */
    {
        static uint8_t big[8 * 1024 * 1024]; /* more than a ring */

        iov[0].iov_base = big;
        iov[0].iov_len = sizeof big;
        put = shm_writev(a, iov, 1);
        CHECK(put > 0 && put < sizeof big);
        CHECK_EQ_INT((long long)shm_writev(a, iov, 1), 0);
        got = shm_read(b, big, sizeof big);
        CHECK_EQ_INT((long long)got, (long long)put);
    }
done:
    shm_free(a);
    shm_free(b);
}

/* Whole writes: shm_write_all takes all of a frame or nothing, across
 * the ring's end too, and what it wrote reads back whole and in order. */
static void
t_whole_writes(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b = shm_attach(name);
    static uint8_t out[40000], in[40000];
    struct iovec iov[2];
    size_t sizes[] = {17, 65, 4096, 30000, 32768};
    size_t i, got, n, total = 0;

    if (!CHECK(a != NULL && b != NULL))
        goto done;
    for (i = 0; total < 3u << 20; i = (i + 1) % (sizeof sizes / sizeof *sizes)) {
        fill(out, sizes[i], (unsigned)total);
        iov[0].iov_base = out;
        iov[0].iov_len = 16;
        iov[1].iov_base = out + 16;
        iov[1].iov_len = sizes[i] - 16;
        if (!CHECK_EQ_INT(shm_write_all(a, iov, 2), 1))
            break;
        for (got = 0; got < sizes[i]; got += n)
            if (!CHECK((n = shm_read(b, in + got, sizes[i] - got)) > 0))
                goto done;
        CHECK_MEM(in, out, sizes[i]);
        CHECK_EQ_INT((long long)shm_read(b, in, 1), 0);
        total += sizes[i];
    }
    /* More than a piece, or than the room left: nothing is written. */
    iov[0].iov_base = out;
    iov[0].iov_len = 32769;
    CHECK_EQ_INT(shm_write_all(a, iov, 1), 0);
    CHECK_EQ_INT((long long)shm_read(b, in, 1), 0);
    iov[0].iov_len = 32768;
    while (shm_write_all(a, iov, 1) == 1)
        total += 32768;
    n = shm_writev(a, iov, 1);
    CHECK(n < 32768); /* the room that was left, not a whole frame */
done:
    shm_free(a);
    shm_free(b);
}

/* A frame of the marked kind: mark, a 24-bit length of what follows
 * the 4-byte header, as transport.c's short frames. */
static size_t
marked_size(const uint8_t *hdr)
{
    return 4 + ((size_t)hdr[1] | (size_t)hdr[2] << 8 | (size_t)hdr[3] << 16);
}

/* Put a marked frame of 4 + len bytes (its bytes from seed) in the ring,
 * as transport.c does: in place, or by shm_write_all where it wraps. */
static int
put_marked(struct shm_chan *a, uint8_t *out, size_t len, unsigned seed)
{
    struct iovec iov;
    uint8_t *at;

    fill(out, 4 + len, seed);
    out[0] = 0x80;
    out[1] = (uint8_t)len;
    out[2] = (uint8_t)(len >> 8);
    out[3] = 0;
    if ((at = shm_reserve(a, 4 + len)) == NULL) {
        iov.iov_base = out;
        iov.iov_len = 4 + len;
        return shm_write_all(a, &iov, 1);
    }
    memcpy(at + 1, out + 1, 3 + len);
    shm_commit(a, 4 + len, 0x80);
    return 1;
}

/* Frames written in place (shm_reserve, shm_commit) are read by their
 * first byte, whole and in order, mixed with plain writes (which the
 * marked read leaves to shm_read), across the ring's end and over many
 * laps: a frame a lap old is never taken for a new one, and an empty
 * ring says so without the tail. */
static void
t_marked(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b = shm_attach(name);
    static uint8_t out[5000], in[5000];
    size_t sizes[] = {1, 13, 60, 61, 200, 4000, 3};
    size_t i, n, len, total = 0, marked = 0;
    struct iovec iov;
    int none, k;

    if (!CHECK(a != NULL && b != NULL))
        goto done;
    if (!shm_fenceless(b)) {
        /* No membarrier here: the marked read is off, shm_read reads. */
        CHECK_EQ_INT((long long)shm_read_marked(b, in, sizeof in, 0x80, 4,
                                                marked_size, &none),
                     0);
        CHECK_EQ_INT(none, 0);
        goto done;
    }
    CHECK_EQ_INT((long long)shm_read_marked(b, in, sizeof in, 0x80, 4,
                                            marked_size, &none),
                 0);
    CHECK_EQ_INT(none, 1); /* a new ring is empty */
    for (k = 0; total < 3u << 20; k++) {
        i = (size_t)k % (sizeof sizes / sizeof *sizes);
        len = 4 + sizes[i];
        fill(out, len, (unsigned)k);
        out[1] = (uint8_t)sizes[i];
        out[2] = (uint8_t)(sizes[i] >> 8);
        out[3] = 0;
        if (k % 5 == 4) {
            /* A plain frame: first byte 1, written and read the usual way. */
            out[0] = 1;
            iov.iov_base = out;
            iov.iov_len = len;
            if (!CHECK_EQ_INT((long long)shm_writev(a, &iov, 1), (long long)len))
                break;
            n = shm_read_marked(b, in, sizeof in, 0x80, 4, marked_size, &none);
            CHECK_EQ_INT((long long)n, 0);
            CHECK_EQ_INT(none, 0);
            for (n = 0; n < len;) {
                size_t got = shm_read(b, in + n, len - n);

                if (!CHECK(got > 0))
                    goto done;
                n += got;
            }
        } else {
            /* In place, or where it would wrap by shm_write_all, first
             * byte last too. */
            if (!CHECK_EQ_INT(put_marked(a, out, sizes[i], (unsigned)k), 1))
                break;
            n = shm_read_marked(b, in, sizeof in, 0x80, 4, marked_size, &none);
            if (n == 0) /* a wrapped one goes by the tail */
                n = shm_read(b, in, len);
            else
                marked++;
            if (!CHECK_EQ_INT((long long)n, (long long)len))
                break;
        }
        CHECK_MEM(in, out, len);
        n = shm_read_marked(b, in, sizeof in, 0x80, 4, marked_size, &none);
        CHECK_EQ_INT((long long)n, 0);
        CHECK_EQ_INT(none, 1); /* nothing more, a lap old or not */
        CHECK_EQ_INT((long long)shm_read(b, in, 1), 0);
        total += len;
    }
    CHECK(marked > 1000);
    /* Two frames read in one go. */
    for (k = 0; k < 2; k++)
        CHECK_EQ_INT(put_marked(a, out, 10, (unsigned)k), 1);
    n = shm_read_marked(b, in, sizeof in, 0x80, 4, marked_size, &none);
    if (n < 28)
        n += shm_read(b, in + n, 28 - n);
    CHECK_EQ_INT((long long)n, 28);
done:
    shm_free(a);
    shm_free(b);
}

/* A first marked frame of one line or two (64-127 bytes) takes what
 * follows it up to the writer's tail in the same read, whatever kind:
 * every byte once and in order, also when the room is short (the rest
 * by the tail's way) and across the ring's end; shorter and longer
 * first frames are read one by one. */
static void
t_marked_tail(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b = shm_attach(name);
    static uint8_t out[64 * 1024], in[64 * 1024];
    size_t lens[] = {60, 123, 13, 200, 90, 61};
    size_t i, n, want, got, total = 0, runs = 0, whole = 0;
    struct iovec iov;
    int none, k;

    if (!CHECK(a != NULL && b != NULL) || !shm_fenceless(b))
        goto done; /* without membarrier there is no marked read */
    for (k = 0; total < 3u << 20; k++) {
        /* A run: six marked frames and a plain one amid them. */
        want = 0;
        for (i = 0; i < sizeof lens / sizeof *lens; i++) {
            if (!CHECK_EQ_INT(put_marked(a, out + want, lens[i],
                                         (unsigned)(k * 8 + (int)i)),
                              1))
                goto done;
            want += 4 + lens[i];
            if (i == 2) {
                fill(out + want, 40, (unsigned)k);
                out[want] = 1; /* plain */
                iov.iov_base = out + want;
                iov.iov_len = 40;
                if (!CHECK_EQ_INT((long long)shm_writev(a, &iov, 1), 40))
                    goto done;
                want += 40;
            }
        }
        /* Every other run with little room: the read stops there. */
        n = shm_read_marked(b, in, k % 2 ? 100 : sizeof in, 0x80, 4,
                            marked_size, &none);
        if (k % 2 && !CHECK(n <= 100))
            goto done;
        if (k % 2 == 0) {
            runs++;
            whole += n == want; /* not where the run wraps */
        }
        for (; n < want; n += got)
            if (!CHECK((got = shm_read(b, in + n, want - n)) > 0))
                goto done;
        if (!CHECK_MEM(in, out, want))
            goto done;
        total += want;
    }
    CHECK(whole > runs * 9 / 10);
    /* A first frame shorter than a line is read alone. */
    CHECK_EQ_INT(put_marked(a, out, 13, 1), 1);
    CHECK_EQ_INT(put_marked(a, out + 17, 60, 2), 1);
    n = shm_read_marked(b, in, sizeof in, 0x80, 4, marked_size, &none);
    CHECK(n == 17 || n == 17 + 64);
    if (n < 81)
        n += shm_read(b, in + n, 81 - n);
    CHECK_EQ_INT((long long)n, 81);
    CHECK_MEM(in, out, 81);
done:
    shm_free(a);
    shm_free(b);
}

/* The doorbell: a side that armed is rung once by a write to it, not by
 * a write when awake; arming with something to read says do not sleep.
 * Writes go without a fence when both processes registered for
 * membarrier (the sleeper calls it instead); P2P_SHM_MEMBARRIER=0 keeps
 * the fence: run both ways. */
static void
t_doorbell_once(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b = shm_attach(name);
    int sv[2];
    uint8_t x = 42, buf[8];
    struct iovec iov = {&x, 1};

    if (!CHECK(a != NULL && b != NULL) ||
        !CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0))
        goto done;
    shm_set_bell(a, sv[0]); /* a rings b at sv[1] */
    shm_set_bell(b, sv[1]);
    CHECK_EQ_INT((long long)shm_writev(a, &iov, 1), 1);
    CHECK_EQ_INT((int)recv(sv[1], buf, sizeof buf, 0), -1); /* b awake */
    CHECK_EQ_INT(shm_arm(b, 0), 0); /* something to read */
    CHECK_EQ_INT((long long)shm_read(b, buf, sizeof buf), 1);
    CHECK_EQ_INT(shm_arm(b, 0), 1); /* nothing: may sleep */
    CHECK_EQ_INT((long long)shm_writev(a, &iov, 1), 1);
    CHECK_EQ_INT((int)recv(sv[1], buf, sizeof buf, 0), 1); /* rung */
    CHECK_EQ_INT((long long)shm_writev(a, &iov, 1), 1);
    CHECK_EQ_INT((int)recv(sv[1], buf, sizeof buf, 0), -1); /* once */
    shm_disarm(b);
    CHECK_EQ_INT((long long)shm_read(b, buf, sizeof buf), 2);
    /* A writer waiting for room: room freed since it last found the
     * ring full means do not sleep; once armed on a full ring, it is rung
     * when the reader frees some. */
    {
        static uint8_t big[8 * 1024 * 1024]; /* more than a ring */
        struct iovec all = {big, sizeof big};
        size_t in = shm_writev(a, &all, 1);

        CHECK(in > 0 && in < sizeof big);
        CHECK_EQ_INT((long long)shm_writev(a, &all, 1), 0); /* full */
        CHECK_EQ_INT(shm_arm(a, 1), 1);
        CHECK_EQ_INT((int)recv(sv[0], buf, sizeof buf, 0), -1);
        CHECK_EQ_INT((long long)shm_read(b, buf, 1), 1);
        CHECK_EQ_INT((int)recv(sv[0], buf, sizeof buf, 0), 1); /* rung */
        CHECK_EQ_INT(shm_arm(a, 1), 0); /* room since it looked */
        CHECK_EQ_INT((long long)shm_read(b, big, sizeof big), (long long)in - 1);
        CHECK_EQ_INT((int)recv(sv[0], buf, sizeof buf, 0), -1);
    }
    /* and by a write to it. */
    CHECK_EQ_INT(shm_arm(a, 0), 1);
    CHECK_EQ_INT((long long)shm_writev(b, &iov, 1), 1);
    CHECK_EQ_INT((int)recv(sv[0], buf, sizeof buf, 0), 1);
    close(sv[0]);
    close(sv[1]);
done:
    shm_free(a);
    shm_free(b);
}

static void
t_doorbell(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b = shm_attach(name);
    int fenceless;

    if (!CHECK(a != NULL && b != NULL))
        return;
    CHECK(shm_attached(a));
    /* Both ends agree; this kernel has the command (a test machine
     * without it runs the fenced case twice). */
    fenceless = shm_fenceless(a);
    CHECK_EQ_INT(shm_fenceless(b), fenceless);
    shm_free(a);
    shm_free(b);
    t_doorbell_once();
    setenv("P2P_SHM_MEMBARRIER", "0", 1);
    name = fresh_name();
    a = shm_create(name);
    b = shm_attach(name);
    if (CHECK(a != NULL && b != NULL)) {
        CHECK(shm_attached(a));
        CHECK_EQ_INT(shm_fenceless(a), 0);
        CHECK_EQ_INT(shm_fenceless(b), 0);
    }
    shm_free(a);
    shm_free(b);
    t_doorbell_once();
    unsetenv("P2P_SHM_MEMBARRIER");
    if (fenceless == 0)
        fprintf(stderr, "test_shm: membarrier's global expedited command "
                        "is not there: writes fence\n");
}

/* Two real processes: a child echoes 64 MiB back through the rings in
 * pieces of every size while the parent writes and checks. */
static void
t_two_processes(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b;
    static uint8_t out[1 << 20], in[1 << 20];
    size_t sent = 0, recvd = 0, want = 64u << 20, n;
    struct iovec iov;
    pid_t pid;
    int status;

    if (!CHECK(a != NULL))
        return;
    fill(out, sizeof out, 9);
    if ((pid = fork()) == 0) {
        static uint8_t echo[77777];
        size_t have = 0, off = 0;

        if ((b = shm_attach(name)) == NULL)
            _exit(3);
        while (recvd < want) {
            if (have == off) {
                have = shm_read(b, echo, sizeof echo);
                off = 0;
                recvd += have;
            }
            iov.iov_base = echo + off;
            iov.iov_len = have - off;
            off += shm_writev(b, &iov, 1);
        }
        while (have != off) {
            iov.iov_base = echo + off;
            iov.iov_len = have - off;
            off += shm_writev(b, &iov, 1);
        }
        _exit(0);
    }
    while (recvd < want) {
        if (sent < want) {
            size_t at = sent % sizeof out, k = sizeof out - at;

            iov.iov_base = out + at;
            iov.iov_len = k < 100003 ? k : 100003;
            sent += shm_writev(a, &iov, 1);
        }
        n = shm_read(a, in, sizeof in - recvd % sizeof in);
        if (n > 0 && memcmp(in, out + recvd % sizeof out, n) != 0) {
            CHECK(!"bytes echoed differ");
            break;
        }
        recvd += n;
    }
    CHECK_EQ_INT((int)waitpid(pid, &status, 0), (int)pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_INT((long long)recvd, (long long)want);
    shm_free(a);
}

/* Both ends in one process: the probes succeed (a process may read
 * itself), a read larger than a piece comes whole, a refusal turns the
 * other side's announcements off, and the knob makes the probe fail. */
static void
t_single_copy_probe(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b;
    size_t n = (9u << 20) + 7; /* several pieces, and an odd tail */
    uint8_t *src = malloc(n), *dst = malloc(n);

    if (!CHECK(a != NULL && src != NULL && dst != NULL))
        goto out;
    b = shm_attach(name);
    if (!CHECK(b != NULL))
        goto out;
    CHECK_EQ_INT(shm_cma_reads(b), 1); /* the attacher probed at once */
    CHECK_EQ_INT(shm_cma_peer_reads(a), 1);
    CHECK_EQ_INT(shm_attached(a), 1); /* the creator probes now */
    CHECK_EQ_INT(shm_cma_reads(a), 1);
    CHECK_EQ_INT(shm_cma_peer_reads(b), 1);
    fill(src, n, 5);
    memset(dst, 0, n);
    CHECK_EQ_INT(shm_cma_read(b, dst, (uint64_t)(uintptr_t)src, n), 0);
    CHECK(memcmp(src, dst, n) == 0);
    shm_cma_refused(b);
    CHECK_EQ_INT(shm_cma_reads(b), 0);
    CHECK_EQ_INT(shm_cma_peer_reads(a), 0);
    CHECK_EQ_INT(shm_cma_peer_reads(b), 1);
    shm_free(b);
    shm_free(a);
    a = NULL;
    /* Turned off: the probe fails on both sides. */
    setenv("P2P_SHM_CMA", "0", 1);
    name = fresh_name();
    a = shm_create(name);
    b = a != NULL ? shm_attach(name) : NULL;
    if (CHECK(b != NULL)) {
        CHECK_EQ_INT(shm_attached(a), 1);
        unsetenv("P2P_SHM_CMA");
        CHECK_EQ_INT(shm_cma_reads(a) + shm_cma_reads(b), 0);
        CHECK_EQ_INT(shm_cma_peer_reads(a) + shm_cma_peer_reads(b), 0);
        shm_free(b);
    }
    unsetenv("P2P_SHM_CMA");
out:
    shm_free(a);
    free(src);
    free(dst);
}

/* Announcements: taken by id once; one of the same id replaces an
 * older one never taken. */
static void
t_single_copy_notes(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name);
    uint64_t at = 0, len = 0;
    uint32_t id;

    if (!CHECK(a != NULL))
        return;
    CHECK_EQ_INT(shm_take(a, 7, &at, &len), 0);
    CHECK_EQ_INT(shm_note(a, 7, 100, 1000), 0);
    CHECK_EQ_INT(shm_note(a, 8, 200, 2000), 0);
    CHECK_EQ_INT(shm_note(a, 7, 300, 3000), 0);
    CHECK_EQ_INT(shm_take(a, 7, &at, &len), 1);
    CHECK_EQ_INT((long long)at, 300);
    CHECK_EQ_INT((long long)len, 3000);
    CHECK_EQ_INT(shm_take(a, 7, &at, &len), 0);
    CHECK_EQ_INT(shm_take(a, 8, &at, &len), 1);
    CHECK_EQ_INT((long long)at, 200);
    for (id = 0; id < 1000; id++)
        CHECK_EQ_INT(shm_note(a, id, id, id), 0);
    for (id = 1000; id-- > 0;)
        if (!CHECK_EQ_INT(shm_take(a, id, &at, &len), 1) ||
            !CHECK_EQ_INT((long long)at, id))
            break;
    shm_free(a);
}

/* Another process: its buffer read in place, and another of its written
 * in place, while it lives; ESRCH for both once it is gone (what a
 * receiver sees of a sender that died). */
static void
t_single_copy_two_processes(void)
{
    const char *name = fresh_name();
    struct shm_chan *a = shm_create(name), *b;
    size_t n = 3u << 20;
    uint8_t *want = malloc(n), *got = malloc(n), done = 1;
    uint64_t at[2] = {0, 0};
    struct iovec iov;
    pid_t pid;
    int status;

    if (!CHECK(a != NULL && want != NULL && got != NULL))
        goto out;
    fill(want, n, 11);
    if ((pid = fork()) == 0) {
        uint8_t *mine = malloc(n), *theirs = calloc(1, n), bye;

        if ((b = shm_attach(name)) == NULL || mine == NULL || theirs == NULL)
            _exit(3);
        fill(mine, n, 11);
        at[0] = (uint64_t)(uintptr_t)mine;
        at[1] = (uint64_t)(uintptr_t)theirs;
        iov.iov_base = at;
        iov.iov_len = sizeof at;
        if (shm_writev(b, &iov, 1) != sizeof at)
            _exit(4);
        while (shm_read(b, &bye, 1) == 0)
            ;
        /* The parent wrote the same bytes into theirs. */
        _exit(memcmp(mine, theirs, n) == 0 ? 0 : 5);
    }
    while (shm_read(a, at, sizeof at) == 0)
        ;
    CHECK_EQ_INT(shm_attached(a), 1);
    CHECK_EQ_INT(shm_cma_reads(a), 1);
    memset(got, 0, n);
    CHECK_EQ_INT(shm_cma_read(a, got, at[0], n), 0);
    CHECK(memcmp(got, want, n) == 0);
    CHECK_EQ_INT(shm_cma_write(a, at[1], want, n), 0);
    iov.iov_base = &done;
    iov.iov_len = 1;
    CHECK_EQ_INT((int)shm_writev(a, &iov, 1), 1);
    CHECK_EQ_INT((int)waitpid(pid, &status, 0), (int)pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    errno = 0;
    CHECK_EQ_INT(shm_cma_read(a, got, at[0], n), -1);
    CHECK_EQ_INT(errno, ESRCH);
    errno = 0;
    CHECK_EQ_INT(shm_cma_write(a, at[1], want, n), -1);
    CHECK_EQ_INT(errno, ESRCH);
out:
    shm_free(a);
    free(want);
    free(got);
}

/* The other end in another pid namespace (where we may make one: root):
 * the pids in the control page name other processes, or none, for each
 * side, and both probes fail. */
static void
t_single_copy_pid_namespace(void)
{
    const char *name = fresh_name();
    struct shm_chan *a, *b;
    uint8_t go = 1, ready;
    struct iovec iov = {&go, 1};
    pid_t pid;
    int status;

    /* Made before the fork: the child attaches at once. */
    if (!CHECK((a = shm_create(name)) != NULL))
        return;
    if ((pid = fork()) == 0) {
        pid_t inner;

        if (unshare(CLONE_NEWPID) == -1)
            _exit(77); /* not allowed here: skipped */
        if ((inner = fork()) == 0) {
            uint8_t bye;

            /* pid 1 of its namespace */
            if ((b = shm_attach(name)) == NULL)
                _exit(3);
            iov.iov_base = &go;
            (void)shm_writev(b, &iov, 1);
            while (shm_read(b, &bye, 1) == 0)
                ;
            _exit(shm_cma_reads(b) ? 4 : 0);
        }
        _exit(inner > 0 && waitpid(inner, &status, 0) == inner &&
                      WIFEXITED(status)
                  ? WEXITSTATUS(status)
                  : 5);
    }
    /* The child may be refused its namespace: then it never attaches. */
    while (shm_read(a, &ready, 1) == 0) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 77);
            shm_free(a);
            return;
        }
    }
    CHECK_EQ_INT(shm_attached(a), 1);
    CHECK_EQ_INT(shm_cma_reads(a), 0);
    CHECK_EQ_INT(shm_cma_peer_reads(a), 0);
    CHECK_EQ_INT((int)shm_writev(a, &iov, 1), 1);
    CHECK_EQ_INT((int)waitpid(pid, &status, 0), (int)pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    shm_free(a);
}

static const struct test_case cases[] = {
    {"create_attach", t_create_attach},
    {"not_attached", t_not_attached},
    {"names_refused", t_names_refused},
    {"foreign_refused", t_foreign_refused},
    {"round_trip", t_round_trip},
    {"whole_writes", t_whole_writes},
    {"marked", t_marked},
    {"marked_tail", t_marked_tail},
    {"doorbell", t_doorbell},
    {"two_processes", t_two_processes},
    {"single_copy_probe", t_single_copy_probe},
    {"single_copy_notes", t_single_copy_notes},
    {"single_copy_two_processes", t_single_copy_two_processes},
    {"single_copy_pid_namespace", t_single_copy_pid_namespace},
};

TEST_MAIN(cases)
