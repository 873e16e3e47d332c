#!/usr/bin/env python3
"""The systemd units (conf/systemd/): what `make install PREFIX=/usr`
and the package install is the source itself; installed under another
prefix they point at that prefix's programs and pass `systemd-analyze
verify` with not one warning (skipped, with a message, where systemd is
not installed); and they keep the settings the daemons rely on: the
foreground, restart on failure, the supernode unprivileged and hardened,
peerd root with a delegated cgroup subtree and nothing that would stop it
from boxing jobs (see the comments in the units)."""

import os
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
import pkgtools  # noqa: E402
from pkgtools import SOURCE_DIR  # noqa: E402

UNITS = ["p2p-supernode.service", "p2p-peerd.service"]


def directives(path):
    """[(section, key, value)] of a unit file, repeated keys kept."""
    out, sec = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                sec = line.strip("[]")
                continue
            key, _, value = line.partition("=")
            out.append((sec, key.strip(), value.strip()))
    return out


def values(path, key):
    return [v for _, k, v in directives(path) if k == key]


class TestUnits(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.usr = pkgtools.InstalledTree("units-usr", "/usr")
        cls.tmp = pkgtools.InstalledTree("units-prefix", "/opt/p2pmpi")

    @classmethod
    def tearDownClass(cls):
        cls.usr.remove()
        cls.tmp.remove()

    def src(self, unit):
        return os.path.join(SOURCE_DIR, "conf", "systemd", unit)

    def test_package_units_are_the_source(self):
        for unit in UNITS:
            with self.subTest(unit=unit):
                inst = os.path.join(self.usr.destdir, "lib", "systemd",
                                    "system", unit)
                with open(self.src(unit)) as a, open(inst) as b:
                    self.assertEqual(a.read(), b.read())
                self.assertTrue(os.path.exists(os.path.join(
                    self.usr.destdir, "etc", "p2p", "p2p.conf")))

    def test_verify(self):
        tool = shutil.which("systemd-analyze")
        if tool is None:
            self.skipTest("systemd-analyze not installed (Debian package "
                          "systemd): units not verified")
        # Installed under /opt/p2pmpi (inside a DESTDIR), their ExecStart
        # names the prefix's programs; verify wants them where the unit
        # says, so verify copies whose paths point into the DESTDIR.
        unitdir = self.tmp.path("lib", "systemd", "system")
        checked = []
        for unit in UNITS:
            with open(os.path.join(unitdir, unit)) as f:
                text = f.read()
            self.assertIn("/opt/p2pmpi/bin/", text)
            self.assertNotIn("/usr/bin/", text)
            path = os.path.join(self.tmp.dir, unit)
            with open(path, "w") as f:
                f.write(text.replace("/opt/p2pmpi/", self.tmp.root + "/"))
            checked.append(path)
        r = subprocess.run([tool, "verify"] + checked, capture_output=True,
                           text=True, timeout=60,
                           env=dict(os.environ,
                                    MANPATH=self.tmp.path("share", "man")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.strip(), "",
                         "systemd-analyze verify complains")

    def test_both_daemons(self):
        for unit in UNITS:
            with self.subTest(unit=unit):
                p = self.src(unit)
                self.assertEqual(values(p, "Type"), ["simple"])
                self.assertIn("--foreground", values(p, "ExecStart")[0])
                self.assertEqual(values(p, "Restart"), ["on-failure"])
                self.assertEqual(values(p, "WantedBy"), ["multi-user.target"])
                self.assertEqual(values(p, "NoNewPrivileges"), ["yes"])
                self.assertEqual(values(p, "ProtectSystem"), ["strict"])
                self.assertEqual(values(p, "ProtectHome"), ["yes"])

    def test_supernode_unprivileged(self):
        p = self.src("p2p-supernode.service")
        self.assertEqual(values(p, "User"), ["p2p"])
        self.assertEqual(values(p, "CapabilityBoundingSet"), [""])
        self.assertEqual(values(p, "PrivateDevices"), ["yes"])

    def test_peerd_can_box_jobs(self):
        p = self.src("p2p-peerd.service")
        self.assertEqual(values(p, "Delegate"), ["yes"])
        self.assertEqual(values(p, "KillMode"), ["mixed"])
        for key in ("User", "DynamicUser", "PrivateUsers",
                    "ProtectControlGroups", "ProtectKernelTunables",
                    "SystemCallFilter", "MemoryDenyWriteExecute",
                    "DeviceAllow", "PrivateDevices", "ProtectClock"):
            self.assertEqual(values(p, key), [],
                             "%s would break peerd or its jobs" % key)
        self.assertEqual(values(p, "RestrictNamespaces"), ["mnt"])
        caps = values(p, "CapabilityBoundingSet")[0].split()
        # setuid to job uids, mount namespaces (setns needs CAP_SYS_CHROOT
        # too), killing and removing what jobs leave.
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SYS_ADMIN",
                    "CAP_SYS_CHROOT", "CAP_KILL", "CAP_DAC_OVERRIDE"):
            self.assertIn(cap, caps)


if __name__ == "__main__":
    unittest.main(verbosity=2)
