#!/usr/bin/env python3
"""The dashboard's page in a real browser: headless Chromium (Debian's
`chromium`, from DEBIAN_PACKAGES in the top Makefile) loads the page of a
test cluster running a replicated job, with one peer frozen; the test
reads the DOM the page's script rendered (peer tiles with the right
states, the job's rank map naming the hosts its processes really run on)
and saves a screenshot as dashboard.png in the build directory.  Skipped,
with the reason, where Chromium is missing or cannot run."""

import html.parser
import os
import shutil
import signal
import subprocess
import sys

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import wait_until  # noqa: E402
from test_dashboard import api, dashboard_jobnet, start_held  # noqa: E402


class DomReader(html.parser.HTMLParser):
    """Peer tiles and rank-map cells of a dumped DOM, by their data-*
    attributes."""

    def __init__(self):
        super().__init__()
        self.tiles = {}   # host -> state
        self.cells = {}   # (rank, replica) -> (host, state)
        self.jobs = []    # (kind, state)
        self.updated = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "body":
            self.updated = int(a.get("data-updated") or 0)
        if "peer" in classes and "data-host" in a:
            self.tiles[a["data-host"]] = a["data-state"]
        if "replica" in classes and "data-rank" in a:
            self.cells[(int(a["data-rank"]), int(a["data-replica"]))] = (
                a["data-host"], a["data-state"])
        if "job" in classes and "data-kind" in a:
            self.jobs.append((a["data-kind"], a["data-state"]))


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class TestDashboardPage(harness.JobTestCase):

    def browse(self, url, *what):
        """Run headless Chromium on url with extra arguments; its
        CompletedProcess.  Virtual time lets the page's polls run."""
        argv = [self.browser, "--headless", "--no-sandbox", "--disable-gpu",
                "--hide-scrollbars", "--user-data-dir=" +
                self.c.path("chromium-profile"),
                "--virtual-time-budget=6000", "--window-size=1280,1000"]
        return subprocess.run(argv + list(what) + [url], capture_output=True,
                              text=True, timeout=180, env=self.c.env)

    def test_page_renders_peers_and_rank_map(self):
        self.browser = chromium()
        if self.browser is None:
            self.skipTest("chromium not installed (make deps installs it)")
        sn, peers = dashboard_jobnet(self, 4, expire=30)
        url = "http://%s:%d/" % sn.http
        probe = self.browse(url, "--dump-dom")
        if probe.returncode != 0 or "<body" not in probe.stdout:
            self.skipTest("chromium cannot run here (exit %d): %s"
                          % (probe.returncode, probe.stderr.strip()[-300:]))

        # Concentrated: two hosts hold it all, two are left idle.
        run, stop, hosts = start_held(self, peers, ["-a", "concentrate"])
        truth = {k: (h, "running") for k, h in hosts.items()}
        try:
            # A peer with nothing of the job, frozen: silent on the page.
            idle = next(p for p in peers if p.label not in
                        {h for h, _ in truth.values()})
            idle.signal(signal.SIGSTOP)
            try:
                wait_until(lambda: any(
                    p["host"] == idle.label and p["state"] == "silent"
                    for p in api(sn, "peers")["peers"]), 30,
                    "the frozen peer to turn silent")
                wait_until(lambda: len(api(sn, "jobs")["jobs"]) == 1 and
                           len(api(sn, "jobs")["jobs"][0]["ranks"]) == 2, 15,
                           "the job in the API")
                dom = self.browse(url, "--dump-dom")
                shot = os.path.join(os.path.dirname(harness.binary("peerd")),
                                    os.pardir, "dashboard.png")
                shot = os.path.abspath(shot)
                self.browse(url, "--screenshot=" + shot)
            finally:
                idle.signal(signal.SIGCONT)
        finally:
            open(stop, "w").close()
        self.assertIsNotNone(run.wait(30), run.describe())
        self.assert_rc(run, 0)

        r = DomReader()
        r.feed(dom.stdout)
        self.assertGreater(r.updated, 0, "the page never updated itself:\n" +
                           dom.stdout[:2000])
        want_tiles = {p.label: "available" for p in peers}
        want_tiles[idle.label] = "silent"
        # A peer with one of its two slots taken is busy, with both full.
        used = {}
        for host, _ in truth.values():
            used[host] = used.get(host, 0) + 1
        for host, n in used.items():
            want_tiles[host] = "full" if n == 2 else "busy"
        self.assertEqual(r.tiles, want_tiles)
        self.assertEqual(r.cells, truth)
        self.assertEqual(r.jobs, [("mpi", "running")])
        self.assertTrue(os.path.getsize(shot) > 10000,
                        "no screenshot at %s" % shot)
        harness.figure("dashboard screenshot: %s" % shot)


if __name__ == "__main__":
    harness.main()
