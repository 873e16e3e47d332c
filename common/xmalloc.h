/*
 * Allocation that cannot fail: on exhaustion or size overflow the program
 * stops with a message (tmux xmalloc.c).  For daemons and tools only.
 */
#ifndef P2P_XMALLOC_H
#define P2P_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
int xasprintf(char **, const char *, ...) __attribute__((format(printf, 2, 3)));

#endif
