/*
 * Which supernodes a peer registers with: rendezvous (highest random
 * weight) hashing of the peer's node key against each configured
 * supernode's name.  Every peer ranks the same list differently but
 * stably, the peers spread evenly over the supernodes, and when one
 * supernode leaves the list only its own peers move (each to its next
 * choice), the others stay where they are.  Not cryptographic: a peer may
 * register wherever it likes anyway; this only spreads the honest ones.
 */
#include <stdlib.h>
#include <string.h>

#include "rendezvous.h"

/* 64-bit FNV-1a, then a finaliser (splitmix64's) so that neighbouring
 * names and keys land far apart. */
static uint64_t
rendezvous_hash(const uint8_t *key, size_t keylen, const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;

    for (i = 0; i < keylen; i++)
        h = (h ^ key[i]) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull; /* separator */
    for (i = 0; name[i] != '\0'; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

void
rendezvous_order(const uint8_t *key, size_t keylen, char *const *names, int n,
                 int *order)
{
    uint64_t w[RENDEZVOUS_MAX];
    int i, j, t;

    for (i = 0; i < n && i < RENDEZVOUS_MAX; i++) {
        w[i] = rendezvous_hash(key, keylen, names[i]);
        order[i] = i;
    }
    /* Insertion sort, heaviest first; ties (equal names) keep the
     * configured order. */
    for (i = 1; i < n && i < RENDEZVOUS_MAX; i++)
        for (j = i; j > 0 && w[order[j]] > w[order[j - 1]]; j--) {
            t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}
