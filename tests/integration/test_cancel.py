#!/usr/bin/env python3
"""Stopping a job: Ctrl-C, SIGTERM or SIGHUP to p2prun stops every process
of the job on every peer; a p2prun that dies (SIGKILL) or freezes
(SIGSTOP) loses its job, killed by the peers when the connection closes or
the lease runs out; reservations not followed by a launch go back by
themselves; --timeout stops the job with status 124.  In every case the
slots come back and the job directories go."""

import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

LEASE_MS = 1500


class TestCancel(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(3, slots=2, lease_ms=LEASE_MS)

    def sleeps(self, mark):
        return harness.processes_with_argv(["sleep", mark])

    def start_sleep_job(self, n=4, mark=None, extra=()):
        """p2prun -n n sleep MARK, once all n processes are running."""
        mark = mark or harness.unique_sleep(60)
        run = self.start_p2prun(["-n", str(n)] + list(extra) +
                                ["sleep", mark])
        wait_until(lambda: len(self.sleeps(mark)) == n or not run.alive(),
                   20, "%d ranks to run" % n)
        self.assertEqual(len(self.sleeps(mark)), n, run.describe())
        # The job holds its slots.
        wait_until(lambda: sum((self.slots_free(self.sn, self.peers)
                                or {"x": 99}).values()) == 6 - n, 5,
                   "mpihost to show the job's slots taken")
        return run, mark

    def assert_cleaned_up(self, mark, timeout, what):
        """No sleep of the job within timeout s, then slots and job
        directories back within 2 s more; seconds until the processes
        were gone."""
        t0 = time.monotonic()
        wait_until(lambda: not self.sleeps(mark), timeout,
                   lambda: "%s: the job's processes to end (left: %s)"
                   % (what, self.sleeps(mark)))
        gone = time.monotonic() - t0
        self.assert_job_over(self.sn, self.peers, timeout=2)
        return gone

    def test_signals_stop_the_job(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(signal=sig.name):
                run, mark = self.start_sleep_job()
                t0 = time.monotonic()
                run.signal(sig)
                rc = run.wait(2)
                took = time.monotonic() - t0
                self.assertIsNotNone(rc, "p2prun still running 2 s after "
                                     "%s:\n%s" % (sig.name, run.describe()))
                self.assertEqual(rc, 128 + sig, run.describe())
                gone = self.assert_cleaned_up(mark, 2, sig.name)
                figure("%s to p2prun: p2prun exited after %.3f s, "
                       "processes gone %.3f s later"
                       % (sig.name, took, gone))

    def test_p2prun_killed_while_running(self):
        run, mark = self.start_sleep_job()
        run.signal(signal.SIGKILL)
        self.assertEqual(run.wait(5), -signal.SIGKILL)
        gone = self.assert_cleaned_up(mark, 2, "SIGKILL of p2prun")
        figure("p2prun SIGKILLed while its job runs: processes gone after "
               "%.3f s" % gone)
        for p in self.peers:
            self.assertRegex(p.log(), r"coordinator went away",
                             "%s must say why it killed the job" % p.label)

    def test_p2prun_frozen_while_running(self):
        run, mark = self.start_sleep_job()
        run.signal(signal.SIGSTOP)
        try:
            gone = self.assert_cleaned_up(mark, LEASE_MS / 1000 + 2,
                                          "SIGSTOP of p2prun")
        finally:
            run.kill()
        figure("p2prun frozen (SIGSTOP) while its job runs: processes gone "
               "%.3f s after (lease %.1f s)" % (gone, LEASE_MS / 1000))
        self.assertGreater(gone, LEASE_MS / 1000 * 0.5,
                           "a frozen coordinator keeps its job for about a "
                           "lease")

    def reserved_then(self, mark, pause):
        """Start p2prun -n 4 sleep MARK paused after its reservations;
        return it once mpihost shows the 4 slots taken."""
        run = self.start_p2prun(["-n", "4", "sleep", mark],
                                env={"P2P_TEST_PAUSE_AFTER_RESERVE":
                                     str(pause)})
        wait_until(lambda: sum((self.slots_free(self.sn, self.peers)
                                or {"x": 99}).values()) == 2
                   or not run.alive(), 10, "4 slots to be reserved")
        self.assertTrue(run.alive(), run.describe())
        return run

    def test_p2prun_killed_between_reservation_and_launch(self):
        mark = harness.unique_sleep(60)
        run = self.reserved_then(mark, 5)
        t0 = time.monotonic()
        run.signal(signal.SIGKILL)
        self.assertEqual(run.wait(5), -signal.SIGKILL)
        self.wait_all_free(self.sn, self.peers, LEASE_MS / 1000 + 2)
        figure("p2prun SIGKILLed between reservation and launch: slots "
               "free again after %.3f s (lease %.1f s)"
               % (time.monotonic() - t0, LEASE_MS / 1000))
        self.assertFalse(self.sleeps(mark), "nothing may start")
        self.assert_job_over(self.sn, self.peers)

    def test_unconfirmed_reservation_expires(self):
        # p2prun sleeps past its lease without launching: the peers take
        # the slots back by themselves, and the late launch is refused.
        mark = harness.unique_sleep(60)
        pause = int(LEASE_MS / 1000 + 4)
        run = self.reserved_then(mark, pause)
        t0 = time.monotonic()
        self.wait_all_free(self.sn, self.peers, LEASE_MS / 1000 + 2)
        figure("reservation without launch: slots free again %.3f s after "
               "they were seen taken (lease %.1f s)"
               % (time.monotonic() - t0, LEASE_MS / 1000))
        self.assertTrue(run.alive(), "p2prun is still paused")
        rc = run.wait(pause + 10)
        self.assertIsNotNone(rc, "p2prun hangs after its reservations "
                             "expired:\n" + run.describe())
        self.assertNotEqual(rc, 0, run.describe())
        self.assertFalse(self.sleeps(mark), "an expired reservation must "
                         "not launch")
        self.assert_job_over(self.sn, self.peers)

    def test_timeout(self):
        mark = harness.unique_sleep(60)
        r = self.p2prun(["-n", "4", "--timeout", "1", "sleep", mark],
                        timeout=20)
        self.assertEqual(r.rc, 124, r.describe())
        self.assertLess(r.elapsed, 3, r.describe())
        self.assertRegex(r.stderr, r"time")
        self.assert_cleaned_up(mark, 2, "--timeout")


if __name__ == "__main__":
    harness.main()
