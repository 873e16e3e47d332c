#!/usr/bin/env python3
"""Bags of tasks: p2prun --each, tried as users would.

Output grouped per task and in input order ({} and {#}, the line appended
without {}), --unordered, binary and large output intact, the results
file, retries, the exit summary, an INPUTS file that is not there, empty
and very long lines; a peer killed mid-farm (every task reported exactly
once), p2prun killed and Ctrl-C (nothing left anywhere), a task whose
peers keep dying (failed after three), a straggler on a frozen host (a
second copy elsewhere wins), a task no peer has the memory for; and fair
share between two users on one slot (the seed's scenario)."""

import base64
import json
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402


class TestTasks(harness.JobTestCase):

    def inputs(self, name, lines):
        path = self.c.path(name)
        with open(path, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        return path

    def each(self, args, **kw):
        return self.p2prun(["--each"] + args, **kw)

    def test_order_and_substitution(self):
        self.start_jobnet(3, slots=2)
        inp = self.inputs("in", [str(i) for i in range(1, 21)])
        # Later tasks finish first; two writes per task, with a pause.
        prog = self.script("t.sh", """
n=$1
sleep 0.$(( (21 - n) % 10 ))
echo "first $n ($2)"
sleep 0.05
echo "second $n"
echo "err $n" >&2
""")
        r = self.each([inp, "--", prog, "{}", "task-{#}"], timeout=60)
        self.assert_rc(r, 0)
        want = "".join("first %d (task-%d)\nsecond %d\n" % (i, i, i)
                       for i in range(1, 21))
        self.assertEqual(r.stdout, want)
        self.assertIn("err 1\nerr 2\n", r.stderr)
        # --unordered: every task whole, all of them.
        r = self.each([inp, "--unordered", "--tag-output", "--", prog, "{}",
                       "x"], timeout=60)
        self.assert_rc(r, 0)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 40)
        for i in range(0, 40, 2):
            n = lines[i].split()[0]
            self.assertTrue(lines[i + 1].startswith(n + " second"),
                            "a task's output was split: %s" % r.stdout)
        # Without {} the line is the last argument.
        r = self.each([inp, "--", "echo", "n"], timeout=60)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "".join("n %d\n" % i for i in range(1, 21)))
        self.assert_job_over(self.sn_of(), self.peers_of())

    def sn_of(self):
        return self._sn

    def peers_of(self):
        return self._peers

    def start_jobnet(self, *a, **kw):
        self._sn, self._peers = super().start_jobnet(*a, **kw)
        return self._sn, self._peers

    def test_binary_large_output_and_results(self):
        self.start_jobnet(2, slots=2)
        inp = self.inputs("in", ["bin", "big", "fail", ""])
        prog = self.script("t.sh", """
case "$1" in
bin) python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 3)';;
big) python3 -c 'import sys; sys.stdout.write("0123456789" * 1048576)';;
fail) echo "first line" >&2; echo "the last words" >&2; exit 7;;
"") echo "empty line";;
esac
""")
        res = self.c.path("results.json")
        run = self.start_p2prun(["--each", inp, "--results", res, "--", prog])
        self.assertEqual(run.wait(60), 1, run.describe())
        with open(run.out_path, "rb") as f:
            out = f.read()
        self.assertEqual(out, bytes(range(256)) * 3 +
                         b"0123456789" * 1048576 + b"empty line\n")
        self.assertIn("1 of 4 tasks failed", run.stderr)
        self.assertIn("task 3 (fail): status 7 on host", run.stderr)
        self.assertIn("the last words", run.stderr)
        with open(res) as f:
            rows = [json.loads(l) for l in f]
        self.assertEqual([r["task"] for r in rows], [1, 2, 3, 4])
        self.assertEqual([r["input"] for r in rows], ["bin", "big", "fail", ""])
        self.assertEqual(base64.b64decode(rows[0]["stdout_base64"]),
                         bytes(range(256)) * 3)
        self.assertEqual(len(rows[1]["stdout"]), 10485760)
        self.assertEqual(rows[2]["status"], 7)
        self.assertIn("the last words", rows[2]["stderr"])
        for r in rows:
            self.assertEqual(r["attempts"], 1)
            self.assertTrue(r["host"].startswith("host"))
            self.assertGreaterEqual(r["seconds"], 0)

    def test_retries_and_bad_inputs(self):
        self.start_jobnet(2, slots=1)
        marks = self.outdir
        prog = self.script("flaky.sh", """
if [ ! -e %s/tried-$1 ]; then touch %s/tried-$1; echo "no luck" >&2; exit 3; fi
echo "ok $1"
""" % (marks, marks))
        inp = self.inputs("in", ["a", "b"])
        res = self.c.path("r.json")
        r = self.each([inp, "--retries", "1", "--results", res, "--", prog],
                      timeout=60)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "ok a\nok b\n")
        with open(res) as f:
            self.assertEqual([json.loads(l)["attempts"] for l in f], [2, 2])
        r = self.each([self.c.path("missing"), "--", "echo"])
        self.assert_rc(r, 2)
        self.assertIn(self.c.path("missing"), r.stderr)
        long_line = "y" * 10000
        inp = self.inputs("long", ["", long_line, "z"])
        r = self.each([inp, "--", "echo", "<{}>"], timeout=60)
        self.assert_rc(r, 1)
        self.assertEqual(r.stdout, "<>\n<z>\n")
        self.assertIn("task 2", r.stderr)
        self.assertIn("longer than", r.stderr)
        r = self.each([inp, "-n", "2", "--", "echo"])
        self.assert_rc(r, 2)
        r = self.each([inp, "--mem", "100T", "--", "echo"], timeout=30)
        self.assert_rc(r, 1)
        self.assertIn("no peer has", r.stderr)

    def test_peer_killed_mid_farm(self):
        sn, peers = self.start_jobnet(3, slots=2)
        inp = self.inputs("in", [str(i) for i in range(1, 41)])
        prog = self.script("slow.sh", 'sleep 0.3; echo "done $1"\n')
        run = self.start_p2prun(["--each", inp, "--", prog])
        wait_until(lambda: run.stdout.count("done") >= 6, 60, "six tasks")
        self.kill_peer_and_jobs(peers[0])
        self.assertEqual(run.wait(60), 0, run.describe())
        self.assertEqual(run.stdout, "".join("done %d\n" % i
                                             for i in range(1, 41)))
        self.assertIn("lost peer host2", run.stderr)
        self.assert_job_over(sn, peers[1:])

    def test_p2prun_killed_and_ctrl_c(self):
        sn, peers = self.start_jobnet(2, slots=2)
        inp = self.inputs("in", [str(i) for i in range(1, 100)])
        mark = harness.unique_sleep(30)
        run = self.start_p2prun(["--each", inp, "--", "sleep", mark])
        wait_until(lambda: len(self.c.job_processes(peers)) >= 4, 20,
                   "four tasks running")
        run.kill()
        self.wait_no_job_processes(peers, 30, "tasks of a killed p2prun")
        run = self.start_p2prun(["--each", inp, "--", "sleep", mark])
        wait_until(lambda: len(self.c.job_processes(peers)) >= 4, 20,
                   "four tasks running")
        t0 = time.monotonic()
        run.signal(signal.SIGINT)
        self.assertEqual(run.wait(60), 130, run.describe())
        figure("Ctrl-C on a farm: p2prun exited %.2f s later"
               % (time.monotonic() - t0))
        self.assertIn("stopping every task", run.stderr)
        self.wait_no_job_processes(peers, 30, "the farm's tasks")
        self.assert_job_over(sn, peers, timeout=30)

    def test_task_that_kills_its_peers(self):
        sn, peers = self.start_jobnet(4, slots=1)
        inp = self.inputs("in", ["fine1", "poison", "fine2", "fine3"])
        mark = harness.unique_sleep(30)
        prog = self.script("p.sh", """
if [ "$1" = poison ]; then exec sleep %s; fi
sleep 0.2; echo "$1"
""" % mark)
        # -vv: p2prun logs each task it hears has started.
        run = self.start_p2prun(["-vv", "--each", inp, "--", prog])
        dead = []
        for n in range(3):
            def poisoned():
                for pid, (argv, env, uid) in \
                        self.c.job_processes(peers).items():
                    if argv == ["sleep", mark]:
                        # Not the one just killed, still on its way out.
                        found = [p for p in peers
                                 if p.addr == env.get("P2P_PEERD") and
                                 p not in dead]
                        if found:
                            return found
                return None
            (victim,) = wait_until(poisoned, 20, "the poison task to start")
            # Its peer's "started" must reach p2prun before the peer dies:
            # a task that only waited in a dead peer's queue was not
            # running there, and does not count.
            wait_until(lambda: run.stderr.count("task 2 started on ") > n,
                       60, lambda: "p2prun to hear that the poison task "
                       "started:\n" + run.describe())
            self.kill_peer_and_jobs(victim)
            dead.append(victim)
        self.assertEqual(run.wait(30), 1, run.describe())
        self.assertEqual(sorted(run.stdout.split()),
                         ["fine1", "fine2", "fine3"])
        self.assertIn("task 2 was running on 3 peers that died", run.stderr)
        live = [p for p in peers if p not in dead]
        self.assert_job_over(sn, live)

    def test_straggler_on_frozen_host(self):
        sn, peers = self.start_jobnet(2, slots=1, lease_ms=60000)
        inp = self.inputs("in", [str(i) for i in range(1, 13)])
        prog = self.script("s.sh", 'sleep 0.2; echo "done $1"\n')
        run = self.start_p2prun(["--each", inp, "--", prog])
        wait_until(lambda: run.stdout.count("done") >= 6, 60, "six tasks")
        frozen = peers[0]
        procs = list(self.c.job_processes([frozen]))
        frozen.signal(signal.SIGSTOP)
        for pid in procs:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        try:
            rc = run.wait(60)
        finally:
            frozen.signal(signal.SIGCONT)
            for pid in procs:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        self.assertEqual(rc, 0, run.describe())
        self.assertEqual(run.stdout, "".join("done %d\n" % i
                                             for i in range(1, 13)))

    def test_farm_flood(self):
        # A key holder asks one peer for 20 farms on one connection and
        # 300 tasks in one farm: the peer gives 8 farms and one queue's
        # worth, refuses the rest with a reason, and goes on serving.
        sn, (peer,) = self.start_jobnet(1, slots=1)
        flood = subprocess.Popen(
            [harness.binary("p2p_farmflood"), "--conf", self.c.conf,
             "--peer", peer.addr, "--farms", "20", "--tasks", "300"],
            stdout=subprocess.PIPE, text=True, env=self.c.env)
        try:
            farms = flood.stdout.readline().split()
            tasks = flood.stdout.readline().split()
            self.assertEqual(farms, ["farms", "8", "12"])
            self.assertEqual(tasks[0], "tasks")
            queued, refused = int(tasks[1]), int(tasks[2])
            self.assertLessEqual(queued, 256 + 1)  # a queue, and the slot
            self.assertEqual(queued + refused, 300)
            self.assertIn("at most 8 farms per connection", peer.log())
            r = self.c.run([harness.binary("p2pshare"), "--state-dir",
                            peer.state_dir, "status"])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("tasks queued", r.stdout)
        finally:
            flood.terminate()
            flood.wait(10)
        # The flooder gone, its tasks go and the slot comes back.
        self.assert_job_over(sn, [peer], timeout=30)
        r = self.p2prun(["-n", "1", "echo", "served"], timeout=30)
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout, "served\n")

    def test_fair_share_two_users(self):
        # The seed's scenario: one free slot, user A's ten tasks of 0.1 s
        # and user B's ten of 1 s, started together.
        sn, peers = self.start_jobnet(1, slots=1)
        bkey, _ = self.c.user_key("bob")
        bconf = self.c.job_config("bob.conf", [sn], user_key=bkey)
        ina = self.inputs("a", ["0.1"] * 10)
        inb = self.inputs("b", ["1"] * 10)
        # B's tasks say when each is done (one slot: in order).
        bprog = self.script("b.sh", 'sleep "$1"\necho "b done"\n')
        a = self.start_p2prun(["--each", ina, "--", "sleep"])
        b = self.start_p2prun(["--each", inb, "--", bprog], conf=bconf)
        # Reaped as they end (a Run's elapsed time is taken when reaped).
        wait_until(lambda: a.poll() is not None, 120, "A's farm to end",
                   interval=0.01)
        b_done = b.stdout.count("b done")
        wait_until(lambda: b.poll() is not None, 120, "B's farm to end",
                   interval=0.01)
        self.assertEqual(a.rc, 0, a.describe())
        self.assertEqual(b.rc, 0, b.describe())
        figure("fair share, one slot: user A (10 x 0.1 s) done in %.2f s, "
               "user B (10 x 1 s) in %.2f s: %.1fx sooner (B had done %d "
               "of its tasks)" % (a.elapsed, b.elapsed,
                                  b.elapsed / a.elapsed, b_done))
        # First come first served would end both at about the same time,
        # B 9 or 10 tasks in; the seed asks for A 5x sooner (10x ideally).
        # Counted in B's tasks rather than seconds, so that the start-up
        # time of each task on a loaded machine (slot time for both users)
        # blurs it less.
        self.assertLessEqual(b_done, 5, "A's short tasks waited behind B's "
                             "long ones:\n" + b.describe())
        with open(os.path.join(peers[0].state_dir, "fairshare")) as f:
            self.assertEqual(len(f.read().split("\n")) - 1, 2,
                             "usage is kept on disk per user")


if __name__ == "__main__":
    harness.main()
