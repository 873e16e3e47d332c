"""Shared helpers for the integration tests: real binaries on loopback.

A Cluster owns a temporary directory (removed when the test passes, kept
and its logs printed when it fails), a group key and a configuration
file, and every process it starts: one or more runSuperNode and peerd
daemons (each logging to its own file), plus mpihost runs.  Distinct
loopback addresses (127.0.0.2, 127.0.0.3, ...) stand for distinct hosts;
every port is chosen by the kernel (--listen ADDR:0) and read back from
the daemon's log.

Every daemon still running when a test ends is stopped with SIGTERM and
must exit 0: in the sanitizer build that is how leaks and crashes show.
A daemon that exits without the test asking for it is a failure too.

Python 3 standard library only.  Run a test file directly, or through
CTest (P2P_BIN_DIR names the directory of the binaries).
"""

import atexit
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN_DIR = os.environ.get("P2P_BIN_DIR") or os.path.join(
    HERE, "..", "..", "build", "bin")
BIN_DIR = os.path.abspath(BIN_DIR)

POLL_S = 0.05          # polling period of wait_until
START_TIMEOUT_S = 30   # a daemon must say it is up within this
STOP_TIMEOUT_S = 20    # and stop within this after SIGTERM
RUN_TIMEOUT_S = 60     # a one-shot command (mpihost, p2p-keygen)

HEX64 = re.compile(r"^[0-9a-f]{64}$")

_figures = []
_live = set()  # every Daemon not yet reaped, for the emergency exit path


def binary(name):
    """Absolute path of one of our programs."""
    path = os.path.join(BIN_DIR, name)
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest("%s not built (P2P_BIN_DIR=%s)" % (name, BIN_DIR))
    return path


def _is_sanitized():
    try:
        with open(os.path.join(BIN_DIR, "runSuperNode"), "rb") as f:
            return b"AddressSanitizer" in f.read()
    except OSError:
        return False


SANITIZED = _is_sanitized()


def figure(text):
    """Record a measured figure; all are printed as FIGURE lines at the end
    (and at once on stderr as "measured: ...", for whoever watches)."""
    _figures.append(text)
    sys.stderr.write("\nmeasured: %s\n" % text)
    sys.stderr.flush()


