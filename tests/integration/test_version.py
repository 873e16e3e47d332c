#!/usr/bin/env python3
"""One version, from one place (project() in the top CMakeLists.txt):
every installed program's --version prints it, and so do the pkg-config
file and the shared library's soname (the package name is checked by
test_package.py)."""

import glob
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
import pkgtools  # noqa: E402


def soversion(version):
    """libp2pmpi.so.MAJOR, or .so.0.MINOR before 1.0 (mpjrun/mpi)."""
    major, minor = version.split(".")[:2]
    return major if major != "0" else "0." + minor


class TestVersion(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.version = pkgtools.project_version()
        cls.tree = pkgtools.InstalledTree("version")

    @classmethod
    def tearDownClass(cls):
        cls.tree.remove()

    def test_every_program(self):
        progs = self.tree.programs()
        self.assertGreaterEqual(len(progs), 6, progs)
        for prog in progs:
            with self.subTest(prog=prog):
                r = subprocess.run([self.tree.path("bin", prog), "--version"],
                                   capture_output=True, text=True, timeout=30,
                                   stdin=subprocess.DEVNULL,
                                   env=pkgtools.QUIET_ENV)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout, "%s (p2pmpi) %s\n"
                                 % (prog, self.version))
                self.assertEqual(r.stderr, "")

    def libdir(self):
        pcs = glob.glob(os.path.join(self.tree.root, "lib", "**", "p2pmpi.pc"),
                        recursive=True)
        self.assertEqual(len(pcs), 1, pcs)
        return os.path.dirname(os.path.dirname(pcs[0])), pcs[0]

    def test_pkg_config(self):
        _, pc = self.libdir()
        with open(pc) as f:
            text = f.read()
        self.assertRegex(text, r"(?m)^Version: %s$" % re.escape(self.version))
        if shutil.which("pkg-config"):
            r = subprocess.run(["pkg-config", "--modversion", "p2pmpi"],
                               capture_output=True, text=True,
                               env=dict(os.environ,
                                        PKG_CONFIG_PATH=os.path.dirname(pc)))
            self.assertEqual(r.stdout.strip(), self.version, r.stderr)

    def test_shared_library(self):
        libdir, _ = self.libdir()
        so = soversion(self.version)
        real = os.path.join(libdir, "libp2pmpi.so." + self.version)
        self.assertTrue(os.path.isfile(real), "no %s" % real)
        self.assertEqual(os.readlink(os.path.join(libdir, "libp2pmpi.so." + so)),
                         "libp2pmpi.so." + self.version)
        self.assertEqual(os.readlink(os.path.join(libdir, "libp2pmpi.so")),
                         "libp2pmpi.so." + so)
        self.assertTrue(os.path.isfile(os.path.join(libdir, "libp2pmpi.a")))
        r = subprocess.run(["readelf", "-d", real], capture_output=True,
                           text=True)
        self.assertIn("Library soname: [libp2pmpi.so.%s]" % so, r.stdout)
        # Only the standard names are exported, and the documented p2p_*
        # (the callbacks behind MPI_COMM_DUP_FN and friends).
        r = subprocess.run(["nm", "-D", "--defined-only", real],
                           capture_output=True, text=True)
        names = [l.split()[-1] for l in r.stdout.splitlines() if l.strip()]
        self.assertIn("MPI_Init", names)
        leaked = [n for n in names
                  if not n.startswith(("MPI_", "PMPI_", "p2p_"))]
        self.assertEqual(leaked, [], "libp2pmpi.so exports internals")


if __name__ == "__main__":
    unittest.main(verbosity=2)
