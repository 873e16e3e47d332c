/* A permutation test farmed out with the C task API (p2p_task.h): is the
 * mean of group B different from group A's?  The observed difference is
 * compared with the differences of NBATCH x PERBATCH random relabellings;
 * each call of the task "permute" runs one batch with its own seed and
 * returns how many of its relabellings were at least as extreme.  p2p_map
 * gives the counts back in the order of the seeds, so the answer is the
 * same however the batches were spread.
 *
 *   p2pcc -O2 -o permtest permtest.c
 *   p2prun --workers 0 ./permtest          (on the network)
 *   ./permtest                             (here, in this process)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <p2p_task.h>

#define NBATCH 200
#define PERBATCH 5000

static const double a[] = {4.1, 5.3, 3.9, 4.8, 5.0, 4.4, 3.7, 4.6, 5.1, 4.2};
static const double b[] = {5.2, 5.9, 4.8, 6.1, 5.5, 5.0, 6.3, 5.4, 4.9, 5.8};
#define NA (sizeof a / sizeof a[0])
#define NB (sizeof b / sizeof b[0])

/* Group A then group B, as labelled. */
static void
observed(double *x)
{
    size_t i;

    for (i = 0; i < NA; i++)
        x[i] = a[i];
    for (i = 0; i < NB; i++)
        x[NA + i] = b[i];
}

static double
mean_diff(const double *x)
{
    double sa = 0, sb = 0;
    size_t i;

    for (i = 0; i < NA; i++)
        sa += x[i];
    for (i = 0; i < NB; i++)
        sb += x[NA + i];
    return sb / NB - sa / NA;
}

/* xorshift64*: small, and the same on every machine. */
static uint64_t
next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Input: a seed (text).  Output: the count of relabellings at least as
 * extreme as the observed labelling, as text. */
P2P_TASK(permute)
{
    uint64_t s = strtoull(in, NULL, 10) * 0x9e3779b97f4a7c15ull + 1;
    double x[NA + NB], obs, t;
    size_t i, j;
    long k, hits = 0;

    observed(x);
    obs = fabs(mean_diff(x));
    for (k = 0; k < PERBATCH; k++) {
        for (i = NA + NB - 1; i > 0; i--) { /* Fisher-Yates */
            j = (size_t)(next(&s) % (i + 1));
            t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
        hits += fabs(mean_diff(x)) >= obs - 1e-12;
    }
    return p2p_result_printf(res, "%ld", hits);
}

int
main(int argc, char **argv)
{
    p2p_farm *f = p2p_farm_open(&argc, &argv, NULL);
    static char seeds[NBATCH][24];
    const void *ins[NBATCH];
    size_t inlens[NBATCH], outlens[NBATCH];
    void *outs[NBATCH];
    int st[NBATCH], rc, i;
    long hits = 0;
    double x[NA + NB];

    if (f == NULL) {
        perror("p2p_farm_open");
        return 1;
    }
    for (i = 0; i < NBATCH; i++) {
        inlens[i] = (size_t)snprintf(seeds[i], sizeof seeds[i], "%d", i + 1);
        ins[i] = seeds[i];
    }
    rc = p2p_map(f, "permute", ins, inlens, NBATCH, outs, outlens, st);
    if (rc != P2P_OK) {
        fprintf(stderr, "permtest: %s: %s\n", p2p_task_strerror(rc),
                p2p_farm_error(f));
        p2p_farm_close(f);
        return 1;
    }
    for (i = 0; i < NBATCH; i++) {
        hits += strtol(outs[i], NULL, 10); /* a result ends in a NUL */
        free(outs[i]);
    }
    observed(x);
    printf("observed difference of means %.3f; p = %.5f (%d relabellings)\n",
           fabs(mean_diff(x)),
           (double)(hits + 1) / ((double)NBATCH * PERBATCH + 1),
           NBATCH * PERBATCH);
    return p2p_farm_close(f) == P2P_OK ? 0 : 1;
}
