/*
 * The bytes between two processes of a job, without the sockets: the
 * frame header and its checks, the plain and sealed frame layouts, and
 * the handshake's messages (hello, the acceptor's proof, the connector's
 * confirmation) with the MACs that prove both ends hold the job's key.
 * transport.c moves these bytes; everything here is computation on
 * buffers the caller owns, with no global state, so that it can be
 * tested and fuzzed alone (tests/unit/test_wireframe.c,
 * tests/fuzz/fuzz_wireframe.c).
 *
 *   hello:    u32 magic, world, replica, flags; nonce[32]   (connector)
 *   proof:    nonce[32], MAC("acceptor")                    (acceptor)
 *   confirm:  MAC("connector")                              (connector)
 *   plain frame:   struct wire_hdr, payload
 *   sealed frame:  u32 length, struct wire_hdr,
 *                  AES-256-GCM(payload) with the header as associated
 *                  data (WF_CIPHER, libcrypto through aead.h)
 *
 * Integers are in host order: every process of a job runs the same
 * binary on the same kind of machine.  Checks return NULL when the bytes
 * are acceptable, else a reason for the log.
 */
#ifndef P2PMPI_WIREFRAME_H
#define P2PMPI_WIREFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "aead.h"
#include "sec.h"

#define WF_EAGER_MAX (64 * 1024)   /* larger messages use rendezvous */
#define WF_SEAL_CHUNK (256 * 1024) /* most payload a sealed frame carries */
/* What we put in one: frames whose end spills a few hundred bytes past
 * a whole number of 64 KiB loopback segments (256 KiB, 128 KiB) ran at
 * half speed in about half the runs; 96 KiB rarely (docs/mpi.md). */
#define WF_SEAL_SEND (96 * 1024)
/* "P2M6": bump when frames or their cipher change.  P2M4 sealed with
 * ChaCha20-Poly1305 (libsodium); P2M5 with AES-256-GCM (libcrypto);
 * P2M6 adds the cancel frames. */
#define WF_MAGIC 0x4d365032u
#define WF_CIPHER AEAD_AES256GCM
#define WF_NONCE_LEN 32
#define WF_HELLO_LEN (16 + WF_NONCE_LEN)
#define WF_PROOF_LEN (WF_NONCE_LEN + SEC_MAC_LEN)
#define WF_CONFIRM_LEN SEC_MAC_LEN
#define WF_HS_MAX WF_PROOF_LEN /* the largest handshake message */

enum frame_type {
    FR_EAGER = 1, /* header + whole message */
    FR_RTS,       /* rendezvous: a message of total bytes waits (sid) */
    FR_CTS,       /* rendezvous: send it (sid, rid) */
    FR_DATA,      /* rendezvous payload at offset total (rid) */
    FR_FIN,       /* finalize: no more messages from this rank */
    FR_ACK,       /* replicas: every message up to total is in (cumulative) */
    FR_TAKEOVER,  /* replicas: feed me, replaying from sequence total */
    FR_DECIDE,    /* replicas: master to backup, decision total, values */
    FR_DECIDE_ACK, /* replicas: backup to master, decision total known */
    FR_CANCEL,    /* no replicas: take back the message whose first frame
                     (EAGER or RTS) had sequence number total on this
                     connection, if no receive has it yet (sid: the
                     asking request) */
    FR_CANCELLED, /* the answer (sid), WF_CANCEL_DONE when taken back */
    /* Only in a shared-memory ring (never in a plain or sealed header):
     * the first byte of a short eager frame (wf_shm_put) */
    FR_SHM_EAGER = 0x80,
};

/* wire_hdr.flags.  Single copy (shm.h) runs only between the two ends
 * of a shared-memory pair, whose segment layout (SHM_MAGIC) already
 * refuses a peer of another version: these never cross TCP. */
#define WF_RTS_CMA 0x01u  /* RTS with WF_CMA_LEN bytes: the message's
                             address in the sender, to be read in place */
#define WF_CTS_DONE 0x02u /* CTS: the receiver read the message itself, the
                             send is complete (sid, rid) */
#define WF_CTS_SPLIT 0x04u /* CTS with WF_SPLIT_LEN bytes (u64 offset,
                              count, address): write that part of the
                              message into the receiver yourself */
#define WF_DATA_WRITTEN 0x08u /* DATA, empty: the sender wrote total
                                 bytes of it into the receiver (rid) */
#define WF_CANCEL_DONE 0x10u /* CANCELLED: the message is gone, no
                                receive will ever have it */
#define WF_CMA_LEN 8
#define WF_SPLIT_LEN 24

/* Every message carries (communicator context, source, destination,
 * sequence number): the replication layer needs all four to recognise
 * a message whichever replica sent it. */
struct wire_hdr {
    uint8_t type, flags;
    uint16_t pad;
    uint32_t ctx;
    int32_t src; /* sender's rank in the communicator */
    int32_t dst; /* receiver's rank in the communicator */
    int32_t tag;
    uint32_t pad2;
    uint64_t seq; /* per connection, every frame */
    uint64_t len; /* payload bytes in this frame */
    uint64_t total; /* message size (EAGER, RTS) or offset (DATA) */
    uint32_t sid, rid; /* sender's and receiver's request ids */
    uint64_t lseq; /* replicas: per (source, destination) rank pair, over
                      messages (EAGER, RTS, FIN); 0 without replicas */
};

#define WF_HDR_LEN sizeof(struct wire_hdr)
#define WF_SEAL_MAX (WF_HDR_LEN + WF_SEAL_CHUNK + SEC_TAG_LEN)
/* A sealed frame of len payload bytes, its length prefix included. */
#define WF_SEALED_LEN(len) (4 + WF_HDR_LEN + (size_t)(len) + SEC_TAG_LEN)

