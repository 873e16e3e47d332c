#!/usr/bin/env python3
"""Nothing from the network is trusted: outsiders without the group key
(or with another group name) cannot register or query, and garbage,
oversized, out-of-place or stalled input on the supernode's port and on a
peer's service port is dropped with a log line, without disturbing the
daemon or the peers it serves."""

import os
import select
import socket
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import wait_until  # noqa: E402

HS_TIMEOUT_MS = 1000  # handshake_timeout_ms in the cluster's configuration


WIRE_VERSION = harness.WIRE_VERSION


def header(magic=b"P2", version=WIRE_VERSION, kind=1, length=32):
    return magic + bytes([version, kind]) + length.to_bytes(4, "big")


def connect(addr):
    host, port = addr.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def conn_name(s):
    """How the daemon names this connection in its log."""
    return "%s:%d" % s.getsockname()[:2]


def send_quietly(s, data):
    """Send, tolerating the other side having already hung up."""
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def read_until_closed(s, timeout):
    """Read until the other side closes the connection; (data, seconds).
    Fails if it is still open after timeout seconds."""
    t0 = time.monotonic()
    data = b""
    while True:
        left = timeout - (time.monotonic() - t0)
        if left <= 0:
            raise AssertionError("connection %s still open after %.1f s"
                                 % (conn_name(s), timeout))
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return data, time.monotonic() - t0
        except socket.timeout:
            continue
        if not chunk:
            return data, time.monotonic() - t0
        data += chunk


def is_open(s):
    """True while the other side has not closed the connection (looks
    without waiting and without consuming anything)."""
    saved = s.gettimeout()
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.settimeout(saved)


class SecurityTestCase(harness.ClusterTestCase):
    cluster_args = {"handshake_timeout_ms": HS_TIMEOUT_MS}

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_network(2, expire=10)
        self.ids = [e["id"] for e in self.c.listed([self.sn], self.peers)]

    def assert_healthy(self):
        """The supernode and every peer are up, and all peers are listed
        (with the ids they registered with)."""
        self.assertTrue(self.sn.alive(), "supernode died:\n" + self.sn.log())
        for p in self.peers:
            self.assertTrue(p.alive(), "%s died:\n%s" % (p.name, p.log()))
        entries = self.c.listed([self.sn], self.peers)
        self.assertIsNotNone(entries, "not all peers listed")
        self.assertEqual([e["id"] for e in entries], self.ids)

    def assert_dropped(self, daemon, s, reason, timeout=10):
        """The daemon logged that it dropped this connection, for reason
        (a regex)."""
        return daemon.wait_log(r"%s: dropped: %s" % (conn_name(s), reason),
                               timeout=timeout, what="%s to drop %s (%s)"
                               % (daemon.name, conn_name(s), reason))

    def abuse(self, data, reason, target=None):
        """Connect to target (default: the supernode), send data, expect
        the connection to be closed and the reason to be logged."""
        target = target or self.sn
        s = connect(target.addr)
        with s:
            send_quietly(s, data)
            read_until_closed(s, 10)
            self.assert_dropped(target, s, reason)


class TestWrongKey(SecurityTestCase):

    def other_key_conf(self):
        key = self.c.keygen("other.key")
        return self.c.write_config("other-key.conf", group="itest",
                                   key_file=key,
                                   handshake_timeout_ms=HS_TIMEOUT_MS,
                                   heartbeat_ms=200)

    def other_group_conf(self):
        return self.c.write_config("other-group.conf", group="othergroup",
                                   key_file=self.c.key,
                                   handshake_timeout_ms=HS_TIMEOUT_MS,
                                   heartbeat_ms=200)

    def assert_outsider_never_listed(self, conf, host):
        intruder = self.c.start_peer(host, [self.sn], conf=conf,
                                     label="intruder")
        intruder.wait_log(r"(failed authentication|authentication failed)")
        self.sn.wait_log(r"127\.0\.0\.%d:\d+: dropped: " % host)
        # Several heartbeats and reconnection attempts later, still out.
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            entries = self.c.list_peers([self.sn])
            self.assertNotIn(intruder.addr, [e["addr"] for e in entries])
            self.assertNotIn("intruder", [e["host"] for e in entries])
            time.sleep(0.2)
        self.assertTrue(intruder.alive(), "a refused peerd must keep trying, "
                        "not die:\n" + intruder.log())
        self.assertNotRegex(intruder.log(), r"registered with supernode")
        self.assert_healthy()
        return intruder

    def test_peer_with_other_key_is_never_listed(self):
        self.assert_outsider_never_listed(self.other_key_conf(), 4)
        self.assert_all_stop_cleanly()

    def test_peer_with_other_group_name_is_never_listed(self):
        self.assert_outsider_never_listed(self.other_group_conf(), 4)
        self.assert_all_stop_cleanly()

    def test_mpihost_with_other_key_fails(self):
        r = self.c.mpihost([self.sn], conf=self.other_key_conf())
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("group key", r.stderr)
        self.assertEqual(r.stdout, "", "nothing may be listed")
        self.sn.wait_log(r"127\.0\.0\.1:\d+: dropped: ")
        self.assert_healthy()

    def test_mpihost_with_other_group_name_fails(self):
        r = self.c.mpihost([self.sn], conf=self.other_group_conf())
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("group", r.stderr)
        self.assertEqual(r.stdout, "", "nothing may be listed")
        self.assert_healthy()


