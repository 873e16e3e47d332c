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
follow the affinity, and the job ends well."""

import os
import re
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402

CORES = re.compile(r"^p2pmpi: rank (\d+): (\d+) of the job's processes here, "
                   r"cores to run on (\d+): (sharing cores|a core each)$",
                   re.M)


class TestMpiCores(harness.JobTestCase):

    def setUp(self):
        super().setUp()
        self.sn, self.peers = self.start_jobnet(1, slots=4)
        self.prog = self.mpi_program("mpi_ring")

    def ring(self, n=2):
        run = self.p2prun(["-n", str(n), "-x", "P2P_MPI_STATS=1", self.prog,
                           "2000"], timeout=120)
        self.assert_rc(run, 0)
        for r in range(n):
            self.assertIn("rank %d ring ok" % r, run.stdout, run.describe())
        said = {int(r): (int(p), int(c), how)
                for r, p, c, how in CORES.findall(run.stderr)}
        self.assertEqual(sorted(said), list(range(n)), run.describe())
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


if __name__ == "__main__":
    harness.main()