/* --- frames --- */

enum wf_next {
    WF_MORE,  /* not enough bytes yet */
    WF_FRAME, /* a frame: its header in *h */
    WF_BAD,   /* refused: the connection must end */
};

/* The header's own rules: the sequence number expected on this
 * connection, and the payload length its kind allows.  nrep is the
 * job's replicas per rank (kinds of the replication protocol only with
 * nrep > 1).  Payload bounds that depend on a request are the caller's. */
const char *wf_frame_check(const struct wire_hdr *h, uint64_t want_seq,
                           int nrep);

/* The next plain frame of the avail bytes at buf.  WF_FRAME when the
 * header is at hand and, except for DATA (whose payload may be read
 * straight into place), its whole payload after it. */
enum wf_next wf_plain_next(const uint8_t *buf, size_t avail,
                           struct wire_hdr *h, const char **why);

/* Shared-memory rings carry, besides plain frames, short eager frames
 * of a job without replicas: a 16-byte header (type FR_SHM_EAGER, 24-bit
 * length, context, source, tag: what matching needs; the sequence number
 * is the ring's own order) and the payload, so that several small
 * messages share a cache line.  wf_shm_put writes that header for h
 * (FR_EAGER, h->len at most WF_EAGER_MAX) into out. */
#define WF_SHM_HDR_LEN 16
void wf_shm_put(uint8_t out[WF_SHM_HDR_LEN], const struct wire_hdr *h);
/* The same but its first byte (FR_SHM_EAGER), which a writer to the
 * ring stores last (shm_commit). */
void wf_shm_put_rest(uint8_t out[WF_SHM_HDR_LEN], const struct wire_hdr *h);
/* A short frame's length, header included, from its first 4 bytes (not
 * checked: wf_shm_next does). */
size_t wf_shm_size(const uint8_t *hdr);
/* The next frame of a ring, short or plain: as wf_plain_next, with *hlen
 * the header's bytes; a short one comes out as the FR_EAGER header it
 * stands for, numbered seq (the number the connection expects next). */
enum wf_next wf_shm_next(const uint8_t *buf, size_t avail,
                         struct wire_hdr *h, size_t *hlen, uint64_t seq,
                         const char **why);

/* The next sealed frame: WF_FRAME when it is whole, with *used the bytes
 * it takes (length prefix included); the payload is still sealed. */
enum wf_next wf_sealed_next(const uint8_t *buf, size_t avail,
                            struct wire_hdr *h, size_t *used,
                            const char **why);

/* Seal h (h->len bytes of payload) into out, WF_SEALED_LEN(h->len)
 * bytes, which it returns (0 if libcrypto failed).  payload may be NULL
 * when h->len is 0.  a is the sending direction's context (aead_new of
 * WF_CIPHER under wf_keys' tx key); counter numbers the frames of that
 * direction and must never repeat under its key. */
size_t wf_seal(uint8_t *out, const struct wire_hdr *h, const void *payload,
               uint64_t counter, struct aead *a);
/* Open the payload of a sealed frame (frame: its header, after the
 * length prefix; len: the header's len) into out; -1 when it does not
 * verify (tampered, replayed, reordered or another key), out then
 * zeroed. */
int wf_open(uint8_t *out, const uint8_t *frame, uint64_t len,
            uint64_t counter, struct aead *a);

/* --- handshake --- */

#define WF_HELLO_SEALED 1u /* the job seals frames */
#define WF_HELLO_SHM 2u    /* same host: offers shared memory (shm.h) */

struct wf_hello {
    uint32_t world, replica, flags; /* WF_HELLO_* */
    uint8_t nonce[WF_NONCE_LEN];
};

/* Who may connect to the acceptor. */
struct wf_rules {
    uint32_t nproc;   /* processes in the job: ranks * replicas */
    uint32_t me;      /* the acceptor's process index */
    uint32_t nrep;    /* replicas per rank */
    uint32_t sealed;  /* the job seals frames */
    int ondemand;     /* any other process may connect, not only lower */
};

void wf_hello_build(uint8_t out[WF_HELLO_LEN], const struct wf_hello *);
const char *wf_hello_check(const uint8_t in[WF_HELLO_LEN],
                           const struct wf_rules *, struct wf_hello *out);

/* One handshake's state, what both MACs cover. */
struct wf_hs {
    const uint8_t *key; /* the job's key, SEC_KEY_LEN bytes */
    uint8_t nonce_c[WF_NONCE_LEN], nonce_a[WF_NONCE_LEN];
    uint32_t connector, acceptor; /* process indices */
    uint32_t sealed;
};

/* The acceptor's proof (nonce_a and a MAC); the connector checks it and
 * takes nonce_a from it. */
void wf_proof_build(uint8_t out[WF_PROOF_LEN], const struct wf_hs *);
const char *wf_proof_check(struct wf_hs *, const uint8_t in[WF_PROOF_LEN]);
/* The connector's confirmation, checked by the acceptor. */
void wf_confirm_build(uint8_t out[WF_CONFIRM_LEN], const struct wf_hs *);
const char *wf_confirm_check(const struct wf_hs *,
                             const uint8_t in[WF_CONFIRM_LEN]);
/* The name of the pair's shared-memory segment (shm.h): SHM_NAME_LEN
 * (32) hex digits and a NUL, a hash of both nonces keyed by the job's key,
 * so that only the two ends can compute it. */
void wf_shm_name(const struct wf_hs *, char out[33]);
/* The keys of both directions, once proven, as seen from one end. */
void wf_keys(const struct wf_hs *, int connector, uint8_t tx[SEC_KEY_LEN],
             uint8_t rx[SEC_KEY_LEN]);

#endif
