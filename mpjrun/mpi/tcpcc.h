/*
 * TCP congestion control of a rank-to-rank connection (tcpcc.c).
 *
 * A connection between two processes on one host (loopback, or the same
 * address at both ends: the kernel carries it over lo) has no network to
 * be congested, and the congestion control a host may default to can
 * throttle it: BBR models loopback as a pipe of about 1 us, so it allows
 * only a dozen 64 KiB segments in flight and the sender stalls whenever
 * the receiving rank is a moment late to take them (docs/mpi.md, "TCP
 * congestion control").  Such connections use Reno, which every process
 * may choose, unless the job's processes here outnumber the cores (4
 * ranks on 2 cores ran their collectives slower under Reno); others keep
 * the system's.  P2P_TCP_CONGESTION overrides for every connection: a
 * module name, or "system" (or empty) to keep the system's everywhere.
 */
#ifndef P2P_MPI_TCPCC_H
#define P2P_MPI_TCPCC_H

#include <sys/socket.h>

#define TCPCC_SAME_HOST "reno" /* what same-host connections get */
#define TCPCC_NAME_MAX 16      /* the kernel's TCP_CA_NAME_MAX */

/* Whether peer is on this host as seen from local: a loopback address
 * (127.0.0.0/8, ::1, or 127.x mapped in IPv6), or peer's address equal
 * to local's. */
int tcpcc_same_host(const struct sockaddr *local, const struct sockaddr *peer);

/* The congestion control to set on a connection from local to peer, or
 * NULL to keep the system's; shared: the job's processes on this machine
 * outnumber its cores.  env is P2P_TCP_CONGESTION's value (NULL when
 * unset); a name that is not 1-15 of [a-z0-9_] keeps the system's. */
const char *tcpcc_choose(const struct sockaddr *local,
                         const struct sockaddr *peer, int shared,
                         const char *env);

/* Choose for connected socket fd and set it.  Returns the name set, or
 * NULL when the system's is kept (chosen so, or the kernel refused: then
 * *refused is set).  *same is whether the peer is on this host
 * (tcpcc_same_host; -1 when the socket cannot say): transport.c writes
 * in shorter pieces to another host. */
const char *tcpcc_apply(int fd, int shared, int *refused, int *same);

#endif
