#!/usr/bin/env python3
"""A stranger with no key must not stop launches: written as that
stranger, against the supernode's port and a peer's service port, with
bounded counts and durations and loopback addresses only.

- slowloris: N connections each sending one byte of a handshake every 2 s
  (and reconnecting when dropped): 64 from one address on a peer, 1,024
  from 64 addresses on the supernode;
- flood: 200 parallel handshakes (a hello, read the answer, hang up,
  again) on a peer.

While it goes on, every legitimate `p2prun -n N true`, `mpihost` and peer
registration must succeed, and the daemons must log the drops in a few
lines and a summary, not one line each.  Outcomes are asserted, never
timings: the machine is shared."""

import os
import resource
import selectors
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402

WIRE_VERSION = harness.WIRE_VERSION
HELLO = b"P2" + bytes([WIRE_VERSION, 1]) + (32).to_bytes(4, "big")
ATTACK_S = 4.0  # how long each attack runs while jobs are launched
MAX_LOG_LINES = 40  # lines about drops allowed during one attack


def split(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


class Attacker(threading.Thread):
    """Background attack on one address; stop() ends it and closes every
    socket.  .connections counts the connections it made."""

    def __init__(self, target, sources):
        super().__init__(daemon=True)
        self.target = split(target)
        self.sources = sources
        self.halt = threading.Event()
        self.connections = 0
        self.error = None

    def open(self, i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((self.sources[i % len(self.sources)], 0))
        s.connect_ex(self.target)
        self.connections += 1
        return s

    def stop(self):
        self.halt.set()
        self.join(30)
        if self.error is not None:
            raise self.error


class Slowloris(Attacker):
    """n connections, each sending the next byte of a hello (header and
    32 bytes) every period; a dropped one is opened again."""

    def __init__(self, target, sources, n, period=2.0):
        super().__init__(target, sources)
        self.n, self.period = n, period

    def run(self):
        socks = [None] * self.n
        sent = [0] * self.n
        body = HELLO + os.urandom(32)
        try:
            while not self.halt.is_set():
                for i in range(self.n):
                    if socks[i] is None:
                        socks[i], sent[i] = self.open(i), 0
                        continue
                    try:
                        socks[i].send(body[sent[i] % len(body):][:1])
                        sent[i] += 1
                    except OSError:
                        socks[i].close()
                        socks[i], sent[i] = self.open(i), 0
                self.halt.wait(self.period)
        except Exception as e:  # noqa: BLE001 - reported by stop()
            self.error = e
        finally:
            for s in socks:
                if s is not None:
                    s.close()


class Flood(Attacker):
    """parallel connections, each sending a whole hello at once, reading
    whatever comes back, hanging up and starting over."""

    def __init__(self, target, sources, parallel):
        super().__init__(target, sources)
        self.parallel = parallel

    def run(self):
        sel = selectors.DefaultSelector()
        try:
            for i in range(self.parallel):
                s = self.open(i)
                sel.register(s, selectors.EVENT_WRITE, i)
            while not self.halt.is_set():
                for key, ev in sel.select(0.1):
                    s, i = key.fileobj, key.data
                    sel.unregister(s)
                    if ev & selectors.EVENT_WRITE:
                        try:
                            s.send(HELLO + os.urandom(32))
                            sel.register(s, selectors.EVENT_READ, i)
                            continue
                        except OSError:
                            pass
                    else:
                        try:
                            s.recv(4096)
                        except OSError:
                            pass
                    s.close()
                    s = self.open(i)
                    sel.register(s, selectors.EVENT_WRITE, i)
        except Exception as e:  # noqa: BLE001 - reported by stop()
            self.error = e
        finally:
            for key in list(sel.get_map().values()):
                key.fileobj.close()
            sel.close()


class AdmissionCase(harness.JobTestCase):
    # The default handshake time, as on a real network: a slow client may
    # hold a connection that long unless admission says otherwise.
    cluster_args = {"handshake_timeout_ms": 5000}

    def setUp(self):
        super().setUp()
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = min(hard, 4096)
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        if want < 1200:
            raise harness.unittest.SkipTest("needs 1,200 open files")
        self.sn, self.peers = self.start_jobnet(3, slots=2)

    def launches(self, attack, args, what):
        """Launch p2prun args again and again for ATTACK_S seconds while
        attack runs; every one must succeed.  Returns how many ran."""
        attack.start()
        time.sleep(0.5)  # let it fill whatever it can
        runs = []
        try:
            t0 = time.monotonic()
            while time.monotonic() - t0 < ATTACK_S or len(runs) < 3:
                r = self.p2prun(list(args) + ["true"], timeout=60)
                runs.append(r)
                self.assertEqual(r.rc, 0, "a launch failed under %s:\n%s"
                                 % (what, r.describe()))
                m = self.c.mpihost([self.sn])
                self.assertEqual(m.returncode, 0, "mpihost failed under %s:"
                                 " %s" % (what, m.stderr))
        finally:
            attack.stop()
        harness.figure("%s: %d of %d `p2prun %s true` succeeded (attacker "
                       "made %d connections)"
                       % (what, sum(r.rc == 0 for r in runs), len(runs),
                          " ".join(args), attack.connections))
        return runs

    def assert_few_log_lines(self, daemon, attack):
        lines = daemon.count_log(r"dropped")
        self.assertLessEqual(lines, MAX_LOG_LINES,
                             "%d log lines about %d attacking connections:"
                             "\n%s" % (lines, attack.connections,
                                       daemon.log()[-4000:]))
        return lines


class TestSlowloris(AdmissionCase):

    def test_64_slow_connections_on_a_peer(self):
        target = self.peers[0]
        attack = Slowloris(target.addr, ["127.0.0.50"], 64)
        self.launches(attack, ["-n", "6"], "64 slow connections on a peer")
        self.assertGreater(attack.connections, 64,
                           "the peer never dropped a slow connection")
        self.assert_few_log_lines(target, attack)
        self.assert_job_over(self.sn, self.peers, timeout=5)

    def test_1024_slow_connections_on_the_supernode(self):
        sources = ["127.0.1.%d" % i for i in range(1, 65)]
        attack = Slowloris(self.sn.addr, sources, 1024)
        self.launches(attack, ["-n", "4"],
                      "1,024 slow connections on the supernode")
        # A peer that starts now registers all the same.
        attack = Slowloris(self.sn.addr, sources, 1024)
        attack.start()
        try:
            time.sleep(0.5)
            late = self.c.start_peer(5, [self.sn], slots=2,
                                     state_dir=self.c.path("state-late"))
            self.c.wait_listed([self.sn], self.peers + [late], timeout=20)
        finally:
            attack.stop()
        self.assert_few_log_lines(self.sn, attack)
        # The drops are summed up once the interval is over.
        self.sn.wait_log(r"dropped \d+ unauthenticated connections in the "
                         r"last \d+ s \(", timeout=15)


class TestFlood(AdmissionCase):

    def test_200_parallel_handshakes_on_a_peer(self):
        target = self.peers[0]
        sources = ["127.0.0.%d" % i for i in range(60, 68)]
        attack = Flood(target.addr, sources, 200)
        self.launches(attack, ["-n", "6"], "200 parallel handshakes on a peer")
        self.assert_few_log_lines(target, attack)
        self.assert_job_over(self.sn, self.peers, timeout=5)


if __name__ == "__main__":
    harness.main()
