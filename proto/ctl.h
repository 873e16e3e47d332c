/*
 * The control socket between a job's process and the peerd that started
 * it: a SOCK_SEQPACKET socketpair inherited as descriptor P2P_CTL_FD, so
 * only that process holds it and message boundaries come for free.  The
 * MPI library reports where it listens and may ask for the job to be
 * aborted; peerd answers with the job's address table once the
 * coordinator has every address.  BUMP CTL_VERSION WHEN THIS CHANGES.
 *
 *   process -> peerd   CTL_ADDR  {type, version, port (16, host order)}
 *   process -> peerd   CTL_ABORT {type, version, 0, 0, status (32)}
 *   peerd -> process   CTL_TABLE {type, version, flags, 0, key[32], n (32)}
 *   peerd -> process   CTL_TABLE_PART {type, version, 0, 0, first (32),
 *                                 count (32), count x struct ctl_entry}
 *   peerd -> process   CTL_VIEW  {type, version, 0, 0, number (32), n (32),
 *                                 n x u32 dead process index}
 *   process -> peerd   CTL_SUSPECT {type, version, 0, 0, proc (32)}
 *   process -> peerd   CTL_PROGRESS {type, version, 0, 0, 0 (32),
 *                                    count (64)}
 *
 * The address table is a stream, not one message: a head that says how
 * many entries follow (n), then parts of at most CTL_PART_MAX entries, in
 * order, each saying where it starts (first).  A job of any size fits (a
 * SEQPACKET message must fit the socket's buffer, ~200 KiB, so one
 * message held only ~2,000 entries); peerd writes the parts as the
 * process reads them (proto/ctltable.c encodes and decodes them).
 *
 * A view is the coordinator's numbered, cumulative list of the job's
 * processes declared dead (index rank * R + replica); a process applies
 * views in order and ignores one not newer than what it has.  A suspicion
 * says "my connection to process proc broke"; only the coordinator
 * decides.
 *
 * A progress report carries a counter that grows as the process gets on
 * (the MPI library counts the messages it has sent and accepted, which
 * is the same sequence in every replica of a rank); peerd passes the
 * latest value on to the coordinator, at a bounded rate, for its progress
 * rule (docs/replication.md).  A process sends it only when the table
 * came with CTL_TF_PROGRESS set: a peerd that predates it never sets the
 * flag, and a program that predates it never sends one, so the version
 * stays.
 */
#ifndef P2P_CTL_H
#define P2P_CTL_H

#include <stdint.h>

#define CTL_VERSION 3
#define CTL_FD_ENV "P2P_CTL_FD"
#define CTL_FD 3 /* where the process finds it */

enum ctl_type {
    CTL_ADDR = 1,
    CTL_ABORT = 2,
    CTL_TABLE = 3,
    CTL_VIEW = 4,
    CTL_SUSPECT = 5,
    CTL_PROGRESS = 6,
    CTL_TABLE_PART = 7,
};

/* ctl_table_head.flags */
#define CTL_TF_PROGRESS 0x01 /* peerd relays CTL_PROGRESS */

struct ctl_addr {
    uint8_t type, version;
    uint16_t port;
};

struct ctl_abort {
    uint8_t type, version, pad[2];
    int32_t status;
};

struct ctl_entry {
    uint32_t rank, replica;
    char addr[72]; /* "HOST:PORT", NUL-terminated (at most 64 + 1) */
};

struct ctl_table_head {
    uint8_t type, version, flags, pad;
    uint8_t key[32];
    uint32_t n;
};

struct ctl_table_part {
    uint8_t type, version, pad[2];
    uint32_t first, count; /* followed by count x struct ctl_entry */
};

struct ctl_view_head {
    uint8_t type, version, pad[2];
    uint32_t number;
    uint32_t n; /* followed by n x uint32_t */
};

struct ctl_suspect {
    uint8_t type, version, pad[2];
    uint32_t proc;
};

struct ctl_progress {
    uint8_t type, version, pad[2];
    uint32_t pad2;
    uint64_t count;
};

/* Entries of one CTL_TABLE_PART (20 KiB): small enough that a busy
 * process's socket takes several, large enough to be few. */
#define CTL_PART_MAX 256
/* The largest table: every process of the largest job (65,536 ranks of
 * 16 replicas, wire.h); a process also checks n against its own job. */
#define CTL_MAX_ENTRIES (65536u * 16u)
/* Dead processes in one view (a view is one message: 12 + 4n bytes). */
#define CTL_VIEW_MAX 16384

#endif
