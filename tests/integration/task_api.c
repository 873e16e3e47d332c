/*
 * A program that calls tasks through the C task API (p2p_task.h), run by
 * test_workers.py as `p2prun --workers W ./task_api MODE N`: the same
 * binary is the caller here and the worker on every peer.  Each mode
 * checks what it gets and prints one line the test compares.
 *
 *   map N    p2p_map of square over 0..N-1: every result, in order
 *   async N  N submits whose tasks end in reverse order, then wait_any:
 *            every outcome once, matched to its call by id
 *   crash    a task that kills its worker (SIGSEGV) among good ones: the
 *            signal reported; later calls still served (fresh workers)
 *   fail     a task that fails with a code and a message
 *   pause S  a map of 20, S seconds of nothing, a map of 20 again
 *   slow N   p2p_map of square over 0..N-1, each call taking 0.1 s
 *   big      inputs from 1 byte to 4 MiB (sent in pieces), each echoed
 *            back whole; one byte over P2P_TASK_INPUT_MAX is refused
 *            (P2P_ETOOBIG)
 *   huge N   one call of N MiB whose result (N MiB, every byte changed)
 *            is checked whole and by an FNV-1a hash; then p2prun's peak
 *            resident set (VmHWM of our parent, which holds neither)
 *   hugeslow N  the same, the task taking 4 s (time to kill its peer:
 *            the call is sent again, from p2prun's spool file)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <p2p_task.h>

static int slow, flip_slow;

P2P_TASK(square)
{
    long x = strtol(in, NULL, 10);
    struct timespec ts = {0, 100000000L};

    if (slow)
        nanosleep(&ts, NULL);

    /* Only a worker has P2P_WORKER: the call did not run here. */
    if (getenv("P2P_WORKER") == NULL)
        return p2p_result_fail(res, 9, "ran outside a worker");
    return p2p_result_printf(res, "%ld", x * x);
}

P2P_TASK(sleepy)
{
    struct timespec ts = {0, strtol(in, NULL, 10) * 1000000L};

    nanosleep(&ts, NULL);
    return p2p_result_write(res, in, inlen);
}

