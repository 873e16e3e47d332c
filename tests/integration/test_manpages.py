#!/usr/bin/env python3
"""The manual pages cannot drift from the programs: every installed
program has a page; every option a program prints in --help is defined in
its page's OPTIONS and every option defined there is in --help; every key
of conf/p2p.conf (and of the parser's table in common/config.c) is in
p2p.conf(5) under its section, and the page has no key they lack.  The
pages are checked as rendered and installed (`man -l` / groff when
present).  A failure names the program and option, or the section and
key, and the file to fix (docs/man/NAME.SECTION.scd)."""

import os
import re
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
import pkgtools  # noqa: E402
from pkgtools import SOURCE_DIR  # noqa: E402

MAN_SRC = os.path.join(SOURCE_DIR, "docs", "man")
LONG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SHORT = re.compile(r"(?<![\w-])-[A-Za-z](?![\w-])")
# What every program takes (DESIGN.md section 5), whether or not its
# usage text repeats it.
UNIVERSAL = {"--help", "--version"}


def options_in(text):
    return set(LONG.findall(text)) | set(SHORT.findall(text))


def scd_sections(path):
    """{heading: [lines]} of a scdoc source, for '# X' and '## X'."""
    sections, cur = {}, None
    with open(path) as f:
        for line in f.read().splitlines():
            m = re.match(r"^(#{1,2}) (.*)$", line)
            if m:
                cur = m.group(2).strip()
                sections[cur] = []
            elif cur is not None:
                sections[cur].append(line)
    return sections


def defined_terms(lines):
    """The definition terms of a section: lines that start a definition
    (not indented, not blank), each followed by an indented description."""
    out = []
    for i, line in enumerate(lines):
        if line and not line[0].isspace() and i + 1 < len(lines) \
                and lines[i + 1].startswith("\t"):
            out.append(line)
    return out


def conf_keys(path):
    """{section: {key}} of the `key =` and `#key =` lines of conf/p2p.conf
    ([users] holds names, not keys, and is left out)."""
    keys, sec = {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"^\[([a-z]+)\]\s*$", line)
            if m:
                sec = m.group(1)
                continue
            m = re.match(r"^#?([a-z][a-z0-9_]*)\s*=", line)
            if m and sec and sec != "users":
                keys.setdefault(sec, set()).add(m.group(1))
    return keys


def parser_keys(path):
    """{section: {key}} of the parser's table in common/config.c."""
    keys = {}
    with open(path) as f:
        for sec, key in re.findall(r'\{"([a-z]+)",\s*"([a-z0-9_]+)",\s*CONF_',
                                   f.read()):
            keys.setdefault(sec, set()).add(key)
    return keys


