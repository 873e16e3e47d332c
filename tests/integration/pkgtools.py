"""What the packaging tests share: the build and source trees, the
project's version, and an install of the build into a scratch prefix
(what `make install` does, without touching the machine)."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.environ.get("P2P_SOURCE_DIR")
                             or os.path.join(HERE, "..", ".."))
BUILD_DIR = os.path.abspath(os.environ.get("P2P_BUILD_DIR")
                            or os.path.join(SOURCE_DIR, "build"))


# For --help and --version in a sanitizer build: what they print is
# checked here, not what they free on the way out (p2prun exits with its
# option tables allocated, which LeakSanitizer reports).
QUIET_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:" +
                 os.environ.get("ASAN_OPTIONS", ""))


def project_version():
    """The version, from where it is written: project() in CMakeLists.txt."""
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
        m = re.search(r"project\(\s*p2pmpi\s+VERSION\s+([0-9][0-9.]*)", f.read())
    if not m:
        raise AssertionError("no project(p2pmpi VERSION x.y.z) in CMakeLists.txt")
    return m.group(1)


def install(prefix, destdir=None):
    """cmake --install of the build tree; returns the manifest (paths as
    installed, DESTDIR included)."""
    if not os.path.exists(os.path.join(BUILD_DIR, "cmake_install.cmake")):
        raise unittest.SkipTest("no configured build tree at %s" % BUILD_DIR)
    env = dict(os.environ)
    env.pop("DESTDIR", None)
    if destdir:
        env["DESTDIR"] = destdir
    r = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", prefix],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise AssertionError("cmake --install failed:\n%s%s"
                             % (r.stdout, r.stderr))
    return [l[len("-- Installing: "):] if l.startswith("-- Installing: ")
            else l[len("-- Up-to-date: "):]
            for l in r.stdout.splitlines()
            if l.startswith(("-- Installing: ", "-- Up-to-date: "))]


class InstalledTree:
    """A scratch directory with the build installed under PREFIX."""

    def __init__(self, name, prefix="/usr"):
        self.dir = tempfile.mkdtemp(prefix="p2p-%s-" % name)
        self.destdir = os.path.join(self.dir, "root")
        self.prefix = prefix
        self.files = install(prefix, self.destdir)
        self.root = self.destdir + prefix

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def programs(self):
        bindir = self.path("bin")
        return sorted(n for n in os.listdir(bindir)
                      if os.access(os.path.join(bindir, n), os.X_OK))

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)
