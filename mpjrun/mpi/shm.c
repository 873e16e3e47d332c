/*
 * Shared-memory rings between two processes of a job on one host (see
 * shm.h for the contract, docs/mpi.md "Shared memory" for the design).
 *
 * A segment is a control page and two rings.  Each ring has one writer
 * and one reader: the writer alone moves tail, the reader alone moves
 * head, each index on its own cache line so that the two sides do not
 * fight over a line.  Positions only grow (64 bits never wrap in
 * practice); the byte at position p lives at p mod SHM_RING.  The writer
 * copies in, then publishes tail with release order; the reader loads
 * tail with acquire order, copies out, then publishes head with release
 * order, which hands the room back.  Large messages are streamed through
 * the ring in SHM_CHUNK pieces, each published at once, so that the
 * reader copies one piece out while the writer copies the next in.
 *
 * Frames written whole (shm_commit, shm_write_all) get their first byte
 * last, with release order, and every publication first zeroes the byte
 * at the new tail (one byte of the ring is kept free for it): a reader
 * at a frame's start then finds a small frame by its first byte, and an
 * empty ring by a 0 there, without loading the writer's tail, whose
 * line stays with the writer (shm_read_marked).  The tail is still
 * published for every write: plain readers and the sleep logic use it.
 *
 * Sleeping: a side about to sleep in poll raises its flag, then looks at
 * the ring once more; a side that wrote or freed room looks at the other's
 * flag after a full fence and, when it is up, takes it down and writes a
 * byte to the pair's TCP socket.  Either the sleeper sees the data, or
 * the writer sees the flag (the fences order the flag against the index
 * on both sides), so no wake-up is lost.
 *
 * The writer's fence is the costly half (it waits for the ring's stores
 * to leave the core, a cache-line transfer, on every message), and
 * sleeping is rare (after 10 ms of spinning).  So when both processes
 * could register for membarrier's global expedited command, the writer
 * orders its index store against its flag load with a compiler barrier
 * only, and the sleeper instead calls
 * membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) between raising its flag
 * and looking at the ring, which runs a full barrier on every core
 * running a registered process (the writer's pending index store is
 * visible afterwards, or the writer loads the flag after it).  A sleeper
 * whose membarrier call fails does not sleep.  P2P_SHM_MEMBARRIER=0
 * keeps the fence (docs/mpi.md has both measured).
 *
 * Single copy (CMA): each side writes its pid and the address and value
 * of a random cookie of its own into the control page; the other side
 * reads the cookie with process_vm_readv and, when it gets the value
 * back, raises its "reads" flag.  A pid from another pid namespace, a
 * process the kernel does not let us read (another uid, not dumpable,
 * Yama), a kernel without the call or a filter that refuses it all end
 * with the flag down, and the pair's large messages go through the
 * rings.  A sender announces a message for a single copy only while the
 * receiver's flag is up.
 */
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm.h"

#define SHM_RING (512 * 1024)  /* bytes per direction, a power of two */
#define SHM_CHUNK (32 * 1024)  /* published piece of a large write */
#define SHM_AHEAD 4            /* lines owned ahead of a small write */
#define SHM_TAIL_READ_MIN 64   /* short frames read up to the tail (bytes) */
#define SHM_TAIL_READ_MAX 128
#define SHM_CTL 4096           /* the control page */
#define SHM_SIZE (SHM_CTL + 2 * (size_t)SHM_RING)
#define SHM_MAGIC 0x3453324du  /* "M2S4": bump when the layout changes */
/* Single-copy reads are done in pieces of at most this (a huge read
 * would pin that many pages at once). */
#define SHM_CMA_PIECE (4u << 20)
/* Announcements kept per pair before the oldest is dropped. */
#define SHM_NOTES_MAX 65536
#define SHM_DIR "/dev/shm"
#define SHM_PREFIX "p2pmpi-"

/* One index or flag alone on its cache line. */
struct shm_line {
    _Alignas(64) _Atomic uint64_t v;
};

/* What side s tells the other for single-copy reads: its pid, and where
 * its cookie is in its memory and what it holds. */
struct shm_who {
    uint64_t pid, cookie_at, cookie;
};

/* The control page.  Ring 0 carries the creator's bytes to the attacher,
 * ring 1 the attacher's to the creator; asleep[s] is side s's flag (0:
 * creator); reads[s]: side s can read the other's memory (CMA). */
struct shm_ctl {
    uint32_t magic, ring;
    struct shm_line attached;
    struct shm_line tail[2], head[2];
    struct shm_line asleep[2];
    struct shm_line reads[2];
    /* side s registered for membarrier's global expedited barrier and
     * will call it before sleeping (see above) */
    struct shm_line asym[2];
    struct shm_who who[2];
};

