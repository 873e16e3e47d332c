#!/usr/bin/env python3
"""Long eager messages over plain TCP are read straight into place
(mpjrun/mpi/transport.c, conn_eager_direct): a payload of 16 KiB up to
the 64 KiB eager limit goes from the socket into the receive posted for
it, or into the unexpected message kept for it, not through the
connection's receive buffer.  Two peers on distinct loopback addresses
stand for two hosts, one rank on each.

tests/mpi/p2p_eager.c checks every byte on every path; here it runs with
--no-encrypt on two hosts, where P2P_MPI_STATS counts the payloads read
in place, and the next headers read with a payload's tail (the paths
are taken, not only correct).  A sender that pauses
halfway through a payload (P2P_TEST_KILL=...:eagerpause) leaves its
receiver with a message begun, which a receive posted meanwhile (after a
probe saw its header) completes when the rest comes.  A sender killed
halfway through a payload (...:eagerhalf), whether its receiver had the
receive posted or kept the message unexpected, ends the job promptly,
and p2prun names the killed rank as the cause."""

import os
import re
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402

INPLACE = re.compile(r"^p2pmpi: rank (\d+): (\d+) long eager payloads read "
                     r"in place; (\d+) next headers read with a payload's "
                     r"tail$", re.M)


class TestMpiEager(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(2, slots=2)
        self.prog = self.mpi_program(
            "mpi_p2p_eager",
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "mpi", "p2p_eager.c"))

    def run_eager(self, extra=()):
        return self.p2prun(["-n", "2", "--no-encrypt", "-x",
                            "P2P_MPI_STATS=1"] + list(extra) + [self.prog],
                           timeout=90)

    def test_read_in_place(self):
        run = self.run_eager()
        self.assert_rc(run, 0)
        self.assertIn("ok p2p_eager", run.stdout)
        counts = {int(r): (int(n), int(h))
                  for r, n, h in INPLACE.findall(run.stderr)}
        self.assertEqual(sorted(counts), [0, 1], run.describe())
        # Every long message of the program (7 sizes of 10 are long,
        # sent in several rounds) is one; some may still come through
        # the buffer when a read ends mid-header.  In a stream of them
        # the next header mostly comes in with a payload's tail (a
        # system call saved); when the sender is behind, it does not.
        for rank, (n, along) in counts.items():
            self.assertGreater(n, 20, run.describe())
            self.assertGreater(along, 0, run.describe())

    def test_payload_begun_then_received(self):
        # The 15th long eager send of rank 1 is the probed stream's
        # second message; the 10th is the third of a one-tag stream the
        # receiver takes after a barrier.
        for n in (10, 15):
            run = self.run_eager(["-x", "P2P_TEST_KILL=1.0:eagerpause:%d" % n])
            self.assert_rc(run, 0)
            self.assertIn("ok p2p_eager", run.stdout)

    def test_sender_killed_midway(self):
        # 3rd: into a receive posted before it came; 10th: into a
        # message kept unexpected.
        for n in (3, 10):
            run = self.run_eager(["-x", "P2P_TEST_KILL=1.0:eagerhalf:%d" % n])
            self.assertNotEqual(run.rc, 0, run.describe())
            self.assertLess(run.elapsed, 30, run.describe())
            self.assertRegex(run.stderr, r"rank 1 replica 0 on \S+ killed by "
                             r"signal 9", run.describe())
            self.assertNotIn("ok p2p_eager", run.stdout)
            self.assertNotRegex(run.stderr, r"rank 0 .*signal", run.describe())


if __name__ == "__main__":
    harness.main()
