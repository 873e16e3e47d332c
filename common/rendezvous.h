/*
 * Rendezvous hashing: a stable preference order of a few named servers
 * for one key (a peer's node key over the configured supernodes).
 */
#ifndef P2P_RENDEZVOUS_H
#define P2P_RENDEZVOUS_H

#include <stddef.h>
#include <stdint.h>

#define RENDEZVOUS_MAX 64

/* Fill order[0..n-1] with the indices of names, most preferred first.
 * n is at most RENDEZVOUS_MAX. */
void rendezvous_order(const uint8_t *key, size_t keylen, char *const *names,
                      int n, int *order);

#endif
