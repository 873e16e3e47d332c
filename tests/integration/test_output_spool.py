#!/usr/bin/env python3
"""Replicated output is never lost silently (issue 10).  With -r 2 p2prun
shows each rank's master and keeps what a backup has ahead of it, on disk
(a spool per replica, [run] output_spool_mb per stream); when a backup
gets that far ahead its peer stops reading its output (back-pressure on
the leading replica only) until the master catches up or dies.

The issue's case: 2 ranks x 2 replicas, the master set (replica 0 of
every rank) frozen 3 s with SIGSTOP while the backups run ahead, then
rank 0's master killed: rank 0 printed 200,001 lines, and the old p2prun
(which kept only the newest 4 MB of a backup) showed 122,510 of them and
exited 0.  Here the output must be byte for byte that of the program and
the exit status 0: for an MPI job, with the default spool and with a
1 MiB spool (the backup is held, then continues), and for a plain
(non-MPI) job."""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import wait_until  # noqa: E402

LINES = 200000
PAD = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
       "VWXYZabcdefghijklmnopqrstuvwxy")
FREEZE_S = 3

# The plain job: the same lines from awk, once the file $1 exists.
FLOOD_SH = """while [ ! -e "$1" ]; do sleep 0.05; done
awk -v r="$P2P_RANK" -v n=%d -v pad="%s" 'BEGIN {
    for (i = 0; i < n; i++)
        if (r == 0 || i %% 100 == 0)
            printf "rank %%d line %%07d %%s\\n", r, i, pad
    printf "rank %%d done\\n", r
}'
""" % (LINES, PAD)


def expected_rank(rank):
    """What rank prints, in order (mpi_flood.c and FLOOD_SH alike)."""
    out = ["rank %d line %07d %s\n" % (rank, i, PAD)
           for i in range(LINES) if rank == 0 or i % 100 == 0]
    out.append("rank %d done\n" % rank)
    return out


class TestOutputSpool(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(3, slots=2)

    def mpi_prog(self):
        prog = self.mpi_program("mpi_flood")
        return prog

    def gate(self):
        """A path whose creation lets the job print (mpi_flood.c's GATE,
        FLOOD_SH's $1): the test starts the output, not a clock.  In a
        directory the job's processes may write to (GATE.up.PID)."""
        d = self.c.path("gate")
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o777)
        return os.path.join(d, "go")

    def freeze_masters_then_kill(self, run, name, gate, held=False):
        """The issue's sequence: both masters stopped before they print,
        the output let go, FREEZE_S later (or once p2prun says a backup
        is held, when held) rank 0's master killed and rank 1's
        continued."""
        wait_until(lambda: len(self.replica_procs(name)) == 4 or
                   not run.alive(), 60, "the job's 4 processes")
        self.assertTrue(run.alive(), run.describe())
        if name == "mpi_flood":
            # Wired up: a master stopped in MPI_Init would hold every
            # process of the job there.
            pids = list(self.replica_procs(name))
            wait_until(lambda: all(os.path.exists("%s.up.%d" % (gate, pid))
                                   for pid in pids) or not run.alive(), 120,
                       "the job's processes out of MPI_Init")
            self.assertTrue(run.alive(), run.describe())
        (m0,) = self.replica_procs(name, rank=0, replica=0)
        (m1,) = self.replica_procs(name, rank=1, replica=0)
        # Each process leads its own session: stop, kill and continue the
        # whole group (the plain job's awk with its shell).
        for pid in (m0, m1):
            os.killpg(pid, signal.SIGSTOP)
        try:
            with open(gate, "w"):
                pass
            if held:
                wait_until(lambda: "holding its output" in run.stderr or
                           not run.alive(), 60,
                           lambda: "a backup held:\n" + run.describe())
            else:
                time.sleep(FREEZE_S)  # the backups run ahead meanwhile
            os.killpg(m0, signal.SIGKILL)
        finally:
            for pid in (m0, m1):
                try:
                    os.killpg(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass

    def assert_whole(self, run):
        self.assertIsNotNone(run.wait(60), run.describe())
        # A line cut in the middle (what the old p2prun showed) belongs
        # to no rank.
        ranks = {}
        for line in run.stdout.splitlines(keepends=True):
            word = line.split()
            ranks.setdefault(word[1] if len(word) > 1 and word[0] == "rank"
                             else "?", []).append(line)
        self.assertNotIn("?", ranks, run.describe())
        for rank in (0, 1):
            got = ranks.get(str(rank), [])
            want = expected_rank(rank)
            self.assertEqual(len(got), len(want),
                             "rank %d printed %d lines instead of %d\n%s"
                             % (rank, len(got), len(want), run.describe()))
            self.assertTrue(got == want, "rank %d's output differs" % rank)
        self.assertEqual(len(run.stdout),
                         sum(len("".join(expected_rank(r))) for r in (0, 1)))
        self.assert_rc(run, 0)
        self.assertNotIn("lost", run.stderr)
        self.assert_job_over(self.sn, self.peers, timeout=30)

    def test_mpi_masters_frozen_then_killed(self):
        prog, gate = self.mpi_prog(), self.gate()
        run = self.start_p2prun(["-n", "2", "-r", "2", prog, str(LINES),
                                 "0", gate])
        self.freeze_masters_then_kill(run, "mpi_flood", gate)
        self.assert_whole(run)
        self.assertIn("rank 0 replica 0", run.stderr)

    def test_mpi_leader_held_by_a_small_spool(self):
        """With a 1 MiB spool the backups are held while the masters are
        frozen (p2prun -v says so), and the output is still whole.  The
        progress rule is kept out of the way (replica_lag_ms of 10 min)
        so that a slow machine cannot declare the frozen master dead
        before its backup is held."""
        prog, gate = self.mpi_prog(), self.gate()
        conf = self.c.job_config("spool.conf", [self.sn],
                                 user_key=self.c.user_key("user")[0],
                                 run={"output_spool_mb": 1,
                                      "replica_lag_ms": 600000})
        run = self.start_p2prun(["-v", "-n", "2", "-r", "2", prog, str(LINES),
                                 "0", gate], conf=conf)
        self.freeze_masters_then_kill(run, "mpi_flood", gate, held=True)
        self.assert_whole(run)
        self.assertIn("rank 0 replica 1 on", run.stderr)
        self.assertIn("holding its output", run.stderr)
        self.assertIn("reading again", run.stderr)

    def test_plain_job(self):
        prog, gate = self.script("flood.sh", FLOOD_SH), self.gate()
        run = self.start_p2prun(["-n", "2", "-r", "2", prog, gate])
        self.freeze_masters_then_kill(run, "flood.sh", gate)
        self.assert_whole(run)


if __name__ == "__main__":
    harness.main()