def wait_until(predicate, timeout, what="condition", interval=POLL_S):
    """Call predicate every interval seconds until it returns a true value,
    which is returned; fail the test after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.1f s waiting for %s"
                                 % (timeout, what))
        time.sleep(interval)


def free_port(host="127.0.0.1"):
    """A port nothing listens on right now (for the few tests that must name
    a port before starting a detached daemon)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _pid_alive(pid):
    """True if pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[0] != "Z"


def become_subreaper():
    """Make orphaned descendants (detached daemons) our children, so that
    their exit status can be collected with os.waitpid."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_CHILD_SUBREAPER = 36
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def reap_pid(pid, timeout):
    """Wait for a (possibly adopted) child to exit; its exit status (negative
    for a signal), or None if it is still running after timeout.  For a
    process that is not our child, only its disappearance is seen and 0 is
    returned."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            if not _pid_alive(pid):
                return 0
            done = 0
        else:
            if done == pid:
                if os.WIFSIGNALED(status):
                    return -os.WTERMSIG(status)
                return os.WEXITSTATUS(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


class Daemon:
    """One long-running process, its stderr/stdout in a log file."""

    def __init__(self, name, argv, log_path, env, cwd):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.expected_exit = False  # the test stopped it, or expects it to go
        with open(log_path, "wb") as log:
            self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=log, env=env,
                                          cwd=cwd)
        self.pid = self.popen.pid
        _live.add(self)

    def __repr__(self):
        return "<%s pid %d>" % (self.name, self.pid)

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def alive(self):
        return self.popen.poll() is None

    @property
    def returncode(self):
        return self.popen.poll()

    def wait_log(self, pattern, timeout=START_TIMEOUT_S, what=None,
                 allow_exit=False):
        """Wait for a log line matching pattern (a regex); return the match.
        Fails at once if the process exits first (unless allow_exit)."""
        rx = re.compile(pattern)

        def found():
            m = rx.search(self.log())
            if m:
                return m
            if not allow_exit and not self.alive():
                raise AssertionError(
                    "%s exited (status %s) before logging %r; log:\n%s"
                    % (self.name, self.returncode, pattern, self.log()))
            return None
        return wait_until(found, timeout, what or "%s to log %r"
                          % (self.name, pattern))

    def signal(self, sig):
        if sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
            self.expected_exit = True
        if self.alive():
            self.popen.send_signal(sig)

    def wait_exit(self, timeout):
        """Wait for the process to exit; its status, or None on timeout."""
        self.expected_exit = True
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        finally:
            if self.popen.poll() is not None:
                _live.discard(self)

    def stop(self, timeout=STOP_TIMEOUT_S):
        """SIGCONT then SIGTERM; wait; SIGKILL if it does not stop.  Returns
        the exit status (negative for a signal), or None if it had to be
        killed."""
        self.expected_exit = True
        if self.alive():
            try:
                self.popen.send_signal(signal.SIGCONT)
                self.popen.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        rc = self.wait_exit(timeout)
        if rc is None:
            self.kill()
        return rc

    def kill(self):
        """SIGKILL and reap."""
        self.expected_exit = True
        if self.alive():
            try:
                self.popen.kill()
            except ProcessLookupError:
                pass
        self.popen.wait()
        _live.discard(self)


class Cluster:
    """A temporary network: directory, key, configuration and processes."""

    def __init__(self, name="cluster", group="itest", heartbeat_ms=200,
                 handshake_timeout_ms=1000):
        self.dir = tempfile.mkdtemp(prefix="p2p-it-%s-" % name)
        self.home = os.path.join(self.dir, "home")
        os.mkdir(self.home, 0o700)
        self.env = dict(os.environ)
        for var in ("P2P_CONF", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
            self.env.pop(var, None)
        # No user or system configuration may leak in, and default pid
        # files land inside the directory.
        self.env["HOME"] = self.home
        self.env["XDG_RUNTIME_DIR"] = self.home
        self.daemons = []
        self.extra_pids = []  # detached daemons, by pid
        self.handshake_timeout_ms = handshake_timeout_ms
        self.heartbeat_ms = heartbeat_ms
        self.key = self.keygen("group.key")
        self.conf = self.write_config("p2p.conf", group=group, key_file=self.key,
                                      handshake_timeout_ms=handshake_timeout_ms,
                                      heartbeat_ms=heartbeat_ms)
        self._serial = 0

    # -- files -------------------------------------------------------------

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def run(self, argv, timeout=RUN_TIMEOUT_S, cwd=None):
        """Run a one-shot command; CompletedProcess with text output."""
        return subprocess.run(argv, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True,
                              errors="replace", env=self.env,
                              cwd=cwd or self.dir, timeout=timeout)

    def keygen(self, name):
        path = self.path(name)
        r = self.run([binary("p2p-keygen"), "--group", path])
        if r.returncode != 0:
            raise AssertionError("p2p-keygen --group failed: %s" % r.stderr)
        return path

    def write_config(self, name, group="itest", key_file=None,
                     handshake_timeout_ms=None, heartbeat_ms=None, extra=""):
        """Write an INI file; None leaves a key out.  Returns its path."""
        lines = ["[network]", "group = %s" % group]
        if key_file is not None:
            lines.append("key_file = %s" % key_file)
        if handshake_timeout_ms is not None:
            lines.append("handshake_timeout_ms = %d" % handshake_timeout_ms)
        if heartbeat_ms is not None:
            lines += ["", "[peer]", "heartbeat_ms = %d" % heartbeat_ms]
        text = "\n".join(lines) + "\n" + extra
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    # -- daemons -----------------------------------------------------------

    def _daemon(self, name, argv):
        self._serial += 1
        log = self.path("%02d-%s.log" % (self._serial, name))
        d = Daemon(name, argv, log, self.env, self.dir)
        self.daemons.append(d)
        return d

    def start_supernode(self, port=0, expire=10, conf=None, extra=(),
                        name="supernode", wait=True):
        """runSuperNode in the foreground on 127.0.0.1:port.  Once up, .port
        and .addr hold where it listens."""
        argv = [binary("runSuperNode"), "--conf", conf or self.conf,
                "--listen", "127.0.0.1:%d" % port, "--foreground",
                "--expire", str(expire)] + list(extra)
        d = self._daemon(name, argv)
        d.port, d.addr, d.expire = None, None, expire
        if wait:
            m = d.wait_log(r"listening on 127\.0\.0\.1:(\d+)\b",
                           what="%s to listen" % name)
            d.port = int(m.group(1))
            d.addr = "127.0.0.1:%d" % d.port
        return d

    @staticmethod
    def _addr(sn):
        return sn if isinstance(sn, str) else sn.addr

    def start_peer(self, host, supernodes, slots=2, label=None, state_dir=None,
                   conf=None, extra=(), name=None, wait=True):
        """peerd on 127.0.0.<host>, port chosen by the kernel.  supernodes
        is a list of Daemons or ADDR:PORT strings.  Once up, .addr holds the
        address it serves on (from its log)."""
        label = label or "host%d" % host
        state_dir = state_dir or self.path("state-%s" % label)
        argv = [binary("peerd"), "--conf", conf or self.conf,
                "--listen", "127.0.0.%d:0" % host]
        for sn in supernodes:
            argv += ["--supernode", self._addr(sn)]
        argv += ["--state-dir", state_dir, "--slots", str(slots),
                 "--host-label", label, "--foreground"] + list(extra)
        d = self._daemon(name or "peerd-%s" % label, argv)
        d.label, d.state_dir, d.slots, d.addr = label, state_dir, slots, None
        d.ip = "127.0.0.%d" % host
        if wait:
            self.wait_serving(d)
        return d

    def wait_serving(self, peer):
        m = peer.wait_log(r"serving on (127\.0\.0\.\d+:\d+) ",
                          what="%s to serve" % peer.name)
        peer.addr = m.group(1)
        return peer.addr

    # -- mpihost -----------------------------------------------------------

    def mpihost(self, supernodes=None, json_out=True, conf=None, timeout_s=None,
                extra=()):
        """Run mpihost; CompletedProcess."""
        argv = [binary("mpihost"), "--conf", conf or self.conf]
        for sn in supernodes or []:
            argv += ["--supernode", self._addr(sn)]
        if json_out:
            argv.append("--json")
        if timeout_s is not None:
            argv += ["--timeout", str(timeout_s)]
        return self.run(argv + list(extra))

    def list_peers(self, supernodes, conf=None):
        """The parsed mpihost --json list; fails the test if mpihost does."""
        r = self.mpihost(supernodes, conf=conf)
        if r.returncode != 0:
            raise AssertionError("mpihost exited %d: %s"
                                 % (r.returncode, r.stderr.strip()))
        try:
            peers = json.loads(r.stdout)
        except ValueError as e:
            raise AssertionError("mpihost --json printed invalid JSON (%s): %r"
                                 % (e, r.stdout))
        if not isinstance(peers, list):
            raise AssertionError("mpihost --json did not print an array: %r"
                                 % r.stdout)
        return peers

    def listed(self, supernodes, peers):
        """The entries of exactly these peer daemons (by address), in their
        order, if they and only they are listed; else None."""
        entries = self.list_peers(supernodes)
        by_addr = {e.get("addr"): e for e in entries}
        if len(entries) != len(peers) or len(by_addr) != len(entries):
            return None
        try:
            return [by_addr[p.addr] for p in peers]
        except KeyError:
            return None

    def wait_listed(self, supernodes, peers, timeout=START_TIMEOUT_S):
        """Wait until exactly these peers are listed; return their entries."""
        found = []

        def check():
            entries = self.listed(supernodes, peers)
            if entries is None:
                return False
            found.append(entries)
            return True
        wait_until(check, timeout, "exactly %s to be listed by %s"
                   % ([p.label for p in peers],
                      [self._addr(s) for s in supernodes]))
        return found[-1]

    # -- teardown ----------------------------------------------------------

    def track_pid(self, pid):
        """A detached daemon started by the test: killed at the end."""
        self.extra_pids.append(pid)

    def shutdown(self):
        """Stop everything; return a list of problems (empty when every
        daemon ended as expected and nothing is left running)."""
        problems = []
        # Peers first, so that they say goodbye to a live supernode.
        for d in reversed(self.daemons):
            if not d.alive():
                _live.discard(d)
                if not d.expected_exit:
                    problems.append("%s exited on its own with status %s"
                                    % (d.name, d.returncode))
                continue
            rc = d.stop()
            if rc is None:
                problems.append("%s did not stop within %d s of SIGTERM"
                                % (d.name, STOP_TIMEOUT_S))
            elif rc != 0:
                problems.append("%s exited with status %d after SIGTERM "
                                "(a leak or crash in the sanitizer build?); "
                                "log tail:\n%s" % (d.name, rc,
                                                   d.log()[-3000:]))
        for pid in self.extra_pids:
            if _pid_alive(pid):
                problems.append("detached process %d still running" % pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        # Nothing started from this directory may survive the test.
        leftovers = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if self.dir.encode() in cmd and _pid_alive(int(entry)):
                leftovers.append(int(entry))
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if leftovers:
            problems.append("processes left running: %s" % leftovers)
        return problems

    def dump_logs(self, out=sys.stdout):
        out.write("\n==== kept %s ====\n" % self.dir)
        for d in self.daemons:
            out.write("---- %s (pid %d, status %s): %s\n"
                      % (d.name, d.pid, d.returncode, " ".join(d.argv)))
            out.write(d.log())
        out.write("==== end of logs ====\n")
        out.flush()

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class ClusterTestCase(unittest.TestCase):
    """A test with a fresh Cluster in self.c; everything stopped and checked
    in tearDown; the directory kept and logs printed if the test fails."""

    cluster_args = {}

    def setUp(self):
        self.c = Cluster(self._testMethodName, **self.cluster_args)

    def tearDown(self):
        problems = self.c.shutdown()
        if problems:
            self.fail("at the end of the test:\n  " + "\n  ".join(problems))

    def run(self, result=None):
        if result is None:
            return super().run(result)
        before = len(result.failures) + len(result.errors)
        out = super().run(result)
        c = getattr(self, "c", None)
        if c is not None:
            if len(result.failures) + len(result.errors) > before:
                c.dump_logs()
            else:
                c.remove()
        return out

    # -- helpers shared by the test files ------------------------------------

    def start_network(self, npeers=3, expire=10, slots=None, first_host=2,
                      conf=None):
        """A supernode and npeers peerd on 127.0.0.2, .3, ...; waits until
        all are listed.  Returns (supernode, [peers])."""
        sn = self.c.start_supernode(expire=expire, conf=conf)
        peers = [self.c.start_peer(first_host + i, [sn],
                                   slots=(slots or [2] * npeers)[i],
                                   conf=conf)
                 for i in range(npeers)]
        self.c.wait_listed([sn], peers)
        return sn, peers

    def assert_stops_cleanly(self, d):
        rc = d.stop()
        self.assertEqual(rc, 0, "%s should exit 0 on SIGTERM; log:\n%s"
                         % (d.name, d.log()[-3000:]))

    def assert_all_stop_cleanly(self):
        """Stop every running daemon, peers before supernodes; each must
        exit 0."""
        for d in reversed(self.c.daemons):
            if d.alive():
                self.assert_stops_cleanly(d)


def _emergency_exit(signum, frame):
    """CTest's timeout (or a ^C) must not leave daemons behind."""
    for d in list(_live):
        try:
            d.popen.kill()
        except OSError:
            pass
    sys.stdout.write("\ninterrupted by signal %d\n" % signum)
    sys.stdout.flush()
    os._exit(1)


def _kill_live():
    for d in list(_live):
        if d.popen.poll() is None:
            d.popen.kill()
            d.popen.wait()


def main():
    """Run the calling module's tests; print 'N passed, N failed' last and
    exit non-zero if anything failed."""
    signal.signal(signal.SIGTERM, _emergency_exit)
    signal.signal(signal.SIGINT, _emergency_exit)
    atexit.register(_kill_live)
    sys.stdout.write("binaries: %s%s\n" % (BIN_DIR, " (sanitized)"
                                           if SANITIZED else ""))
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2)
    prog = unittest.main(module="__main__", testRunner=runner, exit=False)
    result = prog.result
    failed = (len(result.failures) + len(result.errors) +
              len(result.unexpectedSuccesses))
    passed = result.testsRun - failed - len(result.skipped)
    for text in _figures:
        sys.stdout.write("FIGURE %s\n" % text)
    sys.stdout.write("%d passed, %d failed\n" % (passed, failed))
    sys.stdout.flush()
    sys.exit(1 if failed or result.testsRun == 0 else 0)
