/*
 * peerd's read of a worker's stderr at its answer (job_drain_stderr):
 * what the worker wrote before answering belongs to that task, but a
 * worker that writes stderr without end must not keep peerd in that read
 * (queueing past the backlog's bound, and never back to its loop).  The
 * read stops at what the pipe held when it began (FIONREAD).
 *
 * A job is made here without spawning anything (job_int.h has peerd's
 * struct job); worker_stderr, which takes what is read, is replaced at
 * link time (-Wl,--wrap) by a fake that can refill the pipe as fast as
 * it is read: a flood that never lets the pipe run dry, made
 * deterministic.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../../peerd/job_int.h"

#include "test.h"

/* Stop a drain that would not stop: 64 MiB in 16 KiB refills. */
#define REFILL_MAX 4096
#define REFILL 16384

static int wfd = -1;       /* the pipe's writing end */
static int refill;         /* write REFILL more per piece taken */
static size_t got, pieces; /* bytes and pieces the worker was given */
static size_t refills;

void __wrap_worker_stderr(struct worker *, const uint8_t *, size_t);

void
__wrap_worker_stderr(struct worker *w, const uint8_t *p, size_t n)
{
    static const uint8_t more[REFILL];

    got += n;
    pieces++;
    if (refill && refills < REFILL_MAX &&
        write(wfd, more, sizeof more) == (ssize_t)sizeof more)
        refills++;
}

/* A one-process job whose stderr is a non-blocking pipe holding n bytes;
 * its writing end in wfd. */
static struct job *
drain_job(struct proc *p, size_t n)
{
    static struct job j;
    static int fake_worker;
    static uint8_t buf[1 << 20];
    int fds[2];

    memset(&j, 0, sizeof j);
    memset(p, 0, sizeof *p);
    got = pieces = refills = 0;
    refill = 0;
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) == -1) {
        test_fail(__FILE__, __LINE__, "pipe2: %s", strerror(errno));
        return &j;
    }
    /* Room for the flood's refills on top of what is there. */
    (void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
    if (n > 0 && write(fds[1], buf, n) != (ssize_t)n)
        test_fail(__FILE__, __LINE__, "filling the pipe with %zu", n);
    wfd = fds[1];
    p->job = &j;
    p->out[0].fd = -1;
    p->out[1].fd = fds[0];
    p->out[1].stream = 2;
    p->out[1].proc = p;
    j.procs = p;
    j.nprocs = 1;
    j.worker = (struct worker *)&fake_worker;
    return &j;
}

static void
drain_done(struct proc *p)
{
    close(p->out[1].fd);
    close(wfd);
    wfd = -1;
}

/* What the worker wrote before its answer is read, all of it. */
static void
t_all_before(void)
{
    struct proc p;
    struct job *j = drain_job(&p, 100000);
    int left = -1;

    job_drain_stderr(j);
    CHECK_EQ_INT(got, 100000);
    CHECK(ioctl(p.out[1].fd, FIONREAD, &left) == 0);
    CHECK_EQ_INT(left, 0);
    drain_done(&p);
}

/* A flood that refills the pipe as fast as it is read: the read ends at
 * what the pipe held when it began, and returns (to the loop). */
static void
t_flood_bounded(void)
{
    struct proc p;
    struct job *j = drain_job(&p, 65536);
    int left = -1;

    refill = 1;
    job_drain_stderr(j);
    CHECK_EQ_INT(got, 65536);
    CHECK(refills < REFILL_MAX);
    /* What came after is left for the ordinary reads, paced by the
     * backlog. */
    CHECK(ioctl(p.out[1].fd, FIONREAD, &left) == 0);
    CHECK_EQ_INT(left, refills * REFILL);
    drain_done(&p);
}

/* Nothing written, or no stderr left: nothing read, at once. */
static void
t_nothing(void)
{
    struct proc p;
    struct job *j = drain_job(&p, 0);

    job_drain_stderr(j);
    CHECK_EQ_INT(got, 0);
    drain_done(&p);
    j = drain_job(&p, 10);
    close(p.out[1].fd);
    p.out[1].fd = -1;
    job_drain_stderr(j);
    CHECK_EQ_INT(got, 0);
    close(wfd);
}

/* The worker gone (its job no longer has one): nothing read. */
static void
t_no_worker(void)
{
    struct proc p;
    struct job *j = drain_job(&p, 4096);

    j->worker = NULL;
    job_drain_stderr(j);
    CHECK_EQ_INT(got, 0);
    drain_done(&p);
}

static const struct test_case cases[] = {
    {"all_before", t_all_before},
    {"flood_bounded", t_flood_bounded},
    {"nothing", t_nothing},
    {"no_worker", t_no_worker},
};

TEST_MAIN(cases)