_Static_assert(sizeof(struct shm_ctl) <= SHM_CTL, "control page too small");
_Static_assert((SHM_RING & (SHM_RING - 1)) == 0, "ring not a power of two");

struct shm_chan {
    struct shm_ctl *ctl;
    uint8_t *base;
    int side;  /* 0: creator, 1: attacher */
    int bell;  /* the pair's TCP socket, or -1 */
    int asym;  /* both sides use membarrier: writes need no fence */
    uint8_t *txd, *rxd;
    uint64_t txpos, txseen; /* our tail; the reader's head as last seen */
    uint64_t rxpos, rxseen; /* our head; the writer's tail as last seen */
    char path[sizeof SHM_DIR + sizeof SHM_PREFIX + SHM_NAME_LEN + 1];
    int named; /* path still exists (ours to unlink) */
    /* single copy: what the other side reads to prove it can; the other
     * side's pid; messages it announced, not yet taken */
    uint64_t cookie;
    pid_t peer;
    struct shm_note *notes;
    size_t nnotes, capnotes;
    /* reads queued to go in one call (shm_cma_queue), and the cookie's
     * place after them */
    struct iovec qlocal[SHM_CMA_BATCH + 1], qremote[SHM_CMA_BATCH + 1];
    size_t nq, qbytes;
};

/* A message the other side announced for a single copy. */
struct shm_note {
    uint32_t id;
    uint64_t addr, len;
};

int
shm_enabled(void)
{
    const char *v = getenv("P2P_SHM");

    return !(v != NULL && (strcmp(v, "0") == 0 || strcmp(v, "no") == 0 ||
                           strcmp(v, "off") == 0));
}

/* Is the single-copy path on (P2P_SHM_CMA not 0/no/off)?  Off, every
 * pair's probe fails, as when the kernel refuses it. */
static int
shm_cma_enabled(void)
{
    const char *v = getenv("P2P_SHM_CMA");

    return !(v != NULL && (strcmp(v, "0") == 0 || strcmp(v, "no") == 0 ||
                           strcmp(v, "off") == 0));
}

/* A size from environment variable name, else (or when negative) def;
 * at most max.  Read once into *cache (-1: not yet). */
static size_t
shm_knob(long long *cache, const char *name, size_t def, size_t max)
{
    const char *v;

    if (*cache < 0) {
        v = getenv(name);
        *cache = v != NULL && *v != '\0' ? atoll(v) : (long long)def;
        if (*cache < 0)
            *cache = (long long)def;
        if ((unsigned long long)*cache > max)
            *cache = (long long)max;
    }
    return (size_t)*cache;
}

size_t
shm_cma_min(void)
{
    static long long v = -1;

    return shm_knob(&v, "P2P_SHM_CMA_MIN", SHM_CMA_MIN, SIZE_MAX);
}

size_t
shm_eager_max(size_t max)
{
    static long long v = -1;

    return shm_knob(&v, "P2P_SHM_EAGER_MAX", SHM_EAGER_MAX, max);
}

size_t
shm_split_min(void)
{
    static long long v = -1;

    return shm_knob(&v, "P2P_SHM_SPLIT_MIN", SHM_SPLIT_MIN, SIZE_MAX);
}

/* Under Yama's ptrace_scope 1 only a process's ancestors, or a process
 * it names and that one's descendants, may read it, and two ranks are
 * siblings.  Name our parent (the peerd that started us: its
 * descendants are the processes it started), once, and only when we run
 * under a uid other than our parent's (a job uid peerd gave us): the
 * kernel's ordinary ptrace rules (same uid, dumpable) still apply on
 * top, so this admits the job's own processes on this peer and nobody
 * the scope would otherwise keep out.  See docs/mpi.md "Single copy". */
