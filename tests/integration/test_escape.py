#!/usr/bin/env python3
"""Nothing of a job outlives it: a process that leaves the job's session
(double fork and setsid) is killed once the job is over, whether it keeps
the job's output pipes open (the job still ends, a moment after its
process) or not; and a job that leaves a process behind does not keep
its slots."""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

# The rank starts a grandchild in a session of its own that records its
# pid and sleeps, then exits.  With an argument the grandchild keeps the
# job's stdout and stderr; without, it points them at /dev/null.
ESCAPE = """(
    setsid sh -c 'echo $$ > "$1"; exec sleep %s' sh "$1" $2 &
) &
sleep 0.3
echo "main exits"
"""


class TestEscape(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(2, slots=2)
        self.mark = harness.unique_sleep(60)
        self.prog = self.script("escape.sh", ESCAPE % self.mark)

    def run_escape(self, keep_pipes):
        pidfile = os.path.join(self.outdir, "escapee-%d" % keep_pipes)
        args = ["-n", "1", self.prog, pidfile]
        if not keep_pipes:
            args = ["-n", "1", "sh", "-c",
                    'exec "$0" "$1" >/dev/null 2>&1; ', self.prog, pidfile]
        t0 = time.monotonic()
        run = self.p2prun(args, timeout=30)
        took = time.monotonic() - t0
        self.assert_rc(run, 0)
        wait_until(lambda: os.path.exists(pidfile), 5, "the escapee's pid")
        pid = int(open(pidfile).read())
        return run, pid, took

    def alive(self, pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().split(") ")[1][0] not in "ZX"
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False

    def test_escapee_holding_the_pipes(self):
        run, pid, took = self.run_escape(keep_pipes=True)
        figure("job whose escapee holds its pipes ended after %.2f s" % took)
        self.assertIn("main exits", run.stdout)
        wait_until(lambda: not self.alive(pid), 5, "the escapee to be killed")
        self.assert_job_over(self.sn, self.peers, timeout=3)

    def test_escapee_with_its_own_output(self):
        run, pid, took = self.run_escape(keep_pipes=False)
        t0 = time.monotonic()
        wait_until(lambda: not self.alive(pid), 5, "the escapee to be killed")
        figure("escapee killed %.2f s after its job ended"
               % (time.monotonic() - t0))
        self.assert_job_over(self.sn, self.peers, timeout=3)


if __name__ == "__main__":
    harness.main()
