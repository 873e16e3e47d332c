#!/usr/bin/env python3
"""The command-line contract of runSuperNode, peerd, mpihost and
p2p-keygen: --help, --version, usage errors (exit 2), refusals with one
clear line (exit 1), key files, and detaching with a pid file."""

import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import binary, wait_until  # noqa: E402

PROGRAMS = ["runSuperNode", "peerd", "mpihost", "p2p-keygen"]
DAEMONS = ["runSuperNode", "peerd"]
CONFIGURED = ["runSuperNode", "peerd", "mpihost"]  # those reading the config

# A daemon that wrongly starts instead of refusing is killed after this.
REFUSE_TIMEOUT_S = 20


class TestCli(harness.ClusterTestCase):

    def setUp(self):
        super().setUp()
        # Where a wrongly started program would look for a supernode: a
        # port that is taken but refuses connections.
        self.dead = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.dead.bind(("127.0.0.1", 0))
        self.dead_addr = "127.0.0.1:%d" % self.dead.getsockname()[1]
        self.addCleanup(self.dead.close)

    def tearDown(self):
        # Detached daemons of this test: stop them (and reap them if they
        # are ours) before the common checks.
        for pid in self.c.extra_pids:
            if harness._pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
                harness.reap_pid(pid, harness.STOP_TIMEOUT_S)
        super().tearDown()

    def run_prog(self, prog, args, timeout=REFUSE_TIMEOUT_S):
        try:
            return self.c.run([binary(prog)] + list(args), timeout=timeout)
        except subprocess.TimeoutExpired:
            self.fail("%s %s kept running instead of exiting"
                      % (prog, " ".join(args)))

    def typical_args(self, prog, conf=None):
        """Arguments with which prog would really run (daemons in the
        foreground on loopback), so that a refusal is the only way out."""
        conf = conf or self.c.conf
        if prog == "runSuperNode":
            return ["--conf", conf, "--listen", "127.0.0.1:0", "--foreground"]
        if prog == "peerd":
            return ["--conf", conf, "--listen", "127.0.0.2:0", "--foreground",
                    "--state-dir", self.c.path("cli-state"),
                    "--supernode", self.dead_addr]
        if prog == "mpihost":
            return ["--conf", conf, "--supernode", self.dead_addr,
                    "--timeout", "2"]
        raise ValueError(prog)

    # -- --help, --version, usage errors ------------------------------------

    def test_help(self):
        for prog in PROGRAMS:
            with self.subTest(prog=prog):
                r = self.run_prog(prog, ["--help"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertRegex(r.stdout, r"(?i)^usage: .*%s" % re.escape(prog))
                self.assertEqual(r.stderr, "")

    def test_version(self):
        for prog in PROGRAMS:
            with self.subTest(prog=prog):
                r = self.run_prog(prog, ["--version"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertRegex(r.stdout, r"^%s .*\d+\.\d+\.\d+"
                                 % re.escape(prog))

    def test_unknown_flag(self):
        for prog in PROGRAMS:
            with self.subTest(prog=prog):
                r = self.run_prog(prog, ["--no-such-flag"])
                self.assertEqual(r.returncode, 2)
                self.assertIn("no-such-flag", r.stderr)
                self.assertEqual(r.stdout, "", "usage goes to stderr here")

    def test_stray_argument(self):
        for prog in PROGRAMS:
            with self.subTest(prog=prog):
                if prog == "p2p-keygen":
                    key = self.c.path("stray.key")
                    r = self.run_prog(prog, ["--group", key, "stray"])
                    self.assertFalse(os.path.exists(key),
                                     "usage error but a key was written")
                else:
                    r = self.run_prog(prog,
                                      self.typical_args(prog) + ["stray"])
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertNotEqual(r.stderr.strip(), "")

    def test_bad_values(self):
        cases = [
            ("runSuperNode", ["--expire", "0"], "--expire"),
            ("runSuperNode", ["--expire", "abc"], "--expire"),
            ("runSuperNode", ["--expire", "-5"], "--expire"),
            ("peerd", ["--slots", "-1"], "--slots"),
            ("peerd", ["--slots", "two"], "--slots"),
            ("mpihost", ["--timeout", "0"], "--timeout"),
            ("mpihost", ["--timeout", "x"], "--timeout"),
        ]
        for prog, args, opt in cases:
            with self.subTest(prog=prog, args=args):
                r = self.run_prog(prog, self.typical_args(prog) + args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(opt, r.stderr)
                self.assertIn(args[1], r.stderr)

    # -- configuration refusals ---------------------------------------------

    def test_unknown_config_key(self):
        conf = self.c.write_config("typo.conf", key_file=self.c.key,
                                   extra="\n[peer]\nslots = 2\nslotz = 4\n")
        with open(conf) as f:
            line = f.read().splitlines().index("slotz = 4") + 1
        for prog in CONFIGURED:
            with self.subTest(prog=prog):
                r = self.run_prog(prog, self.typical_args(prog, conf))
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("%s:%d" % (conf, line), r.stderr)
                self.assertIn("slotz", r.stderr)

    def test_bad_config_value(self):
        conf = self.c.write_config("badval.conf", key_file=self.c.key,
                                   extra="\n[supernode]\nexpire = soon\n")
        with open(conf) as f:
            line = f.read().splitlines().index("expire = soon") + 1
        for prog in CONFIGURED:
            with self.subTest(prog=prog):
                r = self.run_prog(prog, self.typical_args(prog, conf))
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("%s:%d" % (conf, line), r.stderr)

    def test_no_key_file(self):
        conf = self.c.write_config("nokey.conf", key_file=None)
        for prog in CONFIGURED:
            with self.subTest(prog=prog):
                r = self.run_prog(prog, self.typical_args(prog, conf))
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("p2p-keygen", r.stderr)
                self.assertIn("key_file", r.stderr)

    def test_group_key_readable_by_others(self):
        key = self.c.keygen("open.key")
        os.chmod(key, 0o644)
        conf = self.c.write_config("open.conf", key_file=key)
        for prog in CONFIGURED:
            with self.subTest(prog=prog):
                r = self.run_prog(prog, self.typical_args(prog, conf))
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("chmod", r.stderr)
                self.assertIn(key, r.stderr)

    # -- mpihost refusals ---------------------------------------------------

    def test_mpihost_no_supernode_reachable(self):
        addr = self.dead_addr
        r = self.c.mpihost([addr])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("no supernode reachable", r.stderr)
        self.assertIn(addr, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1,
                         "one clear line:\n" + r.stderr)
        self.assertEqual(r.stdout, "")

    def test_mpihost_no_supernode_configured(self):
        r = self.c.mpihost([])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("no supernode configured", r.stderr)

    # -- p2p-keygen ---------------------------------------------------------

    def test_keygen_group(self):
        key = self.c.path("new-group.key")
        r = self.run_prog("p2p-keygen", ["--group", key])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(key).st_mode), 0o600)
        with open(key) as f:
            content = f.read()
        self.assertRegex(content.strip(), r"^[0-9a-f]{64}$")
        # Never overwrite a key.
        r = self.run_prog("p2p-keygen", ["--group", key])
        self.assertEqual(r.returncode, 1)
        self.assertIn(key, r.stderr)
        with open(key) as f:
            self.assertEqual(f.read(), content)
        # Two keys differ.
        other = self.c.path("other-group.key")
        self.assertEqual(self.run_prog("p2p-keygen",
                                       ["--group", other]).returncode, 0)
        with open(other) as f:
            self.assertNotEqual(f.read(), content)

    def test_keygen_user(self):
        key = self.c.path("alice")
        r = self.run_prog("p2p-keygen", ["--user", key])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(key).st_mode), 0o600)
        with open(key) as f:
            self.assertRegex(f.read().strip(), r"^[0-9a-f]{128}$")
        with open(key + ".pub") as f:
            pub = f.read()
        self.assertRegex(pub.strip(), r"^[0-9a-f]{64}$")
        r = self.run_prog("p2p-keygen", ["--user", key])
        self.assertEqual(r.returncode, 1)
        with open(key + ".pub") as f:
            self.assertEqual(f.read(), pub)
        r = self.run_prog("p2p-keygen", ["--user", key, "--group",
                                         self.c.path("both.key")])
        self.assertEqual(r.returncode, 2)

    # -- detaching, pid files, ports ------------------------------------------

    def start_detached(self, pidfile, extra=()):
        """runSuperNode without --foreground on a free port; returns
        (CompletedProcess, port, seconds the command took)."""
        for _ in range(3):
            port = harness.free_port()
            t0 = time.monotonic()
            r = self.run_prog("runSuperNode",
                              ["--conf", self.c.conf, "--listen",
                               "127.0.0.1:%d" % port, "--pid-file", pidfile,
                               "--expire", "10"] + list(extra))
            elapsed = time.monotonic() - t0
            # Lost a race for the port: retry.  (A failure only: the
            # dashboard's default port taken is a warning.)
            if r.returncode == 0 or "in use" not in r.stderr:
                return r, port, elapsed
        return r, port, elapsed

    def read_pid(self, pidfile):
        try:
            with open(pidfile) as f:
                text = f.read().strip()
        except OSError:
            return None
        if not text.isdigit():
            return None
        pid = int(text)
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if b"runSuperNode" not in f.read():
                    return None
        except OSError:
            return None
        return pid if harness._pid_alive(pid) else None

    def test_detached_supernode(self):
        self.assertTrue(harness.become_subreaper())
        pidfile = self.c.path("sn.pid")
        r, port, elapsed = self.start_detached(pidfile)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(elapsed, 10, "runSuperNode did not return at once")
        pid = wait_until(lambda: self.read_pid(pidfile), 20,
                         "the pid file to name a live runSuperNode")
        self.c.track_pid(pid)
        self.assertNotEqual(pid, os.getpid())

        # It serves: a peer registers and mpihost lists it.
        addr = "127.0.0.1:%d" % port
        peer = self.c.start_peer(2, [addr])
        (entry,) = self.c.wait_listed([addr], [peer])
        self.assertEqual(entry["host"], peer.label)
        self.assert_stops_cleanly(peer)

        os.kill(pid, signal.SIGTERM)
        rc = harness.reap_pid(pid, harness.STOP_TIMEOUT_S)
        self.assertIsNotNone(rc, "detached runSuperNode ignored SIGTERM")
        self.assertEqual(rc, 0, "detached runSuperNode must exit 0 on "
                         "SIGTERM")
        r = self.c.mpihost([addr])
        self.assertEqual(r.returncode, 1)
        self.assertIn("no supernode reachable", r.stderr)

    def test_second_supernode_same_pid_file(self):
        self.assertTrue(harness.become_subreaper())
        pidfile = self.c.path("sn.pid")
        r, port, _ = self.start_detached(pidfile)
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = wait_until(lambda: self.read_pid(pidfile), 20,
                         "the pid file to name a live runSuperNode")
        self.c.track_pid(pid)

        r2, port2, _ = self.start_detached(pidfile)
        self.assertNotEqual(port2, port)
        # Whatever it did, the first one must be untouched.
        time.sleep(0.5)
        self.assertEqual(self.read_pid(pidfile), pid,
                         "the pid file no longer names the running daemon")
        r = self.c.mpihost(["127.0.0.1:%d" % port])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotEqual(r2.returncode, 0,
                            "a second runSuperNode on a pid file in use "
                            "must fail, not report success (stderr: %r)"
                            % r2.stderr)
        self.assertIn("already running", r2.stderr)
        self.assertIn(str(pid), r2.stderr)

    def test_detached_relative_pid_file(self):
        # A relative --pid-file means relative to where the command was
        # typed, as for every other path on the command line.
        self.assertTrue(harness.become_subreaper())
        name = "rel-%d-%d.pid" % (os.getpid(), time.monotonic_ns())
        port = harness.free_port()
        r = self.c.run([binary("runSuperNode"), "--conf", self.c.conf,
                        "--listen", "127.0.0.1:%d" % port, "--pid-file", name,
                        "--expire", "10"], cwd=self.c.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        expected = self.c.path(name)
        misplaced = os.path.join("/", name)
        try:
            pid = wait_until(lambda: self.read_pid(expected) or
                             self.read_pid(misplaced), 20,
                             "a pid file naming a live runSuperNode")
            self.c.track_pid(pid)
            self.assertFalse(os.path.exists(misplaced),
                             "the pid file was written to %s, not %s"
                             % (misplaced, expected))
            self.assertEqual(self.read_pid(expected), pid)
        finally:
            if os.path.exists(misplaced):
                os.unlink(misplaced)

    def test_port_in_use(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            addr = "127.0.0.1:%d" % s.getsockname()[1]
            for mode in (["--foreground"], ["--pid-file",
                                             self.c.path("p.pid")]):
                with self.subTest(mode=mode):
                    r = self.run_prog("runSuperNode",
                                      ["--conf", self.c.conf, "--listen",
                                       addr] + mode)
                    self.assertEqual(r.returncode, 1, r.stderr)
                    self.assertIn(addr, r.stderr)
                    self.assertIn("in use", r.stderr)
            r = self.run_prog("peerd", ["--conf", self.c.conf, "--listen",
                                        addr, "--foreground", "--state-dir",
                                        self.c.path("st")])
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("in use", r.stderr)


if __name__ == "__main__":
    harness.main()
