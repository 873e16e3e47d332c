#!/usr/bin/env python3
"""The documented defaults are the code's (issue 10: docs/protocol.md said
protocol version 1 where the daemons speak 2, docs/replication.md said
the lease default is 2000 ms where the code and conf/p2p.conf say 5000).

The code is the one place: the [section] key table and config_defaults()
in common/config.c (with the CONF_DEFAULT_* macros of common/config.h)
and P2P_WIRE_VERSION in proto/wire.h.  Checked against them:

  - conf/p2p.conf: every "default N" in the comment above a key;
  - docs/*.md and README.md: every "`[section] key`, default N" and
    "`[section] key` (default N" statement;
  - docs/protocol.md: the version byte of the frame header and the
    version in the example rejection.

Python 3 standard library only; run directly or through CTest."""

import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def c_macros(text):
    """{NAME: value} of simple numeric #defines."""
    out = {}
    for m in re.finditer(r"^#define\s+(\w+)\s+\(?(-?\d+)\)?\s*(?:/\*.*)?$",
                         text, re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def code_defaults():
    """{(section, key): default as text} from common/config.c."""
    src = read("common/config.c")
    macros = c_macros(read("common/config.h"))
    fields = {}
    for m in re.finditer(r'\{"(\w+)",\s*"(\w+)",\s*(CONF_\w+),\s*'
                         r'(?:F\((\w+)\)|0)', src):
        section, key, kind, field = m.groups()
        fields[field] = (section, key, kind)
    body = src[src.index("config_defaults(struct p2p_config *cfg)"):]
    body = body[:body.index("\n}\n")]
    values = {}
    for m in re.finditer(r"cfg->(\w+)\s*=\s*(.+?);", body):
        field, expr = m.groups()
        s = re.fullmatch(r'xstrdup\("([^"]*)"\)', expr)
        if s:
            values[field] = s.group(1)
        elif re.fullmatch(r"-?\d+", expr):
            values[field] = expr
        elif expr in macros:
            values[field] = str(macros[expr])
    out = {}
    for field, (section, key, kind) in fields.items():
        if field in values:
            out[(section, key)] = values[field]
        elif kind in ("CONF_INT", "CONF_BOOL"):
            out[(section, key)] = "0"  # config_defaults starts from zero
    return out


def conf_file_claims():
    """[(section, key, claimed default, line)] from conf/p2p.conf."""
    claims = []
    section, comment = None, []
    for n, line in enumerate(read("conf/p2p.conf").splitlines(), 1):
        s = line.strip()
        m = re.fullmatch(r"\[(\w+)\]", s)
        if m:
            section, comment = m.group(1), []
            continue
        if s.startswith("#"):
            comment.append(s.lstrip("#").strip())
            continue
        if not s:
            comment = []
            continue
        m = re.fullmatch(r"#?\s*(\w+)\s*=.*", s)
        if m and section:
            text = " ".join(comment)
            for d in re.finditer(r"\bdefault ([0-9][0-9.:]*[0-9])\b|"
                                 r"\bdefault ([0-9])\b", text):
                claims.append((section, m.group(1), d.group(1) or d.group(2),
                               "conf/p2p.conf:%d" % n))
        comment = []
    return claims


def doc_claims():
    """[(section, key, claimed default, where)] from the Markdown docs."""
    files = ["README.md"] + ["docs/" + f for f in
                             sorted(os.listdir(os.path.join(ROOT, "docs")))
                             if f.endswith(".md")]
    rx = re.compile(r"`\[(\w+)\]\s+(\w+)`[,\s(]*default\s+([0-9][0-9.:]*)")
    claims = []
    for f in files:
        text = read(f)
        for m in rx.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            claims.append((m.group(1), m.group(2), m.group(3).rstrip(".:"),
                           "%s:%d" % (f, line)))
    return claims


def main():
    problems = []
    defaults = code_defaults()
    for what in (("run", "lease_ms"), ("run", "output_spool_mb"),
                 ("run", "replica_lag_ms")):
        if what not in defaults:
            problems.append("no default found in the code for [%s] %s"
                            % what)
    claims = conf_file_claims() + doc_claims()
    checked = 0
    for section, key, value, where in claims:
        code = defaults.get((section, key))
        if code is None:
            continue  # a default the code leaves to the program (paths...)
        checked += 1
        if value != code:
            problems.append("%s: [%s] %s documented as default %s, the code "
                            "says %s" % (where, section, key, value, code))
    if not any(k == "lease_ms" and w.startswith("docs/")
               for _, k, _, w in claims):
        problems.append("docs/ no longer states the lease default "
                        "(`[run] lease_ms`, default N)")

    version = c_macros(read("proto/wire.h"))["P2P_WIRE_VERSION"]
    proto = read("docs/protocol.md")
    m = re.search(r"\|\s*2\s*\|\s*protocol version[^|]*?(\d+)\)?\s*\|", proto)
    if m is None:
        problems.append("docs/protocol.md: no version row in the frame "
                        "header table")
    elif int(m.group(1)) != version:
        problems.append("docs/protocol.md: the frame header says protocol "
                        "version %s, proto/wire.h says %d"
                        % (m.group(1), version))
    for m in re.finditer(r"this\s+side\s+speaks\s+(\d+)", proto):
        if int(m.group(1)) != version:
            problems.append("docs/protocol.md: 'this side speaks %s', "
                            "proto/wire.h says %d" % (m.group(1), version))

    for p in problems:
        print("FAIL: " + p)
    print("%d documented defaults checked against the code, protocol "
          "version %d" % (checked, version))
    print("%d passed, %d failed" % (0 if problems else 1, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
