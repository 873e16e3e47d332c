/* bench/tasks_api.c: the C task API's speed, run by bench/tasks.sh as
 * `p2prun --workers 0 tasks_api MODE N [BYTES]` (p2p_task.h).
 *
 *   map N          p2p_map of an empty task over N empty inputs (after a
 *                  warm-up of 200): prints the seconds
 *   rtt N          N single p2p_submit + p2p_wait_any round trips (after
 *                  20 to warm up): prints the median in milliseconds
 *   bytes N B      p2p_map of N calls of B bytes in and B bytes out:
 *                  prints the seconds
 *
 * Times are taken inside the program, after the farm is up, as Dask's
 * figure is taken after its cluster is up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <p2p_task.h>

P2P_TASK(empty)
{
    return 0;
}

/* Answers as many bytes as it was given (in bytes' mode). */
P2P_TASK(echo_size)
{
    static char *buf;
    static size_t cap;
    size_t want = (size_t)strtoul(in, NULL, 10);

    if (want > cap) {
        free(buf);
        buf = calloc(1, want);
        cap = buf != NULL ? want : 0;
    }
    return p2p_result_write(res, buf, want <= cap ? want : 0);
}

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
map_empty(p2p_farm *f, size_t n)
{
    const void **ins = calloc(n, sizeof *ins);
    size_t *lens = calloc(n, sizeof *lens);
    int rc;

    rc = p2p_map(f, "empty", ins, lens, n, NULL, NULL, NULL);
    free(ins);
    free(lens);
    return rc;
}

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
    p2p_farm *f = p2p_farm_open(&argc, &argv, NULL);
    const char *mode = argc > 1 ? argv[1] : "map";
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000, i;
    size_t bytes = argc > 3 ? strtoul(argv[3], NULL, 10) : 49152;
    double t, *rtt;
    p2p_outcome o;
    int rc = 0;

    if (f == NULL || n == 0)
        return 1;
    if (strcmp(mode, "map") == 0) {
        rc |= map_empty(f, 200);
        t = now();
        rc |= map_empty(f, n);
        printf("%.4f\n", now() - t);
    } else if (strcmp(mode, "rtt") == 0) {
        rtt = calloc(n, sizeof *rtt);
        for (i = 0; i < n + 20; i++) {
            t = now();
            rc |= p2p_submit(f, "empty", NULL, 0, NULL);
            rc |= p2p_wait_any(f, &o);
            if (i >= 20)
                rtt[i - 20] = (now() - t) * 1000;
        }
        qsort(rtt, n, sizeof *rtt, cmp);
        printf("%.3f\n", rtt[n / 2]);
        free(rtt);
    } else if (strcmp(mode, "bytes") == 0) {
        /* The input is a decimal size, padded with NULs to its size. */
        char *in = calloc(1, bytes);
        const void **ins = calloc(n, sizeof *ins);
        size_t *lens = calloc(n, sizeof *lens), *outlens = calloc(n, sizeof *outlens);
        void **outs = calloc(n, sizeof *outs);

        snprintf(in, bytes, "%zu", bytes);
        for (i = 0; i < n; i++) {
            ins[i] = in;
            lens[i] = bytes;
        }
        t = now();
        rc |= p2p_map(f, "echo_size", ins, lens, n, outs, outlens, NULL);
        printf("%.4f\n", now() - t);
        for (i = 0; i < n; i++) {
            rc |= outlens[i] != bytes;
            free(outs[i]);
        }
    }
    if (rc != 0)
        fprintf(stderr, "tasks_api: %s\n", p2p_farm_error(f));
    p2p_farm_close(f);
    return rc != 0;
}