class TestSupernodeAbuse(SecurityTestCase):

    def test_a_random_bytes(self):
        junk = bytearray(os.urandom(100 * 1024))
        junk[0] = ord("X")  # never our magic by chance
        self.abuse(bytes(junk), r"not a p2pmpi frame \(bad magic\)")
        self.assert_healthy()
        self.assert_all_stop_cleanly()

    def test_b_bad_magic(self):
        self.abuse(header(magic=b"HT") + bytes(32),
                   r"not a p2pmpi frame \(bad magic\)")
        self.assert_healthy()
        # A well-framed but malformed handshake message, too.
        self.abuse(header(kind=1, length=5) + b"hello", r"malformed hello")
        self.assert_healthy()
        self.assert_all_stop_cleanly()

    def test_c_oversized_frame(self):
        s = connect(self.sn.addr)
        with s:
            t0 = time.monotonic()
            s.sendall(header(kind=1, length=0xFFFFFFFF))
            # Dropped on the header alone: no body is waited for.
            read_until_closed(s, 5)
            elapsed = time.monotonic() - t0
            m = self.assert_dropped(self.sn, s, r"[^\n]*\blimit\b[^\n]*")
        self.assertLess(elapsed, HS_TIMEOUT_MS / 1000.0,
                        "an oversized header must be refused at once, not "
                        "at the handshake deadline")
        self.assertIn("4294967295", m.group(0))
        self.assert_healthy()
        self.assert_all_stop_cleanly()

    def test_d_wrong_version_gets_reject(self):
        s = connect(self.sn.addr)
        with s:
            s.sendall(header(version=7, kind=1, length=32) + bytes(32))
            data, _ = read_until_closed(s, 10)
            self.assert_dropped(self.sn, s, r"[^\n]*version 7")
        self.assertGreaterEqual(len(data), 8, "no reply before the close")
        self.assertEqual(data[:2], b"P2")
        self.assertEqual(data[3], 3, "expected a REJECT frame (kind 3)")
        length = int.from_bytes(data[4:8], "big")
        self.assertEqual(len(data), 8 + length,
                         "exactly one REJECT frame, then the close")
        text = data[8:].decode("ascii")
        self.assertIn("version", text)
        self.assertIn("7", text)
        self.assert_healthy()
        self.assert_all_stop_cleanly()

    def test_e_half_open_connection(self):
        s = connect(self.sn.addr)
        with s:
            t0 = time.monotonic()
            # While it hangs there, the supernode serves others.
            self.assert_healthy()
            self.assertTrue(is_open(s) or time.monotonic() - t0 >=
                            HS_TIMEOUT_MS / 1000.0,
                            "dropped before the handshake timeout")
            _, waited = read_until_closed(s, HS_TIMEOUT_MS / 1000.0 + 5)
            elapsed = time.monotonic() - t0
            self.assert_dropped(self.sn, s, r"handshake not finished within "
                                r"%d ms" % HS_TIMEOUT_MS)
        harness.figure("half-open connection dropped after %.3f s "
                       "(handshake timeout %d ms)" % (elapsed, HS_TIMEOUT_MS))
        self.assertLessEqual(elapsed, HS_TIMEOUT_MS / 1000.0 + 2.0)
        self.assertGreaterEqual(elapsed, HS_TIMEOUT_MS / 1000.0 * 0.9,
                                "dropped before the handshake timeout")
        self.assert_healthy()
        self.assert_all_stop_cleanly()

    def test_f_slow_header(self):
        s = connect(self.sn.addr)
        with s:
            t0 = time.monotonic()
            closed_at = None
            for byte in header(kind=1, length=32):
                if not send_quietly(s, bytes([byte])):
                    closed_at = time.monotonic()
                    break
                r, _, _ = select.select([s], [], [], 0.3)
                if r and not is_open(s):
                    closed_at = time.monotonic()
                    break
            if closed_at is None:
                read_until_closed(s, HS_TIMEOUT_MS / 1000.0 + 5)
                closed_at = time.monotonic()
            self.assert_dropped(self.sn, s, r"handshake not finished within "
                                r"%d ms" % HS_TIMEOUT_MS)
        elapsed = closed_at - t0
        self.assertLessEqual(elapsed, HS_TIMEOUT_MS / 1000.0 + 2.0,
                             "a trickling client held the connection")
        self.assert_healthy()
        self.assert_all_stop_cleanly()

    def test_g_many_idle_connections(self):
        # A handshake timeout long enough for the connections to be really
        # held while mpihost runs, were they not pushed out.
        conf = self.c.write_config("long-handshake.conf", group="itest",
                                   key_file=self.c.key,
                                   handshake_timeout_ms=30000,
                                   heartbeat_ms=200,
                                   extra="[network]\n"
                                   "first_frame_ms = 30000\n")
        sn2 = self.c.start_supernode(conf=conf, name="supernode-long-hs")
        peer = self.c.start_peer(9, [sn2], conf=conf)
        (entry,) = self.c.wait_listed([sn2], [peer])
        socks = []
        try:
            for _ in range(300):
                socks.append(connect(sn2.addr))
            t0 = time.monotonic()
            entries = self.c.listed([sn2], [peer])
            elapsed = time.monotonic() - t0
            self.assertIsNotNone(entries, "mpihost did not list the peer "
                                 "with 300 idle connections open")
            self.assertEqual(entries[0]["id"], entry["id"])
            time.sleep(0.5)
            still_open = sum(1 for s in socks if is_open(s))
            harness.figure("mpihost answered in %.3f s with 300 idle "
                           "connections opened from one address (%d still "
                           "held)" % (elapsed, still_open))
            # One address gets its share (preauth_per_host, default 16),
            # its oldest pushed out by its newest: never all 300.
            self.assertLessEqual(still_open, 16, "one address held more "
                                 "than its share of unauthenticated "
                                 "connections")
            self.assertTrue(peer.alive())
        finally:
            for s in socks:
                s.close()
        # The log says so in a few lines and a summary, not 300 lines.
        sn2.wait_log(r"dropped \d+ unauthenticated connections in the last "
                     r"\d+ s \([^)]*per-address cap", timeout=15)
        lines = sn2.count_log(r"dropped")
        self.assertLessEqual(lines, 12, "one log line per dropped "
                             "connection:\n" + sn2.log()[-3000:])
        self.assertTrue(sn2.alive())
        self.assertIsNotNone(self.c.listed([sn2], [peer]))
        r = self.c.mpihost([sn2], json_out=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_healthy()
        self.assert_all_stop_cleanly()

    def test_h_sealed_frame_before_handshake(self):
        self.abuse(header(kind=2, length=64) + os.urandom(64),
                   r"sealed frame before the handshake finished")
        self.assert_healthy()
        # And a REJECT frame, which only a server may send.
        self.abuse(header(kind=3, length=4) + b"nope",
                   r"reject frame out of place")
        self.assert_healthy()
        self.assert_all_stop_cleanly()


class TestPeerServiceAbuse(SecurityTestCase):

    def test_random_bytes_and_oversized_header(self):
        peer = self.peers[0]
        junk = bytearray(os.urandom(100 * 1024))
        junk[0] = ord("X")
        self.abuse(bytes(junk), r"not a p2pmpi frame \(bad magic\)",
                   target=peer)
        self.abuse(header(kind=1, length=0xFFFFFFFF),
                   r"frame of 4294967295 bytes, limit \d+", target=peer)
        self.abuse(header(kind=2, length=64) + bytes(64),
                   r"sealed frame before the handshake finished", target=peer)
        self.assertTrue(peer.alive())
        # It keeps its registration: listed, and still heartbeating.
        time.sleep(0.5)
        entries = self.c.listed([self.sn], self.peers)
        self.assertIsNotNone(entries)
        self.assertEqual([e["id"] for e in entries], self.ids)
        self.assertLess(entries[0]["age_ms"], 3000)
        self.assertNotRegex(peer.log(), r"supernode .* lost")
        self.assert_healthy()
        self.assert_all_stop_cleanly()

    def test_half_open_service_connection(self):
        peer = self.peers[1]
        s = connect(peer.addr)
        with s:
            t0 = time.monotonic()
            read_until_closed(s, HS_TIMEOUT_MS / 1000.0 + 5)
            elapsed = time.monotonic() - t0
            self.assert_dropped(peer, s, r"handshake not finished within "
                                r"%d ms" % HS_TIMEOUT_MS)
        self.assertLessEqual(elapsed, HS_TIMEOUT_MS / 1000.0 + 2.0)
        self.assert_healthy()
        self.assert_all_stop_cleanly()


if __name__ == "__main__":
    harness.main()
