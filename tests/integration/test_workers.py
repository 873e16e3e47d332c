#!/usr/bin/env python3
"""Persistent workers: p2prun --each --worker, tried as users would.

The Python worker of examples/ end to end (results in input order, one
worker per slot, not one per task; a task that raises fails with its
message); a worker killed mid-task (the task's result still exactly once);
a task that crashes its worker (the signal reported after three workers,
the farm goes on with fresh ones); a malformed frame and stray stdout from
a worker (a clear error naming the task and the worker, a fresh worker, the
farm goes on); a peer killed mid-farm; long answers and inputs through
peerd and p2prun (neither holds them), one copied out with --tag-output
from p2prun's spool file.  And the C task API (p2p_task.h)
through p2prun --workers: p2p_map over 10,000 inputs checked in order,
submit and wait-any, a task that crashes its worker, a task that fails
with a code and a message, a 64 MiB call with a 64 MiB result (p2prun
and the peers spool both: their peak memory stays small), a 16 MiB call
sent again from p2prun's spool after its peer was killed; and `p2prun -n
1` of a program that defines
tasks farming it out as --workers 0, while any other -n 1 stays a job.  After each, nothing is left running and
every slot is free."""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")

# A worker written against the protocol directly (not examples/worker.py,
# so that it can break the protocol on purpose).  What it does depends on
# the input line; a misbehaviour ending "-once" happens only the first
# time (a marker file in OUT), so that a fresh worker then answers.
RAW_WORKER = r'''
import os, signal, struct, sys, time
OUT = %r
inp = sys.stdin.buffer
def once(name):
    path = os.path.join(OUT, name)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        return True
    except FileExistsError:
        return False
def answer(task, status, data):
    sys.stdout.buffer.write(struct.pack("<4sIQi", b"P2PR", len(data), task,
                                        status) + data)
    sys.stdout.buffer.flush()
while True:
    hdr = inp.read(16)
    if len(hdr) < 16:
        break
    magic, n, task = struct.unpack("<4sIQ", hdr)
    line = inp.read(n).decode()
    sys.stderr.write("err %%s\n" %% line)
    sys.stderr.flush()
    if line == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if line == "sleep" or (line == "sleep-once" and once("sleep")):
        with open(os.path.join(OUT, "pid"), "w") as f:
            f.write(str(os.getpid()))
        time.sleep(60)
    if line == "junk-once" and once("junk"):
        sys.stdout.buffer.write(b"hello from a stray print\n")
        sys.stdout.buffer.flush()
        time.sleep(60)
    if line == "badframe-once" and once("badframe"):
        sys.stdout.buffer.write(b"P2PR\xff\xff\xff\xff" + bytes(12))
        sys.stdout.buffer.flush()
        time.sleep(60)
    if line == "wrongtask-once" and once("wrongtask"):
        answer(task + 1000, 0, b"not yours\n")
        time.sleep(60)
    if line == "fail":
        answer(task, 3, b"it went wrong")
        continue
    answer(task, 0, ("ok %%s %%d\n" %% (line, os.getpid())).encode())
'''


# A worker whose answer to "N" is N MiB (a pattern from N), written in
# 1 MiB writes: peerd passes a long answer on as it comes.  To a longer
# input, its length and SHA-256.
BIG_WORKER = r'''
import hashlib, struct, sys
inp = sys.stdin.buffer
while True:
    hdr = inp.read(16)
    if len(hdr) < 16:
        break
    magic, n, task = struct.unpack("<4sIQ", hdr)
    data = inp.read(n)
    if n > 100:
        out = ("%d %s\n" % (n, hashlib.sha256(data).hexdigest())).encode()
        sys.stdout.buffer.write(struct.pack("<4sIQi", b"P2PR", len(out),
                                            task, 0) + out)
        sys.stdout.buffer.flush()
        continue
    mib = int(data.decode())
    block = bytes((mib + i) % 251 for i in range(1 << 20))
    sys.stdout.buffer.write(struct.pack("<4sIQi", b"P2PR", mib << 20, task,
                                        0))
    for _ in range(mib):
        sys.stdout.buffer.write(block)
    sys.stdout.buffer.flush()
'''


