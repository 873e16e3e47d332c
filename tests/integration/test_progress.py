#!/usr/bin/env python3
"""A hung replica does not hold the whole job (issue 10).  A replica that
is alive but stopped (SIGSTOP), while another replica of its rank goes
on, is declared dead by p2prun once it has been behind for the allowed
lag ([run] replica_lag_ms, by default the lease), as a silent host would
be: its peer kills it and the job ends with the output and status of a
failure-free run, while the stopped process is still stopped (the old
p2prun waited for it: 28 s for a 25 s stop).

Two cases: one replica process of an MPI job stopped (its peerd is fine:
no lease runs out, only the progress rule can end the wait), and a whole
peer stopped (peerd and its processes) while the backup of the rank it
leads floods its output past what the old p2prun kept (4 MB)."""

import os
import signal
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

LEASE_MS = 1500
STEPS = 40
# Generous: the job must end while the process is still stopped; it is
# continued only after this (the old p2prun waited for it to be
# continued, so it never ended in time).
END_WITHIN_S = 45


def stopped(pid):
    """True if the process exists and is stopped."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[0] in ("T", "t")


class TestProgress(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(3, slots=3,
                                                lease_ms=LEASE_MS)

    def test_replica_process_stopped(self):
        prog = self.mpi_program("mpi_steps")
        args = ["-n", "3", "-r", "2", prog, str(STEPS)]
        ref = self.p2prun(args)
        self.assert_rc(ref, 0)
        run = self.start_p2prun(args)
        wait_until(lambda: len(self.replica_procs("mpi_steps")) == 6 or
                   not run.alive(), 20, "the job's processes")
        # A few steps in, stop rank 1's master (its peer stays alive).
        wait_until(lambda: run.stdout.count("\n") >= 6 or not run.alive(),
                   20, "a few steps")
        (pid,) = self.replica_procs("mpi_steps", rank=1, replica=0)
        os.kill(pid, signal.SIGSTOP)
        try:
            rc = run.wait(END_WITHIN_S)
            self.assertIsNotNone(rc, "the job waited for the stopped "
                                 "replica:\n" + run.describe())
            figure("a replica stopped: the job ended %.1f s after its start "
                   "(failure-free %.1f s; lag = lease %d ms)"
                   % (run.elapsed, ref.elapsed, LEASE_MS))
        finally:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        self.assert_rc(run, 0)
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref.stdout),
                         run.describe())
        self.assertIn("rank 1 replica 0", run.stderr)
        self.assertIn("declared dead", run.stderr)
        wait_until(lambda: not harness._pid_alive(pid), 5,
                   "the stopped replica to be killed by its peer")
        self.assert_job_over(self.sn, self.peers, timeout=30)

    def test_whole_peer_stopped(self):
        prog = self.mpi_program("mpi_flood")
        lines = 200000
        run = self.start_p2prun(["-n", "2", "-r", "2", prog, str(lines),
                                 "1000"])
        wait_until(lambda: len(self.replica_procs("mpi_flood")) == 4 or
                   not run.alive(), 20, "the job's processes")
        (pid, env), = self.replica_procs("mpi_flood", rank=0,
                                         replica=0).items()
        victim = next(p for p in self.peers if p.addr == env["P2P_PEERD"])
        frozen = [victim.popen.pid] + list(self.c.job_processes([victim]))
        for p in frozen:
            os.kill(p, signal.SIGSTOP)
        try:
            rc = run.wait(END_WITHIN_S)
            self.assertIsNotNone(rc, "the job waited for the stopped peer:\n"
                                 + run.describe())
            self.assertTrue(all(stopped(p) for p in frozen
                                if harness._pid_alive(p)))
        finally:
            for p in frozen:
                try:
                    os.kill(p, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        self.assert_rc(run, 0)
        ranks = self.per_rank(run.stdout)
        self.assertEqual(len(ranks.get("0", [])), lines + 1, run.describe())
        self.assertEqual(len(ranks.get("1", [])), lines // 100 + 1)
        self.assertEqual(ranks["0"][-1], "rank 0 done\n")
        for i in (0, lines // 2, lines - 1):
            self.assertTrue(ranks["0"][i].startswith("rank 0 line %07d " % i))
        # Thawed, the peer finds its processes declared dead or its
        # coordinator gone: they die.
        wait_until(lambda: not self.c.job_processes([victim]), 10,
                   "the thawed peer's job processes to die")
        self.assert_job_over(self.sn, self.peers, timeout=10)


if __name__ == "__main__":
    harness.main()
