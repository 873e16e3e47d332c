#!/usr/bin/env python3
"""The embedded cluster: a user with no configuration at all (empty HOME,
no P2P_CONF, no --conf, no --supernode) gets a working run on a supernode
and peers that p2prun starts on loopback, says so in one line, and leaves
nothing behind: no daemon, no job process, no directory; also when
interrupted, and (daemons and jobs at least) when killed."""

import os
import shutil
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

HELLO = r"""
echo "hello from rank $P2P_RANK of $P2P_SIZE"
echo "$(pwd -P)" > "$OUT/$P2P_RANK.$P2P_REPLICA"
"""

NOTICE = "p2prun: no supernode configured"


class TestLocal(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        if os.path.exists("/etc/p2p/p2p.conf"):
            self.skipTest("/etc/p2p/p2p.conf exists: not an unconfigured "
                          "machine")
        self.home = self.c.path("emptyhome")
        os.mkdir(self.home, 0o700)
        self.env = {"HOME": self.home, "P2P_CONF": None,
                    "XDG_CONFIG_HOME": None, "XDG_STATE_HOME": None}

    def start(self, args):
        return self.c.start_p2prun(args, conf=None, env=self.env,
                                   cwd=self.c.dir)

    @staticmethod
    def local_dir_of(path):
        """/tmp/p2prun-local.XXXXXX from a path inside it."""
        parts = path.split("/")
        for i, part in enumerate(parts):
            if part.startswith("p2prun-local."):
                return "/".join(parts[:i + 1])
        raise AssertionError("%s is not inside an embedded cluster" % path)

    def daemons_of(self, run):
        """{pid: argv} of the embedded daemons (p2prun's children) and
        the embedded cluster's directory, from their --conf."""
        kids = {}
        procs = harness.live_processes()
        for pid in harness.child_pids(run.pid):
            if pid in procs:
                kids[pid] = procs[pid][0]
        self.assertEqual(sorted(os.path.basename(a[0])
                                for a in kids.values()),
                         ["peerd", "peerd", "runSuperNode"],
                         "embedded daemons: %s" % kids)
        dirs = {self.local_dir_of(a[a.index("--conf") + 1])
                for a in kids.values()}
        self.assertEqual(len(dirs), 1, dirs)
        return kids, dirs.pop()

    def assert_nothing_left(self, pids, local_dir, timeout, dir_too=True):
        wait_until(lambda: not [p for p in pids if harness._pid_alive(p)],
                   timeout, lambda: "embedded daemons to exit: %s" % [
                       p for p in pids if harness._pid_alive(p)])
        left = [pid for pid, (argv, _, _) in harness.live_processes().items()
                if any(local_dir in a for a in argv)]
        self.assertEqual(left, [], "processes of the embedded cluster left")
        if dir_too:
            self.assertFalse(os.path.exists(local_dir),
                             "%s left behind" % local_dir)

    def test_run_with_nothing_configured(self):
        hello = self.script("hello.sh", HELLO)
        run = self.start(["-n", "2", "-r", "2", "-x", "OUT=" + self.outdir,
                          "./" + os.path.basename(hello)])
        self.assertEqual(run.wait(60), 0, run.describe())
        self.assertEqual(sorted(run.stdout.splitlines()),
                         ["hello from rank 0 of 2", "hello from rank 1 of 2"],
                         run.describe())
        lines = run.stderr_lines()
        self.assertEqual(len(lines), 1, "one line on stderr:\n"
                         + run.describe())
        self.assertTrue(lines[0].startswith(NOTICE), lines[0])
        # Every replica ran, on two distinct peers of one embedded cluster.
        where = {}
        for name in os.listdir(self.outdir):
            with open(os.path.join(self.outdir, name)) as f:
                where[name] = f.read().strip()
        self.assertEqual(sorted(where), ["0.0", "0.1", "1.0", "1.1"])
        local_dirs = {self.local_dir_of(w) for w in where.values()}
        self.assertEqual(len(local_dirs), 1, where)
        local_dir = local_dirs.pop()
        for rank in "01":
            self.assertNotEqual(where[rank + ".0"].split("/jobs/")[0],
                                where[rank + ".1"].split("/jobs/")[0])
        # (Only this run's directory: others may run p2prun meanwhile.)
        self.assert_nothing_left([], local_dir, 1)
        self.assertFalse(os.listdir(self.home), "nothing is written to HOME")

    def start_sleeping(self):
        mark = harness.unique_sleep(60)
        run = self.start(["-n", "2", "-r", "2", "sleep", mark])
        wait_until(lambda: len(harness.processes_with_argv(["sleep", mark]))
                   == 4 or not run.alive(), 60, "4 replicas to run")
        self.assertTrue(run.alive(), run.describe())
        pids, local_dir = self.daemons_of(run)
        return run, mark, pids, local_dir

    def test_interrupted(self):
        run, mark, pids, local_dir = self.start_sleeping()
        t0 = time.monotonic()
        run.signal(signal.SIGINT)
        rc = run.wait(5)
        figure("embedded cluster, SIGINT: p2prun exited after %.3f s"
               % (time.monotonic() - t0))
        self.assertEqual(rc, 128 + signal.SIGINT, run.describe())
        self.assertFalse(harness.processes_with_argv(["sleep", mark]))
        self.assert_nothing_left(pids, local_dir, 1)
        self.assertEqual(run.stderr_lines()[0][:len(NOTICE)], NOTICE)

    def test_killed(self):
        run, mark, pids, local_dir = self.start_sleeping()
        t0 = time.monotonic()
        run.signal(signal.SIGKILL)
        self.assertEqual(run.wait(5), -signal.SIGKILL)
        self.assert_nothing_left(pids, local_dir, 3, dir_too=False)
        wait_until(lambda: not harness.processes_with_argv(["sleep", mark]),
                   3, "the job's processes to end with their peers")
        took = time.monotonic() - t0
        remains = os.path.exists(local_dir)
        figure("embedded cluster, p2prun SIGKILLed: daemons and job gone "
               "after %.3f s; %s %s" % (took, local_dir, "left behind"
                                        if remains else "removed"))
        shutil.rmtree(local_dir, ignore_errors=True)


if __name__ == "__main__":
    harness.main()
