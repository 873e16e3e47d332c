/*
 * threads: MPI_THREAD_MULTIPLE.  Four threads per rank call MPI at once:
 *   - a ring on MPI_COMM_WORLD, each thread on its own tag, messages from
 *     1 byte to 1 MiB (eager and rendezvous), blocking and nonblocking;
 *   - a receive (and a probe) blocked in one thread that only another
 *     thread's send to this same rank can satisfy;
 *   - collectives, each thread on a communicator of its own;
 *   - communicators made by all threads at once (Comm_dup, Comm_split):
 *     each must get a context of its own, or their messages mix;
 *   - a generalized request waited for by one thread and completed by
 *     another;
 *   - one-sided operations on one window from all threads at once, in a
 *     passive-target epoch: each thread Puts to a slot of its own at the
 *     next rank, flushes, Gets it back and flushes every target (each
 *     flush waits for the window's pending operations, the other
 *     threads' among them).
 * MPI_Is_thread_main is checked from both kinds of thread.  A library
 * that grants less (p2pmpi under replication gives SERIALIZED) must say
 * so through provided and MPI_Query_thread; the rest is skipped then.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "mpitest.h"

#define NT 4
#define RING_ITER 40
#define COLL_ITER 20
#define MAKE_ITER 16
#define RMA_ITER 200
#define SELF_TAG 777

/* CHECK from any thread. */
#define TCHECK(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            __atomic_add_fetch(&t_errors, 1, __ATOMIC_RELAXED);                \
            fprintf(stderr, "rank %d: %s:%d: %s: ", t_rank, __FILE__,          \
                    __LINE__, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

static const int ring_sizes[] = {1, 1000, 70000, 8, 300000, 1 << 20};
#define NSIZES ((int)(sizeof ring_sizes / sizeof ring_sizes[0]))

static MPI_Comm comms[NT];
static MPI_Win win;

static void
nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static void *
ring(void *arg)
{
    int t = (int)(intptr_t)arg, left = (t_rank + t_size - 1) % t_size,
        right = (t_rank + 1) % t_size;
    unsigned char *sbuf = malloc(1 << 20), *rbuf = malloc(1 << 20);
    MPI_Request rq;
    MPI_Status st;
    int count;

    for (int i = 0; i < RING_ITER; i++) {
        int n = ring_sizes[(i + t) % NSIZES];

        t_fill(sbuf, (size_t)n, t_rank * 1000 + t * 100 + i);
        memset(rbuf, 0, (size_t)n);
        switch ((i + t) % 3) {
        case 0:
            MPI_Irecv(rbuf, n, MPI_BYTE, left, t, MPI_COMM_WORLD, &rq);
            MPI_Send(sbuf, n, MPI_BYTE, right, t, MPI_COMM_WORLD);
            MPI_Wait(&rq, &st);
            break;
        case 1:
            MPI_Sendrecv(sbuf, n, MPI_BYTE, right, t, rbuf, n, MPI_BYTE,
                         left, t, MPI_COMM_WORLD, &st);
            break;
        default:
            MPI_Isend(sbuf, n, MPI_BYTE, right, t, MPI_COMM_WORLD, &rq);
            MPI_Recv(rbuf, n, MPI_BYTE, left, t, MPI_COMM_WORLD, &st);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            break;
        }
        MPI_Get_count(&st, MPI_BYTE, &count);
        TCHECK(count == n && st.MPI_SOURCE == left && st.MPI_TAG == t,
               "thread %d message %d: %d bytes from %d tag %d", t, i, count,
               st.MPI_SOURCE, st.MPI_TAG);
        TCHECK(t_verify(rbuf, (size_t)n, left * 1000 + t * 100 + i) == -1,
               "thread %d message %d (%d bytes) differs at %ld", t, i, n,
               t_verify(rbuf, (size_t)n, left * 1000 + t * 100 + i));
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

/* Blocked until the main thread sends to this rank: the library must
 * not hold the main thread off while this one waits. */
static void *
self_wait(void *arg)
{
    int probe = (int)(intptr_t)arg, v = -1, count = -1;
    MPI_Status st;

    if (probe) {
        MPI_Probe(MPI_ANY_SOURCE, SELF_TAG, comms[0], &st);
        MPI_Get_count(&st, MPI_INT, &count);
        TCHECK(count == 1 && st.MPI_SOURCE == t_rank, "probe: %d from %d",
               count, st.MPI_SOURCE);
    }
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, SELF_TAG, comms[0], &st);
    TCHECK(v == 4242 + probe && st.MPI_SOURCE == t_rank,
           "self receive: %d from %d", v, st.MPI_SOURCE);
    return NULL;
}

static void *
collectives(void *arg)
{
    int t = (int)(intptr_t)arg, n = 4000, sum, want, root;
    int *buf = malloc((size_t)n * sizeof *buf);

    for (int i = 0; i < COLL_ITER; i++) {
        int mine = t_rank + t * 100 + i;

        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comms[t]);
        want = t_size * (t_size - 1) / 2 + t_size * (t * 100 + i);
        TCHECK(sum == want, "thread %d allreduce %d: %d, want %d", t, i, sum,
               want);
        root = (i + t) % t_size;
        for (int k = 0; k < n; k++)
            buf[k] = t_rank == root ? t * 1000000 + i * 1000 + k : -1;
        MPI_Bcast(buf, n, MPI_INT, root, comms[t]);
        TCHECK(buf[0] == t * 1000000 + i * 1000 &&
                   buf[n - 1] == t * 1000000 + i * 1000 + n - 1,
               "thread %d bcast %d: %d ... %d", t, i, buf[0], buf[n - 1]);
        MPI_Barrier(comms[t]);
    }
    free(buf);
    return NULL;
}

/* Every thread makes communicators at the same time as the others. */
static void *
make_comms(void *arg)
{
    int t = (int)(intptr_t)arg;

    for (int i = 0; i < MAKE_ITER; i++) {
        MPI_Comm d, s;
        int v = t * 1000 + i, got = -1, size, ssize;

        MPI_Comm_dup(comms[t], &d);
        MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_MAX, d);
        TCHECK(got == v, "thread %d dup %d: %d", t, i, got);
        MPI_Comm_split(d, t_rank % 2, -t_rank, &s);
        MPI_Comm_size(s, &size);
        ssize = (t_size + (t_rank % 2 == 0)) / 2;
        TCHECK(size == ssize, "thread %d split %d: size %d, want %d", t, i,
               size, ssize);
        v = t * 1000 + i + 500;
        MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_MIN, s);
        TCHECK(got == v, "thread %d split %d: %d", t, i, got);
        MPI_Comm_free(&s);
        MPI_Comm_free(&d);
    }
    return NULL;
}