def vmhwm_kb(pid):
    """A process's peak resident set (VmHWM), in KiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM for pid %d" % pid)


class TestWorkers(harness.JobTestCase):

    def inputs(self, name, lines):
        path = self.c.path(name)
        with open(path, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        return path

    def raw_worker(self):
        path = self.c.path("raw.py")
        with open(path, "w") as f:
            f.write(RAW_WORKER % self.outdir)
        return path

    def worker_starts(self, peers):
        return sum(p.count_log("worker [0-9]+ started") for p in peers)

    def oks(self, out):
        """The ok lines' inputs, in order, without the worker's pid."""
        return [l.split()[1] for l in out.splitlines() if l.startswith("ok ")]

    def test_python_worker_end_to_end(self):
        sn, peers = self.start_jobnet(2, slots=2)
        inp = self.inputs("in", [str(i) for i in range(1, 1001)])
        r = self.p2prun(["--each", inp, "--worker", "-l",
                         os.path.join(EXAMPLES, "worker.py"), "--",
                         "python3", "worker.py"], timeout=120)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "".join("%d\n" % (i * i)
                                           for i in range(1, 1001)))
        # One Python per slot (4), not one per task.
        starts = self.worker_starts(peers)
        self.assertGreaterEqual(starts, 1)
        self.assertLessEqual(starts, 4, "workers started: %d" % starts)
        self.assert_job_over(sn, peers, timeout=10)
        # A task that raises fails with its message; the others are fine.
        script = self.c.path("mine.py")
        with open(script, "w") as f:
            f.write("import worker\n"
                    "def f(data):\n"
                    "    if len(data) > 1000:\n"
                    "        return '%d long\\n' % len(data)\n"
                    "    print('working on', data.decode())\n"
                    "    return '%d\\n' % (10 // int(data))\n"
                    "worker.serve(f)\n")
        inp = self.inputs("in2", ["1", "0", "5"])
        # And a line of 300 KB (its input goes in pieces).
        with open(inp, "a") as f:
            f.write("7" * 300000 + "\n")
        res = self.c.path("results.json")
        r = self.p2prun(["--each", inp, "--worker", "--results", res, "-l",
                         os.path.join(EXAMPLES, "worker.py"), "-l", script,
                         "--", "python3", "mine.py"], timeout=60)
        self.assert_rc(r, 1)
        self.assertEqual(r.stdout, "10\n2\n300000 long\n")
        self.assertIn("working on 0", r.stderr)
        self.assertIn("ZeroDivisionError", r.stderr)
        self.assertIn("1 of 4 tasks failed", r.stderr)
        self.assertIn("task 2 (0): status 1", r.stderr)
        with open(res) as f:
            rows = [json.loads(l) for l in f]
        self.assertEqual([(x["task"], x["status"], x["stdout"])
                          for x in rows],
                         [(1, 0, "10\n"), (2, 1, ""), (3, 0, "2\n"),
                          (4, 0, "300000 long\n")])
        self.assertIn("ZeroDivisionError", rows[1]["stderr"])
        # The memory fit learns from the worker's peak (its cgroup).
        if re.search(r"jobs are contained by .*memory", peers[0].log()):
            self.assertGreater(rows[0]["mem_peak"], 1 << 20, rows[0])
        self.assert_job_over(sn, peers, timeout=10)

    def test_errors_stderr_and_bad_workers(self):
        sn, peers = self.start_jobnet(2, slots=1)
        raw = self.raw_worker()
        lines = ["a", "fail", "junk-once", "b", "badframe-once",
                 "wrongtask-once", "c"]
        inp = self.inputs("in", lines)
        r = self.p2prun(["--each", inp, "--worker", "--", "python3", raw],
                        timeout=120)
        self.assert_rc(r, 1)
        # Every good task answered once, in order; the misbehaving ones
        # ran again on a fresh worker.
        self.assertEqual(self.oks(r.stdout), ["a", "junk-once", "b",
                                              "badframe-once",
                                              "wrongtask-once", "c"])
        # A failed task: its status and message.
        self.assertIn("task 2 (fail): status 3", r.stderr)
        self.assertIn("it went wrong", r.stderr)
        # Each task's stderr is its own.
        self.assertIn("err a\n", r.stderr)
        # Clear errors naming the task and the worker.
        self.assertRegex(r.stderr, r"task 3: worker \d+ on host\d broke the "
                         r"protocol during task 3: not a result frame "
                         r"\(bad magic\) \(\"hello")
        self.assertRegex(r.stderr, r"task 5: worker \d+ on host\d broke the "
                         r"protocol during task 5: frame longer than the "
                         r"limit")
        self.assertRegex(r.stderr, r"task 6: worker \d+ on host\d broke the "
                         r"protocol during task 6: an answer to task 1006")
        self.assert_job_over(sn, peers, timeout=10)

    def test_worker_killed_mid_task(self):
        sn, peers = self.start_jobnet(2, slots=1)
        raw = self.raw_worker()
        inp = self.inputs("in", ["a", "b", "sleep-once", "c", "d"])
        run = self.start_p2prun(["--each", inp, "--worker", "--", "python3",
                                 raw])
        pidfile = os.path.join(self.outdir, "pid")
        wait_until(lambda: os.path.exists(pidfile) and
                   open(pidfile).read().strip() != "", 30,
                   "the worker holding the sleeping task")
        os.kill(int(open(pidfile).read()), signal.SIGKILL)
        self.assertEqual(run.wait(60), 0, run.describe())
        self.assertEqual(self.oks(run.stdout),
                         ["a", "b", "sleep-once", "c", "d"])
        self.assertRegex(run.stderr, r"task 3: worker \d+ on host\d died of "
                         r"signal 9 .*running it again")
        self.assert_job_over(sn, peers, timeout=10)

    def test_task_timeout(self):
        # A task over --task-timeout: its worker is killed, the task ends
        # with 124 (not run again), and a fresh worker serves the rest.
        sn, peers = self.start_jobnet(1, slots=1)
        raw = self.raw_worker()
        inp = self.inputs("in", ["a", "sleep", "b"])
        r = self.p2prun(["--each", inp, "--worker", "--task-timeout", "2",
                         "--", "python3", raw], timeout=120)
        self.assert_rc(r, 1)
        self.assertEqual(self.oks(r.stdout), ["a", "b"])
        self.assertIn("task 2 (sleep): status 124", r.stderr)
        self.assertGreaterEqual(self.worker_starts(peers), 2)
        self.assert_job_over(sn, peers, timeout=10)

    def test_crashing_task(self):
        sn, peers = self.start_jobnet(2, slots=1)
        raw = self.raw_worker()
        inp = self.inputs("in", ["a", "crash", "b", "c"])
        r = self.p2prun(["--each", inp, "--worker", "--", "python3", raw],
                        timeout=120)
        self.assert_rc(r, 1)
        self.assertEqual(self.oks(r.stdout), ["a", "b", "c"])
        # Three workers died under it: failed with the signal.
        self.assertIn("task 2 (crash): signal 11", r.stderr)
        self.assertIn("3 workers were lost under it", r.stderr)
        # And workers were restarted for it and the rest.
        self.assertGreaterEqual(self.worker_starts(peers), 4)
        self.assert_job_over(sn, peers, timeout=10)

    def test_peer_killed_mid_farm(self):
        sn, peers = self.start_jobnet(3, slots=1)
        script = self.c.path("slow.py")
        with open(script, "w") as f:
            f.write("import time, worker\n"
                    "def f(data):\n"
                    "    time.sleep(0.1)\n"
                    "    return 'done %s\\n' % data.decode()\n"
                    "worker.serve(f)\n")
        inp = self.inputs("in", [str(i) for i in range(1, 61)])
        run = self.start_p2prun(["--each", inp, "--worker", "-l",
                                 os.path.join(EXAMPLES, "worker.py"), "-l",
                                 script, "--", "python3", "slow.py"])
        wait_until(lambda: run.stdout.count("done") >= 6, 30, "six tasks")
        self.kill_peer_and_jobs(peers[0])
        self.assertEqual(run.wait(90), 0, run.describe())
        self.assertEqual(run.stdout, "".join("done %d\n" % i
                                             for i in range(1, 61)))
        self.assertIn("lost peer host2", run.stderr)
        self.assert_job_over(sn, peers[1:], timeout=10)


    def test_fair_share_between_worker_farms(self):
        # One slot.  User A's farm of 15 tasks of 0.3 s is running on its
        # worker when user B's farm of 5 short tasks arrives: B goes
        # first (its usage is lower), though A's worker is idle between
        # two of A's tasks: that worker gives its slot back.
        sn, peers = self.start_jobnet(1, slots=1)
        bkey, _ = self.c.user_key("bob")
        bconf = self.c.job_config("bob.conf", [sn], user_key=bkey)
        script = self.c.path("nap.py")
        with open(script, "w") as f:
            f.write("import time, worker\n"
                    "def f(data):\n"
                    "    time.sleep(float(data))\n"
                    "    return 'slept %s\\n' % data.decode()\n"
                    "worker.serve(f)\n")
        common = ["--worker", "-l", os.path.join(EXAMPLES, "worker.py"),
                  "-l", script, "--", "python3", "nap.py"]
        a = self.start_p2prun(["--each", self.inputs("a", ["0.3"] * 15)]
                              + common)
        wait_until(lambda: a.stdout.count("slept") >= 2, 30, "A running")
        b = self.start_p2prun(["--each", self.inputs("b", ["0.01"] * 5)]
                              + common, conf=bconf)

        def both_ended():
            # Both polled each time: a Run's end is taken when reaped.
            ended = [r.poll() is not None for r in (a, b)]
            return all(ended)

        wait_until(both_ended, 90, "both farms to end", interval=0.01)
        self.assertEqual(a.rc, 0, a.describe())
        self.assertEqual(b.rc, 0, b.describe())
        self.assertEqual(b.stdout, "slept 0.01\n" * 5)
        # B ended while A still had most of its tasks to run.
        self.assertLess(b.t0 + b.elapsed, a.t0 + a.elapsed,
                        "B waited for A: A %s, B %s"
                        % (a.describe(), b.describe()))
        self.assertGreaterEqual(peers[0].count_log(
            "stops: another farm waits for its slot"), 1)
        self.assert_job_over(sn, peers, timeout=10)

    def big_worker(self):
        path = self.c.path("big.py")
        with open(path, "w") as f:
            f.write(BIG_WORKER)
        return path

    def assert_peerd_peaks(self, peers, before, limit_kib, what):
        """No peerd's peak resident set grew by limit_kib since before.
        Not checked in a sanitized build: ASan's quarantine keeps freed
        memory resident (the answers and inputs are still checked)."""
        for p in peers:
            hwm = vmhwm_kb(p.pid)
            figure("peerd %s peak resident set after %s: %d KiB (%d KiB "
                   "before)%s" % (p.label, what, hwm, before[p.pid],
                                  " [sanitized build]" if harness.SANITIZED
                                  else ""))
            if harness.SANITIZED:
                continue
            self.assertLess(hwm - before[p.pid], limit_kib,
                            "peerd %s grew by %d KiB"
                            % (p.label, hwm - before[p.pid]))

    def test_large_answers_stream_through_peerd(self):
        # Answers of 48 MiB: each reaches p2prun whole and right, and no
        # peerd ever holds one (it passes the pieces on as they come), nor
        # p2prun (a spool file each, copied to stdout in its turn).
        sn, peers = self.start_jobnet(2, slots=1)
        path = self.big_worker()
        before = {p.pid: vmhwm_kb(p.pid) for p in peers}
        inp = self.inputs("in", ["48", "47"])
        r = self.p2prun(["--each", inp, "--worker", "--", "python3", path],
                        timeout=170)
        self.assert_rc(r, 0)
        want = b"".join(bytes((m + i) % 251 for i in range(1 << 20)) * m
                        for m in (48, 47))
        with open(r.out_path, "rb") as f:
            got = f.read()
        self.assertEqual(len(got), len(want))
        self.assertTrue(got == want, "the answers came back changed")
        self.assert_peerd_peaks(peers, before, 12 * 1024, "48 MiB answers")
        # Nor does p2prun: each answer waits in a spool file for its turn.
        figure("p2prun peak resident set for 48 + 47 MiB answers: %d KiB%s"
               % (r.maxrss_kb, " [sanitized build]" if harness.SANITIZED
                  else ""))
        # Its own needs here are about 24 MiB whatever the answers' size
        # (the same for 8 and 7 MiB); holding one of these would add 48.
        if not harness.SANITIZED:
            self.assertLess(r.maxrss_kb, 40 * 1024)
        self.assert_job_over(sn, peers, timeout=10)

    def test_spooled_answer_with_tag_output(self):
        # A 3 MiB answer (newlines here and there) spooled by p2prun and
        # copied out with --tag-output: every line tagged, one piece of
        # the file to the next.
        sn, peers = self.start_jobnet(1, slots=1)
        path = self.big_worker()
        inp = self.inputs("in", ["3"])
        r = self.p2prun(["--each", inp, "--worker", "--tag-output", "--",
                         "python3", path], timeout=120)
        self.assert_rc(r, 0)
        data = bytes((3 + i) % 251 for i in range(1 << 20)) * 3
        lines = data.split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        with open(r.out_path, "rb") as f:
            got = f.read()
        self.assertTrue(got == b"".join(b"[1] " + l + b"\n" for l in lines),
                        "the tagged answer came out changed")
        self.assert_job_over(sn, peers, timeout=10)

    def test_long_inputs_spooled_by_peerd(self):
        # Inputs of 4 MB (the longest a call takes), six of them on two
        # one-slot peers, each queueing three: each reaches its worker
        # whole and right, and no peerd holds them (a spool file each,
        # read into the worker's pipe as it drains).
        sn, peers = self.start_jobnet(2, slots=1)
        path = self.big_worker()
        lines = [("%d" % i) * 4000000 for i in range(1, 7)]
        inp = self.inputs("in", lines)
        before = {p.pid: vmhwm_kb(p.pid) for p in peers}
        r = self.p2prun(["--each", inp, "--worker", "--", "python3", path],
                        timeout=170)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "".join(
            "%d %s\n" % (len(l), hashlib.sha256(l.encode()).hexdigest())
            for l in lines))
        self.assert_peerd_peaks(peers, before, 4 * 1024, "six 4 MB inputs")
        self.assert_job_over(sn, peers, timeout=10)

    # -- the C task API ------------------------------------------------------

    def task_api(self):
        prog = self.mpi_program("task_api")
        return prog

    def test_c_map_and_wait_any(self):
        sn, peers = self.start_jobnet(2, slots=2)
        prog = self.task_api()
        r = self.p2prun(["--workers", "0", prog, "map", "10000"],
                        timeout=120)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "map 10000: 0 wrong\n")
        # The same program served as the workers: one per slot.
        starts = self.worker_starts(peers)
        self.assertGreaterEqual(starts, 1)
        self.assertLessEqual(starts, 4, "workers started: %d" % starts)
        self.assert_job_over(sn, peers, timeout=10)
        r = self.p2prun(["--workers", "3", prog, "async", "12"], timeout=60)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout,
                         "async 12: 0 wrong, then no task outstanding\n")
        self.assert_job_over(sn, peers, timeout=10)
        # A failing task: its code and its message, to the caller.
        r = self.p2prun(["--workers", "0", prog, "fail"], timeout=60)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, 'fail: success, status 7, signal 0, '
                         'message "bad input x1", 0 bytes\n')
        self.assertIn("bad input x1\n", r.stderr)
        # Inputs up to 4 MiB, in pieces, come back whole.
        r = self.p2prun(["--workers", "0", prog, "big"], timeout=120)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "big: success, 0 wrong; one more byte: "
                         "input too long\n")
        # The program's exit status is p2prun's.
        r = self.p2prun(["--workers", "0", prog, "nosuchmode"], timeout=60)
        self.assert_rc(r, 2)
        self.assert_job_over(sn, peers, timeout=10)

    def test_c_huge_input_and_result(self):
        # A call of 64 MiB whose result is 64 MiB (every byte changed):
        # the caller checks it whole and by hash; p2prun (spool files
        # both ways, pieces sent as the connection drains) and the peers
        # never hold either.
        sn, peers = self.start_jobnet(2, slots=1)
        prog = self.task_api()
        before = {p.pid: vmhwm_kb(p.pid) for p in peers}
        r = self.p2prun(["--workers", "0", prog, "huge", "64"], timeout=300)
        self.assert_rc(r, 0)
        m = re.match(r"huge 64: success, status 0, 67108864 bytes back, "
                     r"hash and bytes right; p2prun VmHWM (\d+) kB; "
                     r"caller VmHWM (\d+) kB\n$",
                     r.stdout)
        self.assertIsNotNone(m, r.stdout)
        hwm = int(m.group(1))
        figure("p2prun peak resident set for a 64 MiB call and result: "
               "%d KiB%s" % (hwm, " [sanitized build]" if harness.SANITIZED
                             else ""))
        caller = int(m.group(2))
        figure("caller peak resident set for its 64 MiB input and result: "
               "%d KiB%s" % (caller, " [sanitized build]"
                             if harness.SANITIZED else ""))
        if not harness.SANITIZED:
            self.assertLess(hwm, 24 * 1024, "p2prun peaked at %d KiB" % hwm)
            # Its own input and result, not a copy of the input as well.
            self.assertLess(caller, (2 * 64 + 24) * 1024,
                            "the caller peaked at %d KiB" % caller)
        self.assert_peerd_peaks(peers, before, 16 * 1024,
                                "a 64 MiB call and result")
        self.assert_job_over(sn, peers, timeout=10)

    def test_c_huge_call_after_its_peer_died(self):
        # The peer running a 16 MiB call is killed: the call goes again
        # to the other one, read back from p2prun's spool file, and the
        # result is still right.
        sn, peers = self.start_jobnet(2, slots=1)
        prog = self.task_api()
        run = self.start_p2prun(["--workers", "0", prog, "hugeslow", "16"])
        wait_until(lambda: self.worker_starts(peers) >= 1, 60,
                   "a worker for the call")
        time.sleep(1)
        first = [p for p in peers if p.count_log("worker [0-9]+ started")]
        self.kill_peer_and_jobs(first[0])
        self.assertEqual(run.wait(120), 0, run.describe())
        self.assertTrue(run.stdout.startswith(
            "huge 16: success, status 0, 16777216 bytes back, hash and "
            "bytes right;"), run.stdout)
        self.assertIn("lost peer %s" % first[0].label, run.stderr)
        rest = [p for p in peers if p is not first[0]]
        self.assertGreaterEqual(self.worker_starts(rest), 1)
        self.assert_job_over(sn, rest, timeout=10)

    def test_c_task_program_with_n1(self):
        # A program that defines tasks (P2P_TASK), started as one rank,
        # farms its calls out exactly as --workers 0: square fails if it
        # runs outside a worker.
        sn, peers = self.start_jobnet(2, slots=2)
        prog = self.task_api()
        r = self.p2prun(["-v", "-n", "1", prog, "map", "2000"], timeout=120)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "map 2000: 0 wrong\n")
        self.assertIn("defines tasks (P2P_TASK): farming its calls out",
                      r.stderr)
        starts = self.worker_starts(peers)
        self.assertGreaterEqual(starts, 1)
        self.assertLessEqual(starts, 4, "workers started: %d" % starts)
        self.assert_job_over(sn, peers, timeout=10)
        # -n 1 is the default; a stripped copy keeps its mark.
        stripped = self.c.path("task_api_stripped")
        shutil.copy(prog, stripped)
        if shutil.which("strip"):
            subprocess.run(["strip", stripped], check=True)
        r = self.p2prun([stripped, "async", "12"], timeout=60)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout,
                         "async 12: 0 wrong, then no task outstanding\n")
        self.assert_job_over(sn, peers, timeout=10)
        # A bare name is recognised on PATH here, as execvp finds it, and
        # its workers are looked up on the peers' PATH (not staged), as
        # with --workers: these peers have no task_api on theirs.
        r = self.p2prun(["task_api", "map", "10"], timeout=60,
                        env={"PATH": os.path.dirname(prog) + ":"
                             + os.environ.get("PATH", "")})
        self.assert_rc(r, 1)
        self.assertEqual(r.stdout, "map 10: 10 wrong\n")
        self.assertIn("command not found: task_api on host", r.stderr)
        self.assert_job_over(sn, peers, timeout=10)
        # An ordinary program with -n 1 is still a job of one rank, and a
        # task program with -r 2 too (its calls then run in the rank).
        before = self.worker_starts(peers)
        r = self.p2prun(["-n", "1", "echo", "plain"], timeout=60)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "plain\n")
        r = self.p2prun(["-r", "2", prog, "fail"], timeout=60)
        self.assert_rc(r, 0)
        self.assertIn("status 7", r.stdout)
        self.assertEqual(self.worker_starts(peers), before)
        # --unordered belongs to --each, not to a task program.
        r = self.p2prun(["--unordered", prog, "map", "10"], timeout=30)
        self.assert_rc(r, 2)
        self.assertIn("not with --each, --worker, --unordered", r.stderr)
        self.assert_job_over(sn, peers, timeout=10)

    def test_c_idle_workers_free_their_slots(self):
        sn, peers = self.start_jobnet(2, slots=1)
        prog = self.task_api()
        run = self.start_p2prun(["--workers", "0", prog, "pause", "120"])
        wait_until(lambda: "map 20: 0 wrong" in run.stdout, 30, "a map")
        # The caller pauses: its workers stop after 10 s idle, and every
        # slot is free again while the farm stays open.
        wait_until(lambda: sum(p.count_log("stops: idle") for p in peers)
                   >= 2, 40, "idle workers to stop")
        self.wait_all_free(sn, peers, 10)
        self.assertTrue(run.alive())
        # SIGTERM on p2prun reaches the program too.
        run.signal(signal.SIGTERM)
        self.assertEqual(run.wait(20), 128 + signal.SIGTERM, run.describe())
        self.assertEqual(harness.processes_with_argv([prog, "pause", "120"]),
                         [])
        self.assert_job_over(sn, peers, timeout=10)

    def test_c_peer_killed_mid_map(self):
        sn, peers = self.start_jobnet(3, slots=1)
        prog = self.task_api()
        run = self.start_p2prun(["--workers", "0", prog, "slow", "60"])
        wait_until(lambda: sum(p.count_log("worker [0-9]+ started")
                               for p in peers) >= 3, 30, "three workers")
        time.sleep(0.5)
        self.kill_peer_and_jobs(peers[0])
        self.assertEqual(run.wait(90), 0, run.describe())
        self.assertEqual(run.stdout, "map 60: 0 wrong\n")
        self.assertIn("lost peer host2", run.stderr)
        self.assert_job_over(sn, peers[1:], timeout=10)

    def test_c_crashing_task(self):
        sn, peers = self.start_jobnet(2, slots=1)
        prog = self.task_api()
        r = self.p2prun(["--workers", "0", prog, "crash"], timeout=120)
        self.assert_rc(r, 0)
        self.assertIn("crash: a task failed; statuses 0 139 0; fine a fine b\n",
                      r.stdout)
        self.assertRegex(r.stdout, r"message: call 1: 3 workers were lost "
                         r"under it, the last: worker \d+ on host\d died of "
                         r"signal 11")
        self.assertIn("map 20: 0 wrong\n", r.stdout)
        self.assertIn("about to crash", r.stderr)
        # Workers were restarted for the crash and the calls after it.
        self.assertGreaterEqual(self.worker_starts(peers), 4)
        self.assert_job_over(sn, peers, timeout=10)


if __name__ == "__main__":
    harness.main()
