#!/usr/bin/env python3
"""Expiry: a supernode forgets peers that die or fall silent within its
expiry (plus a second of slack), keeps the others, and takes a frozen
peer back when it wakes up."""

import signal
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

EXPIRE_S = 2


class TestExpiry(harness.ClusterTestCase):

    def gone(self, sn, remaining, victim_id):
        """Wait until exactly `remaining` are listed and victim_id is not;
        returns the seconds waited."""
        t0 = time.monotonic()

        def check():
            entries = self.c.listed([sn], remaining)
            return entries is not None and all(
                e["id"] != victim_id for e in entries)
        wait_until(check, EXPIRE_S + 10, "the peer to disappear")
        return time.monotonic() - t0

    def test_sigkill_peer_disappears(self):
        sn, peers = self.start_network(3, expire=EXPIRE_S)
        victim = peers[0]
        victim_id = self.c.listed([sn], peers)[0]["id"]
        t0 = time.monotonic()
        victim.signal(signal.SIGKILL)
        victim.wait_exit(10)
        self.gone(sn, peers[1:], victim_id)
        elapsed = time.monotonic() - t0
        figure("peer killed with SIGKILL gone from the list after %.3f s "
               "(expiry %d s)" % (elapsed, EXPIRE_S))
        self.assertLessEqual(elapsed, EXPIRE_S + 1.0)
        # The others keep heartbeating: still there a full expiry later.
        time.sleep(EXPIRE_S + 0.5)
        entries = self.c.listed([sn], peers[1:])
        self.assertIsNotNone(entries, "surviving peers were dropped")
        for e in entries:
            self.assertLess(e["age_ms"], EXPIRE_S * 1000)

    def test_sigstop_peer_expires_and_returns(self):
        sn, peers = self.start_network(3, expire=EXPIRE_S)
        victim = peers[2]
        victim_id = self.c.listed([sn], peers)[2]["id"]
        t0 = time.monotonic()
        victim.signal(signal.SIGSTOP)
        self.gone(sn, peers[:2], victim_id)
        elapsed = time.monotonic() - t0
        figure("peer frozen with SIGSTOP gone from the list after %.3f s "
               "(expiry %d s)" % (elapsed, EXPIRE_S))
        self.assertLessEqual(elapsed, EXPIRE_S + 1.0)
        # Its connection stayed open: it was the expiry that removed it,
        # not a closed socket, and not before the peer had been silent for
        # most of the expiry (heartbeats are every 200 ms here).
        sn.wait_log(r"peer %s \(%s\) expired" % (victim.label, victim.addr),
                    timeout=5)
        self.assertGreaterEqual(elapsed, EXPIRE_S - 1.0,
                                "dropped before the expiry")

        t1 = time.monotonic()
        victim.signal(signal.SIGCONT)
        entries = self.c.wait_listed([sn], peers, timeout=20)
        back = time.monotonic() - t1
        figure("frozen peer listed again %.3f s after SIGCONT" % back)
        self.assertLessEqual(back, 5.0, "a woken peer must come back "
                             "within a few seconds")
        self.assertEqual(entries[2]["id"], victim_id)
        self.assertTrue(victim.alive())


if __name__ == "__main__":
    harness.main()
