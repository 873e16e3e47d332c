#!/usr/bin/env python3
"""Registration: peers announce themselves to the supernode, mpihost lists
them faithfully, a peer that stops says goodbye, and a peer's identity is
its state directory."""

import os
import re
import stat
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import HEX64, figure, wait_until  # noqa: E402


class TestRegistry(harness.ClusterTestCase):

    def test_three_peers_listed_with_their_resources(self):
        sn = self.c.start_supernode(expire=10)
        specs = [(2, "alpha", 1), (3, "bravo", 2), (4, "charlie", 3)]
        t0 = time.monotonic()
        peers = [self.c.start_peer(host, [sn], slots=slots, label=label,
                                   wait=False)
                 for host, label, slots in specs]
        # Registration: from starting the processes to all three listed.
        wait_until(lambda: len(self.c.list_peers([sn])) == 3, 30,
                   "three peers to be listed")
        elapsed = time.monotonic() - t0
        figure("registration of 3 peers (process start to all listed): "
               "%.3f s" % elapsed)

        for p in peers:
            self.c.wait_serving(p)
            p.wait_log(r"registered with supernode 127\.0\.0\.1:%d" % sn.port)
        # The supernode measures each peer's round trip right after it
        # registers.
        entries = wait_until(
            lambda: (lambda e: e if e and all(x["rtt_us"] > 0 for x in e)
                     else None)(self.c.listed([sn], peers)),
            15, "every peer to have a measured RTT")

        self.assertEqual(len({e["id"] for e in entries}), 3,
                         "ids must be distinct")
        for p, e in zip(peers, entries):
            with self.subTest(peer=p.label):
                self.assertRegex(e["id"], HEX64)
                self.assertEqual(e["host"], p.label)
                self.assertEqual(e["addr"], p.addr)
                self.assertTrue(e["addr"].startswith(p.ip + ":"))
                self.assertEqual(e["slots_total"], p.slots)
                self.assertEqual(e["slots_free"], p.slots)
                self.assertGreater(e["mem_total"], 0)
                self.assertGreaterEqual(e["mem_free"], 0)
                self.assertLessEqual(e["mem_free"], e["mem_total"])
                self.assertGreaterEqual(e["cores"], 1)
                self.assertGreaterEqual(e["load"], 0)
                self.assertEqual(e["state"], "available")
                self.assertGreater(e["rtt_us"], 0)
                self.assertGreaterEqual(e["age_ms"], 0)
                self.assertLess(e["age_ms"], 3000)
                for field in ("id", "host", "addr", "slots_total",
                              "slots_free", "mem_total", "mem_free", "load",
                              "rtt_us", "state", "age_ms"):
                    self.assertIn(field, e)

        # The table: a header, then one line per peer sorted by RTT.
        r = self.c.mpihost([sn], json_out=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [l for l in r.stdout.splitlines() if l.strip()]
        self.assertEqual(len(lines), 4, "header + 3 peers:\n" + r.stdout)
        header = lines[0].split()
        self.assertEqual(header[:2], ["HOST", "ADDRESS"], r.stdout)
        for col in ("SLOTS", "MEMORY", "LOAD", "RTT", "STATE", "AGE"):
            self.assertIn(col, header)
        rtt_col = header.index("RTT")
        rows = [l.split() for l in lines[1:]]
        by_label = {p.label: p for p in peers}
        self.assertEqual(sorted(row[0] for row in rows),
                         sorted(by_label), r.stdout)
        rtts = []
        for row in rows:
            p = by_label[row[0]]
            self.assertEqual(row[1], p.addr, r.stdout)
            self.assertEqual(row[2], "%d/%d" % (p.slots, p.slots), r.stdout)
            self.assertEqual(row[header.index("STATE")], "available")
            rtts.append(self.parse_rtt(row[rtt_col]))
        self.assertEqual(rtts, sorted(rtts),
                         "table must be sorted by RTT:\n" + r.stdout)

    @staticmethod
    def parse_rtt(text):
        """'38us', '1.2ms' or '-' (unknown, sorts last) in microseconds."""
        if text == "-":
            return float("inf")
        m = re.fullmatch(r"([0-9.]+)(us|ms)", text)
        if not m:
            raise AssertionError("bad RTT column %r" % text)
        return float(m.group(1)) * (1000 if m.group(2) == "ms" else 1)

    def test_sigterm_unregisters_at_once(self):
        # A long expiry: only the goodbye can remove the peer quickly.
        sn, peers = self.start_network(3, expire=30)
        victim = peers[1]
        t0 = time.monotonic()
        rc = victim.stop()
        self.assertEqual(rc, 0, "peerd must exit 0 on SIGTERM:\n"
                         + victim.log())
        self.c.wait_listed([sn], [peers[0], peers[2]], timeout=10)
        elapsed = time.monotonic() - t0
        figure("peer gone from the list after SIGTERM: %.3f s "
               "(expiry 30 s)" % elapsed)
        self.assertLess(elapsed, 3.0, "unregistering must not wait for "
                        "expiry")
        self.assertRegex(victim.log(), r"unregistering from supernode")
        sn.wait_log(r"peer %s unregistered" % victim.label, timeout=5)

    def test_state_dir_in_use(self):
        sn = self.c.start_supernode()
        first = self.c.start_peer(2, [sn], label="first")
        self.c.wait_listed([sn], [first])
        second = self.c.start_peer(3, [sn], label="second",
                                   state_dir=first.state_dir, wait=False)
        rc = second.wait_exit(harness.START_TIMEOUT_S)
        self.assertIsNotNone(rc, "second peerd on a used state directory "
                             "kept running")
        self.assertNotEqual(rc, 0)
        self.assertRegex(second.log(), r"state directory .* in use")
        self.assertIn(first.state_dir, second.log())
        # The first is undisturbed.
        self.assertTrue(first.alive())
        self.c.wait_listed([sn], [first], timeout=5)

    def test_identity_follows_state_dir(self):
        sn = self.c.start_supernode()
        dir1 = self.c.path("state-one")
        p = self.c.start_peer(2, [sn], label="one", state_dir=dir1)
        (e1,) = self.c.wait_listed([sn], [p])
        key = os.path.join(dir1, "node.key")
        self.assertTrue(os.path.isfile(key), "node.key not in state dir")
        self.assertEqual(stat.S_IMODE(os.stat(key).st_mode), 0o600)
        # Others may pass through (to reach their job directory under
        # jobs/), never list it.
        self.assertEqual(stat.S_IMODE(os.stat(dir1).st_mode), 0o711)

        self.assert_stops_cleanly(p)
        self.c.wait_listed([sn], [], timeout=10)

        again = self.c.start_peer(2, [sn], label="one", state_dir=dir1,
                                  name="peerd-one-again")
        (e2,) = self.c.wait_listed([sn], [again])
        self.assertEqual(e2["id"], e1["id"],
                         "restart with the same state dir changed the id")

        other = self.c.start_peer(3, [sn], label="one",
                                  state_dir=self.c.path("state-two"),
                                  name="peerd-other-dir")
        e3, e4 = self.c.wait_listed([sn], [other, again])
        self.assertEqual(e4["id"], e1["id"])
        self.assertNotEqual(e3["id"], e1["id"],
                            "another state dir must give another id")


if __name__ == "__main__":
    harness.main()
