#!/usr/bin/env python3
"""Allocation: replicas of a rank on distinct hosts (a host is a host
label, so two peerd with one label are one host), spread and concentrate,
plain refusals when the network cannot hold the job, and two users racing
for the same slots never oversubscribing a peer."""

import os
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure  # noqa: E402

WHERE_SCRIPT = r"""
echo "$P2P_HOST" > "$OUT/$P2P_JOB.$P2P_RANK.$P2P_REPLICA"
echo "rank $P2P_RANK of $P2P_SIZE x $P2P_NREPLICAS"
"""


class AllocCase(harness.JobTestCase):

    def placement(self, run):
        """{(rank, replica): host} the job's processes wrote to outdir."""
        out = {}
        for name in os.listdir(self.outdir):
            job, rank, replica = name.split(".")
            with open(os.path.join(self.outdir, name)) as f:
                out[(int(rank), int(replica))] = f.read().strip()
            os.unlink(os.path.join(self.outdir, name))
        return out

    def run_where(self, args, conf=None):
        prog = self.script("where.sh", WHERE_SCRIPT)
        r = self.p2prun(list(args) + ["-x", "OUT=" + self.outdir, prog],
                        conf=conf)
        self.assert_rc(r, 0)
        return r, self.placement(r)

    def assert_refused(self, args, line, within=5):
        r = self.p2prun(list(args) + ["true"])
        self.assertEqual(r.rc, 1, r.describe())
        self.assertEqual(r.stderr_lines(), ["p2prun: " + line],
                         r.describe())
        self.assertLess(r.elapsed, within, r.describe())
        return r


