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

Jobs: JobTestCase gives a network whose configuration names its
supernode, a user key, and helpers to run p2prun (to completion, or in the
background to signal it), to find a job's processes (by the P2P_PEERD in
their environment) and to wait for slots and job directories to come back.
A peerd running as root runs jobs as an unprivileged account, so a job
cluster's directory lets others pass through (0711), never list.

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



def _wire_version():
    """P2P_WIRE_VERSION from proto/wire.h: tests that write frames by hand
    speak the version the binaries were built with."""
    with open(os.path.join(HERE, "..", "..", "proto", "wire.h")) as f:
        m = re.search(r"#define P2P_WIRE_VERSION (\d+)", f.read())
    return int(m.group(1))


WIRE_VERSION = _wire_version()
POLL_S = 0.05          # polling period of wait_until
START_TIMEOUT_S = 30   # a daemon must say it is up within this
STOP_TIMEOUT_S = 20    # and stop within this after SIGTERM
RUN_TIMEOUT_S = 60     # a one-shot command (mpihost, p2p-keygen)

HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _test_base():
    """Where clusters make their directories.  Not /tmp when we are root:
    a root peerd gives each job a private /tmp, so a job would not see a
    test's scripts and output directory there.  $P2P_TEST_TMPDIR wins."""
    base = os.environ.get("P2P_TEST_TMPDIR")
    if not base and os.geteuid() == 0:
        base = "/var/lib/p2p-it"
    if base:
        os.makedirs(base, 0o711, exist_ok=True)
        os.chmod(base, 0o711)
    return base or None


TEST_BASE = _test_base()

_figures = []
_live = set()  # every Daemon not yet reaped, for the emergency exit path
_live_runs = set()  # every p2prun Run not yet reaped, likewise


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
    which is returned; fail the test after timeout seconds.  what may be a
    function, called then, to describe the state at the time."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.1f s waiting for %s"
                                 % (timeout, what() if callable(what)
                                    else what))
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


def proc_status_kb(pid, field="VmHWM"):
    """A size field of /proc/PID/status in kB (VmHWM: peak resident set),
    or None if the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _read_proc(pid, what):
    try:
        with open("/proc/%d/%s" % (pid, what), "rb") as f:
            return f.read()
    except OSError:
        return None


def live_processes():
    """{pid: (argv list, environ dict, uid)} of every live (non-zombie)
    process we may look at."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid == os.getpid() or not _pid_alive(pid):
            continue
        cmd = _read_proc(pid, "cmdline")
        if not cmd:
            continue  # kernel thread, or gone
        env = _read_proc(pid, "environ") or b""
        status = _read_proc(pid, "status") or b""
        m = re.search(rb"^Uid:\s+(\d+)", status, re.M)
        argv = [a.decode("utf-8", "replace") for a in cmd.split(b"\0")[:-1]]
        environ = {}
        for item in env.split(b"\0"):
            k, eq, v = item.partition(b"=")
            if eq:
                environ[k.decode("utf-8", "replace")] = v.decode("utf-8",
                                                                 "replace")
        out[pid] = (argv, environ, int(m.group(1)) if m else -1)
    return out


def processes_with_argv(argv):
    """Pids of live processes whose command line is exactly argv."""
    return sorted(pid for pid, (a, _, _) in live_processes().items()
                  if a == list(argv))


def child_pids(ppid):
    """Pids of the live children of ppid."""
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _read_proc(int(entry), "stat")
        if stat is None:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if int(fields[1]) == ppid and fields[0] != b"Z":
            kids.append(int(entry))
    return kids


def unique_sleep(seconds=60):
    """A sleep duration that names one test's processes: "60.000123"
    sleeps 60 s and no other test's sleep has the same command line."""
    unique_sleep.serial += 1
    return "%d.%04d%05d" % (seconds, unique_sleep.serial, os.getpid() % 100000)


unique_sleep.serial = 0


class Run:
    """One p2prun, its stdout and stderr in files.  wait() reaps it with
    wait4, so its peak resident set (maxrss_kb) is known too."""

    def __init__(self, argv, env, cwd, out_path, err_path, stdin=None):
        self.argv = argv
        self.out_path, self.err_path = out_path, err_path
        self.rc = None
        self.maxrss_kb = None
        self.elapsed = None
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self.t0 = time.monotonic()
            self.popen = subprocess.Popen(
                argv, stdout=out, stderr=err, env=env, cwd=cwd,
                stdin=subprocess.DEVNULL if stdin is None else stdin)
        self.pid = self.popen.pid
        _live_runs.add(self)

    def __repr__(self):
        return "<p2prun pid %d>" % self.pid

    def _read(self, path):
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    @property
    def stdout(self):
        return self._read(self.out_path)

    @property
    def stderr(self):
        return self._read(self.err_path)

    def stderr_lines(self):
        return [l for l in self.stderr.splitlines() if l.strip()]

    def alive(self):
        return self.rc is None and self.poll() is None

    def poll(self):
        """The exit status once it has exited (negative for a signal)."""
        if self.rc is not None:
            return self.rc
        try:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            return self.rc
        if pid == 0:
            return None
        self.elapsed = time.monotonic() - self.t0
        self.maxrss_kb = ru.ru_maxrss
        self.rc = (-os.WTERMSIG(status) if os.WIFSIGNALED(status)
                   else os.WEXITSTATUS(status))
        self.popen.returncode = self.rc  # reaped here, not by Popen
        _live_runs.discard(self)
        if self.popen.stdin is not None:
            self.popen.stdin.close()
        return self.rc

    def wait(self, timeout):
        """Exit status, or None if still running after timeout s."""
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)
        return self.rc

    def signal(self, sig):
        if self.alive():
            os.kill(self.pid, sig)

    def kill(self):
        """SIGCONT, SIGKILL and reap (for a frozen or stuck run)."""
        if self.alive():
            try:
                os.kill(self.pid, signal.SIGCONT)
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.wait(30)

    def describe(self):
        return ("p2prun %s\n  exit status %s after %s s\n  stdout: %r\n"
                "  stderr: %r" % (" ".join(self.argv[1:]), self.rc,
                                  None if self.elapsed is None
                                  else "%.2f" % self.elapsed,
                                  self.stdout[-3000:], self.stderr[-3000:]))


class Daemon:
    """One long-running process, its stderr/stdout in a log file."""

    def __init__(self, name, argv, log_path, env, cwd, stdin=None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.expected_exit = False  # the test stopped it, or expects it to go
        with open(log_path, "wb") as log:
            self.popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL if stdin is None else stdin,
                stdout=log, stderr=log, env=env, cwd=cwd)
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

    def count_log(self, pattern):
        """How many lines of the log match pattern (a regex)."""
        rx = re.compile(pattern)
        return sum(1 for line in self.log().splitlines() if rx.search(line))

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
        self.dir = tempfile.mkdtemp(prefix="p2p-it-%s-" % name,
                                    dir=TEST_BASE)
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
        self.runs = []        # p2prun started by the test
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

    def user_key(self, name):
        """A user signing key pair (p2p-keygen --user): NAME.key and
        NAME.key.pub in the directory; returns (path, public key hex)."""
        path = self.path("%s.key" % name)
        if not os.path.exists(path):
            r = self.run([binary("p2p-keygen"), "--user", path])
            if r.returncode != 0:
                raise AssertionError("p2p-keygen --user failed: %s"
                                     % r.stderr)
        with open(path + ".pub") as f:
            return path, f.read().strip()

    def job_config(self, name, supernodes, user_key=None, lease_ms=None,
                   peer=None, run=None, extra=""):
        """A configuration naming the supernodes (so p2prun does not start
        an embedded cluster), with [peer] and [run] keys from the dicts
        peer and run, [run] user_key and lease_ms, and extra text last.
        Returns its path."""
        text = ["[network]", "supernodes = %s"
                % ", ".join(self._addr(sn) for sn in supernodes), ""]
        if peer:
            text += ["[peer]"] + ["%s = %s" % kv for kv in peer.items()] + [""]
        runkeys = dict(run or {})
        if user_key is not None:
            runkeys["user_key"] = user_key
        if lease_ms is not None:
            runkeys["lease_ms"] = lease_ms
        if runkeys:
            text += ["[run]"] + ["%s = %s" % kv for kv in runkeys.items()]
            text.append("")
        base = self.write_config(
            name, key_file=self.key,
            handshake_timeout_ms=self.handshake_timeout_ms,
            heartbeat_ms=self.heartbeat_ms)
        with open(base, "a") as f:
            f.write("\n".join(text) + "\n" + extra)
        return base

    def start_p2prun(self, args, conf=None, env=None, cwd=None, stdin=None,
                     name="p2prun"):
        """Start p2prun [--conf conf] args in the background; a Run.  env
        adds to (or, with None values, removes from) the cluster's."""
        self._serial += 1
        argv = [binary("p2prun")]
        if conf is not None:
            argv += ["--conf", conf]
        argv += list(args)
        e = dict(self.env)
        for k, v in (env or {}).items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        base = self.path("%02d-%s" % (self._serial, name))
        r = Run(argv, e, cwd or self.dir, base + ".out", base + ".err",
                stdin=stdin)
        self.runs.append(r)
        return r

    def p2prun(self, args, conf=None, env=None, cwd=None, timeout=60,
               stdin=None):
        """Run p2prun to completion; the Run (rc, stdout, stderr, elapsed,
        maxrss_kb).  Fails the test if it is still running after
        timeout s."""
        r = self.start_p2prun(args, conf=conf, env=env, cwd=cwd, stdin=stdin)
        if r.wait(timeout) is None:
            stacks = self.stacks()
            r.kill()
            raise AssertionError("p2prun still running after %d s:\n%s\n%s"
                                 % (timeout, r.describe(),
                                    "\n".join(stacks)))
        return r

    def job_processes(self, peers=None):
        """{pid: (argv, environ, uid)} of live processes started by jobs
        of these peers (default: every peer of the cluster), known by the
        P2P_PEERD their peerd put in their environment."""
        addrs = {p.addr for p in (peers if peers is not None else
                                  [d for d in self.daemons
                                   if getattr(d, "addr", None)])
                 if getattr(p, "addr", None)}
        return {pid: info for pid, info in live_processes().items()
                if info[1].get("P2P_PEERD") in addrs}

    # -- daemons -----------------------------------------------------------

    def _daemon(self, name, argv, stdin=None):
        self._serial += 1
        log = self.path("%02d-%s.log" % (self._serial, name))
        d = Daemon(name, argv, log, self.env, self.dir, stdin=stdin)
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
                   conf=None, extra=(), name=None, wait=True, stdin=None):
        """peerd on 127.0.0.<host>, port chosen by the kernel.  supernodes
        is a list of Daemons or ADDR:PORT strings.  Once up, .addr holds the
        address it serves on (from its log).  stdin: as for Popen (default
        /dev/null)."""
        label = label or "host%d" % host
        state_dir = state_dir or self.path("state-%s" % label)
        argv = [binary("peerd"), "--conf", conf or self.conf,
                "--listen", "127.0.0.%d:0" % host]
        for sn in supernodes:
            argv += ["--supernode", self._addr(sn)]
        argv += ["--state-dir", state_dir, "--slots", str(slots),
                 "--host-label", label, "--foreground"] + list(extra)
        d = self._daemon(name or "peerd-%s" % label, argv, stdin=stdin)
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

    def stacks(self):
        """Where each job process still running is (gdb's backtrace of
        every thread), to say why a job that should have ended did not;
        with the P2P_ environment that names rank and replica."""
        gdb = shutil.which("gdb")
        if gdb is None:
            return ["(no gdb: no stacks of the job processes left)"]
        out = []
        for pid, (argv, env, _uid) in self.job_processes().items():
            try:
                bt = subprocess.run(
                    [gdb, "-q", "-batch", "-p", str(pid),
                     "-ex", "thread apply all bt"],
                    capture_output=True, text=True, timeout=30).stdout
            except (OSError, subprocess.TimeoutExpired) as e:
                bt = "gdb: %s" % e
            out.append("job process %d %s (rank %s replica %s):\n%s"
                       % (pid, " ".join(argv), env.get("P2P_RANK"),
                          env.get("P2P_REPLICA"),
                          "\n".join(line for line in bt.splitlines()
                                    if line.startswith("#"))))
        return out

    def shutdown(self):
        """Stop everything; return a list of problems (empty when every
        daemon ended as expected and nothing is left running)."""
        problems = []
        for r in self.runs:
            if r.alive():
                problems.append("%r still running at the end of the test"
                                % r)
                problems.extend(self.stacks())
                r.kill()
        # Job processes are gone once their job ended, whatever ended it.
        try:
            wait_until(lambda: not self.job_processes(), 3,
                       "job processes to end")
        except AssertionError:
            left = self.job_processes()
            problems.append("job processes left running: %s" % [
                "%d %s" % (pid, " ".join(info[0]))
                for pid, info in left.items()])
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
        for r in self.runs:
            out.write("---- %s\n" % r.describe())
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

    def mpi_program(self, name, source=None):
        """Compile an MPI program with our p2pcc into the cluster's
        directory: source defaults to name + ".c" beside this file.
        Returns the program's path."""
        prog = self.c.path(name)
        if source is None:
            source = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  name + ".c")
        subprocess.run([binary("p2pcc"), "-O2", "-o", prog, source],
                       check=True)
        os.chmod(prog, 0o755)
        return prog

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


class JobTestCase(ClusterTestCase):
    """A ClusterTestCase for running jobs: the cluster's directory lets the
    job account pass through (0711); self.outdir is a world-writable
    directory in it where job processes may leave files for the test."""

    def setUp(self):
        super().setUp()
        os.chmod(self.c.dir, 0o711)
        self.outdir = self.c.path("out")
        os.mkdir(self.outdir)
        os.chmod(self.outdir, 0o1777)
        self.runconf = None

    def start_jobnet(self, npeers=3, slots=2, labels=None, expire=10,
                     peer_confs=None, lease_ms=None, first_host=2,
                     peer_stdin=None):
        """A supernode and npeers peerd (slots each, or a list), host
        labels host2, host3, ... (or labels), each with the cluster's
        configuration or its own from peer_confs, and stdin peer_stdin (as
        for Popen); self.runconf names the supernode and a user key made
        beforehand (so that p2prun prints nothing about creating one).
        Returns (supernode, [peers])."""
        sn = self.c.start_supernode(expire=expire)
        slots = slots if isinstance(slots, list) else [slots] * npeers
        peers = []
        for i in range(npeers):
            peers.append(self.c.start_peer(
                first_host + i, [sn], slots=slots[i],
                label=labels[i] if labels else None,
                name=None if not labels else "peerd-%d-%s" % (i, labels[i]),
                state_dir=self.c.path("state-%d" % (first_host + i)),
                conf=(peer_confs or {}).get(i), stdin=peer_stdin))
        self.c.wait_listed([sn], peers)
        key, _ = self.c.user_key("user")
        self.runconf = self.c.job_config("run.conf", [sn], user_key=key,
                                         lease_ms=lease_ms)
        return sn, peers

    def script(self, name, body):
        """An executable shell script in the cluster's directory; its
        path."""
        path = self.c.path(name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
        return path

    def p2prun(self, args, conf=None, **kw):
        return self.c.p2prun(args, conf=conf or self.runconf, **kw)

    def start_p2prun(self, args, conf=None, **kw):
        return self.c.start_p2prun(args, conf=conf or self.runconf, **kw)

    def assert_rc(self, run, rc):
        self.assertEqual(run.rc, rc, run.describe())
        if rc == 0:
            self.assert_no_crash(run)

    def assert_no_crash(self, run):
        """No process of a job that succeeded died of a signal but
        SIGKILL (a test's, or a peer's for one declared dead): with
        replicas a crash of one is carried by the other and the job ends
        0, so only p2prun's line about it shows the bug."""
        for sig in re.findall(r"killed by signal (\d+)", run.stderr):
            self.assertEqual(int(sig), signal.SIGKILL, run.describe())

    # -- replicated jobs -----------------------------------------------------

    @staticmethod
    def per_rank(out):
        """Each rank's lines in order, for output whose lines start
        "rank N" (ranks run side by side, so only the interleaving of
        different ranks may vary between runs)."""
        ranks = {}
        for line in out.splitlines(keepends=True):
            ranks.setdefault(line.split()[1], []).append(line)
        return ranks

    def replica_procs(self, name, rank=None, replica=None):
        """{pid: environ} of the job processes whose argv mentions name,
        of that rank and replica when given."""
        out = {}
        for pid, (argv, env, uid) in self.c.job_processes().items():
            if not any(name in a for a in argv):
                continue
            if rank is not None and env.get("P2P_RANK") != str(rank):
                continue
            if replica is not None and env.get("P2P_REPLICA") != str(replica):
                continue
            out[pid] = env
        # A shell's child between fork and exec still looks like the
        # shell: it is not another replica.
        for pid in list(out):
            stat = _read_proc(pid, "stat") or b""
            fields = stat[stat.rfind(b")") + 2:].split()
            if len(fields) > 1 and int(fields[1]) in out:
                del out[pid]
        return out

    def kill_peer_and_jobs(self, peer):
        """SIGKILL peerd and every job process it started, as a machine
        that dies takes both; the processes' pids."""
        theirs = list(self.c.job_processes([peer]))
        peer.kill()
        for p in theirs:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return theirs

    def slots_free(self, sn, peers):
        """{label: slots_free} of these peers as mpihost lists them."""
        entries = self.c.listed([sn], peers)
        if entries is None:
            return None
        return {p.label: e["slots_free"] for p, e in zip(peers, entries)}

    def all_free(self, sn, peers):
        free = self.slots_free(sn, peers)
        return free is not None and all(free[p.label] == p.slots
                                        for p in peers)

    def wait_all_free(self, sn, peers, timeout):
        """Wait until mpihost shows every slot of these peers free;
        seconds waited."""
        t0 = time.monotonic()
        wait_until(lambda: self.all_free(sn, peers), timeout,
                   lambda: "every slot of %s to be free (now %s)"
                   % ([p.label for p in peers], self.slots_free(sn, peers)))
        return time.monotonic() - t0

    @staticmethod
    def job_dirs(peer):
        """Entries of the peer's STATE_DIR/jobs (none if it is missing)."""
        try:
            return os.listdir(os.path.join(peer.state_dir, "jobs"))
        except FileNotFoundError:
            return []

    def wait_job_dirs_gone(self, peers, timeout):
        wait_until(lambda: not any(self.job_dirs(p) for p in peers), timeout,
                   lambda: "job directories to go: %s" % {
                       p.label: self.job_dirs(p) for p in peers})

    def wait_no_job_processes(self, peers, timeout, what="job processes"):
        t0 = time.monotonic()
        wait_until(lambda: not self.c.job_processes(peers), timeout,
                   lambda: "%s to end: %s" % (what, {
                       pid: " ".join(i[0])
                       for pid, i in self.c.job_processes(peers).items()}))
        return time.monotonic() - t0

    def assert_job_over(self, sn, peers, timeout=2):
        """After a job: no process of it left, every slot free again in
        mpihost and no job directory left, each within timeout s."""
        self.wait_no_job_processes(peers, timeout)
        self.wait_all_free(sn, peers, timeout)
        self.wait_job_dirs_gone(peers, timeout)


def _emergency_exit(signum, frame):
    """CTest's timeout (or a ^C) must not leave daemons behind."""
    for d in list(_live) + list(_live_runs):
        try:
            d.popen.send_signal(signal.SIGCONT)
            d.popen.kill()
        except OSError:
            pass
    sys.stdout.write("\ninterrupted by signal %d\n" % signum)
    sys.stdout.flush()
    os._exit(1)


def _kill_live():
    for r in list(_live_runs):
        r.kill()
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
