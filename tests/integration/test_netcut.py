#!/usr/bin/env python3
"""Jobs across a real network boundary: one peer lives in a network
namespace of its own, joined to the others by a veth pair (link-local
addresses 169.254.213.1 and .2, made by this test and gone with it).

A host's network cut, for real: a replicated MPI job runs across it; the
test takes the link down mid-run.  p2prun gives the host up after its
lease, the ranks it held go on with their other replicas, and the output is
byte for byte that of the run without the cut.  The cut-off host's peerd,
having lost its coordinator, kills its processes after the same lease:
nothing runs on beside its replacement.

A plain stream to another host: ranks on both sides of the pair exchange
windows of large messages unencrypted; the connections that cross it are
known as going to another host (written in short pieces, docs/mpi.md) and
every byte arrives.

Needs root and `ip netns` (iproute2); otherwise the test is skipped with a
message saying why."""

import os
import re
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

LEASE_MS = 1500
ROOT_IP, NS_IP = "169.254.213.1", "169.254.213.2"


def sh(*argv):
    return subprocess.run(list(argv), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def netns_unavailable():
    if os.geteuid() != 0:
        return "not root"
    if sh("ip", "-V").returncode != 0:
        return "no ip command (iproute2)"
    name = "p2pprobe%d" % os.getpid()
    r = sh("ip", "netns", "add", name)
    if r.returncode != 0:
        return "ip netns add failed: %s" % r.stdout.strip()
    sh("ip", "netns", "del", name)
    return None


WHY = netns_unavailable()


@unittest.skipIf(WHY is not None, "network namespaces unavailable: %s" % WHY)
class TestNetworkCut(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        tag = "%d" % (os.getpid() % 100000)
        self.ns = "p2pcut" + tag
        self.veth = "p2pv" + tag
        self.addCleanup(self.remove_netns)
        for argv in (("ip", "netns", "add", self.ns),
                     ("ip", "link", "add", self.veth + "a", "type", "veth",
                      "peer", "name", self.veth + "b"),
                     ("ip", "link", "set", self.veth + "b", "netns", self.ns),
                     ("ip", "addr", "add", ROOT_IP + "/30", "dev",
                      self.veth + "a"),
                     ("ip", "link", "set", self.veth + "a", "up"),
                     ("ip", "-n", self.ns, "addr", "add", NS_IP + "/30", "dev",
                      self.veth + "b"),
                     ("ip", "-n", self.ns, "link", "set", self.veth + "b",
                      "up"),
                     ("ip", "-n", self.ns, "link", "set", "lo", "up")):
            r = sh(*argv)
            self.assertEqual(r.returncode, 0, "%s: %s" % (argv, r.stdout))
        self.prog = self.mpi_program("mpi_steps")

    def remove_netns(self):
        sh("ip", "link", "del", self.veth + "a")
        sh("ip", "netns", "del", self.ns)

    def start_net(self):
        """A supernode and two peers on ROOT_IP, a third in the namespace
        on NS_IP; 3 slots each."""
        sn = self.c._daemon("supernode", [
            harness.binary("runSuperNode"), "--conf", self.c.conf,
            "--listen", ROOT_IP + ":0", "--foreground", "--expire", "10"])
        m = sn.wait_log(r"listening on 169\.254\.213\.1:(\d+)\b",
                        what="the supernode to listen")
        sn.addr = "%s:%s" % (ROOT_IP, m.group(1))
        peers = []
        for i, (ip, prefix) in enumerate(((ROOT_IP, []), (ROOT_IP, []),
                                          (NS_IP, ["ip", "netns", "exec",
                                                   self.ns]))):
            label = "host%d" % (i + 2)
            d = self.c._daemon("peerd-" + label, prefix + [
                harness.binary("peerd"), "--conf", self.c.conf,
                "--listen", ip + ":0", "--supernode", sn.addr,
                "--state-dir", self.c.path("state-" + label),
                "--slots", "3", "--host-label", label, "--foreground"])
            m = d.wait_log(r"serving on (169\.254\.213\.\d+:\d+) ",
                           what="%s to serve" % label)
            d.addr, d.label, d.slots, d.ip = m.group(1), label, 3, ip
            peers.append(d)
        self.c.wait_listed([sn], peers)
        key, _ = self.c.user_key("user")
        self.runconf = self.c.job_config("run.conf", [sn], user_key=key,
                                         lease_ms=LEASE_MS)
        return sn, peers

    def test_host_cut_off(self):
        sn, peers = self.start_net()
        args = ["-n", "3", "-r", "2", self.prog, "40"]
        ref = self.p2prun(args, timeout=60)
        self.assert_rc(ref, 0)
        run = self.start_p2prun(args)
        cut_off = peers[2]
        wait_until(lambda: self.c.job_processes([cut_off]) or
                   not run.alive(), 20, "processes on the namespace's host")
        time.sleep(0.3)
        theirs = list(self.c.job_processes([cut_off]))
        self.assertTrue(theirs, "nothing was placed on the cut-off host")
        t0 = time.monotonic()
        r = sh("ip", "link", "set", self.veth + "a", "down")
        self.assertEqual(r.returncode, 0, r.stdout)
        wait_until(lambda: "lost peer" in run.stderr or not run.alive(),
                   LEASE_MS / 1000 + 5, "p2prun to give the host up")
        figure("network cut: host given up after %.2f s (lease %d ms), %d "
               "of its processes replaced"
               % (time.monotonic() - t0, LEASE_MS, len(theirs)))
        self.assertIsNotNone(run.wait(60), run.describe())
        self.assert_rc(run, 0)
        self.assertEqual(self.per_rank(run.stdout), self.per_rank(ref.stdout),
                         run.describe())
        self.assertEqual(len(run.stdout), len(ref.stdout))
        # Cut off, its peerd lost the coordinator: it kills the job's
        # processes after the lease, with nobody to tell.
        wait_until(lambda: not self.c.job_processes([cut_off]),
                   LEASE_MS / 1000 + 5,
                   "the cut-off host's processes to die")
        sh("ip", "link", "set", self.veth + "a", "up")

    def test_plain_stream_to_another_host(self):
        self.start_net()
        prog = self.mpi_program(
            "mpi_p2p_stream",
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "mpi", "p2p_stream.c"))
        run = self.p2prun(["-n", "3", "--no-encrypt", "-x",
                           "P2P_MPI_STATS=1", prog], timeout=120)
        self.assert_rc(run, 0)
        crossing = [int(n) for n in re.findall(
            r"rank \d+: (\d+) TCP connections to other hosts", run.stderr)]
        self.assertEqual(len(crossing), 3, run.describe())
        # One rank per host: the namespace's rank reaches the other two
        # across the pair, and each of them reaches it.
        self.assertGreater(sum(crossing), 0, run.describe())
        self.assertIn("plain writes of at most 128 KiB", run.stderr)


if __name__ == "__main__":
    if WHY is not None:
        print("SKIP: network namespaces unavailable here: %s" % WHY)
    harness.main()