static void
shm_cma_allow(void)
{
    static int done;
    char line[64];
    unsigned long puid;
    FILE *f;
    int scope = -1, parent_uid_other = 0;
    pid_t ppid = getppid();

    if (done)
        return;
    done = 1;
    if ((f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r")) != NULL) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    if (scope != 1 || ppid <= 1)
        return;
    snprintf(line, sizeof line, "/proc/%ld/status", (long)ppid);
    if ((f = fopen(line, "r")) == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Uid: %lu", &puid) == 1) {
            parent_uid_other = puid != (unsigned long)getuid();
            break;
        }
    fclose(f);
    if (parent_uid_other)
        (void)prctl(PR_SET_PTRACER, (unsigned long)ppid, 0, 0, 0);
}

/* May this process skip the writer's fence (see the top): not turned
 * off (P2P_SHM_MEMBARRIER=0), membarrier's global expedited barrier is
 * there and we are registered for it, so a sleeper's call reaches us.
 * Registered once per process. */
static int
shm_membarrier_ok(void)
{
    static int ok = -1;
    const char *v = getenv("P2P_SHM_MEMBARRIER");
    long cmds;

    if (v != NULL && (strcmp(v, "0") == 0 || strcmp(v, "no") == 0 ||
                      strcmp(v, "off") == 0))
        return 0;
    if (ok == -1) {
        cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        ok = cmds != -1 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0 &&
             syscall(__NR_membarrier,
                     MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    }
    return ok;
}

/* Both sides registered: our writes to the other need no fence. */
static void
shm_asym_agree(struct shm_chan *ch)
{
    ch->asym =
        atomic_load_explicit(&ch->ctl->asym[ch->side].v,
                             memory_order_acquire) == 1 &&
        atomic_load_explicit(&ch->ctl->asym[1 - ch->side].v,
                             memory_order_acquire) == 1;
}

int
shm_fenceless(const struct shm_chan *ch)
{
    return ch->asym;
}

/* Tell the other side where our cookie is, so that it can probe. */
static void
shm_cma_publish(struct shm_chan *ch)
{
    struct shm_who *w = &ch->ctl->who[ch->side];

    if (getrandom(&ch->cookie, sizeof ch->cookie, GRND_NONBLOCK) !=
        (ssize_t)sizeof ch->cookie)
        ch->cookie = (uint64_t)(uintptr_t)ch ^ ((uint64_t)getpid() << 32);
    ch->cookie |= 1; /* never 0, the value of a page never written */
    if (shm_cma_enabled())
        shm_cma_allow();
    w->pid = (uint64_t)getpid();
    w->cookie_at = (uint64_t)(uintptr_t)&ch->cookie;
    w->cookie = ch->cookie;
    atomic_store_explicit(&ch->ctl->asym[ch->side].v,
                          shm_membarrier_ok() ? 1 : 0, memory_order_release);
}

/* Read the other side's cookie through its pid: our reads flag goes up
 * only if the very value comes back (a pid of another namespace names
 * another process, or none). */
static void
shm_cma_probe(struct shm_chan *ch)
{
    const struct shm_who *w = &ch->ctl->who[1 - ch->side];
    uint64_t got = 0;
    struct iovec local = {&got, sizeof got};
    struct iovec remote;
    int ok;

    ch->peer = (pid_t)w->pid;
    remote.iov_base = (void *)(uintptr_t)w->cookie_at;
    remote.iov_len = sizeof got;
    ok = shm_cma_enabled() && w->pid > 0 && (pid_t)w->pid == (int64_t)w->pid &&
         w->cookie != 0 &&
         process_vm_readv(ch->peer, &local, 1, &remote, 1, 0) ==
             (ssize_t)sizeof got &&
         got == w->cookie;
    atomic_store_explicit(&ch->ctl->reads[ch->side].v, ok ? 1 : 0,
                          memory_order_release);
}

/* The path of segment name; -1 unless name is SHM_NAME_LEN hex digits. */
static int
shm_path(struct shm_chan *ch, const char *name)
{
    size_t i;

    for (i = 0; i < SHM_NAME_LEN; i++)
        if (!((name[i] >= '0' && name[i] <= '9') ||
              (name[i] >= 'a' && name[i] <= 'f')))
            return -1;
    if (name[SHM_NAME_LEN] != '\0')
        return -1;
    snprintf(ch->path, sizeof ch->path, "%s/%s%s", SHM_DIR, SHM_PREFIX, name);
    return 0;
}

/* Point ch's ring pointers at the mapping for its side. */
static void
shm_wire(struct shm_chan *ch)
{
    uint8_t *ring0 = ch->base + SHM_CTL, *ring1 = ring0 + SHM_RING;

    ch->ctl = (struct shm_ctl *)(void *)ch->base;
    ch->txd = ch->side == 0 ? ring0 : ring1;
    ch->rxd = ch->side == 0 ? ring1 : ring0;
    ch->bell = -1;
}

/* Map the segment open on fd as side's end of the channel; -1 if it
 * cannot be mapped.  The caller closes fd either way. */
static int
shm_map(struct shm_chan *ch, int fd, int side)
{
    void *p = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    if (p == MAP_FAILED)
        return -1;
    ch->base = p;
    ch->side = side;
    shm_wire(ch);
    return 0;
}

struct shm_chan *
shm_create(const char *name)
{
    struct shm_chan *ch = calloc(1, sizeof *ch);
    int fd = -1;

    if (ch == NULL || shm_path(ch, name) == -1)
        goto error;
    fd = open(ch->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              0600);
    if (fd == -1)
        goto error;
    ch->named = 1;
    /* Reserve the pages now: a full tmpfs is a refusal here, not a
     * SIGBUS in the middle of a message. */
    if (posix_fallocate(fd, 0, (off_t)SHM_SIZE) != 0)
        goto error;
    if (shm_map(ch, fd, 0) == -1)
        goto error;
    close(fd);
    ch->ctl->magic = SHM_MAGIC;
    ch->ctl->ring = SHM_RING;
    shm_cma_publish(ch);
    return ch;
error:
    if (fd != -1)
        close(fd);
    shm_free(ch);
    return NULL;
}

struct shm_chan *
shm_attach(const char *name)
{
    struct shm_chan *ch = calloc(1, sizeof *ch);
    struct stat st;
    int fd = -1;

    if (ch == NULL || shm_path(ch, name) == -1)
        goto error;
    if ((fd = open(ch->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) == -1)
        goto error;
    /* Only a segment of our own uid that nobody else may open, of the
     * size we expect. */
    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
        st.st_size != (off_t)SHM_SIZE)
        goto error;
    if (shm_map(ch, fd, 1) == -1)
        goto error;
    close(fd);
    fd = -1;
    if (ch->ctl->magic != SHM_MAGIC || ch->ctl->ring != SHM_RING)
        goto error;
    /* Both sides have it mapped: nobody else needs the name. */
    (void)unlink(ch->path);
    shm_cma_publish(ch);
    shm_cma_probe(ch);
    shm_asym_agree(ch);
    atomic_store_explicit(&ch->ctl->attached.v, 1, memory_order_release);
    return ch;
error:
    if (fd != -1)
        close(fd);
    shm_free(ch);
    return NULL;
}

int
shm_attached(struct shm_chan *ch)
{
    if (ch->named) {
        (void)unlink(ch->path);
        ch->named = 0;
    }
    if (atomic_load_explicit(&ch->ctl->attached.v, memory_order_acquire) !=
        1)
        return 0;
    shm_cma_probe(ch);
    shm_asym_agree(ch);
    return 1;
}

void
shm_free(struct shm_chan *ch)
{
    if (ch == NULL)
        return;
    if (ch->named)
        (void)unlink(ch->path);
    if (ch->base != NULL)
        (void)munmap(ch->base, SHM_SIZE);
    free(ch->notes);
    free(ch);
}

void
shm_set_bell(struct shm_chan *ch, int fd)
{
    ch->bell = fd;
}

/* We moved an index: wake the other side if it sleeps.  fenceless: the
 * sleeper's membarrier orders our index store before the flag's load. */
static void
shm_ring_bell(struct shm_chan *ch, int fenceless)
{
    struct shm_line *f = &ch->ctl->asleep[1 - ch->side];

    /* Orders our index store before the flag's load (the sleeper does the
     * mirror image in shm_arm). */
    if (fenceless)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&f->v, memory_order_relaxed) != 0 &&
        atomic_exchange_explicit(&f->v, 0, memory_order_relaxed) != 0 &&
        ch->bell != -1)
        (void)send(ch->bell, "", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Room in the outgoing ring as last seen.  One byte is kept free: the
 * byte at our tail is zeroed before each publication (shm_publish). */
static size_t
shm_room(const struct shm_chan *ch)
{
    return SHM_RING - 1 - (size_t)(ch->txpos - ch->txseen);
}

/* Room for len more bytes: as last seen, else after a new look at the
 * reader's head. */
static int
shm_fits(struct shm_chan *ch, size_t len)
{
    if (shm_room(ch) >= len)
        return 1;
    ch->txseen = atomic_load_explicit(&ch->ctl->head[ch->side].v,
                                      memory_order_acquire);
    return shm_room(ch) >= len;
}

/* Publish our tail.  The byte there, where the next write will start,
 * is zeroed first: a reader that finds frames by their first byte
 * (shm_read_marked) must not take one a lap old for a new one. */
static void
shm_publish(struct shm_chan *ch)
{
    ch->txd[ch->txpos & (SHM_RING - 1)] = 0;
    atomic_store_explicit(&ch->ctl->tail[ch->side].v, ch->txpos,
                          memory_order_release);
}

size_t
shm_writev(struct shm_chan *ch, const struct iovec *iov, int n)
{
    _Atomic uint64_t *head = &ch->ctl->head[ch->side].v;
    uint64_t published = ch->txpos;
    size_t done = 0, left, room, piece, at;
    const uint8_t *p;
    int i;

    /* A small frame, header and payload, that fits before the ring's end
     * (nearly every frame of a small message): two copies and one
     * store. */
    if (n >= 1 && n <= 2) {
        size_t a = iov[0].iov_len, b = n == 2 ? iov[1].iov_len : 0;

        left = a + b;
        at = (size_t)(ch->txpos & (SHM_RING - 1));
        if (left > 0 && left <= SHM_CHUNK && left <= SHM_RING - at &&
            shm_fits(ch, left)) {
            memcpy(ch->txd + at, iov[0].iov_base, a);
            if (b > 0)
                memcpy(ch->txd + at + a, iov[1].iov_base, b);
            ch->txpos += left;
            shm_publish(ch);
            shm_ring_bell(ch, ch->asym);
            return left;
        }
    }
    for (i = 0; i < n; i++) {
        p = iov[i].iov_base;
        left = iov[i].iov_len;
        while (left > 0) {
            room = shm_room(ch);
            if (room == 0) {
                ch->txseen = atomic_load_explicit(head, memory_order_acquire);
                room = shm_room(ch);
                if (room == 0)
                    goto out;
            }
            at = (size_t)(ch->txpos & (SHM_RING - 1));
            piece = left < room ? left : room;
            if (piece > SHM_RING - at)
                piece = SHM_RING - at;
            if (piece > SHM_CHUNK)
                piece = SHM_CHUNK;
            memcpy(ch->txd + at, p, piece);
            ch->txpos += piece;
            p += piece;
            left -= piece;
            done += piece;
            /* A large write goes out piece by piece: the reader starts
             * copying out while we copy in. */
            if (ch->txpos - published >= SHM_CHUNK) {
                shm_publish(ch);
                published = ch->txpos;
            }
        }
    }
out:
    if (ch->txpos != published)
        shm_publish(ch);
    if (done > 0)
        shm_ring_bell(ch, ch->asym);
    return done;
}

/* Publish a whole frame written at start up to our tail: the byte at
 * the new tail zeroed, then the frame's first byte (held back until
 * now, so that a reader finding frames by it sees the frame whole), then
 * the tail; and ring. */
static void
shm_publish_whole(struct shm_chan *ch, uint8_t *start, uint8_t first)
{
    ch->txd[ch->txpos & (SHM_RING - 1)] = 0;
    __atomic_store_n(start, first, __ATOMIC_RELEASE);
    atomic_store_explicit(&ch->ctl->tail[ch->side].v, ch->txpos,
                          memory_order_release);
    shm_ring_bell(ch, ch->asym);
}

int
shm_write_all(struct shm_chan *ch, const struct iovec *iov, int n)
{
    size_t len = 0, at, first, skip;
    uint8_t *start;
    int i;

    for (i = 0; i < n; i++)
        len += iov[i].iov_len;
    if (len == 0 || len > SHM_CHUNK || iov[0].iov_len == 0 ||
        !shm_fits(ch, len))
        return 0;
    /* The first byte goes last (shm_commit): a reader finding frames by
     * it sees the frame whole. */
    start = ch->txd + (ch->txpos & (SHM_RING - 1));
    for (i = 0; i < n; i++) {
        skip = i == 0;
        at = (size_t)((ch->txpos + skip) & (SHM_RING - 1));
        first = iov[i].iov_len - skip < SHM_RING - at ? iov[i].iov_len - skip
                                                     : SHM_RING - at;
        memcpy(ch->txd + at, (const uint8_t *)iov[i].iov_base + skip, first);
        if (first < iov[i].iov_len - skip)
            memcpy(ch->txd, (const uint8_t *)iov[i].iov_base + skip + first,
                   iov[i].iov_len - skip - first);
        ch->txpos += iov[i].iov_len;
    }
    shm_publish_whole(ch, start, *(const uint8_t *)iov[0].iov_base);
    return 1;
}

/* Ask for the SHM_AHEAD lines after our tail's for writing (x86
 * PREFETCHW; nothing elsewhere).  The reader holds them: it read them a
 * lap ago, and its core's prefetcher fetches ahead of what it reads.  A
 * store to a line the other core holds waits until the line comes back,
 * and with the stores of a few small frames waiting so, the store buffer
 * fills and the sender stalls.  Asked for early, the lines are ours
 * when the next frames come: windows of 16 messages, 10 rounds against
 * vader's rate, without and with: 1 B 0.84 and 0.93, 16 B 0.80 and
 * 0.95, 64 B 0.81 and 1.03, 256 B 0.98 and 1.16 (2026-11-25; 2 lines
 * ahead gained half as much, 8 no more than 4).  Asked for again after
 * every frame: asking once per line was slower (1 B 0.88, 16 B 0.87),
 * as if the reader's side took them back (its prefetcher). */
static void
shm_own_ahead(struct shm_chan *ch)
{
#if defined(__x86_64__) || defined(__i386__)
    uint64_t at = ch->txpos & ~(uint64_t)63;

    for (int k = 1; k <= SHM_AHEAD; k++)
        __asm__ volatile("prefetchw %0"
                         :
                         : "m"(ch->txd[(at + 64 * (uint64_t)k) &
                                       (SHM_RING - 1)]));
#else
    (void)ch;
#endif
}

uint8_t *
shm_reserve(struct shm_chan *ch, size_t len)
{
    size_t at = (size_t)(ch->txpos & (SHM_RING - 1));

    if (len == 0 || len > SHM_CHUNK || len > SHM_RING - at ||
        !shm_fits(ch, len))
        return NULL;
    return ch->txd + at;
}

void
shm_commit(struct shm_chan *ch, size_t len, uint8_t first)
{
    uint8_t *start = ch->txd + (ch->txpos & (SHM_RING - 1));

    ch->txpos += len;
    shm_publish_whole(ch, start, first);
    shm_own_ahead(ch);
}

/* How much to read at once from a first short frame of n bytes at ring
 * offset at, with room bytes free: up to the writer's tail when the frame
 * is one line long or two (SHM_TAIL_READ_MIN to _MAX bytes) and more
 * follow.  Frames found one by one by their first byte and length are a
 * chain of loads, each waiting for the line the last one named: where
 * several share a line that costs less than a look at the tail (whose
 * line the writer stores to after every frame); from a line on it is a
 * miss waited for alone per frame, and the rate of 48-64 B messages fell
 * below vader's.  One copy up to the tail fetches those lines together.
 * Windows of 16 messages over shared memory, 7 interleaved runs against
 * vader's rate, without and with: 48 B 0.87 and 1.05, 64 B 0.94 and
 * 1.06 (96 B 0.95 and 0.97; 1 B, 16 B, 40 B and 128-256 B unchanged),
 * 64 B ping-pong latency 0.96 and 0.98 (2026-11-25). */
static size_t
shm_upto_tail(struct shm_chan *ch, size_t n, size_t room, size_t at)
{
    uint64_t tail;
    size_t m;

    if (n < SHM_TAIL_READ_MIN || n >= SHM_TAIL_READ_MAX)
        return n;
    tail = atomic_load_explicit(&ch->ctl->tail[1 - ch->side].v,
                                memory_order_acquire);
    if ((int64_t)(tail - ch->rxpos) <= (int64_t)n)
        return n;
    ch->rxseen = tail;
    m = (size_t)(tail - ch->rxpos);
    if (m > room)
        m = room;
    return m < SHM_RING - at ? m : SHM_RING - at;
}

size_t
shm_read_marked(struct shm_chan *ch, void *buf, size_t len, uint8_t mark,
                size_t hdrlen, size_t (*size)(const uint8_t *), int *none)
{
    uint8_t *out = buf, *p, first;
    size_t done = 0, at, n;

    *none = 0;
    /* Without membarrier the bell below would need a fence per read. */
    if (!ch->asym)
        return 0;
    for (;;) {
        at = (size_t)(ch->rxpos & (SHM_RING - 1));
        p = ch->rxd + at;
        if (len - done < hdrlen || SHM_RING - at < hdrlen)
            break;
        first = __atomic_load_n(p, __ATOMIC_ACQUIRE);
        if (first == 0 && done == 0)
            *none = 1; /* zeroed by the last publication: nothing yet */
        if (first != mark)
            break;
        n = size(p);
        if (n < hdrlen || n > len - done || n > SHM_RING - at)
            break; /* the tail's way (shm_read) takes it, or the parser
                      refuses it */
        if (done == 0)
            n = shm_upto_tail(ch, n, len, at);
        memcpy(out + done, p, n);
        ch->rxpos += n;
        done += n;
    }
    if (done == 0)
        return 0;
    atomic_store_explicit(&ch->ctl->head[1 - ch->side].v, ch->rxpos,
                          memory_order_release);
    /* A writer sleeps for room only on a full ring, which this read did
     * not look at: ring when the other side sleeps (its membarrier
     * orders our head store against this load, as for a writer). */
    shm_ring_bell(ch, 1);
    return done;
}

/* Bytes to read as far as the tail last seen shows.  A frame taken by
 * its first byte (shm_read_marked) may be ahead of the tail we see
 * (the writer stores its tail after that byte): none then. */
static size_t
shm_avail(const struct shm_chan *ch)
{
    return (int64_t)(ch->rxseen - ch->rxpos) > 0
               ? (size_t)(ch->rxseen - ch->rxpos)
               : 0;
}

size_t
shm_read(struct shm_chan *ch, void *buf, size_t len)
{
    _Atomic uint64_t *tail = &ch->ctl->tail[1 - ch->side].v;
    _Atomic uint64_t *head = &ch->ctl->head[1 - ch->side].v;
    uint8_t *out = buf;
    size_t done = 0, avail, piece, at;
    int full;

    /* Only a writer that found the ring full sleeps for room (shm_arm),
     * and then it is still full now: ring the bell only then, which
     * spares the common read a fence. */
    ch->rxseen = atomic_load_explicit(tail, memory_order_acquire);
    full = ch->rxseen - ch->rxpos == SHM_RING - 1;
    while (done < len) {
        avail = shm_avail(ch);
        if (avail == 0) {
            ch->rxseen = atomic_load_explicit(tail, memory_order_acquire);
            avail = shm_avail(ch);
            if (avail == 0)
                break;
        }
        at = (size_t)(ch->rxpos & (SHM_RING - 1));
        piece = len - done < avail ? len - done : avail;
        if (piece > SHM_RING - at)
            piece = SHM_RING - at;
        if (piece > SHM_CHUNK)
            piece = SHM_CHUNK;
        memcpy(out + done, ch->rxd + at, piece);
        ch->rxpos += piece;
        done += piece;
        /* Hand the room back at once: the writer may be waiting for it. */
        atomic_store_explicit(head, ch->rxpos, memory_order_release);
    }
    if (done > 0 && full)
        shm_ring_bell(ch, 0);
    return done;
}

int
shm_arm(struct shm_chan *ch, int want_room)
{
    struct shm_line *f = &ch->ctl->asleep[ch->side];
    uint64_t tail, head;

    atomic_store_explicit(&f->v, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    /* A writer that skips its fence (shm_asym_agree) counts on this: a
     * barrier on its core, so that its index store is seen below or it
     * sees our flag.  Without it we may not sleep. */
    if (atomic_load_explicit(&ch->ctl->asym[ch->side].v,
                             memory_order_relaxed) == 1 &&
        syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0) {
        atomic_store_explicit(&f->v, 0, memory_order_relaxed);
        return 0;
    }
    tail = atomic_load_explicit(&ch->ctl->tail[1 - ch->side].v,
                                memory_order_acquire);
    head = atomic_load_explicit(&ch->ctl->head[ch->side].v,
                                memory_order_acquire);
    /* Something to read, or room freed since we last found the ring
     * full (and we have more to write): no sleep. */
    if (tail != ch->rxpos || (want_room && head != ch->txseen)) {
        ch->txseen = head;
        atomic_store_explicit(&f->v, 0, memory_order_relaxed);
        return 0;
    }
    return 1;
}

void
shm_disarm(struct shm_chan *ch)
{
    atomic_store_explicit(&ch->ctl->asleep[ch->side].v, 0,
                          memory_order_relaxed);
}

/* --- single copy -------------------------------------------------------- */

int
shm_cma_reads(const struct shm_chan *ch)
{
    return atomic_load_explicit(&ch->ctl->reads[ch->side].v,
                                memory_order_acquire) == 1;
}

int
shm_cma_peer_reads(const struct shm_chan *ch)
{
    return atomic_load_explicit(&ch->ctl->reads[1 - ch->side].v,
                                memory_order_acquire) == 1;
}

void
shm_cma_refused(struct shm_chan *ch)
{
    atomic_store_explicit(&ch->ctl->reads[ch->side].v, 0,
                          memory_order_release);
}

int
shm_cma_read(struct shm_chan *ch, void *dst, uint64_t addr, size_t len)
{
    const struct shm_who *w = &ch->ctl->who[1 - ch->side];
    struct iovec local[2], remote[2];
    uint64_t cookie;
    size_t done = 0, piece;
    ssize_t n;

    /* Each piece reads the other's cookie too, in the same call (one
     * process's memory, looked up once): once the other process is gone
     * its pid may name another one, whose bytes these would be. */
    local[1].iov_base = &cookie;
    local[1].iov_len = sizeof cookie;
    remote[1].iov_base = (void *)(uintptr_t)w->cookie_at;
    remote[1].iov_len = sizeof cookie;
    while (done < len) {
        piece = len - done < SHM_CMA_PIECE ? len - done : SHM_CMA_PIECE;
        local[0].iov_base = (uint8_t *)dst + done;
        local[0].iov_len = piece;
        remote[0].iov_base = (void *)(uintptr_t)(addr + done);
        remote[0].iov_len = piece;
        cookie = 0;
        n = process_vm_readv(ch->peer, local, 2, remote, 2, 0);
        if (n == -1 && errno == EINTR)
            continue;
        if (n == -1)
            return -1;
        if ((size_t)n != piece + sizeof cookie || cookie != w->cookie) {
            /* Short: its memory went (it is exiting) or never was; or
             * not the process that was probed. */
            errno = (size_t)n == piece + sizeof cookie ? ESRCH : EFAULT;
            return -1;
        }
        done += piece;
    }
    return 0;
}

/* Is the other process the one that was probed (its cookie readable and
 * unchanged)?  errno set when not. */
static int
shm_cma_same(struct shm_chan *ch)
{
    const struct shm_who *w = &ch->ctl->who[1 - ch->side];
    uint64_t cookie = 0;
    struct iovec local = {&cookie, sizeof cookie}, remote;
    ssize_t n;

    remote.iov_base = (void *)(uintptr_t)w->cookie_at;
    remote.iov_len = sizeof cookie;
    while ((n = process_vm_readv(ch->peer, &local, 1, &remote, 1, 0)) == -1 &&
           errno == EINTR)
        ;
    if (n == -1)
        return 0;
    if (n != (ssize_t)sizeof cookie || cookie != w->cookie) {
        errno = ESRCH;
        return 0;
    }
    return 1;
}

int
shm_cma_write(struct shm_chan *ch, uint64_t addr, const void *src, size_t len)
{
    struct iovec local, remote;
    size_t done = 0, piece;
    ssize_t n;

    if (!shm_cma_same(ch))
        return -1;
    while (done < len) {
        piece = len - done < SHM_CMA_PIECE ? len - done : SHM_CMA_PIECE;
        local.iov_base = (void *)((const uint8_t *)src + done);
        local.iov_len = piece;
        remote.iov_base = (void *)(uintptr_t)(addr + done);
        remote.iov_len = piece;
        n = process_vm_writev(ch->peer, &local, 1, &remote, 1, 0);
        if (n == -1 && errno == EINTR)
            continue;
        if (n == -1)
            return -1;
        if (n == 0) {
            errno = EFAULT;
            return -1;
        }
        done += (size_t)n;
    }
    return shm_cma_same(ch) ? 0 : -1;
}

int
shm_cma_queue(struct shm_chan *ch, void *dst, uint64_t addr, size_t len)
{
    if (ch->nq == SHM_CMA_BATCH || len > SHM_CMA_PIECE)
        return -1;
    ch->qlocal[ch->nq].iov_base = dst;
    ch->qlocal[ch->nq].iov_len = len;
    ch->qremote[ch->nq].iov_base = (void *)(uintptr_t)addr;
    ch->qremote[ch->nq++].iov_len = len;
    ch->qbytes += len;
    return 0;
}

int
shm_cma_flush(struct shm_chan *ch)
{
    const struct shm_who *w = &ch->ctl->who[1 - ch->side];
    uint64_t cookie = 0;
    size_t n = ch->nq, want = ch->qbytes + sizeof cookie;
    ssize_t got;

    ch->nq = 0;
    ch->qbytes = 0;
    if (n == 0)
        return 0;
    /* The cookie last, in the same call: see shm_cma_read. */
    ch->qlocal[n].iov_base = &cookie;
    ch->qlocal[n].iov_len = sizeof cookie;
    ch->qremote[n].iov_base = (void *)(uintptr_t)w->cookie_at;
    ch->qremote[n].iov_len = sizeof cookie;
    while ((got = process_vm_readv(ch->peer, ch->qlocal, n + 1, ch->qremote,
                                   n + 1, 0)) == -1 &&
           errno == EINTR)
        ;
    if (got == -1)
        return -1;
    if ((size_t)got != want || cookie != w->cookie) {
        errno = (size_t)got == want ? ESRCH : EFAULT;
        return -1;
    }
    return 0;
}

int
shm_note(struct shm_chan *ch, uint32_t id, uint64_t addr, uint64_t len)
{
    struct shm_note *nn;
    uint64_t a, l;
    size_t ncap;

    /* An id the sender uses again belongs to a request of its that ended:
     * an announcement of it still here was never taken (a replay nobody
     * needed). */
    (void)shm_take(ch, id, &a, &l);
    if (ch->nnotes == ch->capnotes) {
        if (ch->capnotes >= SHM_NOTES_MAX)
            return -1;
        ncap = ch->capnotes ? ch->capnotes * 2 : 16;
        if ((nn = realloc(ch->notes, ncap * sizeof *nn)) == NULL)
            return -1;
        ch->notes = nn;
        ch->capnotes = ncap;
    }
    ch->notes[ch->nnotes].id = id;
    ch->notes[ch->nnotes].addr = addr;
    ch->notes[ch->nnotes++].len = len;
    return 0;
}

int
shm_take(struct shm_chan *ch, uint32_t id, uint64_t *addr, uint64_t *len)
{
    size_t i;

    for (i = ch->nnotes; i-- > 0;)
        if (ch->notes[i].id == id) {
            *addr = ch->notes[i].addr;
            *len = ch->notes[i].len;
            ch->notes[i] = ch->notes[--ch->nnotes];
            return 1;
        }
    return 0;
}

void
shm_test_kill_peer(struct shm_chan *ch)
{
    struct timespec ms = {0, 1000 * 1000};
    uint64_t got;
    struct iovec local = {&got, sizeof got}, remote;
    const struct shm_who *w = &ch->ctl->who[1 - ch->side];
    int i;

    remote.iov_base = (void *)(uintptr_t)w->cookie_at;
    remote.iov_len = sizeof got;
    (void)kill(ch->peer, SIGKILL);
    for (i = 0; i < 10000; i++) {
        if (process_vm_readv(ch->peer, &local, 1, &remote, 1, 0) == -1)
            return;
        nanosleep(&ms, NULL);
    }
}
