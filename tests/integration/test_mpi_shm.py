#!/usr/bin/env python3
"""Ranks on the same host talk through shared memory (mpjrun/mpi/shm.c).
Two peers on distinct loopback addresses stand for two hosts; p2prun -a
concentrate puts replica set 0 of a -n 3 -r 2 job on one and set 1 on the
other.  Every process then shares memory with exactly the two processes
of its own set (same address in the job's table) and keeps TCP to the
three on the other "host", as P2P_MPI_STATS shows; --no-shm keeps them
all on TCP.  Killing a replica whose partners reach it through shared
memory is survived as over TCP: the job ends 0 with the output of a
failure-free run, and the segments left nothing behind in /dev/shm.

TCP connections within one machine (loopback addresses, or one address
at both ends) get Reno as their congestion control when the job's
processes there have a core each (mpjrun/mpi/tcpcc.h), as P2P_MPI_STATS
counts; P2P_TCP_CONGESTION=reno sets it on all of them,
P2P_TCP_CONGESTION=system keeps the system's, and a module the kernel
refuses is logged once and the job runs as before.

Large messages between them go by a single copy (process_vm_readv from
the sender's buffer) under peerd's real containment, as P2P_MPI_STATS
counts; with P2P_SHM_CMA=0 the pair's probe fails and they go through the
rings, same output, as when a read or a sender's write of its half is
refused at run time (P2P_TEST_KILL=...:cmarefuse, :cmawrefuse).  A sender
killed while its receiver reads it in place
(P2P_TEST_KILL=...:cmasender) is a lost process like any other: with two
replicas the job ends 0 with the failure-free output."""

import glob
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import wait_until  # noqa: E402

SHM = re.compile(r"^p2pmpi: rank (\d+): (\d+) through shared memory$", re.M)
CMA = re.compile(r"^p2pmpi: rank (\d+): single copy from (\d+) of them, "
                 r"(\d+) messages announced, (\d+) read; (\d+) rendezvous "
                 r"through the rings$", re.M)
MADE = re.compile(r"^p2pmpi: rank (\d+): (\d+) connections made, "
                  r"(\d+) accepted$", re.M)
CC = re.compile(r"^p2pmpi: rank (\d+): TCP congestion control (\S+) on "
                r"(\d+) connections, the system's on the others$", re.M)