P2P_TASK(crashy)
{
    if (strcmp(in, "crash") == 0) {
        fprintf(stderr, "about to crash\n");
        /* A real death by signal, even under a sanitizer's handler. */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
    return p2p_result_printf(res, "fine %s", in);
}

P2P_TASK(failing)
{
    return p2p_result_fail(res, 7, "bad input %s", in);
}

P2P_TASK(echo)
{
    return p2p_result_write(res, in, inlen);
}

/* Every byte of the input changed: the result is the worker's work. */
P2P_TASK(flip)
{
    char block[65536];
    size_t i, n;
    int rc;

    if (flip_slow)
        sleep(4);
    for (i = 0; i < inlen; i += n) {
        n = inlen - i < sizeof block ? inlen - i : sizeof block;
        for (size_t k = 0; k < n; k++)
            block[k] = (char)(in[i + k] ^ 0x5a);
        if ((rc = p2p_result_write(res, block, n)) != P2P_OK)
            return 1;
    }
    return 0;
}

static uint64_t
fnv1a(const unsigned char *p, size_t n, int flip)
{
    uint64_t h = 14695981039346656037ull;
    size_t i;

    for (i = 0; i < n; i++) {
        h ^= (unsigned char)(p[i] ^ (flip ? 0x5a : 0));
        h *= 1099511628211ull;
    }
    return h;
}

/* Peak resident set of a process (/proc/PID/status VmHWM), -1 unknown. */
static long
vmhwm_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *fp;

    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if ((fp = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof line, fp) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    fclose(fp);
    return kb;
}

/* p2prun's (our parent's) and our own. */
static long
parent_vmhwm_kb(void)
{
    return vmhwm_kb(getppid());
}

static long
self_vmhwm_kb(void)
{
    return vmhwm_kb(getpid());
}

static int
do_huge(p2p_farm *f, int mib)
{
    size_t len = (size_t)mib << 20, i, outlen = 0;
    unsigned char *in = malloc(len);
    const void *ins[1];
    void *outs[1] = {NULL};
    int st[1] = {0}, rc, same;

    if (in == NULL)
        return 1;
    for (i = 0; i < len; i++)
        in[i] = (unsigned char)(i * 2654435761u >> 13);
    ins[0] = in;
    rc = p2p_map(f, "flip", ins, &len, 1, outs, &outlen, st);
    same = rc == 0 && outlen == len &&
           fnv1a(outs[0], outlen, 0) == fnv1a(in, len, 1);
    for (i = 0; same && i < len; i++)
        same = ((unsigned char *)outs[0])[i] == (in[i] ^ 0x5a);
    printf("huge %d: %s, status %d, %zu bytes back, %s; p2prun VmHWM %ld "
           "kB; caller VmHWM %ld kB\n",
           mib, p2p_task_strerror(rc), st[0], outlen,
           same ? "hash and bytes right" : "WRONG", parent_vmhwm_kb(),
           self_vmhwm_kb());
    free(outs[0]);
    free(in);
    return rc != 0 || !same;
}

static int
do_big(p2p_farm *f)
{
    static const size_t sizes[] = {1, 61440, 65536, 65537, 1048576,
                                   4 << 20};
    const size_t n = sizeof sizes / sizeof sizes[0];
    char *in = malloc((4 << 20) + 1);
    const void *ins[6];
    void *outs[6];
    size_t i, outlens[6];
    int st[6], rc, bad = 0;

    for (i = 0; i < (4 << 20) + 1; i++)
        in[i] = (char)('a' + i * 7 % 26);
    for (i = 0; i < n; i++)
        ins[i] = in;
    rc = p2p_map(f, "echo", ins, sizes, n, outs, outlens, st);
    for (i = 0; i < n; i++) {
        if (st[i] != 0 || outlens[i] != sizes[i] ||
            memcmp(outs[i], in, sizes[i]) != 0)
            bad++;
        free(outs[i]);
    }
    printf("big: %s, %d wrong; one more byte: %s\n", p2p_task_strerror(rc),
           bad,
           /* Refused on its length alone: never read. */
           p2p_task_strerror(p2p_submit(f, "echo", in,
                                        (size_t)P2P_TASK_INPUT_MAX + 1,
                                        NULL)));
    free(in);
    return rc != 0 || bad != 0;
}

static int
do_map(p2p_farm *f, int n)
{
    char **ins = calloc((size_t)n, sizeof *ins);
    size_t *lens = calloc((size_t)n, sizeof *lens);
    size_t *outlens = calloc((size_t)n, sizeof *outlens);
    void **outs = calloc((size_t)n, sizeof *outs);
    int *st = calloc((size_t)n, sizeof *st);
    int i, bad = 0, rc;
    char want[32];

    for (i = 0; i < n; i++) {
        ins[i] = malloc(16);
        lens[i] = (size_t)sprintf(ins[i], "%d", i);
    }
    rc = p2p_map(f, "square", (const void *const *)ins, lens, (size_t)n, outs,
                 outlens, st);
    if (rc != P2P_OK)
        fprintf(stderr, "p2p_map: %s: %s\n", p2p_task_strerror(rc),
                p2p_farm_error(f));
    for (i = 0; i < n; i++) {
        snprintf(want, sizeof want, "%ld", (long)i * i);
        if (st[i] != 0 || outlens[i] != strlen(want) ||
            memcmp(outs[i], want, outlens[i]) != 0) {
            if (bad++ < 3)
                fprintf(stderr, "call %d: status %d, %zu bytes\n", i, st[i],
                        outlens[i]);
        }
        free(outs[i]);
        free(ins[i]);
    }
    printf("map %d: %d wrong\n", n, bad);
    free(ins);
    free(lens);
    free(outlens);
    free(outs);
    free(st);
    return rc == P2P_OK && bad == 0 ? 0 : 1;
}

static int
do_async(p2p_farm *f, int n)
{
    p2p_task_id *ids = calloc((size_t)n, sizeof *ids);
    int *seen = calloc((size_t)n, sizeof *seen);
    char in[32];
    p2p_outcome o;
    int i, k, bad = 0, rc;

    for (i = 0; i < n; i++) {
        /* Later calls sleep less: they tend to end first. */
        snprintf(in, sizeof in, "%d", (n - i) * 20);
        if ((rc = p2p_submit(f, "sleepy", in, strlen(in), &ids[i])) != 0) {
            fprintf(stderr, "submit: %s\n", p2p_farm_error(f));
            return 1;
        }
    }
    for (i = 0; i < n; i++) {
        if ((rc = p2p_wait_any(f, &o)) != 0) {
            fprintf(stderr, "wait_any: %s\n", p2p_farm_error(f));
            return 1;
        }
        for (k = 0; k < n && ids[k] != o.id; k++)
            ;
        snprintf(in, sizeof in, "%d", (n - k) * 20);
        if (k == n || seen[k]++ || o.status != 0 || o.outlen != strlen(in) ||
            memcmp(o.out, in, o.outlen) != 0)
            bad++;
        p2p_outcome_free(&o);
    }
    rc = p2p_wait_any(f, &o);
    printf("async %d: %d wrong, then %s\n", n, bad, p2p_task_strerror(rc));
    free(ids);
    free(seen);
    return bad != 0 || rc != P2P_ENONE;
}

static int
do_crash(p2p_farm *f)
{
    const char *ins[] = {"a", "crash", "b"};
    size_t lens[] = {1, 5, 1}, outlens[3];
    void *outs[3];
    int st[3], rc;

    rc = p2p_map(f, "crashy", (const void *const *)ins, lens, 3, outs,
                 outlens, st);
    printf("crash: %s; statuses %d %d %d; %.*s %.*s\n", p2p_task_strerror(rc),
           st[0], st[1], st[2], (int)outlens[0], (char *)outs[0],
           (int)outlens[2], (char *)outs[2]);
    printf("message: %s\n", p2p_farm_error(f));
    free(outs[0]);
    free(outs[1]);
    free(outs[2]);
    /* Fresh workers serve what follows. */
    return do_map(f, 20) || rc != P2P_EFAILED;
}

static int
do_fail(p2p_farm *f)
{
    p2p_outcome o;
    int rc;

    p2p_submit(f, "failing", "x1", 2, NULL);
    rc = p2p_wait_any(f, &o);
    printf("fail: %s, status %d, signal %d, message \"%s\", %zu bytes\n",
           p2p_task_strerror(rc), o.status, o.signal, o.message, o.outlen);
    p2p_outcome_free(&o);
    return 0;
}

int
main(int argc, char **argv)
{
    p2p_farm *f;

    /* Before p2p_farm_open: in a worker it does not return. */
    slow = argc > 1 && strcmp(argv[1], "slow") == 0;
    flip_slow = argc > 1 && strcmp(argv[1], "hugeslow") == 0;
    f = p2p_farm_open(&argc, &argv, NULL);
    const char *mode = argc > 1 ? argv[1] : "map";
    int n = argc > 2 ? atoi(argv[2]) : 100, rc = 2;

    if (f == NULL) {
        perror("p2p_farm_open");
        return 1;
    }
    if (strcmp(mode, "map") == 0)
        rc = do_map(f, n);
    else if (strcmp(mode, "async") == 0)
        rc = do_async(f, n);
    else if (strcmp(mode, "crash") == 0)
        rc = do_crash(f);
    else if (strcmp(mode, "fail") == 0)
        rc = do_fail(f);
    else if (strcmp(mode, "big") == 0)
        rc = do_big(f);
    else if (strcmp(mode, "huge") == 0 || strcmp(mode, "hugeslow") == 0)
        rc = do_huge(f, n);
    else if (strcmp(mode, "slow") == 0) {
        /* The workers are this program too: they read the mode. */
        rc = do_map(f, n);
    }
    else if (strcmp(mode, "pause") == 0) {
        rc = do_map(f, 20);
        fflush(stdout);
        sleep((unsigned)n);
        rc |= do_map(f, 20);
    }
    if (p2p_farm_close(f) != P2P_OK)
        rc = 1;
    return rc;
}
