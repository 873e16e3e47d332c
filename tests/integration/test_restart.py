#!/usr/bin/env python3
"""Supernode restarts and redundancy: peers find a restarted supernode by
themselves, register with every configured supernode, and mpihost falls
over to the next supernode when one is gone."""

import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure  # noqa: E402

OUTAGE_S = 3


class TestRestart(harness.ClusterTestCase):

    def test_peers_return_after_supernode_restart(self):
        sn, peers = self.start_network(3, expire=10)
        before = [e["id"] for e in self.c.listed([sn], peers)]

        rc = sn.stop()
        self.assertEqual(rc, 0, "runSuperNode must exit 0 on SIGTERM:\n"
                         + sn.log())
        self.assertIn("stopped", sn.log())
        r = self.c.mpihost([sn])
        self.assertEqual(r.returncode, 1, "mpihost with the supernode down")
        self.assertIn("no supernode reachable", r.stderr)
        # An outage long enough for the peers' reconnection back-off to
        # reach its cap.
        for p in peers:
            p.wait_log(r"supernode 127\.0\.0\.1:%d lost" % sn.port, timeout=10)
        time.sleep(OUTAGE_S)

        t0 = time.monotonic()
        sn2 = self.c.start_supernode(port=sn.port, expire=10,
                                     name="supernode-restarted")
        self.assertEqual(sn2.port, sn.port)
        entries = self.c.wait_listed([sn2], peers, timeout=30)
        elapsed = time.monotonic() - t0
        figure("3 peers listed again %.3f s after the supernode restarted "
               "(after a %d s outage)" % (elapsed, OUTAGE_S))
        self.assertLessEqual(elapsed, 5.0)
        self.assertEqual([e["id"] for e in entries], before,
                         "peers came back with other ids")
        for p in peers:
            self.assertTrue(p.alive(), "%s died while the supernode was "
                            "away" % p.name)

    def test_two_supernodes(self):
        sna = self.c.start_supernode(expire=10, name="supernode-a")
        snb = self.c.start_supernode(expire=10, name="supernode-b")
        peers = [self.c.start_peer(h, [sna, snb]) for h in (2, 3, 4)]
        on_a = self.c.wait_listed([sna], peers)
        on_b = self.c.wait_listed([snb], peers)
        self.assertEqual([e["id"] for e in on_a], [e["id"] for e in on_b])

        sna.signal(signal.SIGKILL)
        sna.wait_exit(10)
        # Given both, mpihost falls over to the second.
        r = self.c.mpihost([sna, snb])
        self.assertEqual(r.returncode, 0, r.stderr)
        entries = self.c.listed([sna, snb], peers)
        self.assertIsNotNone(entries, "mpihost with a dead first supernode "
                             "did not list all peers")
        self.assertEqual([e["id"] for e in entries],
                         [e["id"] for e in on_b])
        # The dead one alone is reported as unreachable.
        r = self.c.mpihost([sna])
        self.assertEqual(r.returncode, 1)
        self.assertIn("no supernode reachable", r.stderr)
        self.assertIn(sna.addr, r.stderr)
        # Peers stay registered with the survivor and keep heartbeating.
        time.sleep(1.5)
        entries = self.c.listed([snb], peers)
        self.assertIsNotNone(entries)
        for e in entries:
            self.assertLess(e["age_ms"], 3000)
        for p in peers:
            self.assertTrue(p.alive())


if __name__ == "__main__":
    harness.main()
