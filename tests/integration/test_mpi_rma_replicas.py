#!/usr/bin/env python3
"""One-sided communication in replicated jobs (p2prun -r 2): the order in
which a passive target serves requests from several origins is arrival
order, taken by the rank's master and followed by its backups.  A
program whose tickets (Fetch_and_op under exclusive locks on rank 0)
depend on that order prints the same, consistent log whether or not the
master of the target, or of an origin, is killed midway: the survivor
served the requests in the order the dead master did."""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import wait_until  # noqa: E402

K = 60


class TestMpiRmaReplicas(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(3, slots=3, lease_ms=1500)
        self.prog = self.mpi_program("mpi_rma_order")

    def assert_consistent(self, run):
        """Every ticket a rank printed is its slot in the log every rank
        printed, the log holds each rank K times, the counter is full."""
        lines = run.stdout.splitlines()
        tickets = [l.split() for l in lines if " ticket " in l]
        logs = [l.split() for l in lines if " log" in l]
        self.assertEqual(len(logs), 3, run.describe())
        log = [int(x) for x in logs[0][5:]]
        for l in logs:
            self.assertEqual([int(x) for x in l[5:]], log, run.describe())
            self.assertEqual(int(l[3]), 2 * K, run.describe())
        self.assertEqual(len(tickets), 2 * K, run.describe())
        for t in tickets:
            self.assertEqual(log[int(t[3])], int(t[1]),
                             "rank %s printed ticket %s, the log says %d\n%s"
                             % (t[1], t[3], log[int(t[3])], run.describe()))
        self.assertEqual(sorted(log), [1] * K + [2] * K, run.describe())

    def test_passive_target_agreement(self):
        for kill in (None, (0, 0), (1, 0)):
            with self.subTest(kill=kill):
                run = self.start_p2prun(["-n", "3", "-r", "2", self.prog,
                                         str(K)])
                if kill is not None:
                    wait_until(lambda: len(self.replica_procs(
                        "mpi_rma_order")) == 6 or not run.alive(), 20,
                        "the processes")
                    wait_until(lambda: run.stdout.count(" ticket ") >= K // 3
                               or not run.alive(), 20, "tickets")
                    (pid,) = self.replica_procs("mpi_rma_order", *kill)
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.assertIsNotNone(run.wait(60), run.describe())
                self.assert_rc(run, 0)
                self.assert_consistent(run)
                if kill is not None:
                    self.assertIn("rank %d replica %d" % kill, run.stderr,
                                  run.describe())
                self.assert_job_over(self.sn, self.peers, timeout=5)


if __name__ == "__main__":
    harness.main()
