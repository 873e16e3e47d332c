#!/usr/bin/env python3
"""The owner's sharing policy: [peer] allow_users / deny_users (by the
user's verified key, named in [users] or in hex), allow_hosts / deny_hosts
(by the address a request really comes from), and sharing = no.  A refused
user's job runs elsewhere or fails with the reason; nobody gets in by
writing another user's name."""

import os
import stat
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import HEX64  # noqa: E402


class AccessCase(harness.JobTestCase):

    def peer_conf(self, name, peer=None, users=None):
        """The cluster's configuration plus [peer] keys and [users]."""
        extra = ""
        if peer:
            extra += "[peer]\n" + "".join("%s = %s\n" % kv
                                          for kv in peer.items())
        if users:
            extra += "[users]\n" + "".join("%s = %s\n" % kv
                                           for kv in users.items())
        return self.c.write_config(
            name, key_file=self.c.key,
            handshake_timeout_ms=self.c.handshake_timeout_ms,
            heartbeat_ms=self.c.heartbeat_ms, extra=extra)

    def user_conf(self, sn, user, key=None):
        """A p2prun configuration for user with key (default: made with
        p2p-keygen); (conf, public key hex)."""
        pub = None
        if key is None:
            key, pub = self.c.user_key(user)
        return self.c.job_config(user + ".conf", [sn], user_key=key), pub

    def hosts_of(self, run):
        """P2P_HOST of each rank, from 'host' lines."""
        self.assert_rc(run, 0)
        return sorted(run.stdout.split())

    HOST_CMD = ["sh", "-c", 'echo "$P2P_HOST"']


class TestUsers(AccessCase):

    def test_allow_users(self):
        _, alice_pub = self.c.user_key("alice")
        conf = self.peer_conf("peer.conf", peer={"allow_users": "alice"},
                              users={"alice": alice_pub})
        sn, peers = self.start_jobnet(1, slots=2, peer_confs={0: conf})
        alice, _ = self.user_conf(sn, "alice")
        # Bob has no key yet: p2prun makes one on first use.
        bob_key = self.c.path("bob", "user.key")
        bob, _ = self.user_conf(sn, "bob", key=bob_key)

        r = self.p2prun(self.HOST_CMD, conf=alice)
        self.assertEqual(self.hosts_of(r), [peers[0].label])

        r = self.p2prun(self.HOST_CMD, conf=bob)
        self.assertEqual(r.rc, 1, r.describe())
        self.assertRegex(r.stderr, r"not allowed", r.describe())
        self.assertRegex(r.stderr, r"created your user key", r.describe())
        self.assertEqual(r.stdout, "")
        self.assertEqual(stat.S_IMODE(os.stat(bob_key).st_mode), 0o600)
        with open(bob_key + ".pub") as f:
            bob_pub = f.read().strip()
        self.assertRegex(bob_pub, HEX64)
        self.assertNotEqual(bob_pub, alice_pub)

        # Writing alice's name changes nothing: the key decides.
        r = self.p2prun(self.HOST_CMD, conf=bob,
                        env={"USER": "alice", "LOGNAME": "alice"})
        self.assertEqual(r.rc, 1, "bob got in by calling himself alice:\n"
                         + r.describe())
        self.assertRegex(r.stderr, r"not allowed")
        self.assertNotRegex(r.stderr, r"user alice\b")
        self.assertIn("key:" + bob_pub[:12], peers[0].log(),
                      "the peer names the refused user by key")
        self.assert_job_over(sn, peers)

    def test_deny_users(self):
        sn = self.c.start_supernode()
        # Bob's key, made by p2prun on its first use (no peer yet).
        bob_key = self.c.path("bob.key")
        bob, _ = self.user_conf(sn, "bob", key=bob_key)
        r = self.p2prun(["true"], conf=bob)
        self.assertEqual(r.rc, 1, r.describe())
        with open(bob_key + ".pub") as f:
            bob_pub = f.read().strip()
        self.assertRegex(bob_pub, HEX64)
        alice, _ = self.user_conf(sn, "alice")
        by_name = self.peer_conf("deny-name.conf", peer={"deny_users": "bob"},
                                 users={"bob": bob_pub})
        by_key = self.peer_conf("deny-key.conf",
                                peer={"deny_users": "carol, " + bob_pub})
        peers = [self.c.start_peer(2, [sn], slots=2, conf=by_name),
                 self.c.start_peer(3, [sn], slots=2, conf=by_key),
                 self.c.start_peer(4, [sn], slots=2)]
        self.c.wait_listed([sn], peers)

        for _ in range(2):
            r = self.p2prun(["-n", "2"] + self.HOST_CMD, conf=bob)
            self.assertEqual(self.hosts_of(r), [peers[2].label] * 2,
                             "bob's job must avoid the peers denying him:\n"
                             + r.describe())
        r = self.p2prun(["-n", "3"] + self.HOST_CMD, conf=bob)
        self.assertEqual(r.rc, 1, r.describe())
        self.assertRegex(r.stderr, r"denied", r.describe())
        # Alice is welcome everywhere: spread puts a rank on each peer.
        r = self.p2prun(["-n", "3"] + self.HOST_CMD, conf=alice)
        self.assertEqual(self.hosts_of(r), sorted(p.label for p in peers))
        self.assert_job_over(sn, peers)