class TestManPages(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tree = pkgtools.InstalledTree("man")
        cls.man1 = cls.tree.path("share", "man", "man1")
        cls.man5 = cls.tree.path("share", "man", "man5")

    @classmethod
    def tearDownClass(cls):
        cls.tree.remove()

    def help_text(self, prog):
        r = subprocess.run([self.tree.path("bin", prog), "--help"],
                           capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL, env=pkgtools.QUIET_ENV)
        self.assertEqual(r.returncode, 0, "%s --help: %s" % (prog, r.stderr))
        return r.stdout

    def test_every_program_has_a_page(self):
        progs = self.tree.programs()
        self.assertGreaterEqual(len(progs), 6, progs)
        for prog in progs:
            with self.subTest(prog=prog):
                src = os.path.join(MAN_SRC, prog + ".1.scd")
                self.assertTrue(os.path.exists(src),
                                "%s is installed but has no manual page: "
                                "write docs/man/%s.1.scd" % (prog, prog))
                self.assertTrue(os.path.exists(os.path.join(self.man1, prog + ".1")),
                                "%s.1 is not installed in share/man/man1" % prog)

    def test_no_page_without_program(self):
        progs = set(self.tree.programs())
        for name in sorted(os.listdir(MAN_SRC)):
            m = re.match(r"^(.+)\.1\.scd$", name)
            if m:
                with self.subTest(page=name):
                    self.assertIn(m.group(1), progs,
                                  "docs/man/%s documents a program that is "
                                  "not installed" % name)

    def test_options_match_help(self):
        for prog in self.tree.programs():
            src = os.path.join(MAN_SRC, prog + ".1.scd")
            if not os.path.exists(src):
                continue  # reported by test_every_program_has_a_page
            with self.subTest(prog=prog):
                helped = options_in(self.help_text(prog)) | UNIVERSAL
                sections = scd_sections(src)
                self.assertIn("OPTIONS", sections,
                              "docs/man/%s.1.scd has no OPTIONS section" % prog)
                terms = defined_terms(sections["OPTIONS"])
                documented = set()
                for t in terms:
                    documented |= options_in(t)
                missing = sorted(helped - documented)
                extra = sorted(documented - helped)
                self.assertEqual(missing, [], "%s --help lists %s, not defined "
                                 "under OPTIONS in docs/man/%s.1.scd"
                                 % (prog, ", ".join(missing), prog))
                self.assertEqual(extra, [], "docs/man/%s.1.scd defines %s, which "
                                 "%s --help does not list"
                                 % (prog, ", ".join(extra), prog))
                # And the rendered, installed page says so too.
                with open(os.path.join(self.man1, prog + ".1")) as f:
                    roff = f.read()
                for opt in sorted(helped):
                    self.assertIn("\\fB%s\\fR" % opt, roff,
                                  "%s is missing from the rendered %s.1"
                                  % (opt, prog))

    def test_conf_keys_match_page(self):
        conf = conf_keys(os.path.join(SOURCE_DIR, "conf", "p2p.conf"))
        parser = parser_keys(os.path.join(SOURCE_DIR, "common", "config.c"))
        sections = scd_sections(os.path.join(MAN_SRC, "p2p.conf.5.scd"))
        page = {}
        for heading, lines in sections.items():
            m = re.match(r"^\[([a-z]+)\]$", heading)
            if not m or m.group(1) == "users":
                continue
            for t in defined_terms(lines):
                km = re.match(r"^\*([a-z][a-z0-9_]*)\* =", t)
                if km:
                    page.setdefault(m.group(1), set()).add(km.group(1))
        self.assertIn("[users]", sections, "p2p.conf(5) has no [users] section")
        for what, keys in (("conf/p2p.conf", conf),
                           ("common/config.c", parser)):
            for sec in sorted(keys):
                for key in sorted(keys[sec]):
                    with self.subTest(source=what, key="[%s] %s" % (sec, key)):
                        self.assertTrue(key in page.get(sec, set()),
                                      "[%s] %s (in %s) is not documented in "
                                      "docs/man/p2p.conf.5.scd"
                                      % (sec, key, what))
        for sec in sorted(page):
            for key in sorted(page[sec]):
                with self.subTest(page_key="[%s] %s" % (sec, key)):
                    self.assertTrue(key in conf.get(sec, set()),
                                  "p2p.conf(5) documents [%s] %s, which "
                                  "conf/p2p.conf lacks" % (sec, key))
                    self.assertTrue(key in parser.get(sec, set()),
                                  "p2p.conf(5) documents [%s] %s, which the "
                                  "parser (common/config.c) does not know"
                                  % (sec, key))

    def test_pages_render_cleanly(self):
        """Every installed page formats without a warning (groff -ww), and
        `man` finds p2prun's page where make install put it."""
        pages = [os.path.join(self.man1, n) for n in sorted(os.listdir(self.man1))]
        pages.append(os.path.join(self.man5, "p2p.conf.5"))
        groff = shutil.which("groff")
        if groff is None:
            self.skipTest("groff not installed: pages not formatted")
        for page in pages:
            with self.subTest(page=os.path.basename(page)):
                r = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", page],
                                   capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "", "groff warns about %s" % page)
        man = shutil.which("man")
        if man is None:
            self.skipTest("man not installed: lookup not checked")
        r = subprocess.run([man, "-M", self.tree.path("share", "man"), "-w",
                            "p2prun"], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.stdout.strip(), os.path.join(self.man1, "p2prun.1"),
                         r.stderr)
        r = subprocess.run([man, "-M", self.tree.path("share", "man"), "5",
                            "p2p.conf"], capture_output=True, text=True,
                           timeout=30, env=dict(os.environ, MANPAGER="cat",
                                                PAGER="cat", MANWIDTH="80"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("job_cpu_weight", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
