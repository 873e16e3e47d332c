#!/usr/bin/env python3
"""Running a job with p2prun on a network of three peers: what each rank
sees (environment, arguments, directory, account, stdin), what the user
sees (every rank's output once, whole lines, stdout and stderr apart), the
exit status, and that the peers are left as they were: slots free, no job
directory, no process."""

import os
import re
import signal
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

ENV_SCRIPT = r"""
printf 'rank=%s\tsize=%s\treplica=%s\tnreplicas=%s\tjob=%s\thost=%s\t' \
    "$P2P_RANK" "$P2P_SIZE" "$P2P_REPLICA" "$P2P_NREPLICAS" "$P2P_JOB" \
    "$P2P_HOST"
printf 'peerd=%s\tuid=%s\tcwd=%s\tfoo=%s\tbaz=%s\targs=' \
    "$P2P_PEERD" "$(id -u)" "$(pwd -P)" "$FOO" "$BAZ"
for a in "$@"; do printf '<%s>' "$a"; done
printf '\n'
"""

# Each line is written in two pieces, so that the peer may read (and send)
# half a line: p2prun must still show whole lines only.
LINES_SCRIPT = r"""
i=0
while [ $i -lt 200 ]; do
    printf 'r%s l%03d ' "$P2P_RANK" "$i"
    printf '%s end\n' "$PAD"
    i=$((i + 1))
done
"""

BOTH_STREAMS_SCRIPT = r"""
i=0
while [ $i -lt 20 ]; do
    echo "out $P2P_RANK $i"
    echo "err $P2P_RANK $i" >&2
    i=$((i + 1))
done
"""

PAD = "x" * 120


def parse_fields(line):
    fields = {}
    for part in line.split("\t"):
        k, eq, v = part.partition("=")
        if not eq:
            raise AssertionError("bad line from the job: %r" % line)
        fields[k] = v
    return fields