static void *
one_sided(void *arg)
{
    int t = (int)(intptr_t)arg, target = (t_rank + 1) % t_size;

    for (int i = 0; i < RMA_ITER; i++) {
        int v = t_rank * 100000 + t * 1000 + i, got = -1;

        MPI_Put(&v, 1, MPI_INT, target, t, 1, MPI_INT, win);
        MPI_Win_flush(target, win);
        MPI_Get(&got, 1, MPI_INT, target, t, 1, MPI_INT, win);
        MPI_Win_flush_all(win);
        TCHECK(got == v, "thread %d round %d: got %d back, put %d", t, i, got,
               v);
    }
    return NULL;
}

static int
greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = 31;
    return MPI_SUCCESS;
}

static int
greq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int
greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void *
greq_completer(void *arg)
{
    nap_ms(30);
    MPI_Grequest_complete(*(MPI_Request *)arg);
    return NULL;
}

static void *
is_main(void *arg)
{
    int flag = -1;

    (void)arg;
    MPI_Is_thread_main(&flag);
    TCHECK(flag == 0, "Is_thread_main in another thread: %d", flag);
    return NULL;
}

/* Run fn in NT threads, the t-th given t. */
static void
in_threads(void *(*fn)(void *))
{
    pthread_t th[NT];

    for (int t = 0; t < NT; t++)
        CHECK_FATAL(pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t) == 0,
                    "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
}

int
main(int argc, char **argv)
{
    int provided = -1, queried = -1, flag = -1;
    pthread_t th;
    MPI_Request greq;
    MPI_Status st;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    MPI_Query_thread(&queried);
    CHECK(queried == provided, "Query_thread %d, Init_thread %d", queried,
          provided);
    MPI_Is_thread_main(&flag);
    CHECK(flag == 1, "Is_thread_main in the main thread: %d", flag);
    if (provided < MPI_THREAD_MULTIPLE) {
        /* Replicas: the program's threads take turns. */
        CHECK(provided == MPI_THREAD_SERIALIZED, "provided %d", provided);
        if (t_rank == 0)
            printf("threads: MPI_THREAD_MULTIPLE not granted (%d)\n",
                   provided);
        CHECK_FATAL(pthread_create(&th, NULL, is_main, NULL) == 0, "create");
        pthread_join(th, NULL);
        return t_finish("threads");
    }
    CHECK_FATAL(pthread_create(&th, NULL, is_main, NULL) == 0, "create");
    pthread_join(th, NULL);
    for (int t = 0; t < NT; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);

    in_threads(ring);

    for (int probe = 0; probe < 2; probe++) {
        int v = 4242 + probe;

        CHECK_FATAL(pthread_create(&th, NULL, self_wait,
                                   (void *)(intptr_t)probe) == 0,
                    "create");
        nap_ms(50); /* the other thread is blocked by now */
        MPI_Send(&v, 1, MPI_INT, t_rank, SELF_TAG, comms[0]);
        pthread_join(th, NULL);
    }

    in_threads(collectives);
    in_threads(make_comms);

    MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &greq);
    CHECK_FATAL(pthread_create(&th, NULL, greq_completer, &greq) == 0,
                "create");
    MPI_Wait(&greq, &st);
    pthread_join(th, NULL);
    CHECK(st.MPI_TAG == 31, "generalized request's status: tag %d",
          st.MPI_TAG);

    {
        int *base;

        MPI_Win_allocate(NT * (MPI_Aint)sizeof(int), sizeof(int),
                         MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_lock_all(0, win);
        in_threads(one_sided);
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }

    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&comms[t]);
    return t_finish("threads");
}
