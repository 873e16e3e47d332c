#!/usr/bin/env python3
"""Jobs of many processes on the embedded cluster (docs/scale.md):
connections on demand (a ring of 64 ranks opens one connection per
neighbour pair, not one per pair of ranks), a 512-process job with an
Allreduce that passes and names no failure, and an address table of more
than 2,048 entries (it once had to fit one control-socket message).

These jobs are heavy for a 2-core machine: the test runs alone (CTest
RUN_SERIAL) with generous timeouts, and asserts outcomes, never times."""

import os
import re
import signal
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
STATS = re.compile(r"^p2pmpi: rank (\d+): (\d+) connections made, "
                   r"(\d+) accepted$")
FAILURE_WORDS = ("lost", "silent", "overloaded", "failed", "dead",
                 "could not", "cannot")


class TestScale(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        if os.path.exists("/etc/p2p/p2p.conf"):
            self.skipTest("/etc/p2p/p2p.conf exists: not an unconfigured "
                          "machine")
        home = self.c.path("emptyhome")
        os.mkdir(home, 0o700)
        self.env = {"HOME": home, "P2P_CONF": None,
                    "XDG_CONFIG_HOME": None, "XDG_STATE_HOME": None}

    def run_local(self, args, timeout):
        run = self.c.start_p2prun(args, conf=None, env=self.env,
                                  cwd=self.c.dir)
        if run.wait(timeout) is None:
            run.kill()
            raise AssertionError("p2prun still running after %d s:\n%s"
                                 % (timeout, run.describe()))
        return run

    def assert_no_failure_named(self, run):
        for line in run.stderr_lines():
            if line.startswith("p2prun: no supernode configured"):
                continue
            self.assertFalse(any(w in line for w in FAILURE_WORDS),
                             "a failure named: %r\n%s"
                             % (line, run.describe()))

    def test_ring_connects_on_demand(self):
        n = 64
        prog = self.mpi_program("mpi_ring")
        run = self.run_local(["-n", str(n), "-x", "P2P_MPI_STATS=1", prog,
                              "3"], 240)
        self.assert_rc(run, 0)
        self.assertEqual(sorted(run.stdout.splitlines()),
                         sorted("rank %d ring ok" % r for r in range(n)),
                         run.describe())
        made = accepted = 0
        ranks = set()
        for line in run.stderr_lines():
            m = STATS.match(line)
            if m:
                ranks.add(int(m.group(1)))
                made += int(m.group(2))
                accepted += int(m.group(3))
        self.assertEqual(ranks, set(range(n)), run.describe())
        # Each neighbour pair connects once (two ranks reaching for each
        # other at once still end with one): n connections, 2n ends.
        # The full mesh was n (n - 1) / 2 = 2,016 connections.
        self.assertEqual(made, accepted, run.describe())
        self.assertEqual(made, n, run.describe())
        figure("ring of %d ranks: %d connections (%d ends); a full mesh "
               "has %d" % (n, made, made + accepted, n * (n - 1) // 2))

    def ring_stats(self, run):
        """{rank: (made, accepted)} from P2P_MPI_STATS lines (with
        replicas, those of each rank's shown replica, its master)."""
        stats = {}
        for line in run.stderr_lines():
            m = STATS.match(line)
            if m:
                stats[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        return stats

    def test_replicated_ring_connects_on_demand(self):
        n, r = 64, 2
        prog = self.mpi_program("mpi_ring")
        run = self.run_local(["-n", str(n), "-r", str(r), "-x",
                              "P2P_MPI_STATS=1", prog, "3"], 300)
        self.assert_rc(run, 0)
        self.assertEqual(sorted(run.stdout.splitlines()),
                         sorted("rank %d ring ok" % k for k in range(n)),
                         run.describe())
        stats = self.ring_stats(run)
        self.assertEqual(set(stats), set(range(n)), run.describe())
        # Replica 0 of rank b feeds replica 0 of b + 1 and is fed by that
        # of b - 1 (one connection each), acknowledges to replica 1 of
        # b - 1 and is acknowledged by replica 1 of b + 1: 4 connections,
        # whichever end made them.  Two processes reaching for each other
        # at once count a made connection that lost, at most one per
        # pair.  The full mesh was n * r - 1 = 127 per process.
        ends = sum(m + a for m, a in stats.values())
        worst = max(m + a for m, a in stats.values())
        self.assertGreaterEqual(ends, 4 * n, stats)
        self.assertLessEqual(worst, 2 * 4, stats)
        self.assertLessEqual(ends, 5 * n, stats)
        figure("ring of %d ranks x %d: %d connection ends at the %d masters "
               "(at most %d at one); a full mesh has %d per process"
               % (n, r, ends, n, worst, n * r - 1))

    def test_replicated_ring_survives_a_kill(self):
        """A master killed in the middle of a 64 x 2 ring: its partners
        turn to its other replica over connections made then, and the
        output is the failure-free one."""
        n = 64
        prog = self.mpi_program("mpi_ring")
        run = self.run_local(["-n", str(n), "-r", "2", "-x",
                              "P2P_TEST_KILL=17.0:send:20", prog, "40"], 300)
        self.assert_rc(run, 0)
        self.assertEqual(sorted(run.stdout.splitlines()),
                         sorted("rank %d ring ok" % k for k in range(n)),
                         run.describe())

    def test_replica_dead_before_its_batch(self):
        """A replica that the coordinator declares dead before its peer
        reached its spawn batch is never started: it would wait 120 s in
        MPI_Init for an address table that went out without it.  Peer B
        holds 17 processes: 16 start at once, the 17th is held back 4 s
        (test switch), and meanwhile the progress rule declares it dead
        (its partner on peer A printed a line); the job runs on past the
        4 s, so the batch comes while it runs."""
        sn = self.c.start_supernode()
        peers = [self.c.start_peer(2, [sn], slots=17)]
        self.c.env["P2P_TEST_SPAWN_DELAY_MS"] = "4000"  # peer B only
        peers.append(self.c.start_peer(3, [sn], slots=17))
        del self.c.env["P2P_TEST_SPAWN_DELAY_MS"]
        self.c.wait_listed([sn], peers)
        conf = self.c.job_config("lag.conf", [sn],
                                 user_key=self.c.user_key("user")[0],
                                 lease_ms=4000,
                                 run={"replica_lag_ms": 1000})
        ring = self.mpi_program("mpi_ring")
        prog = self.script("up_ring", "echo up\n%s 3 && sleep 8\n" % ring)
        n = 17
        run = self.start_p2prun(["-n", str(n), "-r", "2", "--timeout", "100",
                                 prog], conf=conf)
        # Far below the 120 s the held-back replica would wait.
        self.assertIsNotNone(run.wait(60), "the job waited:\n"
                             + run.describe())
        self.assert_rc(run, 0)
        self.assertIn("declared dead", run.stderr, run.describe())
        self.assertEqual(sorted(run.stdout.splitlines()),
                         sorted(["up"] * n +
                                ["rank %d ring ok" % k for k in range(n)]),
                         run.describe())
        self.assertEqual(sum(p.count_log("was declared dead before it "
                                         "started: not starting it")
                             for p in peers), 1,
                         "a peer to say it did not start the dead replica")

    def run_bench(self, name, n, expect):
        """bench/NAME.c on n ranks: it must pass with exactly the lines
        expect (in any order) and name no failure."""
        prog = self.mpi_program(name, os.path.join(SOURCE, "bench", name + ".c"))
        run = self.run_local(["-n", str(n), "--timeout", "300", prog], 330)
        self.assert_rc(run, 0)
        self.assertEqual(sorted(run.stdout.splitlines()), sorted(expect),
                         run.describe())
        self.assert_no_failure_named(run)
        return run

    def test_512_processes(self):
        n = 512
        run = self.run_bench("mpi_launch", n, ["launch %d ok" % n])
        figure("%d-process hello with an Allreduce on the embedded "
               "cluster: %.2f s" % (n, run.elapsed))

    def test_table_beyond_2048(self):
        # 2,100 processes: more than one control message could carry.
        # Each needs the whole table to pass MPI_Init; none talks to
        # another (on demand, no connection at all), so this stays light.
        n = 2100
        run = self.run_bench("mpi_hello", n,
                             ["hello from rank %d of %d" % (r, n)
                              for r in range(n)])
        figure("%d-process job (address table streamed in %d parts): "
               "%.2f s" % (n, (n + 255) // 256, run.elapsed))

    def test_overloaded_peer_named_so(self):
        """A peer whose machine still acknowledges every byte but whose
        peerd does not answer (here: stopped) is lost after a lease, and
        the message says it is overloaded, not silent."""
        sn, peers = self.start_jobnet(2, slots=1, lease_ms=1500)
        mark = harness.unique_sleep(60)
        run = self.start_p2prun(["-n", "2", "sleep", mark])
        wait_until(lambda: len(harness.processes_with_argv(["sleep", mark]))
                   == 2 or not run.alive(), 30, "both processes to run")
        peers[0].signal(signal.SIGSTOP)
        try:
            wait_until(lambda: "lost peer" in run.stderr or not run.alive(),
                       30, "p2prun to give the peer up")
            self.assertIn("lost peer %s (overloaded" % peers[0].label,
                          run.stderr, run.describe())
        finally:
            peers[0].signal(signal.SIGCONT)
        self.assertIsNotNone(run.wait(30), run.describe())
        self.assertNotEqual(run.rc, 0, run.describe())


if __name__ == "__main__":
    harness.main()
