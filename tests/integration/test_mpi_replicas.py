#!/usr/bin/env python3
"""Replicated MPI jobs (p2prun -r 2): replica k of every rank forms replica
set k; each set runs the whole program, on hosts of its own when the
network allows.  When a process dies, or a whole peer, its set is stopped
and the job goes on with the other: every rank's output is byte for byte
that of a failure-free run, and the exit status 0.  When every set loses a
member (here: both replicas of one rank), the job ends non-zero naming the
rank.  A seeded randomized soak kills at random moments and prints its
seed when it fails."""

import os
import random
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 25
LEASE_MS = 1500


class TestMpiReplicas(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        # Three hosts of three slots: -n 3 -r 2 puts set 0 on two hosts
        # and set 1 on the third.
        self.sn, self.peers = self.start_jobnet(3, slots=3,
                                                lease_ms=LEASE_MS)
        self.prog = self.c.path("mpi_steps")
        subprocess.run([harness.binary("p2pcc"), "-O2", "-o", self.prog,
                        os.path.join(HERE, "mpi_steps.c")], check=True)
        os.chmod(self.prog, 0o755)

    def args(self, steps=STEPS, delay=None):
        a = ["-n", "3", "-r", "2", self.prog, str(steps)]
        return a + ([str(delay)] if delay is not None else [])

    @staticmethod
    def per_rank(out):
        ranks = {}
        for line in out.splitlines(keepends=True):
            ranks.setdefault(line.split()[1], []).append(line)
        return ranks

    def reference(self):
        if not hasattr(self, "_ref"):
            run = self.p2prun(self.args())
            self.assert_rc(run, 0)
            self._ref = run.stdout
        return self._ref

    def procs(self, rank=None, replica=None):
        out = {}
        for pid, (argv, env, uid) in self.c.job_processes().items():
            if not any("mpi_steps" in a for a in argv):
                continue
            if rank is not None and env.get("P2P_RANK") != str(rank):
                continue
            if replica is not None and env.get("P2P_REPLICA") != str(replica):
                continue
            out[pid] = env
        return out

    def start(self, delay=None, want=6):
        run = self.start_p2prun(self.args(delay=delay))
        wait_until(lambda: len(self.procs()) == want or not run.alive(), 20,
                   "the job's processes")
        return run

    def assert_survived(self, run, what):
        self.assertIsNotNone(run.wait(60), run.describe())
        self.assert_rc(run, 0)
        self.assertEqual(self.per_rank(run.stdout),
                         self.per_rank(self.reference()),
                         "%s: output differs from the failure-free run\n%s"
                         % (what, run.describe()))
        self.assertEqual(len(run.stdout), len(self.reference()))
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def kill(self, rank, replica):
        (pid,) = self.procs(rank=rank, replica=replica)
        os.kill(pid, signal.SIGKILL)

    def test_master_killed_between_messages(self):
        self.reference()
        run = self.start()
        time.sleep(0.25)
        t0 = time.monotonic()
        self.kill(1, 0)
        wait_until(lambda: "replica set 0 stopped" in run.stderr or
                   not run.alive(), 5, "p2prun to stop the set")
        figure("MPI replica killed: its set stopped %.3f s later"
               % (time.monotonic() - t0))
        self.assert_survived(run, "master of rank 1 killed")

    def test_master_killed_at_chosen_points(self):
        """A master kills itself (P2P_TEST_KILL, a switch only tests use)
        during MPI_Init, at a send, inside a rendezvous transfer, inside a
        collective, and during MPI_Finalize."""
        self.reference()
        # rank 0 sends the rendezvous payloads, rank 1 receives them.
        for who, point, n in (("1.0", "init", 1), ("1.0", "send", 7),
                              ("0.0", "rndv", 5), ("1.0", "coll", 12),
                              ("1.0", "finalize", 1)):
            with self.subTest(point=point):
                args = ["-x", "P2P_TEST_KILL=%s:%s:%d" % (who, point, n)]
                run = self.p2prun(args + self.args(), timeout=60)
                self.assert_rc(run, 0)
                # Which member of the set p2prun hears of first may vary
                # (the others leave as soon as the victim is gone).
                self.assertIn("replica set 0 stopped", run.stderr,
                              run.describe())
                self.assertEqual(self.per_rank(run.stdout),
                                 self.per_rank(self.reference()),
                                 "killed at %s: output differs\n%s"
                                 % (point, run.describe()))
                self.assert_job_over(self.sn, self.peers, timeout=5)

    def test_backup_killed(self):
        self.reference()
        run = self.start()
        time.sleep(0.2)
        self.kill(0, 1)
        self.assert_survived(run, "backup of rank 0 killed")

    def test_killed_during_mpi_init(self):
        self.reference()
        run = self.start(delay=400)
        self.kill(2, 0)  # before it reported its address
        self.assert_survived(run, "rank 2 replica 0 killed before MPI_Init")

    def test_whole_peer_killed(self):
        self.reference()
        run = self.start()
        time.sleep(0.25)
        (pid, env), = self.procs(rank=0, replica=1).items()
        victim = next(p for p in self.peers if p.addr == env["P2P_PEERD"])
        theirs = list(self.c.job_processes([victim]))
        victim.kill()
        for p in theirs:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.assertIsNotNone(run.wait(60), run.describe())
        self.assert_rc(run, 0)
        self.assertEqual(self.per_rank(run.stdout),
                         self.per_rank(self.reference()), run.describe())
        live = [p for p in self.peers if p is not victim]
        self.assert_job_over(self.sn, live, timeout=5)

    def test_every_replica_of_a_rank(self):
        run = self.start()
        time.sleep(0.2)
        for pid in self.procs(rank=1):
            os.kill(pid, signal.SIGKILL)
        self.assertIsNotNone(run.wait(20), run.describe())
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("rank 1 failed", run.stderr)
        wait_until(lambda: not self.procs(), 5, "the job's processes to end")

    def test_frozen_host(self):
        """A host that stops answering (peerd and its processes frozen, as
        a partitioned host looks from outside) is given up after the
        lease; the job goes on; when the host thaws, its processes die
        instead of acting as a second master (no split brain)."""
        self.reference()
        run = self.start()
        time.sleep(0.25)
        (pid, env), = self.procs(rank=0, replica=1).items()
        victim = next(p for p in self.peers if p.addr == env["P2P_PEERD"])
        frozen = [victim.popen.pid] + list(self.c.job_processes([victim]))
        t0 = time.monotonic()
        for p in frozen:
            os.kill(p, signal.SIGSTOP)
        try:
            wait_until(lambda: "lost peer" in run.stderr or not run.alive(),
                       LEASE_MS / 1000 + 5, "p2prun to give the host up")
            figure("frozen host given up after %.2f s (lease %d ms)"
                   % (time.monotonic() - t0, LEASE_MS))
            self.assertIsNotNone(run.wait(60), run.describe())
            self.assert_rc(run, 0)
            self.assertEqual(self.per_rank(run.stdout),
                             self.per_rank(self.reference()), run.describe())
        finally:
            for p in frozen:
                try:
                    os.kill(p, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        # Thawed, the host finds its coordinator gone: its processes die.
        wait_until(lambda: not self.c.job_processes([victim]), 5,
                   "the thawed host's job processes to die")
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def test_soak(self):
        """Random victims at random moments, 8 rounds (set P2P_SOAK_ROUNDS
        for more); the seed is printed when a round fails."""
        seed = int(os.environ.get("P2P_SOAK_SEED", time.time_ns() % 100000))
        rounds = int(os.environ.get("P2P_SOAK_ROUNDS", "8"))
        rng = random.Random(seed)
        self.reference()
        for i in range(rounds):
            with self.subTest(round=i, seed=seed):
                run = self.start()
                time.sleep(rng.uniform(0.0, 0.5))
                rank, replica = rng.randrange(3), rng.randrange(2)
                try:
                    self.kill(rank, replica)
                except ValueError:
                    pass  # already finished
                try:
                    self.assert_survived(run, "soak seed %d round %d: rank %d "
                                         "replica %d" % (seed, i, rank,
                                                         replica))
                except AssertionError:
                    sys.stdout.write("SOAK FAILED: seed %d (P2P_SOAK_SEED=%d)\n"
                                     % (seed, seed))
                    raise
        figure("soak: %d rounds survived, seed %d" % (rounds, seed))


if __name__ == "__main__":
    harness.main()