class TestMpiShm(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(2, slots=3, lease_ms=1500)
        self.prog = self.mpi_program("mpi_steps")

    def args(self, steps=25, extra=()):
        return (["-n", "3", "-r", "2", "-a", "concentrate"] + list(extra) +
                [self.prog, str(steps)])

    def shm_counts(self, run):
        return {int(r): int(n) for r, n in SHM.findall(run.stderr)}

    def cma_counts(self, run):
        """Per rank: (pairs we read from, announced, read, on the rings)."""
        return {int(m[0]): tuple(int(x) for x in m[1:])
                for m in CMA.findall(run.stderr)}

    def test_single_copy(self):
        # Two ranks on one peer: rank 0 sends rank 1 a 1 MiB rendezvous
        # each step.
        args = ["-n", "2", "-a", "concentrate", "-x", "P2P_MPI_STATS=1"]
        run = self.p2prun(args + [self.prog, "12"])
        self.assert_rc(run, 0)
        cma = self.cma_counts(run)
        self.assertEqual(sorted(cma), [0, 1], run.describe())
        # Both probes worked; rank 0 announced and rank 1 read (the
        # first may beat rank 1's probe and take the rings).
        self.assertEqual((cma[0][0], cma[1][0]), (1, 1), run.describe())
        self.assertGreaterEqual(cma[0][1], 11, run.describe())
        self.assertEqual(cma[1][2], cma[0][1], run.describe())
        self.assertEqual(cma[0][1] + cma[0][3], 12, run.describe())
        ref = run.stdout
        # Refused at the probe: every rendezvous through the rings.
        run = self.p2prun(args + ["-x", "P2P_SHM_CMA=0", self.prog, "12"])
        self.assert_rc(run, 0)
        cma = self.cma_counts(run)
        self.assertEqual(cma[0], (0, 0, 0, 12), run.describe())
        self.assertEqual(cma[1][:3], (0, 0, 0), run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref))
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def test_single_copy_refused(self):
        # Rank 1's third read is refused (as EPERM would be): that
        # message (split: half written by rank 0, the rest asked through
        # the ring) and every later one go through the rings, intact.
        args = ["-n", "2", "-a", "concentrate", "-x", "P2P_MPI_STATS=1"]
        ref = self.p2prun(args + [self.prog, "12"])
        self.assert_rc(ref, 0)
        run = self.p2prun(args + ["-x", "P2P_TEST_KILL=1.0:cmarefuse:3",
                                  self.prog, "12"])
        self.assert_rc(run, 0)
        self.assertIn("single copy from process 0 refused", run.stderr,
                      run.describe())
        cma = self.cma_counts(run)
        self.assertEqual(cma[1][2], 2, run.describe())
        self.assertGreaterEqual(cma[0][3], 9, run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref.stdout))
        # Rank 0's write of its half refused: that half through the ring.
        run = self.p2prun(args + ["-x", "P2P_TEST_KILL=0.0:cmawrefuse:2",
                                  self.prog, "12"])
        self.assert_rc(run, 0)
        self.assertIn("single copy into process 1 refused", run.stderr,
                      run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref.stdout))
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def test_single_copy_truncated_in_a_window(self):
        # 16 messages of 32 KiB (read in one call) and of 100 KiB, the last
        # receive of each window 1 KiB short: MPI_ERR_TRUNCATE, the bytes
        # that fit, nothing past the end; the others whole.
        prog = self.mpi_program("mpi_trunc_window")
        for size in ("32768", "100000"):
            run = self.p2prun(["-n", "2", "-a", "concentrate", "-x",
                               "P2P_MPI_STATS=1", prog, size])
            self.assert_rc(run, 0)
            self.assertEqual(run.stdout, "ok\n", run.describe())
            cma = self.cma_counts(run)
            self.assertEqual(cma[1][2], 64, run.describe())
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def test_single_copy_sender_killed(self):
        ref = self.p2prun(self.args(steps=8))
        self.assert_rc(ref, 0)
        # Rank 1 replica 0 kills rank 0 replica 0 (same peer) on its
        # third single-copy read from it, waits until that memory is
        # gone, and reads: ESRCH, a lost process; rank 0 replica 1
        # replays the message over TCP.
        run = self.p2prun(self.args(steps=8, extra=[
            "-x", "P2P_TEST_KILL=1.0:cmasender:3"]))
        self.assert_rc(run, 0)
        self.assertIn("rank 0 replica 0", run.stderr, run.describe())
        self.assertIn("the rank goes on", run.stderr, run.describe())
        self.assertIn("single copy from process 0 failed", run.stderr,
                      run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref.stdout),
                         run.describe())
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def test_same_host_pairs_share_memory(self):
        run = self.p2prun(self.args(extra=["-x", "P2P_MPI_STATS=1"]))
        self.assert_rc(run, 0)
        # Each rank's shown replica: its two partners on the same peer
        # through shared memory, the other peer's three over TCP.
        self.assertEqual(self.shm_counts(run), {0: 2, 1: 2, 2: 2},
                         run.describe())
        ref = run.stdout
        run = self.p2prun(self.args(extra=["--no-shm",
                                           "-x", "P2P_MPI_STATS=1"]))
        self.assert_rc(run, 0)
        self.assertEqual(self.shm_counts(run), {0: 0, 1: 0, 2: 0},
                         run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref))
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def tcp_and_cc(self, run):
        """Per rank: (TCP connections, congestion control set, how many
        got it)."""
        made = {int(r): int(m) + int(a) for r, m, a in MADE.findall(run.stderr)}
        shm = self.shm_counts(run)
        return {int(r): (made.get(int(r), -1) - shm.get(int(r), 0), name,
                         int(n))
                for r, name, n in CC.findall(run.stderr)}

    def test_same_host_tcp_is_reno(self):
        # Two ranks on one peer over TCP (same address at both ends), a
        # core each: Reno on their connection.
        if (os.cpu_count() or 1) >= 2:
            run = self.p2prun(["-n", "2", "-a", "concentrate", "--no-shm",
                               "-x", "P2P_MPI_STATS=1", self.prog, "5"])
            self.assert_rc(run, 0)
            cc = self.tcp_and_cc(run)
            self.assertEqual(sorted(cc), [0, 1], run.describe())
            for rank, (tcp, name, n) in cc.items():
                self.assertEqual(name, "reno", run.describe())
                self.assertTrue(1 <= n <= tcp, run.describe())
        # Six processes between two loopback "hosts": Reno when asked
        # (every TCP connection; one dropped in a race to connect may
        # never get it), by default only if they have a core each.
        run = self.p2prun(self.args(extra=["-x", "P2P_MPI_STATS=1", "-x",
                                           "P2P_TCP_CONGESTION=reno"]))
        self.assert_rc(run, 0)
        cc = self.tcp_and_cc(run)
        self.assertEqual(sorted(cc), [0, 1, 2], run.describe())
        for rank, (tcp, name, n) in cc.items():
            self.assertEqual(name, "reno", run.describe())
            self.assertTrue(1 <= n <= tcp, run.describe())
        ref = run.stdout
        run = self.p2prun(self.args(extra=["-x", "P2P_MPI_STATS=1"]))
        self.assert_rc(run, 0)
        want = "reno" if (os.cpu_count() or 1) >= 6 else "-"
        self.assertEqual({r: v[1] for r, v in self.tcp_and_cc(run).items()},
                         {0: want, 1: want, 2: want}, run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref))
        run = self.p2prun(self.args(extra=["-x", "P2P_MPI_STATS=1", "-x",
                                           "P2P_TCP_CONGESTION=system"]))
        self.assert_rc(run, 0)
        self.assertEqual({r: v[1:] for r, v in self.tcp_and_cc(run).items()},
                         {0: ("-", 0), 1: ("-", 0), 2: ("-", 0)},
                         run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref))
        run = self.p2prun(self.args(extra=["-x", "P2P_MPI_STATS=1", "-x",
                                           "P2P_TCP_CONGESTION=nosuchcc"]))
        self.assert_rc(run, 0)
        self.assertIn("TCP congestion control nosuchcc refused", run.stderr,
                      run.describe())
        self.assertEqual({r: v[2] for r, v in self.tcp_and_cc(run).items()},
                         {0: 0, 1: 0, 2: 0}, run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref))
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def test_shared_memory_replica_killed(self):
        ref = self.p2prun(self.args())
        self.assert_rc(ref, 0)
        before = set(glob.glob("/dev/shm/p2pmpi-*"))
        for rank, replica in ((1, 0), (2, 1)):
            with self.subTest(rank=rank, replica=replica):
                run = self.start_p2prun(self.args(extra=["-x",
                                                         "P2P_MPI_STATS=1"]))
                wait_until(lambda: len(self.replica_procs("mpi_steps")) == 6
                           or not run.alive(), 20, "the job's processes")
                time.sleep(0.3)
                (pid,) = self.replica_procs("mpi_steps", rank, replica)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.assertIsNotNone(run.wait(60), run.describe())
                self.assert_rc(run, 0)
                self.assertIn("the rank goes on", run.stderr, run.describe())
                self.assertEqual(self.per_rank(run.stdout),
                                 self.per_rank(ref.stdout), run.describe())
                # The shm path was the one taken (and the kill broke it).
                self.assertTrue(any(n > 0 for n in
                                    self.shm_counts(run).values()),
                                run.describe())
                self.assert_job_over(self.sn, self.peers, timeout=5)
        # Segments are unlinked once mapped: none is left behind (the
        # job's own /dev/shm may be private; this is the host's).
        self.assertEqual(set(glob.glob("/dev/shm/p2pmpi-*")) - before, set())


if __name__ == "__main__":
    harness.main()
