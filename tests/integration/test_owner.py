#!/usr/bin/env python3
"""The owner comes first.  The test plays the owner: with [peer]
idle_files naming a file of the test's, setting its time to now is a key
pressed, setting it an hour back is an owner away.

- An owner who comes back makes the peer owner-busy (mpihost) and refuse
  new work with the reason; p2prun plans around it.
- Running work is suspended at once, and goes on with nothing lost if the
  owner leaves within suspend_s.
- If the owner stays, the work is evicted: an unreplicated rank ends the
  job naming the host; a replicated MPI rank fails over, and the output is
  byte for byte that of a run without the owner.
- p2pshare: off, on, status and evict for root; refused for another user.
- Sharing hours: outside them, work is refused.
- Guest processes run with SCHED_IDLE, nice 19 and idle I/O."""

import json
import os
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402


# Prints a numbered line every 50 ms, LINES in all.
TICKS = """i=1
while [ $i -le %d ]; do echo "tick $i"; sleep 0.05; i=$((i+1)); done
"""
# Ten ticks, then the rest once the file $1 exists (the test lets it go).
GATED_TICKS = """i=1
while [ $i -le %d ]; do
    if [ $i -eq 11 ]; then
        while [ ! -e "$1" ]; do sleep 0.05; done
    fi
    echo "tick $i"; sleep 0.05; i=$((i+1))
done
"""


