#!/usr/bin/env python3
"""How many cores a job's ranks may run on decides how they wait
(mpjrun/mpi/request.c): with a core each they spin, sharing cores they
yield between passes.  The count is the ranks' CPU affinity (taskset, a
cpuset), not the machine's online cores: two ranks allowed one core of
two, counted as having one each, spun without yielding and each message
waited for the scheduler's tick (1-byte latency 4 ms instead of 8 us).

One host (a peerd with four slots), jobs of two ranks passing a token
round a ring 2000 times; P2P_MPI_STATS makes every rank say what it
counted.  With every core: a core each.  With the peerd's affinity cut to
one core (its job's processes inherit it): sharing cores.  Whether the
ring runs fast is bench/'s business; here, that the count and the choice
follow the affinity, and the job ends well.

A program may wait in its own loop of MPI_Test or MPI_Iprobe: such a loop
yields the core too (req_poll_missed); before, two ranks polling on one
core handed it over at the scheduler's tick, 4 ms a message.  With the
peerd on one core, every rank of a polling ring says it yielded."""

import os
import re
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402

POLL_YIELDS = re.compile(r"^p2pmpi: rank (\d+): tests and probes that "
                         r"found nothing yielded the core (\d+) times$", re.M)
CORES = re.compile(r"^p2pmpi: rank (\d+): (\d+) of the job's processes here, "
                   r"cores to run on (\d+): (sharing cores|a core each)$",
                   re.M)


class TestMpiCores(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(1, slots=4)
        self.prog = self.mpi_program("mpi_ring")

    def ring(self, n=2, wait=None):
        run = self.p2prun(["-n", str(n), "-x", "P2P_MPI_STATS=1", self.prog,
                           "2000"] + ([wait] if wait else []), timeout=120)
        self.assert_rc(run, 0)
        for r in range(n):
            self.assertIn("rank %d ring ok" % r, run.stdout, run.describe())
        said = {int(r): (int(p), int(c), how)
                for r, p, c, how in CORES.findall(run.stderr)}
        self.assertEqual(sorted(said), list(range(n)), run.describe())
        self.yields = {int(r): int(k)
                       for r, k in POLL_YIELDS.findall(run.stderr)}
        self.assertEqual(sorted(self.yields), list(range(n)), run.describe())
        return said

    def test_affinity_decides(self):
        mine = sorted(os.sched_getaffinity(0))
        if len(mine) < 2:
            self.skipTest("this process may run on one core only: nothing "
                          "to cut the peer down to")
        for procs, cores, how in self.ring().values():
            self.assertEqual((procs, cores, how), (2, len(mine), "a core each"))
        os.sched_setaffinity(self.peers[0].pid, {mine[0]})
        for procs, cores, how in self.ring().values():
            self.assertEqual((procs, cores, how), (2, 1, "sharing cores"))
        for procs, cores, how in self.ring(3).values():
            self.assertEqual((procs, cores, how), (3, 1, "sharing cores"))

    def test_polling_loop_yields(self):
        mine = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(self.peers[0].pid, {mine[0]})
        for wait in ("test", "probe"):
            for procs, cores, how in self.ring(2, wait).values():
                self.assertEqual((procs, cores, how), (2, 1, "sharing cores"))
            for r, k in self.yields.items():
                self.assertGreater(k, 0, "rank %d polling with %s on one core "
                                   "never yielded" % (r, wait))


if __name__ == "__main__":
    harness.main()
