/*
 * An accept loop on a listening socket: bounded accepts per wakeup, and a
 * pause instead of a busy loop when descriptors run out.
 */
#ifndef P2P_LISTENER_H
#define P2P_LISTENER_H

#include <event2/event.h>

struct listener;

/* fn gets each accepted, non-blocking, close-on-exec descriptor. */
typedef void (*listener_fn)(int fd, void *arg);

/* Takes the listening fd. */
struct listener *listener_new(struct event_base *, int fd, listener_fn,
                              void *arg);
/* Closes the socket; NULL is fine. */
void listener_free(struct listener *);

#endif
