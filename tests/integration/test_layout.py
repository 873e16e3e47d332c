#!/usr/bin/env python3
"""make install / make uninstall: with PREFIX=/usr (in a DESTDIR) the
files land where Debian expects them; an existing /etc/p2p/p2p.conf is
never overwritten (the example goes beside it); uninstall removes every
installed file but the administrator's configuration."""

import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
import pkgtools  # noqa: E402
from pkgtools import SOURCE_DIR  # noqa: E402


class TestLayout(unittest.TestCase):

    def setUp(self):
        self.tree = pkgtools.InstalledTree("layout", "/usr")
        self.addCleanup(self.tree.remove)

    def rel(self):
        out = set()
        for dirpath, _, files in os.walk(self.tree.destdir):
            for f in files:
                out.add(os.path.join(dirpath, f)[len(self.tree.destdir):])
        return out

    def test_debian_places(self):
        files = self.rel()
        for f in ("/usr/bin/p2prun", "/usr/bin/peerd", "/usr/bin/runSuperNode",
                  "/usr/include/p2pmpi/mpi.h", "/usr/share/man/man1/p2prun.1",
                  "/usr/share/man/man5/p2p.conf.5", "/etc/p2p/p2p.conf",
                  "/lib/systemd/system/p2p-peerd.service",
                  "/usr/share/doc/p2pmpi/install.md"):
            self.assertIn(f, files)
        self.assertTrue(any(f.endswith("/libp2pmpi.a") for f in files))
        self.assertTrue(any(f.endswith("/pkgconfig/p2pmpi.pc") for f in files))
        self.assertFalse([f for f in files if f.startswith("/usr/etc/")])

    def test_existing_conf_kept_and_uninstall(self):
        conf = os.path.join(self.tree.destdir, "etc", "p2p", "p2p.conf")
        with open(conf, "w") as f:
            f.write("# the administrator's\n")
        manifest = pkgtools.install("/usr", self.tree.destdir)
        with open(conf) as f:
            self.assertEqual(f.read(), "# the administrator's\n")
        example = conf + ".example"
        with open(example) as f, \
                open(os.path.join(SOURCE_DIR, "conf", "p2p.conf")) as g:
            self.assertEqual(f.read(), g.read())
        # make uninstall's script, on this install's manifest.
        mf = os.path.join(self.tree.dir, "install_manifest.txt")
        with open(mf, "w") as f:
            f.write("\n".join(p[len(self.tree.destdir):] for p in manifest))
        r = subprocess.run(["cmake", "-P", os.path.join(SOURCE_DIR, "conf",
                                                        "uninstall.cmake"), mf],
                           capture_output=True, text=True,
                           env=dict(os.environ, DESTDIR=self.tree.destdir))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.rel(), {"/etc/p2p/p2p.conf"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
