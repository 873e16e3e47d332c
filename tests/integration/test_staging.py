#!/usr/bin/env python3
"""Staging: the program (given as a path) and every -l file reach each
chosen peer's content-addressed cache and appear in the job directory
under their base names; a peer that already holds the content is not sent
it again; a large file streams with bounded memory on both sides; a peer
lost while receiving fails the job cleanly; bad file arguments are refused
before anything happens."""

import hashlib
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

MB = 1 << 20
BIG_MB = 100
RSS_LIMIT_KB = 64 * 1024
LOG_TIME = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) ")


def write_random(path, size_mb, seed=None):
    """A file of size_mb MiB of random bytes; its md5 hex."""
    md5 = hashlib.md5()
    with open(path, "wb") as f:
        for _ in range(size_mb):
            block = os.urandom(MB)
            md5.update(block)
            f.write(block)
    return md5.hexdigest()


def log_times(daemon, pattern):
    """Seconds since midnight of each log line matching pattern."""
    out = []
    rx = re.compile(pattern)
    for line in daemon.log().splitlines():
        m = LOG_TIME.match(line)
        if m and rx.search(line):
            out.append(int(m.group(1)) * 3600 + int(m.group(2)) * 60 +
                       float(m.group(3)))
    return out


class TestStaging(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(3, slots=2, expire=3)

    def received(self):
        return {p.label: p.count_log(r"received file ") for p in self.peers}

    def reservations(self):
        return sum(p.count_log(r"reserved for ") for p in self.peers)

    def test_large_file_streams_and_is_cached(self):
        big = self.c.path("big.bin")
        md5 = write_random(big, BIG_MB)
        hwm_before = {p.label: harness.proc_status_kb(p.pid)
                      for p in self.peers}
        # -n 3, spread: one rank on each of the three peers.
        args = ["-n", "3", "-l", big, "sh", "-c",
                'echo "$P2P_HOST $(md5sum < big.bin | cut -d" " -f1) '
                '$(stat -c %s big.bin) $(ls)"']
        first = self.p2prun(args, timeout=120)
        self.assert_rc(first, 0)
        lines = sorted(first.stdout.splitlines())
        self.assertEqual(lines, sorted("%s %s %d big.bin" % (p.label, md5,
                                                             BIG_MB * MB)
                                       for p in self.peers),
                         "every rank sees the same content, under its base "
                         "name:\n" + first.describe())
        rec = self.received()
        self.assertEqual(rec, {p.label: 1 for p in self.peers},
                         "each peer receives the file once")
        for p in self.peers:
            self.assertRegex(p.log(), r"received file [0-9a-f]{16} \(%d "
                             r"bytes\)" % (BIG_MB * MB))
            cache = os.path.join(p.state_dir, "cache")
            sizes = [os.path.getsize(os.path.join(cache, f))
                     for f in os.listdir(cache)]
            self.assertIn(BIG_MB * MB, sizes, "%s: the file stays cached"
                          % p.label)
        self.assert_job_over(self.sn, self.peers)

        # From the first reservation to the last file received.
        t_start = min(min(log_times(p, r"reserved for ")) for p in self.peers)
        t_end = max(max(log_times(p, r"received file ")) for p in self.peers)
        staging = max(t_end - t_start, 1e-3)
        hwm = {p.label: harness.proc_status_kb(p.pid) for p in self.peers}

        second = self.p2prun(args, timeout=120)
        self.assert_rc(second, 0)
        self.assertEqual(sorted(second.stdout.splitlines()), lines)
        self.assertEqual(self.received(), rec,
                         "a peer holding the content must not receive it "
                         "again")
        self.assert_job_over(self.sn, self.peers)

        tag = " [sanitized build]" if harness.SANITIZED else ""
        figure("staging %d MB to 3 peers: %.3f s, %.0f MB/s in all "
               "(%.0f MB/s per peer); run %.3f s; again from the cache "
               "%.3f s%s" % (BIG_MB, staging, 3 * BIG_MB / staging,
                             BIG_MB / staging, first.elapsed, second.elapsed,
                             tag))
        figure("peak RSS while staging %d MB: peerd %s kB (before %s), "
               "p2prun %d kB%s" % (BIG_MB, "/".join(str(hwm[p.label])
                                                   for p in self.peers),
                                   "/".join(str(hwm_before[p.label])
                                            for p in self.peers),
                                   first.maxrss_kb, tag))
        self.assertLess(second.elapsed, first.elapsed,
                        "a run from the cache must be faster")
        if harness.SANITIZED:
            # ASan's quarantine keeps freed memory: no bound to check.
            return
        for p in self.peers:
            self.assertLess(hwm[p.label], RSS_LIMIT_KB,
                            "%s: peerd's peak RSS must stay bounded while "
                            "receiving a large file" % p.label)
        self.assertLess(first.maxrss_kb, RSS_LIMIT_KB,
                        "p2prun's peak RSS must stay bounded while sending "
                        "a large file")

    def test_peer_killed_during_staging(self):
        big = self.c.path("huge.bin")
        size_mb = 300
        write_random(big, size_mb)
        mark = harness.unique_sleep(60)
        run = self.start_p2prun(["-n", "3", "-l", big, "sleep", mark])
        victim = self.peers[1]
        cache = os.path.join(victim.state_dir, "cache")

        def receiving():
            try:
                return any(f.startswith("tmp.") and
                           os.path.getsize(os.path.join(cache, f)) > 0
                           for f in os.listdir(cache))
            except OSError:
                return False
        wait_until(lambda: receiving() or not run.alive(), 60,
                   "%s to start receiving" % victim.label, interval=0.002)
        self.assertTrue(run.alive(), "staging was over before the peer "
                        "could be killed:\n" + run.describe())
        victim.signal(signal.SIGKILL)
        t0 = time.monotonic()
        rc = run.wait(10)
        took = time.monotonic() - t0
        if rc is None:
            run.kill()
        self.assertIsNotNone(rc, "p2prun still running 10 s after a peer "
                             "died during staging:\n" + run.describe())
        figure("peer SIGKILLed while receiving a %d MB file: p2prun exited "
               "%.3f s later" % (size_mb, took))
        self.assertNotEqual(rc, 0, run.describe())
        self.assertTrue(any(victim.label in l for l in run.stderr_lines()),
                        "p2prun must name the lost peer:\n" + run.describe())
        self.assertLess(took, 5, run.describe())
        others = [p for p in self.peers if p is not victim]
        self.wait_no_job_processes(others, 2)
        self.assertFalse(harness.processes_with_argv(["sleep", mark]))
        # The victim is gone from the list within the supernode's expiry.
        wait_until(lambda: self.c.listed([self.sn], others) is not None,
                   10, "the dead peer to expire")
        self.assert_job_over(self.sn, others)

    def test_same_base_name_twice(self):
        for d in ("a", "b"):
            os.mkdir(self.c.path(d))
            with open(self.c.path(d, "data.txt"), "w") as f:
                f.write(d)
        r = self.p2prun(["-n", "1", "-l", self.c.path("a", "data.txt"),
                         "-l", self.c.path("b", "data.txt"), "true"])
        self.assertEqual(r.rc, 2, "two -l files with one base name are a "
                         "usage error (status 2):\n" + r.describe())
        self.assertIn("a/data.txt", r.stderr)
        self.assertIn("b/data.txt", r.stderr)
        self.assertEqual(self.reservations(), 0, "nothing may happen")

    def test_program_not_executable(self):
        prog = self.c.path("notexec.sh")
        with open(prog, "w") as f:
            f.write("#!/bin/sh\necho hi\n")
        os.chmod(prog, 0o644)
        r = self.p2prun(["-n", "1", prog])
        self.assertIn(r.rc, (1, 2), r.describe())
        self.assertEqual(len(r.stderr_lines()), 1, r.describe())
        self.assertIn(prog, r.stderr)
        self.assertRegex(r.stderr, r"not executable")
        self.assertEqual(self.reservations(), 0, "nothing may happen")

    def test_missing_files(self):
        for args, name in ((["-l", self.c.path("nope.dat"), "true"],
                            "nope.dat"),
                           ([self.c.path("nope.sh")], "nope.sh")):
            with self.subTest(missing=name):
                r = self.p2prun(["-n", "1"] + args)
                self.assertIn(r.rc, (1, 2), r.describe())
                self.assertEqual(len(r.stderr_lines()), 1, r.describe())
                self.assertIn(name, r.stderr)
                self.assertRegex(r.stderr, r"No such file")
        self.assertEqual(self.reservations(), 0, "nothing may happen")


class TestStagingOutlastsLease(harness.JobTestCase):
    """Staging takes longer than the reservation's lease (the shortest a
    run may ask, 500 ms, against 3 x 100 MB).  Regression: in CI, under
    the sanitizers, the 100 MB file took over the default 5 s and every
    peer let its reservation go ("expired without a launch"), so the
    launch found "no reservation for this job here".  Each file chunk
    renews the requester's unconfirmed holds on that peer."""

    def setUp(self):
        super().setUp()
        if harness.SANITIZED:
            # The run's lease is also how long a peer may stay silent:
            # under the sanitizers a peerd writing 100 MB falls silent
            # for more than 500 ms and is declared lost.  The renewal
            # itself runs sanitized in unit.test_reserve.
            self.skipTest("a 500 ms lease is too short for a sanitized "
                          "peerd's heartbeat: the plain build runs this")
        self.sn, self.peers = self.start_jobnet(3, slots=2, expire=3,
                                                lease_ms=500)

    def test_staging_renews_the_lease(self):
        big = self.c.path("big.bin")
        md5 = write_random(big, BIG_MB)
        run = self.p2prun(["-n", "3", "-l", big, "sh", "-c",
                           'echo "$P2P_HOST $(md5sum < big.bin | '
                           'cut -d" " -f1)"'], timeout=120)
        t_start = min(min(log_times(p, r"reserved for ") or [1e9])
                      for p in self.peers)
        t_end = max(max(log_times(p, r"received file ") or [0])
                    for p in self.peers)
        figure("staging 3 x %d MB against a 500 ms lease: %.2f s"
               % (BIG_MB, t_end - t_start))
        if t_end - t_start < 0.6:
            self.skipTest("staging took %.2f s, under the lease: nothing "
                          "to check" % (t_end - t_start))
        self.assert_rc(run, 0)
        self.assertEqual(sorted(run.stdout.splitlines()),
                         sorted("%s %s" % (p.label, md5)
                                for p in self.peers), run.describe())
        for p in self.peers:
            self.assertNotIn("expired without a launch", p.log())
        self.assert_job_over(self.sn, self.peers)


if __name__ == "__main__":
    harness.main()
