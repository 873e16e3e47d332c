#!/usr/bin/env python3
"""Issue 10's "hung replica" figure: a -r 2 MPI job (3 ranks, mpi_steps
200 steps) with one replica process SIGSTOPped for 25 s one second in
(continued after 25 s); prints the job's wall time and that of a run
without the stop.  Default lease (5000 ms).  P2P_BIN_DIR picks the
binaries (default build/bin).  Usage:
    P2P_BIN_DIR=build/bin python3 bench/hung_replica.py
"""
import os, signal, subprocess, sys, time, unittest
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
sys.dont_write_bytecode = True
import harness
from harness import wait_until

class M(harness.JobTestCase):
    def test_measure(self):
        self.start_jobnet(3, slots=3)
        prog = self.c.path("mpi_steps")
        subprocess.run([harness.binary("p2pcc"), "-O2", "-o", prog,
                        os.path.join(HERE, "..", "tests", "integration", "mpi_steps.c")], check=True)
        args = ["-n", "3", "-r", "2", prog, "200"]
        ref = self.p2prun(args)
        run = self.start_p2prun(args)
        wait_until(lambda: len(self.replica_procs("mpi_steps")) == 6, 20)
        time.sleep(1)
        (pid,) = self.replica_procs("mpi_steps", rank=1, replica=0)
        os.kill(pid, signal.SIGSTOP)
        t0 = time.monotonic()
        while run.alive() and time.monotonic() - t0 < 25:
            time.sleep(0.05)
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        run.wait(120)
        same = self.per_rank(run.stdout) == self.per_rank(ref.stdout)
        print("\nRESULT bin=%s failure-free %.1f s; one replica stopped 25 s: "
              "%.1f s, exit %s, output identical: %s"
              % (harness.BIN_DIR, ref.elapsed, run.elapsed, run.rc, same))

if __name__ == "__main__":
    harness.main()