class TestHosts(AccessCase):

    def test_host_lists(self):
        confs = {0: self.peer_conf("deny.conf",
                                   peer={"deny_hosts": "127.0.0.0/8"}),
                 1: self.peer_conf("allow-other.conf",
                                   peer={"allow_hosts": "192.0.2.0/24"}),
                 2: self.peer_conf("allow-lo.conf",
                                   peer={"allow_hosts": "192.0.2.0/24, "
                                         "127.0.0.0/8"})}
        sn, peers = self.start_jobnet(3, slots=2, peer_confs=confs)
        r = self.p2prun(["-n", "2"] + self.HOST_CMD)
        self.assertEqual(self.hosts_of(r), [peers[2].label] * 2,
                         r.describe())
        r = self.p2prun(["-n", "3"] + self.HOST_CMD)
        self.assertEqual(r.rc, 1, r.describe())
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr_lines()), 1, r.describe())
        self.assertRegex(r.stderr, r"^p2prun: need 3 slots")
        self.assert_job_over(sn, peers)

    def test_deny_all_hosts(self):
        conf = self.peer_conf("deny.conf", peer={"deny_hosts": "127.0.0.0/8"})
        sn, peers = self.start_jobnet(1, slots=2, peer_confs={0: conf})
        r = self.p2prun(self.HOST_CMD)
        self.assertEqual(r.rc, 1, r.describe())
        self.assertRegex(r.stderr, r"denied", r.describe())
        self.assert_job_over(sn, peers)


class TestSharing(AccessCase):

    def test_not_sharing(self):
        conf = self.peer_conf("private.conf", peer={"sharing": "no"})
        sn, peers = self.start_jobnet(2, slots=2, peer_confs={0: conf})
        entries = self.c.listed([sn], peers)
        self.assertEqual([e["state"] for e in entries],
                         ["not-sharing", "available"])
        r = self.p2prun(["-n", "2"] + self.HOST_CMD)
        self.assertEqual(self.hosts_of(r), [peers[1].label] * 2,
                         "a peer that does not share gets no process")
        r = self.p2prun(["-n", "3"] + self.HOST_CMD)
        self.assertEqual(r.rc, 1, r.describe())
        self.assertRegex(r.stderr, r"need 3 slots on 1\+ hosts")
        self.assertEqual(peers[0].count_log(r"reserved for|started for"), 0)
        self.assert_job_over(sn, peers)


if __name__ == "__main__":
    harness.main()
