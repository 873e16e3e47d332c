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
 * Sleeping: a side about to sleep in poll raises its flag, then looks at
 * the ring once more; a side that wrote or freed room looks at the other's
 * flag after a full fence and, when it is up, takes it down and writes a
 * byte to the pair's TCP socket.  Either the sleeper sees the data, or
 * the writer sees the flag (the fences order the flag against the index
 * on both sides), so no wake-up is lost.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm.h"

#define SHM_RING (512 * 1024)  /* bytes per direction, a power of two */
#define SHM_CHUNK (32 * 1024)  /* published piece of a large write */
#define SHM_CTL 4096           /* the control page */
#define SHM_SIZE (SHM_CTL + 2 * (size_t)SHM_RING)
#define SHM_MAGIC 0x3153324du  /* "M2S1": bump when the layout changes */
#define SHM_DIR "/dev/shm"
#define SHM_PREFIX "p2pmpi-"

/* One index or flag alone on its cache line. */
struct shm_line {
    _Alignas(64) _Atomic uint64_t v;
};

/* The control page.  Ring 0 carries the creator's bytes to the attacher,
 * ring 1 the attacher's to the creator; asleep[s] is side s's flag (0:
 * creator). */
struct shm_ctl {
    uint32_t magic, ring;
    struct shm_line attached;
    struct shm_line tail[2], head[2];
    struct shm_line asleep[2];
};

_Static_assert(sizeof(struct shm_ctl) <= SHM_CTL, "control page too small");
_Static_assert((SHM_RING & (SHM_RING - 1)) == 0, "ring not a power of two");

struct shm_chan {
    struct shm_ctl *ctl;
    uint8_t *base;
    int side;  /* 0: creator, 1: attacher */
    int bell;  /* the pair's TCP socket, or -1 */
    uint8_t *txd, *rxd;
    uint64_t txpos, txseen; /* our tail; the reader's head as last seen */
    uint64_t rxpos, rxseen; /* our head; the writer's tail as last seen */
    char path[sizeof SHM_DIR + sizeof SHM_PREFIX + SHM_NAME_LEN + 1];
    int named; /* path still exists (ours to unlink) */
};

int
shm_enabled(void)
{
    const char *v = getenv("P2P_SHM");

    return !(v != NULL && (strcmp(v, "0") == 0 || strcmp(v, "no") == 0 ||
                           strcmp(v, "off") == 0));
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

struct shm_chan *
shm_create(const char *name)
{
    struct shm_chan *ch = calloc(1, sizeof *ch);
    void *p;
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
    p = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        goto error;
    close(fd);
    ch->base = p;
    ch->side = 0;
    shm_wire(ch);
    ch->ctl->magic = SHM_MAGIC;
    ch->ctl->ring = SHM_RING;
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
    void *p;
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
    p = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        goto error;
    close(fd);
    fd = -1;
    ch->base = p;
    ch->side = 1;
    shm_wire(ch);
    if (ch->ctl->magic != SHM_MAGIC || ch->ctl->ring != SHM_RING)
        goto error;
    /* Both sides have it mapped: nobody else needs the name. */
    (void)unlink(ch->path);
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
    return atomic_load_explicit(&ch->ctl->attached.v, memory_order_acquire) ==
           1;
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
    free(ch);
}

void
shm_set_bell(struct shm_chan *ch, int fd)
{
    ch->bell = fd;
}

/* We moved an index: wake the other side if it sleeps. */
static void
shm_ring_bell(struct shm_chan *ch)
{
    struct shm_line *f = &ch->ctl->asleep[1 - ch->side];

    /* Orders our index store before the flag's load (the sleeper does the
     * mirror image in shm_arm). */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&f->v, memory_order_relaxed) != 0 &&
        atomic_exchange_explicit(&f->v, 0, memory_order_relaxed) != 0 &&
        ch->bell != -1)
        (void)send(ch->bell, "", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

size_t
shm_writev(struct shm_chan *ch, const struct iovec *iov, int n)
{
    _Atomic uint64_t *tail = &ch->ctl->tail[ch->side].v;
    _Atomic uint64_t *head = &ch->ctl->head[ch->side].v;
    uint64_t published = ch->txpos;
    size_t done = 0, left, room, piece, at;
    const uint8_t *p;
    int i;

    for (i = 0; i < n; i++) {
        p = iov[i].iov_base;
        left = iov[i].iov_len;
        while (left > 0) {
            room = SHM_RING - (size_t)(ch->txpos - ch->txseen);
            if (room == 0) {
                ch->txseen = atomic_load_explicit(head, memory_order_acquire);
                room = SHM_RING - (size_t)(ch->txpos - ch->txseen);
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
                atomic_store_explicit(tail, ch->txpos, memory_order_release);
                published = ch->txpos;
            }
        }
    }
out:
    if (ch->txpos != published)
        atomic_store_explicit(tail, ch->txpos, memory_order_release);
    if (done > 0)
        shm_ring_bell(ch);
    return done;
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
    full = ch->rxseen - ch->rxpos == SHM_RING;
    while (done < len) {
        avail = (size_t)(ch->rxseen - ch->rxpos);
        if (avail == 0) {
            ch->rxseen = atomic_load_explicit(tail, memory_order_acquire);
            avail = (size_t)(ch->rxseen - ch->rxpos);
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
        shm_ring_bell(ch);
    return done;
}

int
shm_arm(struct shm_chan *ch, int want_room)
{
    struct shm_line *f = &ch->ctl->asleep[ch->side];
    uint64_t tail, head;

    atomic_store_explicit(&f->v, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
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