class TestPlacement(AllocCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(3, slots=2)
        self.labels = {p.label for p in self.peers}

    def test_replicas_on_distinct_hosts(self):
        r, where = self.run_where(["-n", "2", "-r", "2"])
        self.assertEqual(sorted(where), [(0, 0), (0, 1), (1, 0), (1, 1)],
                         "every replica of every rank runs")
        for rank in (0, 1):
            self.assertNotEqual(where[(rank, 0)], where[(rank, 1)],
                                "rank %d: replicas on one host: %s"
                                % (rank, where))
        self.assertLessEqual(set(where.values()), self.labels)
        # Output once per rank, though every replica printed it.
        self.assertEqual(sorted(r.stdout.splitlines()),
                         ["rank 0 of 2 x 2", "rank 1 of 2 x 2"],
                         r.describe())
        self.assert_job_over(self.sn, self.peers)

    def test_spread_and_concentrate(self):
        _, spread = self.run_where(["-n", "2"])
        self.assertEqual(len(set(spread.values())), 2,
                         "spread (the default) uses as many hosts as it can:"
                         " %s" % spread)
        _, spread = self.run_where(["-n", "2", "-a", "spread"])
        self.assertEqual(len(set(spread.values())), 2, spread)
        _, conc = self.run_where(["-n", "2", "-a", "concentrate"])
        self.assertEqual(len(set(conc.values())), 1,
                         "concentrate fills one host first: %s" % conc)
        _, conc = self.run_where(["-n", "3", "-a", "concentrate"])
        self.assertEqual(len(set(conc.values())), 2, conc)
        # The configuration's [run] strategy is the default; -a wins.
        conf = self.c.job_config("conc.conf", [self.sn],
                                 user_key=self.c.user_key("user")[0],
                                 run={"strategy": "concentrate"})
        _, conc = self.run_where(["-n", "2"], conf=conf)
        self.assertEqual(len(set(conc.values())), 1, conc)
        _, spread = self.run_where(["-n", "2", "-a", "spread"], conf=conf)
        self.assertEqual(len(set(spread.values())), 2, spread)
        self.assert_job_over(self.sn, self.peers)

    def test_too_many_ranks(self):
        self.assert_refused(["-n", "7"],
                            "need 7 slots on 1+ hosts, found 6 slots on 3 "
                            "hosts")
        self.assert_refused(["-n", "4", "-r", "2"],
                            "need 8 slots on 2+ hosts, found 6 slots on 3 "
                            "hosts")
        self.assert_job_over(self.sn, self.peers)

    def test_more_replicas_than_hosts(self):
        self.assert_refused(["-n", "1", "-r", "4"],
                            "need 4 slots on 4+ hosts, found 6 slots on 3 "
                            "hosts")
        self.assert_job_over(self.sn, self.peers)


class TestHostLabel(AllocCase):

    def test_same_label_is_one_host(self):
        self.sn, self.peers = self.start_jobnet(
            3, slots=2, labels=["twin", "twin", "solo"])
        self.assert_refused(["-n", "1", "-r", "3"],
                            "need 3 slots on 3+ hosts, found 6 slots on 2 "
                            "hosts")
        for _ in range(3):
            r, where = self.run_where(["-n", "2", "-r", "2"])
            for rank in (0, 1):
                self.assertEqual(sorted([where[(rank, 0)], where[(rank, 1)]]),
                                 ["solo", "twin"],
                                 "two peerd with one label are one host: %s"
                                 % where)
        self.assert_job_over(self.sn, self.peers)


class TestConcurrency(AllocCase):

    def test_two_users_never_oversubscribe(self):
        self.sn, self.peers = self.start_jobnet(3, slots=2)
        confs = {}
        for user in ("alice", "bob"):
            key, _ = self.c.user_key(user)
            confs[user] = self.c.job_config(user + ".conf", [self.sn],
                                            user_key=key)
        outcomes = []
        for round_ in range(2):
            marks = {u: harness.unique_sleep(2) for u in confs}
            runs = {u: self.c.start_p2prun(["-n", "4", "sleep", marks[u]],
                                           conf=confs[u], name="p2prun-" + u)
                    for u in confs}
            peak = {p.label: 0 for p in self.peers}
            most = 0  # processes seen at once, all peers together
            both = 0
            by_addr = {p.addr: p.label for p in self.peers}
            deadline = time.monotonic() + 30
            while [r for r in runs.values() if r.alive()]:  # poll both
                procs = self.c.job_processes(self.peers)
                count = {p.label: 0 for p in self.peers}
                users = set()
                for argv, env, _ in procs.values():
                    for u, m in marks.items():
                        if argv == ["sleep", m]:
                            count[by_addr[env["P2P_PEERD"]]] += 1
                            users.add(u)
                for label, n in count.items():
                    peak[label] = max(peak[label], n)
                most = max(most, sum(count.values()))
                if len(users) == 2:
                    both += 1
                self.assertLess(time.monotonic(), deadline,
                                "jobs still running after 30 s")
                time.sleep(0.01)
            for label, n in peak.items():
                self.assertLessEqual(n, 2, "%s (2 slots) ran %d processes at "
                                     "once" % (label, n))
            self.assertEqual(both, 0, "both jobs were running at once")
            self.assertEqual(most, 4, "the sampling must see a whole job")
            rcs = {u: r.rc for u, r in runs.items()}
            self.assertIn(0, rcs.values(), "one of the jobs must run: %s"
                          % "\n".join(r.describe() for r in runs.values()))
            for u, r in runs.items():
                if r.rc != 0:
                    self.assertEqual(r.rc, 1, r.describe())
                    self.assertLess(r.elapsed, 5, "a job that cannot be "
                                    "placed fails at once:\n"
                                    + r.describe())
                    self.assertRegex(r.stderr, r"need 4 slots on 1\+ hosts, "
                                     r"found [0-3] slots? on", r.describe())
            outcomes.append("/".join("%s %d" % kv for kv in sorted(
                rcs.items())))
            self.assert_job_over(self.sn, self.peers, timeout=3)
        figure("two users racing for 4 of 6 slots: exit statuses %s; no "
               "peer oversubscribed" % "; ".join(outcomes))


if __name__ == "__main__":
    harness.main()
