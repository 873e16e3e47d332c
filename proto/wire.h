/*
 * The wire contract: frame header, protocol version, message kinds and
 * size limits.  BUMP P2P_WIRE_VERSION WHEN ANYTHING HERE OR IN p2p.proto
 * CHANGES INCOMPATIBLY.  docs/protocol.md describes the exchange.
 *
 * Every frame starts with an 8-byte header sent in clear:
 *
 *   0..1  magic 'P' '2'
 *   2     version (P2P_WIRE_VERSION)
 *   3     kind (enum frame_kind)
 *   4..7  body length, big-endian
 *
 * HANDSHAKE and REJECT bodies are clear text and only allowed before the
 * channel is established; SEALED bodies are ChaCha20-Poly1305 ciphertext
 * of one encoded p2p.Message, with the header as associated data.
 */
#ifndef P2P_WIRE_H
#define P2P_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define P2P_WIRE_MAGIC0 'P'
#define P2P_WIRE_MAGIC1 '2'
#define P2P_WIRE_VERSION 4
#define FRAME_HEADER_LEN 8

enum frame_kind {
    FRAME_HANDSHAKE = 1, /* handshake step, clear */
    FRAME_SEALED = 2,    /* AEAD-sealed message */
    FRAME_REJECT = 3,    /* clear one-line reason, then close (pre-auth) */
};

/* Largest body accepted before the channel is authenticated. */
#define FRAME_MAX_PREAUTH 256
/* Largest sealed body a daemon accepts from a peer or client. */
#define FRAME_MAX_REQUEST (64 * 1024)
/* Largest sealed body a client accepts (a peer list of ~50,000 entries). */
#define FRAME_MAX_REPLY (16 * 1024 * 1024)
/* Longest host label, address and error text inside messages. */
#define WIRE_MAX_LABEL 64
#define WIRE_MAX_ADDR 64
#define WIRE_MAX_TEXT 256
/* Federation: a summary's instance id, parts and entries per part (a
 * part of 250 entries of at most ~230 bytes fits FRAME_MAX_REQUEST). */
#define WIRE_FED_INSTANCE_LEN 16
#define WIRE_FED_MAX_PARTS 64
#define WIRE_FED_PART_ENTRIES 250
/* The Error code a supernode answers a summary of its own with. */
#define WIRE_ERR_FED_SELF 4
/* Jobs. */
#define WIRE_JOB_ID_LEN 16
#define WIRE_MAX_NAME 255          /* a staged file's base name */
#define WIRE_MAX_ARG 4096          /* one argument or NAME=VALUE */
#define WIRE_MAX_ARGS 1024         /* arguments of a program */
#define WIRE_MAX_ENV 256           /* exported variables */
#define WIRE_MAX_FILES 64          /* staged files of a job */
#define WIRE_MAX_RANKS 65536       /* ranks of a job */
#define WIRE_MAX_REPLICAS 16       /* replicas of a rank */
#define WIRE_MAX_CHUNK (60 * 1024) /* file chunk or output piece */
/* The dashboard: a machine's description strings (CPU model, OS,
 * kernel); a peer's job report (jobs, and processes over all of them);
 * the supernode's job view in a list reply. */
#define WIRE_MAX_HOSTINFO 128
#define WIRE_MAX_REPORT_JOBS 32
#define WIRE_MAX_REPORT_PROCS 256
#define WIRE_MAX_LIST_JOBS 1024
/* A worker task's whole input (a C call's: its name, a NUL, 1 GiB),
 * sent as Launch pieces of at most WIRE_MAX_CHUNK (input_more). */
#define WIRE_MAX_TASK_INPUT (1024 * 1024 * 1024 + 64)
/* A farm's task refused for now (the owner is back, not sharing): the
 * LaunchReply's reason starts with this, and the task goes elsewhere. */
#define WIRE_NOT_NOW "not now: "

#endif
