/*
 * What the task library's two files share (task.c: the registry, results
 * and a worker's loop; farm.c: the caller's side).  Internal: none of it
 * leaves libp2pmpi (only p2p_* names are exported).
 */
#ifndef P2P_TASK_INTERNAL_H
#define P2P_TASK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "p2p_task.h"

/* The environment variable that hands the caller its link to p2prun. */
#define TASK_LINK_ENV "P2P_FARM_FD"
/* Set by peerd in a worker's environment. */
#define TASK_WORKER_ENV "P2P_WORKER"

struct p2p_result {
    char *p;
    size_t len, cap;
    int failed;
    char message[512];
};

/* The function registered under name, or NULL. */
p2p_task_fn task_lookup(const char *name);
/* Run a call (payload: the task's name, a NUL, its input) here: its
 * status, and in *r its result, or its message when it failed. */
int task_call(const uint8_t *payload, size_t len, struct p2p_result *r);
/* Take a result's bytes (NULL when empty); *r is emptied. */
void task_result_take(struct p2p_result *r, void **out, size_t *outlen);
void task_result_clear(struct p2p_result *r);
/* Serve calls as a worker on stdin/stdout until stdin closes; exits 0. */
void task_serve(void) __attribute__((noreturn));

#endif
