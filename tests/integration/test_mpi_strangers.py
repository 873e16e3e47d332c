#!/usr/bin/env python3
"""Strangers on a rank's port (mpjrun/mpi/conn_handshake.c).  A rank
listens on a TCP port that anyone on the network can reach; whoever
connects must prove the job's key, and until then costs the rank a
descriptor.  A stranger who opens hundreds of connections and never
finishes a handshake must not keep the job's own ranks out nor take the
rank's descriptors: at most a few per address stay (the oldest from
there go first, with a log line), and connections between ranks come
from the address the job's table gives, not one the kernel picks.

Rank 0 of a 4-rank job waits (mpi_gate.c) while 300 connections from
127.0.0.99 pile up on its port, each with two bytes of a hello; then
every rank connects to it and sends it 1 MiB.  All arrive right, the job
ends 0, p2prun shows rank 0 dropping the stranger's oldest, and rank 0
then holds only a few of the stranger's connections."""

import os
import re
import socket
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import wait_until  # noqa: E402

STRANGER = "127.0.0.99"
DROPPED = re.compile(r"rank 0: (\d+) unproven connections from "
                     r"127\.0\.0\.99: the oldest dropped")


def tcp_sockets(pid):
    """[(state, local (ip, port), remote (ip, port))] of pid's IPv4 TCP
    sockets."""
    inodes = set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])

    def addr(hexa):
        ip, port = hexa.split(":")
        return (socket.inet_ntoa(bytes.fromhex(ip)[::-1]), int(port, 16))

    out = []
    with open("/proc/%d/net/tcp" % pid) as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[9] in inodes:
                out.append((fields[3], addr(fields[1]), addr(fields[2])))
    return out


class TestMpiStrangers(harness.JobTestCase):

    def test_connection_flood_on_a_rank_port(self):
        sn, peers = self.start_jobnet(2, slots=2)
        prog = self.mpi_program("mpi_gate")
        hosts = {"127.0.0.2", "127.0.0.3"}
        job = self.start_p2prun(["-n", "4", prog, self.outdir])
        wait_until(lambda: all(os.path.exists(os.path.join(
            self.outdir, "up.%d" % r)) for r in range(4)), 120,
            "every rank out of MPI_Init")
        procs = self.replica_procs("mpi_gate", rank=0)
        self.assertEqual(len(procs), 1, procs)
        pid = next(iter(procs))
        listening = [loc for st, loc, _ in tcp_sockets(pid) if st == "0A"]
        self.assertEqual(len(listening), 1, tcp_sockets(pid))
        where = listening[0]
        self.assertIn(where[0], hosts)

        stranger = []
        try:
            for _ in range(300):
                s = socket.socket()
                s.bind((STRANGER, 0))
                s.connect(where)
                s.sendall(b"\x00\x01")  # two bytes of a hello, no more
                stranger.append(s)
            open(os.path.join(self.outdir, "go"), "w").close()
            wait_until(lambda: os.path.exists(
                os.path.join(self.outdir, "talked")), 120,
                "rank 0 to hear from every rank")
            # Rank 0 took them all from its backlog at once: it keeps at
            # most a few of the stranger's (2 per process of the busiest
            # host, and 16).
            mine = tcp_sockets(pid)
            from_stranger = [r for st, _, r in mine
                             if st == "01" and r[0] == STRANGER]
            self.assertLessEqual(len(from_stranger), 2 * 2 + 16,
                                 "rank 0 holds %d of the stranger's "
                                 "connections" % len(from_stranger))
            # Ranks connect from their listen address.
            others = {r[0] for st, loc, r in mine
                      if st == "01" and r[0] != STRANGER}
            self.assertTrue(others, "rank 0 has no connection to a rank")
            self.assertLessEqual(others, hosts, "ranks connect from "
                                 "addresses not in the job's table")
        finally:
            open(os.path.join(self.outdir, "end"), "w").close()
            for s in stranger:
                s.close()
        if job.wait(120) is None:
            job.kill()
            self.fail("the job did not end:\n" + job.describe())
        self.assert_rc(job, 0)
        self.assertIn("rank 0: 3 messages right", job.stdout)
        m = DROPPED.search(job.stderr)
        self.assertIsNotNone(m, job.describe())
        self.assertGreaterEqual(int(m.group(1)), 2 * 2 + 16)
        self.assert_job_over(sn, peers, timeout=10)


if __name__ == "__main__":
    harness.main()
