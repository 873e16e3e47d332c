/* bench/tasks_api.c: the C task API's speed, run by bench/tasks.sh as
 * `p2prun --workers 0 tasks_api MODE N [BYTES]` (p2p_task.h).
 *
 *   map N          p2p_map of an empty task over N empty inputs (after a
 *                  warm-up of 200): prints the seconds, then the CPU time
 *                  per task (microseconds) of this program, p2prun, the
 *                  embedded peers' peerd and the workers (the processes
 *                  under p2prun, found in /proc)
 *   rtt N          N single p2p_submit + p2p_wait_any round trips (after
 *                  20 to warm up): prints the median in milliseconds
 *   bytes N B      p2p_map of N calls of B bytes in and B bytes out:
 *                  prints the seconds
 *
 * Times are taken inside the program, after the farm is up, as Dask's
 * figure is taken after its cluster is up. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* CPU ticks so far of this program, p2prun (our parent), its peerd
 * children and their children (the workers). */
struct cpu {
    double self, p2prun, peerd, workers;
};

/* A process's parent and CPU ticks, and whether it is a peerd. */
static int
proc_stat(int pid, int *ppid, double *ticks, int *is_peerd)
{
    char path[64], buf[1024], *p;
    unsigned long ut, st;
    FILE *fp;
    size_t n;

    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if ((fp = fopen(path, "r")) == NULL)
        return -1;
    n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    /* pid (comm) state ppid ... utime(14) stime(15) */
    if ((p = strrchr(buf, ')')) == NULL ||
        sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               ppid, &ut, &st) != 3)
        return -1;
    *ticks = (double)(ut + st);
    *is_peerd = strstr(buf, "(peerd)") != NULL;
    return 0;
}

static void
cpu_snapshot(struct cpu *c)
{
    int me = getpid(), parent = getppid(), peerds[64], np = 0, i, pid, pp,
        isp;
    DIR *d = opendir("/proc");
    struct dirent *de;
    double t;

    memset(c, 0, sizeof *c);
    if (d == NULL)
        return;
    /* Two passes: the peerds first, then their children. */
    while ((de = readdir(d)) != NULL) {
        if ((pid = atoi(de->d_name)) <= 0 ||
            proc_stat(pid, &pp, &t, &isp) == -1)
            continue;
        if (pid == me)
            c->self = t;
        else if (pid == parent)
            c->p2prun = t;
        else if (pp == parent && isp && np < 64) {
            c->peerd += t;
            peerds[np++] = pid;
        }
    }
    rewinddir(d);
    while ((de = readdir(d)) != NULL) {
        if ((pid = atoi(de->d_name)) <= 0 ||
            proc_stat(pid, &pp, &t, &isp) == -1)
            continue;
        for (i = 0; i < np; i++)
            if (pp == peerds[i])
                c->workers += t;
    }
    closedir(d);
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
    size_t bytes = argc > 3 ? strtoul(argv[3], NULL, 10) : 65536;
    double t, *rtt;
    p2p_outcome o;
    int rc = 0;

    if (f == NULL || n == 0)
        return 1;
    if (strcmp(mode, "map") == 0) {
        struct cpu a, b;
        double us = 1e6 / (double)sysconf(_SC_CLK_TCK) / (double)n;

        rc |= map_empty(f, 200);
        cpu_snapshot(&a);
        t = now();
        rc |= map_empty(f, n);
        t = now() - t;
        cpu_snapshot(&b);
        printf("%.4f %.1f %.1f %.1f %.1f\n", t, (b.self - a.self) * us,
               (b.p2prun - a.p2prun) * us, (b.peerd - a.peerd) * us,
               (b.workers - a.workers) * us);
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
