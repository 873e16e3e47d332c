/*
 * MPI_THREAD_MULTIPLE: one lock around the library.  Every MPI call
 * takes it on entry (MPII_ENTER, mpii.h) once the program asked for
 * MPI_THREAD_MULTIPLE, and gives it back on return; the library's own
 * calls of MPI functions nest (a count per thread).  Below that level
 * nothing changed: the library keeps its single-threaded state.
 *
 * A call that waits must let the others in, or a thread blocked in
 * MPI_Recv would hold off the thread that sends it the message.  The
 * waits do so at three places:
 *   mpii_yield_cpu   where a wait yields the core: released around it;
 *   mpii_let_in      between two busy passes: when another thread wants
 *                    the lock, handed over (a spinning waiter that
 *                    unlocked and locked again would keep it: pthread
 *                    mutexes are not fair);
 *   mpii_poll        where a wait sleeps in poll(): released for the
 *                    sleep, with an eventfd of the thread's own in the
 *                    set, so that another thread that moves the library
 *                    on (a request completed, a frame taken in) while
 *                    this one sleeps wakes it.
 * Without MPI_THREAD_MULTIPLE each is what it replaces.
 *
 * Not from inside a pass of the progress engine, though: the target of
 * a window serves an operation there, and waits for its data with a
 * receive of its own (rma_target.c).  With one thread such a wait runs
 * passes nested in the suspended one, which end before it resumes, and
 * the engine is written for that.  Were the lock given back, another
 * thread's pass could start there and be suspended in turn, and the two
 * would resume in an order nesting never gives.  So a wait nested in a
 * pass keeps the lock and runs the engine itself, as with one thread
 * (mpii_passes > 0), and the sleep of a pass (mpii_poll, called by
 * transport_progress before it reads anything) gives the lock back only
 * in the thread's outermost pass.  (A precaution: no failure was seen
 * without it.)
 *
 * The cost per call when the program runs one thread: a load and a
 * branch on entry and on return.  Under replication (-r 2) the library
 * grants at most MPI_THREAD_SERIALIZED: threads interleave their calls
 * differently in each replica, and replicas must make the same calls
 * in the same order (docs/mpi.md, "Threads").
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "mpii.h"

/* The lock is handed to another thread within this many yields, or
 * taken back (that thread was not running). */
#define HANDOFF_YIELDS 64

/* A thread asleep in mpii_poll with the lock given back. */
struct sleeper {
    int fd;    /* its eventfd */
    int rung;  /* written to since it slept */
    struct sleeper *next;
};

int mpii_mt;

static pthread_mutex_t lib = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int depth; /* this thread's nesting of MPI calls */
_Thread_local int mpii_passes;
static atomic_int wanting;      /* threads waiting for the lock */
static atomic_uint taken;       /* times the lock was taken */
static unsigned long events_at; /* mpii_events() when it was taken */
static struct sleeper *sleepers;
static pthread_t main_thread;
static pthread_key_t fd_key;
static pthread_once_t fd_once = PTHREAD_ONCE_INIT;

static void
take(void)
{
    atomic_fetch_add(&wanting, 1);
    pthread_mutex_lock(&lib);
    atomic_fetch_sub(&wanting, 1);
    atomic_fetch_add(&taken, 1);
    events_at = mpii_events();
}

/* Give the lock back; if this thread moved the library on, wake the
 * threads asleep in mpii_poll (their wait may be over). */
static void
give(int self_fd)
{
    struct sleeper *s;

    if (sleepers != NULL && mpii_events() != events_at)
        for (s = sleepers; s != NULL; s = s->next)
            if (!s->rung && s->fd != self_fd) {
                uint64_t one = 1;

                s->rung = 1;
                (void)!write(s->fd, &one, sizeof one);
            }
    pthread_mutex_unlock(&lib);
}

void
mpii_lock_enter(void)
{
    if (depth++ == 0)
        take();
}

void
mpii_lock_leave(void)
{
    if (--depth == 0)
        give(-1);
}

/* Give the lock back whatever the nesting, for a wait; the nesting to
 * restore (0: this thread did not hold it). */
static int
unlock_all(int self_fd)
{
    int d = depth;

    if (d > 0) {
        depth = 0;
        give(self_fd);
    }
    return d;
}

static void
relock(int d)
{
    if (d > 0) {
        take();
        depth = d;
    }
}

void
mpii_thread_init(int multiple)
{
    main_thread = pthread_self();
    mpii_mt = multiple;
}

int
mpii_thread_is_main(void)
{
    return pthread_equal(pthread_self(), main_thread);
}

void
mpii_yield_cpu(void)
{
    int d;

    if (!mpii_mt || depth == 0 || mpii_passes > 0) {
        sched_yield();
        return;
    }
    d = unlock_all(-1);
    sched_yield();
    relock(d);
}

void
mpii_let_in(void)
{
    unsigned t;
    int d, k;

    if (!mpii_mt || depth == 0 || mpii_passes > 0 ||
        atomic_load(&wanting) == 0)
        return;
    t = atomic_load(&taken);
    d = unlock_all(-1);
    for (k = 0; k < HANDOFF_YIELDS && atomic_load(&taken) == t &&
                atomic_load(&wanting) > 0;
         k++)
        sched_yield();
    relock(d);
}

static void
fd_close(void *v)
{
    close((int)(intptr_t)v - 1);
}

static void
fd_key_make(void)
{
    (void)pthread_key_create(&fd_key, fd_close);
}

/* This thread's eventfd, made on its first sleep and closed when it
 * ends; -1 if none can be had. */
static int
wake_fd(void)
{
    intptr_t v;
    int fd;

    (void)pthread_once(&fd_once, fd_key_make);
    if ((v = (intptr_t)pthread_getspecific(fd_key)) != 0)
        return (int)v - 1;
    if ((fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
        return -1;
    if (pthread_setspecific(fd_key, (void *)(intptr_t)(fd + 1)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int
mpii_poll(struct pollfd *pfd, int n, int timeout_ms)
{
    struct sleeper me, **pp;
    struct pollfd *set;
    uint64_t drain;
    int d, rc, i;

    if (!mpii_mt || depth == 0 || mpii_passes > 1)
        return poll(pfd, (nfds_t)n, timeout_ms);
    /* The set is the transport's, which another thread may rebuild (and
     * move) while this one sleeps: sleep on a copy, and give no revents
     * back. */
    if ((set = malloc(((size_t)n + 1) * sizeof *set)) == NULL ||
        (me.fd = wake_fd()) == -1) {
        /* Nothing to be woken by: a short sleep, the lock given back. */
        free(set);
        d = unlock_all(-1);
        rc = poll(pfd, (nfds_t)n, timeout_ms < 1 ? timeout_ms : 1);
        relock(d);
        return rc;
    }
    for (i = 0; i < n; i++)
        set[i] = pfd[i];
    set[n].fd = me.fd;
    set[n].events = POLLIN;
    set[n].revents = 0;
    me.rung = 0;
    me.next = sleepers;
    sleepers = &me;
    d = unlock_all(me.fd);
    rc = poll(set, (nfds_t)n + 1, timeout_ms);
    relock(d);
    for (pp = &sleepers; *pp != NULL; pp = &(*pp)->next)
        if (*pp == &me) {
            *pp = me.next;
            break;
        }
    if (me.rung)
        while (read(me.fd, &drain, sizeof drain) == -1 && errno == EINTR)
            ;
    free(set);
    return rc;
}
