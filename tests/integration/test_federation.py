#!/usr/bin/env python3
"""The federated directory (docs/scale.md, "The directory"): supernodes
that name each other in [supernode] federation push summaries of their own
peers to each other, so that a query through any one of them lists the
whole network although each peer registers with one supernode only; a
supernode that dies loses nothing that matters: its peers register with
the next supernode in their own order within seconds, and queries keep
working through the others.  A member that sends summaries breaking the
rules is dropped and logged, and the supernode goes on."""

import http.client
import json
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import binary, figure, free_port, wait_until  # noqa: E402


class FederationCase(harness.ClusterTestCase):

    def federation(self, n=3, expire=10, per_peer=1, http=False,
                   interval_ms=200):
        """n supernodes on fixed ports, each configured with all n (itself
        included: it must skip itself), and a configuration for peers and
        tools naming all n with [peer] supernodes_per_peer = per_peer.
        Returns the supernodes; self.peerconf is the peers' file."""
        ports = [free_port() for _ in range(n)]
        addrs = ["127.0.0.1:%d" % p for p in ports]
        snconf = self.c.write_config(
            "sn.conf", key_file=self.c.key,
            handshake_timeout_ms=self.c.handshake_timeout_ms,
            heartbeat_ms=self.c.heartbeat_ms,
            extra="[supernode]\nfederation = %s\n"
                  "federation_interval_ms = %d\n"
                  % (", ".join(addrs), interval_ms))
        extra = ("--http", "127.0.0.1:0") if http else ()
        sns = [self.c.start_supernode(port=p, expire=expire, conf=snconf,
                                      name="supernode%d" % i, extra=extra)
               for i, p in enumerate(ports)]
        for sn in sns if http else ():
            m = sn.wait_log(r"dashboard on http://(127\.0\.0\.1):(\d+)/",
                            what="the dashboard to listen")
            sn.http = (m.group(1), int(m.group(2)))
        self.peerconf = self.c.job_config(
            "peer.conf", sns, peer={"supernodes_per_peer": per_peer})
        return sns

    def api_get(self, sn, path):
        """The dashboard's JSON at path (the supernode started with
        http=True)."""
        conn = http.client.HTTPConnection(*sn.http, timeout=10)
        try:
            conn.request("GET", path)
            return json.loads(conn.getresponse().read())
        finally:
            conn.close()

    def local_ids(self, sn):
        """Node keys of the peers registered with sn itself."""
        r = self.c.mpihost([sn], extra=["--local"])
        if r.returncode != 0:
            raise AssertionError("mpihost --local exited %d: %s"
                                 % (r.returncode, r.stderr.strip()))
        return {e["id"] for e in json.loads(r.stdout)}

    def test_query_through_any_lists_all(self):
        sns = self.federation(3, http=True)
        # Two peers per supernode, each told of that one supernode only.
        peers = [self.c.start_peer(2 + i, [sns[i % 3]], slots=1 + i % 2)
                 for i in range(6)]
        t0 = time.monotonic()
        entries = [self.c.wait_listed([sn], peers, timeout=30) for sn in sns]
        figure("federation of 3: 6 peers listed through every supernode "
               "%.2f s after the last peer served" % (time.monotonic() - t0))
        for sn, es in zip(sns, entries):
            with self.subTest(supernode=sn.name):
                self.assertEqual([e["addr"] for e in es],
                                 [p.addr for p in peers])
                self.assertEqual([e["slots_total"] for e in es],
                                 [p.slots for p in peers])
        # Each supernode holds only its own two; it knows the others from
        # their summaries.
        for i, sn in enumerate(sns):
            local = self.local_ids(sn)
            self.assertEqual(len(local), 2, "supernode%d --local" % i)
            ids = {e["id"] for e in entries[0]
                   if e["addr"] in {p.addr for p in peers[i::3]}}
            self.assertEqual(local, ids)
        # The dashboard names the members and counts what they summarised.
        for i, sn in enumerate(sns):
            def api_sns(sn=sn):
                return self.api_get(sn, "/api/supernodes")
            got = wait_until(
                lambda: (lambda d: d if d["self"]["federated_peers"] == 4
                         else None)(api_sns()), 15,
                "supernode%d's dashboard to count the 4 others' peers" % i)
            self.assertEqual(got["self"]["peers"], 2)
            fed = sorted(k["addr"] for k in got["known"]
                         if k["source"] == "federation")
            self.assertEqual(fed, sorted(s.addr for s in sns))
        # /api/peers shows the whole network: its own peers, and the
        # others' from their summaries, marked remote with the member that
        # summarised them; each peer once.
        where = {p.addr: sns[i % 3].addr for i, p in enumerate(peers)}
        for i, sn in enumerate(sns):
            def remote_marks(sn=sn):
                d = self.api_get(sn, "/api/peers")
                live = [e for e in d["peers"] if e["state"] != "gone"]
                if len(live) != len(peers):
                    return None
                return d, live
            d, live = wait_until(remote_marks, 15,
                                 "supernode%d's /api/peers to list all 6" % i)
            self.assertEqual(sorted(e["addr"] for e in live),
                             sorted(p.addr for p in peers))
            for e in live:
                with self.subTest(supernode=i, peer=e["addr"]):
                    mine = where[e["addr"]] == sn.addr
                    self.assertIs(e["remote"], not mine)
                    if not mine:
                        self.assertEqual(e["supernode"], where[e["addr"]])
                        self.assertEqual(e["state"], "available")
                        self.assertIn(e["slots_total"], (1, 2))
                        # Every documented field, the machine's empty.
                        self.assertEqual(e["version"], "")
                        self.assertIsNone(e["uptime_s"])
                        self.assertIn("mem_free", e)
            self.assertEqual(d["remote_total"], 4)
            self.assertGreaterEqual(d["remote_max"], 4)
        # A member found itself in its list and skipped it.
        for sn in sns:
            sn.wait_log(r"is this supernode itself; skipped", timeout=10)

        # A change reaches the other supernodes within seconds: a peer
        # that leaves is gone from every list.
        gone = peers.pop(0)
        t0 = time.monotonic()
        self.assert_stops_cleanly(gone)
        for sn in sns:
            self.c.wait_listed([sn], peers, timeout=15)
        figure("federation of 3: a peer's departure seen through every "
               "supernode after %.2f s" % (time.monotonic() - t0))
        self.assert_all_stop_cleanly()

    def test_summary_gate_idle(self):
        """With peers that change nothing that ranks them, a member sends
        a summary per refresh (every ten intervals), not one per
        interval: the gate of federation_cron().  The bounds are loose
        on purpose: ungated, 20 s at a 100 ms interval would be about 200
        summaries; gated, about 20 refreshes and a few changes (a peer's
        load moving by a quarter of a core on a busy machine)."""
        window_s, interval_ms = 20, 100
        sns = self.federation(2, http=True, interval_ms=interval_ms)
        for i, sn in enumerate(sns):
            self.c.start_peer(2 + i, [sn], slots=2)

        def sent():
            return [self.api_get(sn, "/api/supernodes")["self"]
                    for sn in sns]
        # Both linked, each counting the other's peer: the registrations'
        # summaries have gone; from here on nothing that ranks changes.
        wait_until(lambda: all(d["federated_peers"] == 1 for d in sent()),
                   30, "each supernode to count the other's peer")
        before = [d["summaries_sent"] for d in sent()]
        t0 = time.monotonic()
        time.sleep(window_s)
        after = [d["summaries_sent"] for d in sent()]
        took = time.monotonic() - t0
        ungated = took * 1000 / interval_ms
        for i, (b, a) in enumerate(zip(before, after)):
            figure("federation of 2, idle peers: supernode%d sent %d "
                   "summaries in %.1f s (one an interval would be %d)"
                   % (i, a - b, took, ungated))
            with self.subTest(supernode=i):
                # The refresh still goes (it is the keepalive) ...
                self.assertGreaterEqual(a - b, 2)
                # ... but far from one an interval.
                self.assertLess(a - b, ungated / 2)

    def test_supernode_killed(self):
        sns = self.federation(3, expire=10, per_peer=1)
        peers = [self.c.start_peer(2 + i, [], slots=2, conf=self.peerconf)
                 for i in range(9)]
        for sn in sns:
            self.c.wait_listed([sn], peers, timeout=30)
        # Each peer is registered with exactly one supernode, and the
        # rendezvous order spreads them.
        owner = {}
        for i, sn in enumerate(sns):
            for pid in self.local_ids(sn):
                self.assertNotIn(pid, owner, "a peer registered twice")
                owner[pid] = i
        self.assertEqual(len(owner), len(peers))
        counts = [list(owner.values()).count(i) for i in range(3)]
        victim = max(range(3), key=lambda i: counts[i])
        self.assertGreater(counts[victim], 0)
        survivors = [sn for i, sn in enumerate(sns) if i != victim]

        t0 = time.monotonic()
        sns[victim].kill()
        # Its peers register with another supernode: the survivors' own
        # registries hold every peer again.
        wait_until(lambda: len(self.local_ids(survivors[0]) |
                               self.local_ids(survivors[1])) == len(peers),
                   30, "every peer to be registered with a survivor")
        figure("federation of 3, one supernode (%d of 9 peers) killed: all "
               "registered again after %.2f s"
               % (counts[victim], time.monotonic() - t0))
        # Queries keep working through each survivor, listing everyone
        # once.
        for sn in survivors:
            self.c.wait_listed([sn], peers, timeout=15)
        # A tool configured with all three still gets its answer.
        r = self.c.mpihost(conf=self.peerconf)
        self.assertEqual(r.returncode, 0, r.stderr)
        # Once the dead member's summary expires the lists stay whole.
        wait_until(lambda: all(sn.count_log(r"summary of 127\.0\.0\.1:%d "
                                            r"expired" % sns[victim].port)
                               for sn in survivors),
                   30, "the dead member's summary to expire")
        for sn in survivors:
            self.c.wait_listed([sn], peers, timeout=15)

        # The supernode comes back: its peers return to it (their first
        # choice) and leave the fall-back, and every list stays whole.
        back = self.c.start_supernode(port=sns[victim].port, expire=10,
                                      conf=self.c.path("sn.conf"),
                                      name="supernode%d-again" % victim)
        wait_until(lambda: len(self.local_ids(back)) == counts[victim], 60,
                   "the peers to come back to their first choice")
        for sn in survivors + [back]:
            self.c.wait_listed([sn], peers, timeout=15)
        self.assertEqual(len(self.local_ids(survivors[0]) |
                             self.local_ids(survivors[1]) |
                             self.local_ids(back)), len(peers))
        self.assert_all_stop_cleanly()

    def test_heartbeat_period_asked(self):
        """[supernode] heartbeat_ms is the period a supernode asks of its
        peers; a peer takes the shorter of it and its own."""
        snconf = self.c.write_config(
            "sn-hb.conf", key_file=self.c.key,
            handshake_timeout_ms=self.c.handshake_timeout_ms,
            extra="[supernode]\nheartbeat_ms = 150\n")
        sn = self.c.start_supernode(expire=10, conf=snconf)
        sn.wait_log(r"expiry 10 s, heartbeat 150 ms")
        sn.wait_log(r"open files: \d+ \(soft limit raised to the hard "
                    r"limit\); sessions at most \d+")
        p = self.c.start_peer(2, [sn])  # its own: self.c.heartbeat_ms
        self.assertGreater(self.c.heartbeat_ms, 150)
        self.c.wait_listed([sn], [p])
        p.wait_log(r"registered with supernode .* \(heartbeat 150 ms\)")
        # Capped by the expiry: three heartbeats fit in it.
        slow = self.c.write_config(
            "sn-slow.conf", key_file=self.c.key,
            handshake_timeout_ms=self.c.handshake_timeout_ms,
            extra="[supernode]\nheartbeat_ms = 600000\n")
        sn2 = self.c.start_supernode(expire=3, conf=slow, name="slow")
        sn2.wait_log(r"expiry 3 s, heartbeat 1000 ms")
        self.assert_all_stop_cleanly()

    def forge(self, sn, mode, count=3, hold=10):
        return self.c.run([binary("p2p_fedforge"), "--conf", self.c.conf,
                           "--supernode", sn.addr, "--mode", mode,
                           "--count", str(count), "--hold", str(hold)],
                          timeout=hold + 30)

    def test_bad_summaries_refused(self):
        (sn,) = self.federation(1)
        p = self.c.start_peer(2, [sn])
        self.c.wait_listed([sn], [p])
        cases = {
            "range": r"part 3 of 2 out of range",
            "order": r"summary starts at part 1",
            "oversize": r"summary part of 300 entries, limit 250",
            "replay": r"summary 3 after 5",
        }
        for mode, why in cases.items():
            with self.subTest(mode=mode):
                r = self.forge(sn, mode)
                self.assertIn("sent", r.stdout)
                self.assertIn("closed", r.stdout,
                              "the supernode must drop a member that sends "
                              "a bad summary:\n" + r.stdout + r.stderr)
                sn.wait_log(why, timeout=10)
                # Nothing of it is listed; the supernode goes on.
                self.c.wait_listed([sn], [p], timeout=10)

        # A well-formed summary is listed, and forgotten once its sender
        # falls silent for the expiry.
        run = subprocess.Popen([binary("p2p_fedforge"), "--conf",
                                self.c.conf, "--supernode", sn.addr,
                                "--mode", "valid", "--count", "5",
                                "--hold", "15"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env=self.c.env)
        try:
            # (The forger holds its summary 15 s: on a loaded machine its
            # start and handshake alone may take seconds.)
            wait_until(lambda: len(self.c.list_peers([sn])) == 6, 14,
                       "the forged summary's 5 peers to be listed")
            self.assertEqual(len(self.local_ids(sn)), 1)
            out, err = run.communicate(timeout=30)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        self.assertIn("held", out, err)
        self.c.wait_listed([sn], [p], timeout=30)
        self.assert_all_stop_cleanly()


if __name__ == "__main__":
    harness.main()
