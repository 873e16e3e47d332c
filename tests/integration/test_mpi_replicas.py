#!/usr/bin/env python3
"""Replicated MPI jobs (p2prun -r 2): every rank runs twice; replica k of a
sender feeds replica k of each receiver.  When a process dies, or a whole
peer, p2prun declares it dead in a numbered view, and whoever it fed turns
to the rank's other replica, which replays what they lack: the job goes on
as long as every rank keeps one replica, whichever they are.  Every rank's
output is byte for byte that of a failure-free run, and the exit status 0.
When both replicas of one rank are lost, the job ends non-zero naming the
rank.  A seeded randomized soak kills at random moments and prints its
seed when it fails."""

import os
import random
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

STEPS = 60
LEASE_MS = 1500


class TestMpiReplicas(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        # Three hosts of three slots: -n 3 -r 2 puts set 0 on two hosts
        # and set 1 on the third.
        self.sn, self.peers = self.start_jobnet(3, slots=3,
                                                lease_ms=LEASE_MS)
        self.prog = self.mpi_program("mpi_steps")

    def args(self, steps=STEPS, delay=None):
        a = ["-n", "3", "-r", "2", self.prog, str(steps)]
        return a + ([str(delay)] if delay is not None else [])

    def reference(self):
        if not hasattr(self, "_ref"):
            run = self.p2prun(self.args())
            self.assert_rc(run, 0)
            self._ref = run.stdout
        return self._ref

    def procs(self, rank=None, replica=None, name="mpi_steps"):
        return self.replica_procs(name, rank, replica)

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
        self.assert_job_over(self.sn, self.peers, timeout=30)

    def kill(self, rank, replica):
        (pid,) = self.procs(rank=rank, replica=replica)
        self.kill_pid(pid)

    @staticmethod
    def kill_pid(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # ended between the look and the kill: lost all the same

    def lines_of(self, run, rank):
        return [l for l in run.stdout.splitlines() if l.split()[1] == rank]

    def test_master_killed_between_messages(self):
        self.reference()
        run = self.start()
        time.sleep(0.25)
        before = len(self.lines_of(run, "1"))
        t0 = time.monotonic()
        self.kill(1, 0)
        wait_until(lambda: "the rank goes on" in run.stderr or
                   not run.alive(), 30, "p2prun to hear of the death")
        t1 = time.monotonic()
        wait_until(lambda: len(self.lines_of(run, "1")) > before + 1 or
                   not run.alive(), 30, "rank 1 to go on")
        figure("MPI replica killed: p2prun knew %.3f s later; rank 1 printed "
               "its next step %.3f s after the kill (a step takes ~0.02 s)"
               % (t1 - t0, time.monotonic() - t0))
        self.assert_survived(run, "master of rank 1 killed")

    def test_losses_in_every_replica(self):
        """Rank 0 loses replica 0, rank 1 replica 1, rank 2 replica 0, one
        after the other: no replica set stays whole, every rank keeps one
        replica, and the job ends as if nothing happened."""
        self.reference()
        run = self.start()
        # The three found in one look at /proc: on a busy machine a look
        # takes long enough for the job to end before a third one.
        procs = self.procs()
        pids = [pid for want in ((0, 0), (1, 1), (2, 0))
                for pid, env in procs.items()
                if (env.get("P2P_RANK"), env.get("P2P_REPLICA")) ==
                tuple(map(str, want))]
        self.assertEqual(len(pids), 3, procs)
        for pid in pids:
            time.sleep(0.1)
            self.kill_pid(pid)
        self.assert_survived(run, "replica 0 of ranks 0 and 2, replica 1 of "
                             "rank 1 killed")
        self.assertEqual(run.stderr.count("the rank goes on"), 3,
                         run.describe())

    def test_master_killed_at_chosen_points(self):
        """A master kills itself (P2P_TEST_KILL, a switch only tests use)
        during MPI_Init, at a send, inside a rendezvous transfer (as it
        sends, and as it receives: the sender's frames sealed ahead for it
        are dropped with the connection), inside a collective, and during
        MPI_Finalize."""
        self.reference()
        # rank 0 sends the rendezvous payloads, rank 1 receives them
        # (1 MiB each: the 30th sealed frame is inside the third).
        for who, point, n in (("1.0", "init", 1), ("1.0", "send", 7),
                              ("0.0", "rndv", 5), ("1.0", "open", 30),
                              ("1.0", "coll", 12), ("1.0", "finalize", 1)):
            with self.subTest(point=point):
                args = ["-x", "P2P_TEST_KILL=%s:%s:%d" % (who, point, n)]
                run = self.p2prun(args + self.args(), timeout=60)
                self.assert_rc(run, 0)
                self.assertIn("the rank goes on with its other replicas",
                              run.stderr, run.describe())
                self.assertEqual(self.per_rank(run.stdout),
                                 self.per_rank(self.reference()),
                                 "killed at %s: output differs\n%s"
                                 % (point, run.describe()))
                self.assert_job_over(self.sn, self.peers, timeout=30)

    def assert_consistent_choices(self, run):
        """mpi_wild's output: rank 0's printed choices (200 wildcard
        receives, 100 Waitany rounds) are the ones every rank printed from
        the broadcast."""
        lines = run.stdout.splitlines()
        got = [l.split() for l in lines if " got " in l]
        firsts = [int(l.split()[5]) for l in lines if " round " in l]
        self.assertEqual([int(g[3]) for g in got], list(range(200)),
                         run.describe())
        order = [int(g[5]) for g in got][:100]
        self.assertEqual(len(firsts), 100, run.describe())
        for l in lines:
            if " order " in l:
                self.assertEqual([int(x) for x in l.split()[3:]], order,
                                 run.describe())
            if " firsts " in l:
                self.assertEqual([int(x) for x in l.split()[3:]], firsts,
                                 run.describe())

    def test_wildcard_agreement(self):
        """Rank 0's course depends on arrival order (MPI_ANY_SOURCE
        receives, MPI_Waitany); its master is killed midway.  The backup
        followed the master's choices, so the sequence rank 0 printed
        before and after the failover is the one it broadcast at the end
        (without agreement this fails most times: tested by hand)."""
        prog = self.mpi_program("mpi_wild")
        for kill in (False, True):
            with self.subTest(kill=kill):
                run = self.start_p2prun(["-n", "3", "-r", "2", prog, "100"])
                if kill:
                    wait_until(lambda: len(self.procs(name="mpi_wild")) == 6
                               or not run.alive(), 20, "the processes")
                    time.sleep(0.3)
                    (pid,) = self.procs(0, 0, name="mpi_wild")
                    os.kill(pid, signal.SIGKILL)
                self.assertIsNotNone(run.wait(60), run.describe())
                self.assert_rc(run, 0)
                self.assert_consistent_choices(run)
                if kill:
                    self.assertIn("rank 0 replica 0", run.stderr)
                self.assert_job_over(self.sn, self.peers, timeout=30)

    def assert_consistent_probes(self, run, k):
        """mpi_mwild's output: the sources rank 0 printed, matched probe
        by matched probe and persistent receive by persistent receive,
        are the sequences every rank printed from the broadcast."""
        lines = run.stdout.splitlines()
        n = k * 2  # -n 3: two senders
        for what in ("probed", "persistent"):
            got = [l.split() for l in lines if " %s " % what in l and
                   " from " in l]
            self.assertEqual([int(g[3]) for g in got], list(range(n)),
                             run.describe())
            seq = [int(g[5]) for g in got]
            self.assertEqual(sorted(seq), [1] * k + [2] * k, run.describe())
            finals = [l.split()[3:] for l in lines
                      if l.split()[2:3] == [what] and " from " not in l]
            self.assertEqual(len(finals), 3, run.describe())
            for f in finals:
                self.assertEqual([int(x) for x in f], seq, run.describe())
        self.assertEqual(sum(1 for l in lines if l.endswith(" sum 3")), 3,
                         run.describe())

    def test_matched_probe_agreement(self):
        """Rank 0's course depends on arrival order through wildcard
        matched probes (Mprobe, Improbe + Mrecv) and a persistent
        MPI_ANY_SOURCE receive, with a nonblocking allreduce in flight
        (rank 0 started it, the others have not yet); its master is
        killed midway, inside the allreduce.  The backup followed the master's
        choices: what rank 0 printed before and after the failover is
        what it broadcast at the end."""
        prog = self.mpi_program("mpi_mwild")
        k = 60
        for kill in (False, True):
            with self.subTest(kill=kill):
                run = self.start_p2prun(["-n", "3", "-r", "2", prog, str(k)])
                if kill:
                    wait_until(lambda: len(self.procs(name="mpi_mwild")) == 6
                               or not run.alive(), 20, "the processes")
                    wait_until(lambda: " probed 30 " in run.stdout or
                               not run.alive(), 30, "rank 0 to be midway")
                    (pid,) = self.procs(0, 0, name="mpi_mwild")
                    os.kill(pid, signal.SIGKILL)
                self.assertIsNotNone(run.wait(60), run.describe())
                self.assert_rc(run, 0)
                self.assert_consistent_probes(run, k)
                if kill:
                    self.assertIn("rank 0 replica 0", run.stderr)
                self.assert_job_over(self.sn, self.peers, timeout=30)

    def test_connection_cut(self):
        """Two live processes lose their connection (P2P_TEST_CUT: rank 0
        replica 0 closes its connection to rank 1 replica 0, process 2)
        while both stay in touch with p2prun, as in a partial network
        partition.  The first to report the other wins: after a lease p2prun
        declares the other dead, its peer kills it, and the job goes on."""
        self.reference()
        t0 = time.monotonic()
        run = self.p2prun(["-x", "P2P_TEST_CUT=0.0:2:5"] + self.args(),
                          timeout=60)
        self.assert_rc(run, 0)
        self.assertIn("cut off from other processes for a whole lease",
                      run.stderr, run.describe())
        self.assertEqual(self.per_rank(run.stdout),
                         self.per_rank(self.reference()), run.describe())
        figure("connection cut between two live processes: job done in "
               "%.2f s (lease %d ms)" % (time.monotonic() - t0, LEASE_MS))
        self.assert_job_over(self.sn, self.peers, timeout=30)

    def test_accepted_connection_cut(self):
        """A connection accepted from a process that dies the moment it
        has confirmed the handshake (P2P_TEST_ACCEPTCUT: the acceptor
        closes it once proven, before the frames that waited for it go
        out), between rank 0 replica 0 and rank 1 replica 1, whichever of
        them accepts: the connection has taken its place in the
        acceptor's table and stays there, closed, until the view says who
        is dead; nothing frees it twice.  The job goes on as after any
        cut, and no process dies of a signal."""
        self.reference()
        run = self.p2prun(["-x", "P2P_TEST_ACCEPTCUT=0.0:3,1.1:0"] +
                          self.args(), timeout=60)
        self.assert_rc(run, 0)
        self.assertIn("cut off from other processes for a whole lease",
                      run.stderr, run.describe())
        self.assertNotIn("killed by signal", run.stderr, run.describe())
        self.assertNotIn("AddressSanitizer", run.stderr, run.describe())
        self.assertEqual(self.per_rank(run.stdout),
                         self.per_rank(self.reference()), run.describe())
        self.assert_job_over(self.sn, self.peers, timeout=30)

    def test_last_frames_read_after_failed_write(self):
        """A process that finished and left is written to before its last
        frames are read (P2P_TEST_LATEREAD: rank 0 replica 1 leaves what
        rank 1 replica 0, process 2, sends it unread until that one has
        closed its end, then writes to it until a write fails).  Those
        frames are its acknowledgements, the last of them what rank 0
        replica 1 waits for in MPI_Finalize: they are still read, and the
        job ends as a failure-free run (before, the failed write closed
        the connection with them unread, and the job never ended).
        Over sockets (P2P_SHM=0), where writes fail, and with small
        messages only (barriers): a rendezvous would wait for those
        acknowledgements."""
        args = ["-n", "2", "-r", "2", self.mpi_program("mpi_flood"), "60000"]
        ref = self.p2prun(args)
        self.assert_rc(ref, 0)
        run = self.p2prun(["-x", "P2P_TEST_LATEREAD=0.1:2", "-x", "P2P_SHM=0"]
                          + args, timeout=30)
        self.assert_rc(run, 0)
        self.assertNotIn("declared dead", run.stderr, run.describe())
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref.stdout),
                         run.describe())
        self.assert_job_over(self.sn, self.peers, timeout=30)

    def test_three_replicas(self):
        """-r 3 on three hosts of three slots: rank 0 loses two replicas
        (its master first, then the next), rank 1 one, rank 2 none; and
        with wildcard receives, rank 0's first two masters die in turn, so
        the third replica follows decisions made by two masters."""
        ref = self.p2prun(["-n", "3", "-r", "3", self.prog, str(STEPS)])
        self.assert_rc(ref, 0)
        self.assertEqual(self.per_rank(ref.stdout),
                         self.per_rank(self.reference()))
        run = self.start_p2prun(["-n", "3", "-r", "3", self.prog,
                                 str(STEPS)])
        wait_until(lambda: len(self.procs()) == 9 or not run.alive(), 20,
                   "the job's processes")
        for rank, replica in ((0, 0), (1, 2), (0, 1)):
            time.sleep(0.1)
            self.kill(rank, replica)
        self.assertIsNotNone(run.wait(60), run.describe())
        self.assert_rc(run, 0)
        self.assertEqual(self.per_rank(run.stdout),
                         self.per_rank(self.reference()), run.describe())
        prog = self.mpi_program("mpi_wild")
        run = self.start_p2prun(["-n", "3", "-r", "3", prog, "100"])
        wait_until(lambda: len(self.procs(name="mpi_wild")) == 9 or
                   not run.alive(), 20, "the processes")
        for replica in (0, 1):
            time.sleep(0.2)
            (pid,) = self.procs(0, replica, name="mpi_wild")
            os.kill(pid, signal.SIGKILL)
        self.assertIsNotNone(run.wait(60), run.describe())
        self.assert_rc(run, 0)
        self.assert_consistent_choices(run)
        self.assert_job_over(self.sn, self.peers, timeout=30)

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
        before = len(self.lines_of(run, "0"))
        t0 = time.monotonic()
        theirs = self.kill_peer_and_jobs(victim)
        wait_until(lambda: "lost peer" in run.stderr or not run.alive(), 5,
                   "p2prun to hear of the peer")
        t1 = time.monotonic()
        wait_until(lambda: len(self.lines_of(run, "0")) > before + 1 or
                   not run.alive(), 30, "rank 0 to go on")
        figure("peer killed with its %d processes: p2prun knew %.3f s later; "
               "rank 0 printed its next step %.3f s after the kill"
               % (len(theirs), t1 - t0, time.monotonic() - t0))
        self.assertIsNotNone(run.wait(60), run.describe())
        self.assert_rc(run, 0)
        self.assertEqual(self.per_rank(run.stdout),
                         self.per_rank(self.reference()), run.describe())
        live = [p for p in self.peers if p is not victim]
        self.assert_job_over(self.sn, live, timeout=30)

    def test_every_replica_of_a_rank(self):
        run = self.start()
        time.sleep(0.2)
        for pid in self.procs(rank=1):
            os.kill(pid, signal.SIGKILL)
        self.assertIsNotNone(run.wait(20), run.describe())
        self.assertNotEqual(run.rc, 0, run.describe())
        self.assertIn("rank 1 failed", run.stderr)
        wait_until(lambda: not self.procs(), 30, "the job's processes to end")

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
        self.assert_job_over(self.sn, self.peers, timeout=30)

    def test_soak(self):
        """Random victims at random moments, 8 rounds (set P2P_SOAK_ROUNDS
        for more): each round kills one random replica of one, two or three
        distinct ranks; the seed is printed when a round fails."""
        seed = int(os.environ.get("P2P_SOAK_SEED", time.time_ns() % 100000))
        rounds = int(os.environ.get("P2P_SOAK_ROUNDS", "8"))
        rng = random.Random(seed)
        self.reference()
        for i in range(rounds):
            with self.subTest(round=i, seed=seed):
                run = self.start()
                victims = [(rank, rng.randrange(2)) for rank in
                           rng.sample(range(3), rng.randint(1, 3))]
                for rank, replica in victims:
                    time.sleep(rng.uniform(0.0, 0.3))
                    try:
                        self.kill(rank, replica)
                    except ValueError:
                        pass  # already finished
                try:
                    self.assert_survived(run, "soak seed %d round %d: %s"
                                         % (seed, i, victims))
                except AssertionError:
                    sys.stdout.write("SOAK FAILED: seed %d (P2P_SOAK_SEED=%d)\n"
                                     % (seed, seed))
                    raise
        figure("soak: %d rounds survived, seed %d" % (rounds, seed))


if __name__ == "__main__":
    harness.main()
