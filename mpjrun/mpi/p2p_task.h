/*
 * p2p_task.h: farm C functions out to the network's peers (docs/tasks.md,
 * "The C task API").  A program registers task functions by name with
 * P2P_TASK, and calls them through a farm: p2p_map (one call per input,
 * results in input order: FieldTrip's peercellfun) or p2p_submit and
 * p2p_wait_any (results as they complete: peerfeval / peerget).
 *
 *     P2P_TASK(square)
 *     {
 *         long x = strtol(in, NULL, 10);   (in: inlen bytes, not
 *         return p2p_result_printf(res, "%ld", x * x);  NUL-terminated)
 *     }
 *     int main(int argc, char **argv)
 *     {
 *         p2p_farm *f = p2p_farm_open(&argc, &argv, NULL);
 *         ...p2p_map(f, "square", ins, inlens, n, outs, outlens, st)...
 *         p2p_farm_close(f);
 *     }
 *
 * Built with p2pcc and started with `p2prun --workers W ./prog ARGS`:
 * main runs here, and the same program is staged to every peer and
 * started there once per slot as a worker, where p2p_farm_open does not
 * return: it serves calls until the farm closes, then exits 0.  Started
 * on its own (or as an MPI job's rank), p2p_farm_open gives a farm that
 * runs each task in this process, at once: the same program is debugged
 * without a network.
 *
 * Errors are negative return codes (P2P_E*), with a message from
 * p2p_farm_error.  A farm is used by one thread at a time; different
 * farms need no locking.  Handles are checked on every call: a closed or
 * forged farm gives P2P_EHANDLE, never a crash.
 */
#ifndef P2P_TASK_H
#define P2P_TASK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct p2p_farm p2p_farm;
typedef struct p2p_result p2p_result;
typedef uint64_t p2p_task_id;

enum p2p_task_error {
    P2P_OK = 0,
    P2P_EINVAL = -1,  /* a bad argument (NULL, an empty task name) */
    P2P_EHANDLE = -2, /* not an open farm */
    P2P_ENOTASK = -3, /* no task of that name is registered */
    P2P_ETOOBIG = -4, /* an input longer than P2P_TASK_INPUT_MAX */
    P2P_ENOMEM = -5,  /* out of memory */
    P2P_ELOST = -6,   /* the farm is gone (p2prun ended or was killed) */
    P2P_ENONE = -7,   /* p2p_wait_any: no task is outstanding */
    P2P_EFAILED = -8, /* p2p_map: a task failed (see its status) */
};

/* Largest input of one call, and largest result of one task (1 GiB).
 * p2prun and the peers never hold a long one whole: past 1 MiB they
 * keep it in a spool file and pass it on in pieces.  The calling
 * program and the worker do hold theirs. */
#define P2P_TASK_INPUT_MAX (1024 * 1024 * 1024)
#define P2P_TASK_RESULT_MAX (1024 * 1024 * 1024)
/* Longest task name. */
#define P2P_TASK_NAME_MAX 63

/* A task function: its input (inlen bytes, also NUL-terminated for
 * convenience) and the result it fills with p2p_result_write/printf.
 * Returns 0 when done, or an error code from 1 to 255 (p2p_result_fail
 * sets a message too).  What it prints to stdout or stderr goes to the
 * user's terminal as the task's stderr. */
typedef int (*p2p_task_fn)(const char *in, size_t inlen, p2p_result *res);

/* Register fn under name (P2P_TASK does it before main).  P2P_EINVAL for
 * a bad or duplicate name. */
int p2p_task_register(const char *name, p2p_task_fn fn);

/* The ELF section in which P2P_TASK leaves each task's name: p2prun
 * reads it to know a program that defines tasks, and runs it as
 * `--workers 0` when started as `p2prun -n 1 ./prog` (docs/tasks.md). */
#define P2P_TASK_SECTION "p2p_tasks"