class TestOwner(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.input = self.c.path("owner-input")
        open(self.input, "w").close()
        self.owner_leaves()

    def owner_leaves(self):
        t = time.time() - 3600
        os.utime(self.input, (t, t))

    def owner_types(self):
        t = time.time()
        os.utime(self.input, (t, t))
        return time.monotonic()

    def idle_conf(self, name="idle.conf", suspend_s=30, extra=""):
        return self.c.write_config(
            name, key_file=self.c.key,
            handshake_timeout_ms=self.c.handshake_timeout_ms,
            heartbeat_ms=self.c.heartbeat_ms,
            extra="sharing = idle\nidle_after = 60\nowner_load = 1000\n"
                  "suspend_s = %d\nidle_files = %s\n%s"
                  % (suspend_s, self.input, extra))

    def state(self, peer):
        r = self.c.mpihost([self.sn])
        for e in json.loads(r.stdout):
            if e["host"] == peer.label:
                return e["state"]
        return None

    def p2pshare(self, peer, verb, user=None):
        argv = [harness.binary("p2pshare"), "--state-dir", peer.state_dir,
                verb]
        if user is not None:
            argv = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user,
                    "--clear-groups"] + argv
        return self.c.run(argv)

    def test_owner_busy_refuses(self):
        self.sn, (peer,) = self.start_jobnet(
            1, peer_confs={0: self.idle_conf()})
        r = self.p2prun(["-n", "1", "true"])
        self.assert_rc(r, 0)
        t0 = self.owner_types()
        peer.wait_log(r"owner: away -> back: owner active", timeout=30)
        figure("owner typed: peer refuses guests %.2f s later"
               % (time.monotonic() - t0))
        wait_until(lambda: self.state(peer) == "owner-busy", 30,
                   "mpihost to show owner-busy")
        r = self.p2prun(["-n", "1", "true"])
        self.assertNotEqual(r.rc, 0, r.describe())
        # The supernode already says owner-busy, or the peer refuses.
        self.assertRegex(r.stderr, r"host2 owner-busy|owner active .*on host2")
        self.owner_leaves()
        wait_until(lambda: self.state(peer) == "available", 30,
                   "the peer to be available again")
        r = self.p2prun(["-n", "1", "true"])
        self.assert_rc(r, 0)

    def test_owner_glances_work_continues(self):
        self.sn, (peer,) = self.start_jobnet(
            1, peer_confs={0: self.idle_conf(suspend_s=30)})
        # The job stops by itself after ten ticks until the gate file is
        # made, while it is suspended: nothing is in flight, and any tick
        # after the tenth shows it ran while suspended.
        prog = self.script("ticks.sh", GATED_TICKS % 60)
        gate = self.c.path("go")
        run = self.start_p2prun(["-n", "1", prog, gate])
        wait_until(lambda: "tick 10" in run.stdout, 30, "ten ticks")
        t0 = self.owner_types()
        peer.wait_log(r"suspended 1 job", timeout=30)
        took = time.monotonic() - t0
        figure("owner typed: guest work suspended %.2f s later (target < 1 s)"
               % took)
        frozen = run.stdout
        with open(gate, "w"):
            pass
        time.sleep(1.0)
        self.assertEqual(run.stdout, frozen, "the job ran while suspended")
        self.assertTrue(run.alive())
        self.owner_leaves()
        peer.wait_log(r"resumed 1 job", timeout=30)
        self.assertEqual(run.wait(30), 0, run.describe())
        self.assertEqual(run.stdout, "".join("tick %d\n" % i
                                             for i in range(1, 61)))
        self.assert_job_over(self.sn, [peer])

    def test_owner_stays_unreplicated_rank_evicted(self):
        self.sn, (peer,) = self.start_jobnet(
            1, peer_confs={0: self.idle_conf(suspend_s=1)})
        prog = self.script("ticks.sh", TICKS % 400)
        run = self.start_p2prun(["-n", "1", prog])
        wait_until(lambda: "tick 3" in run.stdout, 10, "three ticks")
        self.owner_types()
        self.assertEqual(run.wait(20), 75, run.describe())
        self.assertIn("rank 0 evicted from host2: owner active", run.stderr)
        self.assert_job_over(self.sn, [peer], timeout=30)

    def test_replicated_mpi_rank_fails_over(self):
        prog = self.mpi_program("mpi_steps")
        self.sn, self.peers = self.start_jobnet(
            3, slots=3, lease_ms=1500,
            peer_confs={0: self.idle_conf(suspend_s=1)})
        args = ["-n", "3", "-r", "2", prog, "200"]  # 15 ms a step
        ref = self.p2prun(args, timeout=60)
        self.assert_rc(ref, 0)
        run = self.start_p2prun(args)
        wait_until(lambda: len(run.stdout.splitlines()) >= 6, 20,
                   "a few steps")
        self.owner_types()
        self.assertIsNotNone(run.wait(60), run.describe())
        self.assert_rc(run, 0)
        self.assertIn("evicted from host2: owner active", run.stderr)
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref.stdout),
                         "output differs from the run without the owner\n%s"
                         % run.describe())
        self.assertEqual(len(run.stdout), len(ref.stdout))
        self.owner_leaves()
        self.assert_job_over(self.sn, self.peers, timeout=10)

    def test_evicted_task_runs_elsewhere(self):
        # Two peers; the owner of host2 comes back and stays: its tasks
        # are evicted and run again on host3, each reported once.
        self.sn, peers = self.start_jobnet(
            2, slots=2, peer_confs={0: self.idle_conf(suspend_s=1)})
        inp = self.c.path("in")
        with open(inp, "w") as f:
            f.write("".join("%d\n" % i for i in range(1, 13)))
        prog = self.script("t.sh", 'sleep 0.4; echo "done $1"\n')
        res = self.c.path("r.json")
        run = self.start_p2prun(["--each", inp, "--results", res, "--", prog])
        wait_until(lambda: len(self.c.job_processes([peers[0]])) > 0, 20,
                   "a task on host2")
        self.owner_types()
        self.assertEqual(run.wait(60), 0, run.describe())
        self.assertEqual(run.stdout, "".join("done %d\n" % i
                                             for i in range(1, 13)))
        self.assertIn("evicted from host2", run.stderr)
        with open(res) as f:
            rows = [json.loads(l) for l in f]
        self.assertEqual([r["task"] for r in rows], list(range(1, 13)))
        # An eviction is not a retry and not a death: nothing failed.
        self.assertTrue(all(r["status"] == 0 for r in rows))
        self.owner_leaves()

    def test_p2pshare(self):
        self.sn, (peer,) = self.start_jobnet(1)
        r = self.p2pshare(peer, "status")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sharing: always (configured)", r.stdout)
        self.assertIn("no jobs running here", r.stdout)
        # Another user is refused, with the reason.
        r = self.p2pshare(peer, "off", user=65534)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("permission denied", r.stderr)
        self.assertEqual(self.state(peer), "available")
        # Off: not sharing, refused; on: back.
        r = self.p2pshare(peer, "off")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sharing: never (set by p2pshare)", r.stdout)
        wait_until(lambda: self.state(peer) == "not-sharing", 30,
                   "not-sharing")
        r = self.p2prun(["-n", "1", "true"])
        self.assertNotEqual(r.rc, 0)
        self.assertRegex(r.stderr, r"host2 not-sharing|not sharing")
        self.assertEqual(self.p2pshare(peer, "default").returncode, 0)
        wait_until(lambda: self.state(peer) == "available", 30, "available")
        # Evict: a running job ends now, as an eviction.
        prog = self.script("ticks.sh", TICKS % 400)
        run = self.start_p2prun(["-n", "1", prog])
        wait_until(lambda: "tick 2" in run.stdout, 10, "two ticks")
        r = self.p2pshare(peer, "status")
        self.assertIn("ticks.sh", r.stdout)
        r = self.p2pshare(peer, "evict")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(run.wait(20), 75, run.describe())
        self.assertIn("evicted from host2: evicted by the owner", run.stderr)
        self.assert_job_over(self.sn, [peer], timeout=30)
        r = self.c.run([harness.binary("p2pshare"), "sideways"])
        self.assertEqual(r.returncode, 2)

    def test_outside_sharing_hours(self):
        now = time.localtime()
        start = (now.tm_hour + 2) % 24
        conf = self.c.write_config(
            "hours.conf", key_file=self.c.key,
            heartbeat_ms=self.c.heartbeat_ms,
            extra="hours = %02d:00-%02d:00\n" % (start, (start + 1) % 24))
        self.sn, (peer,) = self.start_jobnet(1, peer_confs={0: conf})
        wait_until(lambda: self.state(peer) == "not-sharing", 30,
                   "not-sharing outside the hours")
        r = self.p2prun(["-n", "1", "true"])
        self.assertNotEqual(r.rc, 0)
        self.assertRegex(r.stderr,
                         r"host2 not-sharing|outside its sharing hours")
        self.assertIn("outside its sharing hours", peer.log())

    def test_guest_priority(self):
        self.sn, peers = self.start_jobnet(1)
        r = self.p2prun(["-n", "1", "python3", "-c",
                         "import os; print(os.sched_getscheduler(0), "
                         "os.getpriority(os.PRIO_PROCESS, 0))"])
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout.split(), [str(os.SCHED_IDLE), "19"])
        r = self.p2prun(["-n", "1", "sh", "-c", "ionice -p $$"])
        self.assert_rc(r, 0)
        self.assertEqual(r.stdout.strip(), "idle")


if __name__ == "__main__":
    harness.main()
