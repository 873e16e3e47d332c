#!/usr/bin/env python3
"""Ghosts: whoever holds the group key can tell a supernode about peers
that do not exist (made-up node keys, labels, capacities and addresses).
Written as that attacker (tests/integration/ghost.c registers them):

- p2prun checks that the peer it reaches at a listed address proves the
  node key listed for it; a ghost (nothing there, a tarpit, or a real
  peer's address under another key) costs at most one short timeout, in
  parallel with the others, and never the job while real slots exist.
  This is tested against a supernode told not to check
  ([supernode] check_peers = no), as one that is older or misconfigured.
- A supernode (check_peers = yes, the default) lists a registration only
  once the announced address answers and proves the registered key, so
  ghosts are refused at the door."""

import socket
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402

ATTACKER = "127.0.0.66"  # the key holder's own host
TARPIT = "127.0.0.67"    # accepts connections, never answers


class GhostCase(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.tarpit = None

    def tearDown(self):
        if self.tarpit is not None:
            self.tarpit.close()
        super().tearDown()

    def network(self, check_peers):
        """A supernode (checking registrations or not), three real peers
        with 2 slots each; self.runconf for p2prun."""
        extra = "" if check_peers else "[supernode]\ncheck_peers = no\n"
        snconf = self.c.write_config(
            "sn.conf", key_file=self.c.key,
            handshake_timeout_ms=self.c.handshake_timeout_ms,
            heartbeat_ms=self.c.heartbeat_ms, extra=extra)
        self.sn = self.c.start_supernode(conf=snconf)
        self.peers = [self.c.start_peer(2 + i, [self.sn], slots=2,
                                        state_dir=self.c.path("state-%d" % i))
                      for i in range(3)]
        self.ids = {e["id"] for e in self.c.wait_listed([self.sn],
                                                         self.peers)}
        key, _ = self.c.user_key("user")
        self.runconf = self.c.job_config("run.conf", [self.sn], user_key=key)

    def refusing_addr(self):
        """An address where nothing listens."""
        return "%s:%d" % (ATTACKER, harness.free_port(ATTACKER))

    def tarpit_addr(self):
        """An address that accepts TCP connections and never says a word."""
        self.tarpit = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tarpit.bind((TARPIT, 0))
        self.tarpit.listen(1024)
        return "%s:%d" % self.tarpit.getsockname()

    def ghosts(self, addrs, count, name="ghosts"):
        """Start the attacker; wait until the supernode answered every
        ghost; (daemon, registered, refused)."""
        argv = [harness.binary("p2p_ghost"), "--conf", self.c.conf,
                "--supernode", self.sn.addr, "--count", str(count),
                "--slots", "8", "--source", ATTACKER]
        for a in addrs:
            argv += ["--addr", a]
        d = self.c._daemon(name, argv)
        m = d.wait_log(r"done (\d+) registered (\d+) refused", timeout=60)
        return d, int(m.group(1)), int(m.group(2))

    def listed_count(self):
        return len(self.c.list_peers([self.sn]))

    def assert_jobs_run(self, jobs):
        for args in jobs:
            r = self.p2prun(list(args) + ["true"], timeout=60)
            self.assert_rc(r, 0)
            self.assertNotIn("already in use", r.stderr, r.describe())
            # Skipping a ghost is not worth a line each.
            self.assertLess(len(r.stderr_lines()), 10, r.describe())
            harness.figure("p2prun %s with ghosts listed: exit %d in %.2f s"
                           % (" ".join(args), r.rc, r.elapsed))
        # Nothing left of the jobs on the real peers, every slot free.
        self.wait_no_job_processes(self.peers, 5)
        self.wait_job_dirs_gone(self.peers, 5)
        harness.wait_until(lambda: all(
            e["slots_free"] == 2 for e in self.c.list_peers([self.sn])
            if e["id"] in self.ids), 5, "every real slot to be free")


JOBS = [["-n", "6"], ["-n", "2", "-r", "2"], ["-n", "4", "-a", "concentrate"]]


class TestP2prunProvesPeers(GhostCase):
    """Against a supernode that lists whatever key holders say."""

    def test_refusing_ghosts(self):
        self.network(check_peers=False)
        _, reg, _ = self.ghosts([self.refusing_addr()], 200)
        self.assertEqual(reg, 200)
        self.assertEqual(self.listed_count(), 203)
        self.assert_jobs_run(JOBS)

    def test_tarpit_ghosts(self):
        self.network(check_peers=False)
        _, reg, _ = self.ghosts([self.tarpit_addr()], 20)
        self.assertEqual(reg, 20)
        self.assert_jobs_run([["-n", "6"], ["-n", "2", "-r", "2"]])

    def test_ghost_at_a_real_peers_address(self):
        self.network(check_peers=False)
        # Another key, a real peer's address, more slots than anyone.
        _, reg, _ = self.ghosts([self.peers[0].addr], 1)
        self.assertEqual(reg, 1)
        for _ in range(3):
            self.assert_jobs_run([["-n", "6"]])


class TestSupernodeChecksRegistrations(GhostCase):

    def test_ghosts_are_refused(self):
        self.network(check_peers=True)
        addrs = [self.refusing_addr(), self.tarpit_addr(), self.peers[1].addr]
        d, reg, refused = self.ghosts(addrs, 30)
        self.assertEqual((reg, refused), (0, 30), d.log()[-3000:])
        self.assertRegex(d.log(), r"refused \d+: registration refused: "
                         r"127\.0\.0\.3:\d+ does not answer for this node key")
        # Only the real peers are listed, and jobs use them.
        self.assertIsNotNone(self.c.listed([self.sn], self.peers))
        self.assert_jobs_run(JOBS)
        # A real peer that comes later still registers.
        late = self.c.start_peer(5, [self.sn], slots=2,
                                 state_dir=self.c.path("state-late"))
        self.c.wait_listed([self.sn], self.peers + [late])


if __name__ == "__main__":
    harness.main()
