/*
 * mpitest.h: the few helpers shared by the self-checking MPI programs of
 * tests/mpi.  Standard MPI only, so that every program also builds with
 * Open MPI's or MPICH's mpicc.
 *
 * CHECK(cond, fmt, ...) prints what failed (rank, line, message) and
 * counts it; t_finish(name) sums the failures over all ranks, prints
 * "ok NAME" from rank 0 when there are none, finalizes, and returns the
 * process's exit status.  A check that makes going on pointless uses
 * CHECK_FATAL, which aborts the job.
 */
#ifndef MPITEST_H
#define MPITEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int t_rank, t_size, t_errors;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            t_errors++;                                                        \
            if (t_errors <= 20) {                                              \
                fprintf(stderr, "rank %d: %s:%d: %s: ", t_rank, __FILE__,      \
                        __LINE__, #cond);                                      \
                fprintf(stderr, __VA_ARGS__);                                  \
                fputc('\n', stderr);                                           \
                fflush(stderr);                                                \
            }                                                                  \
        }                                                                      \
    } while (0)

#define CHECK_FATAL(cond, ...)                                                 \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "rank %d: %s:%d: fatal: %s: ", t_rank, __FILE__,   \
                    __LINE__, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            fflush(stderr);                                                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                      \
        }                                                                      \
    } while (0)

/* An MPI call that must succeed. */
#define MPI_OK(call)                                                           \
    do {                                                                       \
        int t_rc_ = (call);                                                    \
        CHECK_FATAL(t_rc_ == MPI_SUCCESS, "returned %d", t_rc_);               \
    } while (0)

static inline void
t_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
}

static inline int
t_finish(const char *name)
{
    int total = 0;

    MPI_Allreduce(&t_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total == 0 && t_rank == 0) {
        printf("ok %s\n", name);
        fflush(stdout);
    }
    if (total != 0 && t_rank == 0)
        fprintf(stderr, "FAILED %s: %d failed checks over %d ranks\n", name,
                total, t_size);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

/* A deterministic byte pattern for message m at offset i. */
static inline unsigned char
t_pat(int m, size_t i)
{
    return (unsigned char)((size_t)m * 131u + i * 7u + (i >> 8) * 3u);
}

static inline void
t_fill(void *buf, size_t n, int m)
{
    unsigned char *b = buf;

    for (size_t i = 0; i < n; i++)
        b[i] = t_pat(m, i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long
t_verify(const void *buf, size_t n, int m)
{
    const unsigned char *b = buf;

    for (size_t i = 0; i < n; i++)
        if (b[i] != t_pat(m, i))
            return (long)i;
    return -1;
}

/* The partner of a rank for pairwise tests: r ^ 1, or itself when that
 * rank does not exist (an odd size's last rank talks to itself). */
static inline int
t_partner(void)
{
    int p = t_rank ^ 1;

    return p < t_size ? p : t_rank;
}

static inline void *
t_malloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);

    CHECK_FATAL(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

#endif
