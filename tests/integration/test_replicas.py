#!/usr/bin/env python3
"""Replicas of plain (non-MPI) jobs: with -r 2 every rank runs twice on
two distinct hosts; when a replica dies (SIGKILL of the process, or of its
whole peer: peerd and everything it started) the rank goes on with the
other, the output is byte for byte that of a failure-free run (the
survivor's stream continues where the dead master's stopped), and the
exit status is 0.  When every replica of a rank dies, the job ends
non-zero naming the rank.  A job's processes do not outlive their peerd.
(MPI jobs need the replication protocol to survive; not yet.)"""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

# Each rank prints 12 lines, each in two writes (a partial line, then its
# end), so that a replica dies between and inside lines.
COUNT = """i=1
while [ $i -le 12 ]; do
    printf 'rank %s line %s' "$P2P_RANK" "$i"; sleep 0.05
    printf ' of 12\\n'; sleep 0.05
    i=$((i+1))
done
"""


class TestReplicas(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(3, slots=2)
        self.prog = self.script("count.sh", COUNT)

    def expected(self, n):
        run = self.p2prun(["-n", str(n), "-r", "2", self.prog])
        self.assert_rc(run, 0)
        return run.stdout

    def procs(self, rank=None, replica=None):
        """{pid: environ} of the job's count.sh processes."""
        return self.replica_procs("count.sh", rank, replica)

    def start_and_wait(self, n):
        run = self.start_p2prun(["-n", str(n), "-r", "2", self.prog])
        wait_until(lambda: len(self.procs()) == 2 * n or not run.alive(), 20,
                   "%d processes to run" % (2 * n))
        self.assertEqual(len(self.procs()), 2 * n, run.describe())
        time.sleep(0.3)  # a few lines out, some partial
        return run

    def assert_same_output(self, run, expected, what):
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(expected),
                         "%s: output differs from the failure-free run\n%s"
                         % (what, run.describe()))
        # Nothing lost, nothing repeated, no half line left over.
        self.assertEqual(len(run.stdout), len(expected), run.describe())

    def assert_same(self, run, expected, what):
        self.assertIsNotNone(run.wait(30), run.describe())
        self.assert_rc(run, 0)
        self.assert_same_output(run, expected, what)
        self.assert_job_over(self.sn, self.peers, timeout=30)

    def test_master_killed(self):
        expected = self.expected(2)
        run = self.start_and_wait(2)
        (pid,) = self.procs(rank=0, replica=0)
        t0 = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: "rank 0 replica 0" in run.stderr or
                   not run.alive(), 30, "p2prun to report the dead replica")
        figure("replica killed: p2prun knew %.3f s later"
               % (time.monotonic() - t0))
        self.assert_same(run, expected, "master of rank 0 killed")
        self.assertIn("killed by signal 9", run.stderr)
        self.assertIn("goes on with its other replicas", run.stderr)

    def test_backup_killed(self):
        expected = self.expected(2)
        run = self.start_and_wait(2)
        (pid,) = self.procs(rank=1, replica=1)
        os.kill(pid, signal.SIGKILL)
        self.assert_same(run, expected, "backup of rank 1 killed")

    def test_whole_peer_killed(self):
        expected = self.expected(3)
        run = self.start_and_wait(3)
        # The peer running rank 0's master, and everything it started.
        (pid, env), = self.procs(rank=0, replica=0).items()
        victim = next(p for p in self.peers if p.addr == env["P2P_PEERD"])
        t0 = time.monotonic()
        self.kill_peer_and_jobs(victim)
        wait_until(lambda: "lost peer" in run.stderr or not run.alive(), 5,
                   "p2prun to see the peer gone")
        figure("peer killed: p2prun knew %.3f s later"
               % (time.monotonic() - t0))
        self.assertIsNotNone(run.wait(30), run.describe())
        self.assert_rc(run, 0)
        self.assert_same_output(run, expected, "whole peer killed")
        self.assertIn("lost peer", run.stderr)
        live = [p for p in self.peers if p is not victim]
        self.assert_job_over(self.sn, live, timeout=30)

    def test_processes_die_with_their_peerd(self):
        run = self.start_and_wait(3)
        (pid, env), = self.procs(rank=1, replica=0).items()
        victim = next(p for p in self.peers if p.addr == env["P2P_PEERD"])
        theirs = list(self.c.job_processes([victim]))
        self.assertTrue(theirs)
        victim.kill()  # peerd alone
        wait_until(lambda: not self.c.job_processes([victim]), 3,
                   "the dead peerd's job processes to die with it")
        self.assertIsNotNone(run.wait(30), run.describe())
        self.assert_rc(run, 0)

    def test_every_replica_of_a_rank(self):
        run = self.start_and_wait(2)
        for pid in self.procs(rank=1):
            os.kill(pid, signal.SIGKILL)
        self.assertIsNotNone(run.wait(60), run.describe())
        self.assert_rc(run, 137)
        self.assertIn("rank 1 failed", run.stderr)
        wait_until(lambda: not self.procs(), 30, "the job's processes to end")
        self.assert_job_over(self.sn, self.peers, timeout=30)


if __name__ == "__main__":
    harness.main()