#define P2P_TASK(name)                                                       \
    __attribute__((section(P2P_TASK_SECTION), used)) static const char      \
        p2p_task_mark_##name[] = #name;                                      \
    static int p2p_task_body_##name(const char *, size_t, p2p_result *);    \
    __attribute__((constructor)) static void p2p_task_init_##name(void)     \
    {                                                                        \
        (void)p2p_task_register(#name, p2p_task_body_##name);                \
    }                                                                        \
    static int p2p_task_body_##name(const char *in                           \
                                    __attribute__((unused)),                 \
                                    size_t inlen __attribute__((unused)),    \
                                    p2p_result *res __attribute__((unused)))

/* Append len bytes to a task's result.  0, or P2P_ENOMEM. */
int p2p_result_write(p2p_result *, const void *buf, size_t len);
/* Append formatted text to a task's result.  0, or P2P_ENOMEM. */
int p2p_result_printf(p2p_result *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Fail the task with code (1..255) and a message; returns code, so that
 * a task can `return p2p_result_fail(res, 2, "bad input %s", in);`. */
int p2p_result_fail(p2p_result *, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What became of one call. */
typedef struct p2p_outcome {
    p2p_task_id id;   /* from p2p_submit */
    int status;       /* 0 done; 1..255 the task's code; 128+N killed by
                       * signal N (its worker died under it three times);
                       * 1 also when it could not run at all */
    int signal;       /* N when killed by signal N, else 0 */
    void *out;        /* the result (malloc'd, the caller's; NULL when
                       * empty or failed), followed by a NUL byte not
                       * counted in outlen */
    size_t outlen;
    char message[512]; /* why it failed; "" when done */
} p2p_outcome;

/* Options of p2p_farm_open; NULL for the defaults. */
typedef struct p2p_farm_opts {
    int local; /* 1: run every task in this process (no network) */
} p2p_farm_opts;

/* Open the farm.  In a worker started by p2prun this serves calls and
 * never returns.  NULL with errno set when out of memory (ENOMEM) or the
 * link p2prun handed over is unusable (EBADF).  argc/argv may be NULL. */
p2p_farm *p2p_farm_open(int *argc, char ***argv, const p2p_farm_opts *);
/* Wait for what is outstanding to end (its results are dropped), close
 * the farm and free it.  0, P2P_EHANDLE, or P2P_ELOST. */
int p2p_farm_close(p2p_farm *);

/* Call task on in (inlen bytes) somewhere on the network; *id (may be
 * NULL) tells its outcome from wait_any's.  An input under 1 MiB is
 * copied and the call returns at once; a larger one is written from in
 * to p2prun (which spools it) before the call returns, never copied.
 * Either way in is free to reuse on return. */
int p2p_submit(p2p_farm *, const char *task, const void *in, size_t inlen,
               p2p_task_id *id);
/* Wait for one submitted call to end (in completion order) and fill *out
 * (p2p_outcome_free frees what it holds).  0, or P2P_ENONE when nothing
 * is outstanding, P2P_ELOST, P2P_EHANDLE, P2P_EINVAL. */
int p2p_wait_any(p2p_farm *, p2p_outcome *out);
/* Free what an outcome holds (not the outcome itself). */
void p2p_outcome_free(p2p_outcome *);

/* Call task once per input (ins[i], inlens[i]) and wait for them all:
 * outs[i] (malloc'd, the caller's; NULL when empty or failed; NUL-ended
 * as in p2p_outcome) and
 * outlens[i] get each result, statuses[i] its status as in p2p_outcome;
 * outs/outlens/statuses may each be NULL.  0 when every call succeeded,
 * P2P_EFAILED when some failed, or an error before any result. */
int p2p_map(p2p_farm *, const char *task, const void *const *ins,
            const size_t *inlens, size_t n, void **outs, size_t *outlens,
            int *statuses);

/* The message of the farm's last error ("" if none). */
const char *p2p_farm_error(const p2p_farm *);
/* A short text for an error code. */
const char *p2p_task_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif
