#!/usr/bin/env python3
"""Every job in its own box, tried as a hostile user would.

- A chain of processes that each start a successor in a new session and
  die slowly does not outlive its job.
- A process a job started with setsid survives a SIGKILL of peerd; the
  restarted peerd kills it and removes the job's directory before it
  serves again.
- A second user's job can neither signal, trace, nor read the first
  user's processes, files, /tmp or control socket.
- /tmp and /dev/shm are private and bounded: a job filling them fills
  only its own, and nothing is left after it.
- A job beyond its memory limit is killed, and p2prun names the limit.
- A fork bomb stops at the process limit of its own job, and does not
  keep another user's job from forking.
- A job that leaves a mode-000 directory tree (and a very deep one) is
  removed without a word in the log.
- A peerd SIGKILLed and never started again leaves its cgroups; the next
  peerd that starts on the machine kills what is in them and removes
  them.

Needs a root peerd and writable cgroups; each test says what is missing
and skips where they are not there."""

import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

UIDS = range(61000, 61064)  # the default [peer] job_uids


def cgroup_instances(pid):
    """The cgroup directories of pid's peerd instance (p2pmpi-...), one
    per hierarchy pid is in, from /proc/PID/cgroup and the mounts."""
    mounts = {}
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, where, kind, opts = line.split()[:4]
            if kind == "cgroup2":
                mounts[""] = where
            elif kind == "cgroup":
                for o in opts.split(","):
                    mounts.setdefault(o, where)
    out = set()
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            _, ctls, path = line.rstrip("\n").split(":", 2)
            parts = path.split("/")
            cut = [i for i, p in enumerate(parts) if p.startswith("p2pmpi-")]
            where = mounts.get(ctls.split(",")[0] if ctls else "")
            if cut and where:
                out.add(where + "/".join(parts[:cut[0] + 1]))
    return sorted(out)


class TestContainment(harness.JobTestCase):

    def start_box(self, npeers=1, slots=2, peer_extra=""):
        """A network whose peers use peer_extra in [peer]; skips unless
        they contain jobs with cgroups, uids and private /tmp."""
        conf = None
        if peer_extra:
            conf = self.c.write_config(
                "peer.conf", key_file=self.c.key,
                handshake_timeout_ms=self.c.handshake_timeout_ms,
                heartbeat_ms=self.c.heartbeat_ms, extra=peer_extra)
        self.sn, self.peers = self.start_jobnet(
            npeers, slots=slots,
            peer_confs={i: conf for i in range(npeers)} if conf else None)
        log = self.peers[0].log()
        if os.geteuid() != 0:
            self.skipTest("peerd is not root: no uid per job, no private "
                          "/tmp")
        m = re.search(r"jobs are contained by (.*)", log)
        if not m:
            self.skipTest("no writable cgroups here: %s" % (
                re.search(r"no cgroups for jobs.*", log) or ["?"])[0])
        if "no private /tmp" in log:
            self.skipTest("no mount namespaces here")
        self.box = m.group(1)
        return self.sn, self.peers

    def no_job_processes_for(self, seconds):
        """Stays true for seconds: no process of any job of ours runs."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            procs = self.c.job_processes(self.peers)
            self.assertEqual(procs, {}, "job processes came back: %s" % {
                p: " ".join(i[0]) for p, i in procs.items()})
            time.sleep(0.05)

    def test_session_hopping_chain(self):
        self.start_box()
        # Each link starts its successor in a new session, touches 64 MB
        # and dies slowly: the chain moves on faster than any sweep of
        # orphans.
        link = self.script("link.sh", """
setsid sh "$0" &
python3 -c 'import time; b = b"x" * (64 << 20); time.sleep(0.3)'
""")
        main = self.script("main.sh", """
setsid sh "%s" &
sleep 1
echo "main exits"
""" % link)
        run = self.p2prun(["-n", "1", main], timeout=30)
        self.assert_rc(run, 0)
        self.assertIn("main exits", run.stdout)
        t0 = time.monotonic()
        self.wait_no_job_processes(self.peers, 3, "the chain")
        figure("a session-hopping chain is gone %.3f s after its job ended"
               % (time.monotonic() - t0))
        self.no_job_processes_for(1.5)
        self.assert_job_over(self.sn, self.peers)

    def start_escapee(self):
        """A one-peer box and a job there that leaves a process in a
        session of its own (setsid); (supernode, peer, the p2prun, the
        escapee's pid)."""
        sn, (peer,) = self.start_box()
        mark = harness.unique_sleep(120)
        prog = self.script("escape.sh", """
setsid sleep %s &
echo started
exec sleep 60
""" % mark)
        run = self.start_p2prun(["-n", "1", prog])
        escapee = wait_until(lambda: harness.processes_with_argv(
            ["sleep", mark]), 10, "the escapee")[0]
        return sn, peer, run, escapee

    def test_escapee_across_peerd_crash(self):
        sn, peer, run, escapee = self.start_escapee()
        jobs = self.job_dirs(peer)
        self.assertEqual(len(jobs), 1)
        peer.kill()
        run.wait(30)
        # The escapee is not peerd's child: it outlives it.  (Another
        # peerd of this machine that starts meanwhile, as in a parallel
        # test, may clear it first: its uid's lock is free.)
        again = self.c.start_peer(2, [sn], slots=2, label=peer.label,
                                  state_dir=peer.state_dir,
                                  name="peerd-again")
        again.wait_log(r"cleared what an earlier run left: \d+ cgroup",
                       what="the restarted peerd to clear the earlier run")
        wait_until(lambda: not harness._pid_alive(escapee), 5,
                   "the escapee to be killed")
        self.assertEqual(self.job_dirs(again), [],
                         "the earlier job's directory must go")
        self.c.wait_listed([sn], [again])
        r = self.p2prun(["-n", "1", "echo", "serving"], timeout=30)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "serving\n")

    def test_cgroups_of_a_peerd_gone(self):
        sn, peer, run, escapee = self.start_escapee()
        inst = cgroup_instances(escapee)
        self.assertTrue(inst, "the job is in no cgroup of peerd's")
        peer.kill()
        run.wait(30)
        self.assertTrue(all(os.path.isdir(d) for d in inst), inst)
        # Never started again: another peerd (another state directory)
        # clears them as it starts (or a peerd of a parallel test did).
        self.c.start_peer(3, [sn], slots=1, name="peerd-other")
        wait_until(lambda: not any(os.path.isdir(d) for d in inst), 10,
                   "the instance of the peerd gone to be removed")
        wait_until(lambda: not harness._pid_alive(escapee), 5,
                   "the escapee to be killed")

    def test_other_users_job_sees_nothing(self):
        sn, (peer,) = self.start_box(slots=2)
        bkey, _ = self.c.user_key("bob")
        bconf = self.c.job_config("bob.conf", [sn], user_key=bkey)
        out = self.outdir
        alice = self.script("alice.sh", """
echo $$ > %(out)s/alice.pid
echo "alice's secret" > secret.txt
echo "alice's tmp" > /tmp/alice-tmp
id -u
while [ ! -e %(out)s/done ]; do sleep 0.05; done
cat secret.txt
""" % {"out": out})
        bob = self.c.path("bob.py")
        with open(bob, "w") as f:
            f.write(r"""import ctypes, errno, os, signal, sys
out = sys.argv[1]
pid = int(open(out + "/alice.pid").read())
libc = ctypes.CDLL(None, use_errno=True)
res = {}
def attempt(name, fn):
    try:
        fn()
        res[name] = "ALLOWED"
    except PermissionError:
        res[name] = "denied"
    except OSError as e:
        res[name] = "denied" if e.errno in (errno.EPERM, errno.EACCES) \
            else "error %s" % e.errno
attempt("kill", lambda: os.kill(pid, signal.SIGSTOP))
attempt("environ", lambda: open("/proc/%d/environ" % pid).read())
attempt("cwd", lambda: os.listdir("/proc/%d/cwd" % pid))
attempt("fd", lambda: os.listdir("/proc/%d/fd" % pid))
attempt("mem", lambda: open("/proc/%d/mem" % pid, "rb").read(1))
def ptrace():
    if libc.ptrace(16, pid, None, None) == -1:  # PTRACE_ATTACH
        raise OSError(ctypes.get_errno(), "ptrace")
attempt("ptrace", ptrace)
def getfd():
    pidfd = libc.syscall(434, pid, 0)          # pidfd_open
    if pidfd == -1:
        raise OSError(ctypes.get_errno(), "pidfd_open")
    if libc.syscall(438, pidfd, 3, 0) == -1:   # pidfd_getfd(3): the socket
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
attempt("getfd", getfd)
res["tmp"] = "seen" if os.path.exists("/tmp/alice-tmp") else "private"
print(" ".join("%s:%s" % kv for kv in sorted(res.items())))
print("uid", os.getuid())
open(out + "/done", "w").close()
""")
        arun = self.start_p2prun(["-n", "1", alice])
        wait_until(lambda: os.path.exists(os.path.join(out, "alice.pid")),
                   10, "alice's job to start")
        brun = self.p2prun(["-n", "1", "python3", bob, out], conf=bconf,
                           timeout=30)
        self.assert_rc(brun, 0)
        seen = dict(kv.split(":") for kv in brun.stdout.split("\n")[0].split())
        for what in ("kill", "environ", "cwd", "fd", "mem", "ptrace",
                     "getfd"):
            self.assertEqual(seen.get(what), "denied",
                             "bob's job could %s alice's: %s"
                             % (what, brun.stdout))
        self.assertEqual(seen.get("tmp"), "private", brun.stdout)
        arc = arun.wait(30)
        self.assertEqual(arc, 0, arun.describe())
        alice_uid = int(arun.stdout.split("\n")[0])
        bob_uid = int(brun.stdout.split("\n")[1].split()[1])
        self.assertIn(alice_uid, UIDS)
        self.assertIn(bob_uid, UIDS)
        self.assertNotEqual(alice_uid, bob_uid, "two jobs shared a uid")
        self.assertIn("alice's secret", arun.stdout)
        self.assertFalse(os.path.exists("/tmp/alice-tmp"),
                         "a job's /tmp reached the machine's")
        self.assert_job_over(sn, self.peers)

    def test_tmp_and_shm_private_and_bounded(self):
        sn, peers = self.start_box(peer_extra="job_mem_mb = 100\n")
        mark = "p2p-fill-%d" % os.getpid()
        prog = self.script("fill.sh", """
for d in /dev/shm /tmp /var/tmp; do
    dd if=/dev/zero of=$d/%(m)s bs=1M count=500 2>/dev/null
    echo "$d rc=$?"
    rm -f $d/%(m)s
done
df -k /dev/shm | tail -1
""" % {"m": mark})
        run = self.p2prun(["-n", "1", prog], timeout=60)
        # Each dd stops at the 100 MiB limit (a full tmpfs, or the memory
        # cgroup's OOM killer); either way the job ends.
        self.assertNotIn("rc=0", run.stdout, run.describe())
        for d in ("/dev/shm", "/tmp", "/var/tmp"):
            self.assertFalse(os.path.exists(os.path.join(d, mark)),
                             "%s/%s reached the machine" % (d, mark))
        self.assert_job_over(sn, peers)

    def test_memory_limit_is_named(self):
        sn, peers = self.start_box(peer_extra="job_mem_mb = 100\n")
        run = self.p2prun(["-n", "1", "python3", "-c",
                           "b = b'x' * (300 << 20); print('survived')"],
                          timeout=60)
        self.assert_rc(run, 137)
        self.assertNotIn("survived", run.stdout)
        self.assertIn("rank 0 killed: memory limit 100 MiB reached on host2",
                      run.stderr)
        self.assert_job_over(sn, peers)

    def test_memory_peak_reported(self):
        sn, (peer,) = self.start_box()
        run = self.p2prun(["-n", "1", "python3", "-c",
                           "b = b'x' * (300 << 20); print(len(b) >> 20)"],
                          timeout=60)
        self.assert_rc(run, 0)
        self.assertEqual(run.stdout, "300\n")
        m = peer.wait_log(r"rank 0 replica 0 exited with 0, peak memory "
                          r"(\d+) KiB")
        peak = int(m.group(1)) >> 10
        limit = re.search(r"memory limit|jobs are contained", peer.log())
        figure("a job allocating 300 MB: peak memory %d MiB reported "
               "(limit per process: the default share)" % peak)
        self.assertGreaterEqual(peak, 300)
        self.assertLess(peak, 1024)
        self.assertIsNotNone(limit)

    def test_fork_bomb_and_another_users_job(self):
        sn, peers = self.start_box(slots=2, peer_extra="job_nproc = 64\n")
        bkey, _ = self.c.user_key("bob")
        bconf = self.c.job_config("bob.conf", [sn], user_key=bkey)
        bomb = self.script("bomb.sh", """
# Once the bomb runs, a fork of this script may fail as well: it
# starts its timer before the bomb and reads with builtins only.
b() { b | b & }
sleep 3 &
timer=$!
( b ) 2>/dev/null &
wait $timer
# What its cgroup counted: the limit was reached, and held.
v1= v2=
while IFS= read -r line; do
    case $line in
    *:pids:*) v1=${line#*:pids:} ;;
    0::*) v2=${line#0::} ;;
    esac
done < /proc/self/cgroup
if [ -n "$v1" ]; then ev=/sys/fs/cgroup/pids$v1/pids.events
else ev=/sys/fs/cgroup$v2/pids.events; fi
while IFS= read -r line; do echo "$line"; done < "$ev"
echo "bomber exits"
""")
        arun = self.start_p2prun(["-n", "1", bomb])
        most = 0
        t_end = time.monotonic() + 1.0
        while time.monotonic() < t_end:
            most = max(most, len(self.c.job_processes(peers)))
            time.sleep(0.05)
        # Another user's job on the same peer forks freely meanwhile.
        brun = self.p2prun(["-n", "1", "sh", "-c",
                            "for i in $(seq 20); do sleep 0.2 & done; wait; "
                            "echo forked"], conf=bconf, timeout=30)
        self.assert_rc(brun, 0)
        self.assertEqual(brun.stdout, "forked\n")
        self.assertEqual(arun.wait(30), 0, arun.describe())
        self.assertIn("bomber exits", arun.stdout)
        m = re.search(r"^max (\d+)", arun.stdout, re.M)
        self.assertTrue(m and int(m.group(1)) > 0,
                        "the bomb never reached the process limit: %s"
                        % arun.stdout)
        figure("fork bomb under job_nproc = 64: at most %d processes seen"
               % most)
        self.assertLessEqual(most, 64 + 21)  # the bomb's, plus bob's
        self.assert_job_over(sn, peers, timeout=5)

    def test_unremovable_trees(self):
        sn, (peer,) = self.start_box()
        prog = self.script("modes.sh", """
mkdir -p a/b/c && echo x > a/b/c/f && chmod 000 a/b/c/f a/b/c a/b a
mkdir ro && touch ro/f && chmod 500 ro
mkdir deep && cd deep
i=0
while [ $i -lt 300 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done
chmod 000 .
echo made
""")
        run = self.p2prun(["-n", "1", prog], timeout=60)
        self.assert_rc(run, 0)
        self.assertEqual(run.stdout, "made\n")
        self.assert_job_over(sn, [peer], timeout=5)
        log = peer.log()
        self.assertNotIn("Permission denied", log)
        self.assertNotIn("removing", log)

    def test_end_to_empty_cgroup_200_processes(self):
        sn, (peer,) = self.start_box(slots=2)
        mark = harness.unique_sleep(60)
        prog = self.script("many.sh", """
i=0
while [ $i -lt 199 ]; do setsid sleep %s & i=$((i+1)); done
sleep 0.5
echo started
""" % mark)
        run = self.p2prun(["-n", "1", prog], timeout=60)
        self.assert_rc(run, 0)
        t0 = time.monotonic()
        self.wait_no_job_processes([peer], 5, "200 processes")
        figure("job of 200 processes: all gone %.3f s after p2prun returned"
               % (time.monotonic() - t0))
        self.assertEqual(harness.processes_with_argv(["sleep", mark]), [])
        self.assert_job_over(sn, [peer])


if __name__ == "__main__":
    harness.main()
