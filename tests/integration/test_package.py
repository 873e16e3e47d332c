#!/usr/bin/env python3
"""The .deb: built with CPack from the build tree, it is named
p2pmpi_VERSION_ARCH.deb, depends on the runtime libraries only (found by
dpkg-shlibdeps, all installed here), holds the expected files (programs,
shared and static library, header, pkg-config file, manual pages, units,
the configuration as a conffile), and its maintainer scripts create the
p2p user and greet a machine without a group key.  Unpacked into a
scratch root, its programs refuse to start without a key with a message
that says what to do, and with one they make a network on loopback that
runs `p2prun -n 2 hostname`.

The package here comes from the test build (libdir lib/); `make deb`
builds the release one from a tree configured for /usr (libdir
lib/x86_64-linux-gnu).  Installing it for real with dpkg needs a chroot
and is left to a run on demand."""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
import harness  # noqa: E402
import pkgtools  # noqa: E402
from pkgtools import BUILD_DIR  # noqa: E402

PROGRAMS = ["mpihost", "p2p-keygen", "p2pcc", "p2prun", "peerd",
            "runSuperNode"]


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          **kw)


class TestPackage(harness.JobTestCase):

    @classmethod
    def setUpClass(cls):
        for tool in ("cpack", "dpkg-deb", "dpkg-shlibdeps"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest("%s not installed (make deps)" % tool)
        if not os.path.exists(os.path.join(BUILD_DIR, "CPackConfig.cmake")):
            raise unittest.SkipTest("no CPackConfig.cmake in %s" % BUILD_DIR)
        cls.version = pkgtools.project_version()
        cls.arch = run(["dpkg", "--print-architecture"]).stdout.strip()
        cls.work = tempfile.mkdtemp(prefix="p2p-deb-")
        t0 = time.monotonic()
        r = run(["cpack", "-G", "DEB", "--config",
                 os.path.join(BUILD_DIR, "CPackConfig.cmake"),
                 "-B", cls.work])
        cls.build_s = time.monotonic() - t0
        if r.returncode != 0:
            raise AssertionError("cpack failed:\n%s%s" % (r.stdout, r.stderr))
        cls.deb = os.path.join(cls.work, "p2pmpi_%s_%s.deb"
                               % (cls.version, cls.arch))
        if not os.path.exists(cls.deb):
            raise AssertionError("cpack made %s, not %s"
                                 % (os.listdir(cls.work), cls.deb))
        harness.figure("package %s: %d KiB, built by cpack in %.1f s"
                       % (os.path.basename(cls.deb),
                          os.path.getsize(cls.deb) // 1024, cls.build_s))
        cls.root = os.path.join(cls.work, "root")
        r = run(["dpkg-deb", "-x", cls.deb, cls.root])
        assert r.returncode == 0, r.stderr
        cls.control = os.path.join(cls.work, "control")
        r = run(["dpkg-deb", "-e", cls.deb, cls.control])
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def field(self, name):
        r = run(["dpkg-deb", "-f", self.deb, name])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    # -- what dpkg sees ------------------------------------------------------

    def test_control(self):
        self.assertEqual(self.field("Package"), "p2pmpi")
        self.assertEqual(self.field("Version"), self.version)
        self.assertEqual(self.field("Architecture"), self.arch)
        r = run(["dpkg-deb", "--info", self.deb])
        self.assertEqual(r.returncode, 0, r.stderr)
        for part in ("conffiles", "postinst", "prerm", "postrm", "md5sums"):
            self.assertRegex(r.stdout, r"\b%s\b" % part)

    def test_dependencies(self):
        deps = [d.strip() for d in self.field("Depends").split(",")]
        names = {re.match(r"[a-z0-9.+-]+", d).group(0) for d in deps}
        # What the programs link, and nothing to build with.
        for lib in ("libc6", "libevent", "libsodium", "libhwloc",
                    "libprotobuf-c", "libinih", "libjansson"):
            self.assertTrue(any(n.startswith(lib) for n in names),
                            "no %s* in Depends: %s" % (lib, deps))
        for n in names:
            self.assertFalse(n.endswith("-dev") or n in ("gcc", "cmake",
                                                         "clang", "scdoc"),
                             "build-time package %s in Depends" % n)
        # Every one of them is a package this machine has: the .deb
        # installs where it was built.
        for n in sorted(names):
            r = run(["dpkg-query", "-W", "-f=${Status}", n])
            self.assertIn("ok installed", r.stdout, "%s not installed" % n)
        self.assertIn("libsodium-dev", self.field("Recommends"))
        # Loaded at run time (proto/imb.h), so named by hand where built.
        if os.path.exists("/usr/include/intel-ipsec-mb.h"):
            self.assertIn("libipsec-mb1", self.field("Recommends"))

    def test_contents(self):
        r = run(["dpkg-deb", "--contents", self.deb])
        self.assertEqual(r.returncode, 0, r.stderr)
        files = {l.split()[5].lstrip(".") for l in r.stdout.splitlines()}
        so = self.version.split(".")
        soname = so[0] if so[0] != "0" else "0." + so[1]
        libdir = next((os.path.dirname(f) for f in files
                       if f.endswith("/libp2pmpi.a")), None)
        self.assertIsNotNone(libdir, "no libp2pmpi.a")
        want = (["/usr/bin/" + p for p in PROGRAMS] +
                ["/usr/share/man/man1/%s.1" % p for p in PROGRAMS] +
                ["/usr/share/man/man5/p2p.conf.5",
                 "/usr/include/p2pmpi/mpi.h",
                 libdir + "/libp2pmpi.so",
                 libdir + "/libp2pmpi.so." + soname,
                 libdir + "/libp2pmpi.so." + self.version,
                 libdir + "/pkgconfig/p2pmpi.pc",
                 "/lib/systemd/system/p2p-supernode.service",
                 "/lib/systemd/system/p2p-peerd.service",
                 "/etc/p2p/p2p.conf",
                 "/usr/share/doc/p2pmpi/install.md"])
        for f in want:
            with self.subTest(file=f):
                self.assertIn(f, files)
        self.assertTrue(libdir in ("/usr/lib", "/usr/lib/" +
                                   run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]
                                       ).stdout.strip()), libdir)
        stray = sorted(f for f in files if not f.endswith("/") and
                       not f.startswith(("/usr/", "/etc/p2p/",
                                         "/lib/systemd/system/")))
        self.assertEqual(stray, [])
        self.assertFalse([f for f in files if "/usr/local" in f])
        with open(os.path.join(self.control, "conffiles")) as f:
            self.assertEqual(f.read().split(), ["/etc/p2p/p2p.conf"])
        with open(os.path.join(self.root, "lib/systemd/system/p2p-peerd.service")) as f:
            self.assertIn("ExecStart=/usr/bin/peerd --foreground "
                          "--conf /etc/p2p/p2p.conf", f.read())

    def test_postinst(self):
        """Run the postinst against stand-ins for getent, useradd and
        systemctl: the p2p user is created once, as a system user."""
        script = os.path.join(self.control, "postinst")
        self.assertTrue(os.access(script, os.X_OK))
        for s in ("postinst", "prerm", "postrm"):
            r = run(["sh", "-n", os.path.join(self.control, s)])
            self.assertEqual(r.returncode, 0, r.stderr)
        stubs = os.path.join(self.work, "stubs")
        os.makedirs(stubs, exist_ok=True)
        log = os.path.join(self.work, "stubs.log")
        for name, rc in (("getent", 2), ("useradd", 0), ("systemctl", 0)):
            with open(os.path.join(stubs, name), "w") as f:
                f.write("#!/bin/sh\necho %s \"$@\" >> %s\nexit %d\n"
                        % (name, log, rc))
            os.chmod(os.path.join(stubs, name), 0o755)
        env = dict(os.environ, PATH=stubs + ":" + os.environ["PATH"])
        r = run([script, "configure", ""], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(log) as f:
            calls = f.read()
        self.assertRegex(calls, r"(?m)^useradd --system .* p2p$")
        if not os.path.exists("/etc/p2p/group.key"):
            self.assertIn("no group key", r.stdout)
            self.assertIn("p2p-keygen --group /etc/p2p/group.key", r.stdout)
            self.assertIn("systemctl enable --now p2p-peerd", r.stdout)

    # -- the unpacked programs -------------------------------------------------

    def packaged_conf(self, name, key_file):
        """The package's /etc/p2p/p2p.conf, with this cluster's group
        name and key."""
        with open(os.path.join(self.root, "etc", "p2p", "p2p.conf")) as f:
            text = f.read()
        text = re.sub(r"(?m)^group = .*$", "group = itest", text)
        text = re.sub(r"(?m)^key_file = .*$", "key_file = %s" % key_file, text)
        path = self.c.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_first_run_without_key(self):
        harness.BIN_DIR = os.path.join(self.root, "usr", "bin")
        conf = self.packaged_conf("nokey.conf", self.c.path("none", "group.key"))
        for prog in ("runSuperNode", "peerd"):
            with self.subTest(prog=prog):
                r = self.c.run([harness.binary(prog), "--conf", conf,
                                "--foreground"], timeout=30)
                self.assertEqual(r.returncode, 1)
                self.assertIn("no group key at %s" % self.c.path("none", "group.key"),
                              r.stderr)
                self.assertIn("p2p-keygen --group", r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_network_from_package(self):
        """runSuperNode and two peerd from the unpacked /usr/bin, with the
        package's configuration, and p2prun -n 2 hostname against them."""
        harness.BIN_DIR = os.path.join(self.root, "usr", "bin")
        t0 = time.monotonic()
        conf = self.packaged_conf("pkg.conf", self.c.key)
        sn = self.c.start_supernode(conf=conf)
        peers = [self.c.start_peer(2 + i, [sn], slots=1, conf=conf)
                 for i in range(2)]
        self.c.wait_listed([sn], peers)
        r = self.c.p2prun(["--supernode", sn.addr, "-n", "2", "hostname"],
                          conf=conf, timeout=60)
        elapsed = time.monotonic() - t0
        self.assertEqual(r.rc, 0, r.describe())
        self.assertEqual(r.stdout.splitlines(), [socket.gethostname()] * 2,
                         r.describe())
        harness.figure("from the unpacked package: supernode, 2 peers and "
                       "p2prun -n 2 hostname in %.2f s" % elapsed)


if __name__ == "__main__":
    harness.main()
