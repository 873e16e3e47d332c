/*
 * The sealed path's ring of outgoing frames: a connection seals a
 * rendezvous payload frame by frame into slots it reuses (so the bytes
 * the socket copy reads next are still in cache), and may seal a few
 * frames ahead of what the socket took while the socket is full, instead
 * of waiting with nothing to do.  Slots are handed out and given back in
 * the same order (the send queue's), so the ring is a counter pair; the
 * memory is made on first use (a connection that never sends a large
 * payload costs nothing).  No sockets, no cipher: transport.c seals into
 * the slots (tests/unit/test_sealring.c).
 */
#ifndef P2PMPI_SEALRING_H
#define P2PMPI_SEALRING_H

#include <stddef.h>
#include <stdint.h>

struct sealring {
    uint8_t *mem;     /* nslots * slot bytes, or NULL until first used */
    size_t slot;      /* bytes in one slot: the largest sealed frame */
    unsigned nslots;  /* slots in the ring */
    unsigned next;    /* the slot sr_take gives next */
    unsigned used;    /* slots taken and not given back, oldest first */
};

/* An empty ring of nslots slots of slot bytes each (no memory yet). */
void sr_init(struct sealring *, unsigned nslots, size_t slot);
/* Is every slot taken? */
int sr_full(const struct sealring *);
/* The next free slot (slot bytes), or NULL when the ring is full or its
 * memory cannot be made. */
uint8_t *sr_take(struct sealring *);
/* Is p a slot of this ring? */
int sr_holds(const struct sealring *, const uint8_t *p);
/* Give back the oldest slot taken: p must be it (sends complete in
 * order); -1, and nothing changes, when it is not. */
int sr_give(struct sealring *, const uint8_t *p);
/* Every slot free again (what they held was dropped: the connection
 * ended); the memory is kept. */
void sr_clear(struct sealring *);
/* Free the memory (the ring may be used again: it is remade). */
void sr_free(struct sealring *);

#endif
