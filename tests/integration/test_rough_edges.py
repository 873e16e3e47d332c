#!/usr/bin/env python3
"""Rough edges a careless user hits (issue 10): p2prun -l with a FIFO
used to hang forever (now refused, path in the message, like anything
that is not a regular file); an -x value or an argument beyond what a
peer accepts was taken and then failed as "lost peer ... rank 0 failed"
(now refused where it is typed, naming the limit); an unreachable
supernode or peer printed timestamped log lines before the one error
line (now one line by default, the log lines with -v)."""

import os
import signal
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402


class TestRoughEdges(harness.JobTestCase):

    def dead_conf(self):
        """A configuration whose only supernode does not answer."""
        key, _ = self.c.user_key("user")
        return self.c.job_config("dead.conf",
                                 ["127.0.0.1:%d" % harness.free_port()],
                                 user_key=key)

    def assert_one_line(self, run, *words):
        lines = run.stderr_lines()
        self.assertEqual(len(lines), 1, run.describe())
        for w in words:
            self.assertIn(w, lines[0])

    def test_fifo_refused(self):
        fifo = self.c.path("pipe")
        os.mkfifo(fifo)
        run = self.p2prun(["-l", fifo, "true"], conf=self.dead_conf(),
                          timeout=30)
        self.assert_rc(run, 2)
        self.assert_one_line(run, fifo, "not a regular file", "FIFO")
        # A directory likewise.
        run = self.p2prun(["-l", self.outdir, "true"], conf=self.dead_conf())
        self.assert_rc(run, 2)
        self.assert_one_line(run, self.outdir, "not a regular file")

    def test_limits_checked_where_typed(self):
        conf = self.dead_conf()
        run = self.p2prun(["-x", "BIG=" + "x" * 5000, "true"], conf=conf)
        self.assert_rc(run, 2)
        self.assert_one_line(run, "-x BIG", "4096")
        run = self.p2prun(["-x", "P2P_TEST_BIG", "true"], conf=conf,
                          env={"P2P_TEST_BIG": "y" * 4200})
        self.assert_rc(run, 2)
        self.assert_one_line(run, "-x P2P_TEST_BIG", "4096")
        run = self.p2prun(["true", "z" * 5000], conf=conf)
        self.assert_rc(run, 2)
        self.assert_one_line(run, "argument 1", "4096")
        run = self.p2prun(sum([["-x", "V%d=1" % i] for i in range(300)], [])
                          + ["true"], conf=conf)
        self.assert_rc(run, 2)
        self.assert_one_line(run, "-x", "254 variables")
        # Just within the limit is accepted, and reaches the program.
        self.start_jobnet(1, slots=1)
        value = "v" * (4096 - len("BIG="))
        run = self.p2prun(["-x", "BIG=" + value, "sh", "-c",
                           'printf %s "$BIG" | wc -c'])
        self.assert_rc(run, 0)
        self.assertEqual(run.stdout.strip(), str(len(value)))

    def test_unreachable_supernode(self):
        conf = self.dead_conf()
        run = self.p2prun(["true"], conf=conf)
        self.assert_rc(run, 1)
        self.assert_one_line(run, "no supernode reachable")
        run = self.p2prun(["-v", "true"], conf=conf)
        self.assert_rc(run, 1)
        self.assertGreater(len(run.stderr_lines()), 1, run.describe())
        self.assertIn("no supernode reachable", run.stderr_lines()[-1])

    def test_unreachable_peer(self):
        """A listed peer that does not answer (stopped: its supernode
        still lists it)."""
        sn, peers = self.start_jobnet(1, slots=1, expire=60)
        peers[0].signal(signal.SIGSTOP)
        try:
            run = self.p2prun(["-n", "1", "true"])
            self.assert_rc(run, 1)
            self.assert_one_line(run, peers[0].label)
            run = self.p2prun(["-v", "-n", "1", "true"])
            self.assert_rc(run, 1)
            self.assertGreater(len(run.stderr_lines()), 1, run.describe())
        finally:
            peers[0].signal(signal.SIGCONT)


if __name__ == "__main__":
    harness.main()