class TestJobs(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        # The peers' stdin is a pipe that stays open, like p2prun's in
        # test_stdin_is_dev_null: a job inheriting either would hang.
        self.sn, self.peers = self.start_jobnet(3, slots=2,
                                                peer_stdin=subprocess.PIPE)
        self.by_label = {p.label: p for p in self.peers}

    def received(self):
        return {p.label: p.count_log(r"received file ") for p in self.peers}

    def test_environment_arguments_account(self):
        hello = self.script("hello.sh", ENV_SCRIPT)
        r = self.p2prun(["-n", "4", "-x", "FOO=bar=1", "-x", "BAZ", hello,
                         "a b", "c  d", "*", "-x"],
                        env={"BAZ": "two  words"})
        self.assert_rc(r, 0)
        self.assertEqual(r.stderr, "", r.describe())
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 4, r.describe())
        rows = [parse_fields(l) for l in lines]
        self.assertEqual(sorted(int(f["rank"]) for f in rows), [0, 1, 2, 3],
                         "every rank exactly once:\n" + r.stdout)
        jobs = {f["job"] for f in rows}
        self.assertEqual(len(jobs), 1, "one job id for all ranks")
        self.assertRegex(jobs.pop(), r"^[0-9a-f]{16,}$")
        root = os.geteuid() == 0
        for f in rows:
            with self.subTest(rank=f["rank"]):
                self.assertEqual(f["size"], "4")
                self.assertEqual(f["replica"], "0")
                self.assertEqual(f["nreplicas"], "1")
                self.assertIn(f["host"], self.by_label,
                              "P2P_HOST is not a peer's host label")
                peer = self.by_label[f["host"]]
                self.assertEqual(f["peerd"], peer.addr,
                                 "P2P_PEERD must reach the rank's peerd")
                self.assertEqual(
                    f["cwd"], os.path.realpath(os.path.join(
                        peer.state_dir, "jobs", f["job"])),
                    "cwd must be STATE_DIR/jobs/<P2P_JOB>")
                self.assertNotEqual(f["uid"], "0", "a job ran as root")
                if root:
                    # A uid of the job's own, from [peer] job_uids.
                    self.assertIn(int(f["uid"]), range(61000, 61064),
                                  "peerd as root runs a job as a uid from "
                                  "job_uids")
                self.assertEqual(f["foo"], "bar=1", "-x VAR=VAL")
                self.assertEqual(f["baz"], "two  words",
                                 "-x VAR from p2prun's environment")
                self.assertEqual(f["args"], "<a b><c  d><*><-x>",
                                 "arguments must pass through unchanged")
        # -n 4 on 3 hosts, spread: every host is used.
        self.assertEqual({f["host"] for f in rows}, set(self.by_label))
        self.assertEqual(sum(self.received().values()), 3,
                         "the script is staged to each of the 3 peers once")
        self.assert_job_over(self.sn, self.peers)

    def test_empty_argument(self):
        r = self.p2prun(["-n", "2", "sh", "-c",
                         'printf "<%s>" "$@"; echo', "sh", "", "y", ""])
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout.splitlines(), ["<><y><>"] * 2,
                         r.describe())
        self.assert_job_over(self.sn, self.peers)

    def test_bare_command_runs_from_path_without_staging(self):
        before = self.received()
        r = self.p2prun(["-n", "3", "sh", "-c",
                         'echo "bare $P2P_RANK $0 $1"', "zero", "one"])
        self.assert_rc(r, 0)
        self.assertEqual(sorted(r.stdout.splitlines()),
                         ["bare %d zero one" % i for i in range(3)],
                         r.describe())
        self.assertEqual(self.received(), before,
                         "a bare command name must not be staged")
        self.assert_job_over(self.sn, self.peers)

    def test_stdin_is_dev_null(self):
        # p2prun's own stdin stays open: a job reading it would hang.
        r = self.p2prun(["-n", "2", "--timeout", "30", "sh", "-c",
                         'cat; echo "cat ended $P2P_RANK $(readlink '
                         '/proc/$$/fd/0)"'],
                        stdin=subprocess.PIPE, timeout=40)
        self.assert_rc(r, 0)
        self.assertEqual(sorted(r.stdout.splitlines()),
                         ["cat ended 0 /dev/null", "cat ended 1 /dev/null"],
                         r.describe())
        self.assertLess(r.elapsed, 10, "cat must see end of file at once")
        self.assert_job_over(self.sn, self.peers)

    def check_lines(self, out, tag):
        rx = re.compile(r"^(\[(\d+)\] )?r(\d) l(\d{3}) %s end$" % PAD)
        seen = {}
        bad = []
        for line in out.split("\n")[:-1]:
            m = rx.match(line)
            if not m or (m.group(1) is not None) != tag or (
                    tag and m.group(2) != m.group(3)):
                bad.append(line)
                continue
            seen.setdefault(int(m.group(3)), []).append(int(m.group(4)))
        self.assertEqual(bad[:5], [], "broken or interleaved lines (%d)"
                         % len(bad))
        self.assertTrue(out.endswith("\n"))
        self.assertEqual(sorted(seen), [0, 1, 2, 3])
        for rank, nums in seen.items():
            self.assertEqual(nums, list(range(200)),
                             "rank %d: every line once, in order" % rank)

    def test_output_whole_lines(self):
        prog = self.script("lines.sh", LINES_SCRIPT)
        r = self.p2prun(["-n", "4", "-x", "PAD=" + PAD, prog])
        self.assert_rc(r, 0)
        self.assertEqual(r.stderr, "", r.describe())
        self.check_lines(r.stdout, tag=False)
        r = self.p2prun(["-n", "4", "--tag-output", "-x", "PAD=" + PAD, prog])
        self.assert_rc(r, 0)
        self.check_lines(r.stdout, tag=True)
        self.assert_job_over(self.sn, self.peers)

    def test_stdout_and_stderr_apart(self):
        prog = self.script("both.sh", BOTH_STREAMS_SCRIPT)
        for tag in (False, True):
            with self.subTest(tag_output=tag):
                r = self.p2prun(["-n", "4"] + (["--tag-output"] if tag
                                               else []) + [prog])
                self.assert_rc(r, 0)
                for stream, text in (("out", r.stdout), ("err", r.stderr)):
                    lines = text.splitlines()
                    want = sorted(("[%d] " % k if tag else "") +
                                  "%s %d %d" % (stream, k, i)
                                  for k in range(4) for i in range(20))
                    self.assertEqual(sorted(lines), want,
                                     "p2prun's std%s: %s" % (stream,
                                                             r.describe()))
        self.assert_job_over(self.sn, self.peers)

    def test_exit_status_of_failed_rank_and_others_stopped(self):
        mark = harness.unique_sleep()
        prog = self.script("fail3.sh", """
if [ "$P2P_RANK" = 1 ]; then sleep 1.5; echo "rank 1 fails"; exit 3; fi
exec sleep %s
""" % mark)
        run = self.start_p2prun(["-n", "4", prog])
        # The other ranks are really running before rank 1 fails.
        wait_until(lambda: len(harness.processes_with_argv(
            ["sleep", mark])) == 3 or not run.alive(), 20,
            "three ranks to run sleep")
        self.assertEqual(len(harness.processes_with_argv(["sleep", mark])),
                         3, run.describe())
        rc = run.wait(20)
        self.assertEqual(rc, 3, run.describe())
        self.assertIn("rank 1 fails", run.stdout)
        t0 = time.monotonic()
        wait_until(lambda: not harness.processes_with_argv(["sleep", mark]),
                   3, "the other ranks of the failed job to be stopped")
        figure("other ranks stopped after a rank failed: %.3f s after "
               "p2prun exited" % (time.monotonic() - t0))
        self.assert_job_over(self.sn, self.peers)

    def test_rank_killed_by_signal(self):
        prog = self.script("kill9.sh", """
if [ "$P2P_RANK" = 2 ]; then kill -KILL $$; fi
echo "rank $P2P_RANK ok"
""")
        r = self.p2prun(["-n", "4", prog])
        self.assert_rc(r, 128 + signal.SIGKILL)
        # One line names the rank, the replica, the host and the signal.
        labels = "|".join(re.escape(p.label) for p in self.peers)
        rx = re.compile(r"\brank 2\b.*\breplica 0\b.*\b(%s)\b.*"
                        r"(signal 9\b|SIGKILL|\bKilled\b)" % labels)
        self.assertTrue(any(rx.search(l) for l in r.stderr_lines()),
                        "no stderr line names rank 2, replica 0, its host "
                        "and signal 9:\n" + r.describe())
        self.assert_job_over(self.sn, self.peers)

    def test_launch_time(self):
        # Warm: the first run stages nothing either (a bare command).
        r = self.p2prun(["-n", "4", "true"])
        self.assert_rc(r, 0)
        times = []
        for _ in range(10):
            r = self.p2prun(["-n", "4", "true"])
            self.assert_rc(r, 0)
            times.append(r.elapsed)
        med = statistics.median(times)
        figure("job start, p2prun -n 4 true on 3 warm peers: median %.3f s "
               "of 10 (min %.3f, max %.3f); P2P-MPI 3.5 s, MPICH 0.06 s "
               "(2 ranks)%s" % (med, min(times), max(times),
                                " [sanitized build]" if harness.SANITIZED
                                else ""))
        self.assertLess(med, 3.5, "slower than P2P-MPI")
        self.assert_job_over(self.sn, self.peers)


if __name__ == "__main__":
    harness.main()
