#!/usr/bin/env python3
"""The dashboard's JSON API (docs/dashboard.md) through http.client on a
loopback cluster: peers appear with their documented fields; a killed
peer turns silent then gone; a running replicated job's rank map names
the hosts its processes really run on, marks a killed replica, and the
finished job stays listed with its exit status (and `mpihost --jobs`
agrees); the token is enforced on every path (bearer, ?token= then a
cookie); a non-loopback address without a token refuses to start;
garbage, oversized and piled-up requests get an error and a log line
while the peers' heartbeats go on."""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness  # noqa: E402
from harness import figure, wait_until  # noqa: E402

PEER_FIELDS = {"id", "host", "addr", "state", "reported_state", "cores",
               "slots_total", "slots_free", "mem_total", "mem_free", "load",
               "rtt_us", "age_ms", "version", "cpu_model", "os", "kernel",
               "started", "uptime_s"}
JOB_FIELDS = {"id", "kind", "user", "command", "started", "state", "exit",
              "hosts", "size", "replicas", "ranks", "ranks_truncated"}

# Runs until the test lets it go (a file appears), then exits 0.
HOLD = """while [ ! -e "$1" ]; do sleep 0.1; done
"""


def start_dashboard(c, expire=10, conf=None, extra=()):
    """A supernode with its dashboard on a free loopback port; the
    Daemon, with .http = (host, port)."""
    sn = c.start_supernode(expire=expire, conf=conf,
                           extra=("--http", "127.0.0.1:0") + tuple(extra))
    m = sn.wait_log(r"dashboard on http://(127\.0\.0\.1):(\d+)/",
                    what="the dashboard to listen")
    sn.http = (m.group(1), int(m.group(2)))
    return sn


def dashboard_jobnet(tc, npeers, expire=10):
    """For a JobTestCase: a supernode with its dashboard and npeers peerd
    of 2 slots (host labels host2, host3, ...), all listed; tc.runconf
    names it and a user key.  Returns (supernode, [peers])."""
    sn = start_dashboard(tc.c, expire=expire)
    peers = [tc.c.start_peer(2 + i, [sn], slots=2,
                             state_dir=tc.c.path("state-%d" % i))
             for i in range(npeers)]
    tc.c.wait_listed([sn], peers)
    key, _ = tc.c.user_key("user")
    tc.runconf = tc.c.job_config("run.conf", [sn], user_key=key)
    return sn, peers


def start_held(tc, peers, args):
    """Start p2prun ARGS hold.sh STOP (-n 2 -r 2: four processes) and wait
    until its processes run; (run, stop file, {(rank, replica): host})."""
    prog = tc.script("hold.sh", HOLD)
    stop = tc.c.path("stop")
    run = tc.start_p2prun(["-n", "2", "-r", "2"] + args + [prog, stop])
    wait_until(lambda: len(tc.replica_procs("hold.sh")) == 4 or
               not run.alive(), 30, "4 processes to run")
    procs = tc.replica_procs("hold.sh")
    if len(procs) != 4:
        open(stop, "w").close()
        raise AssertionError("%d processes: %s" % (len(procs), run.describe()))
    label = {p.addr: p.label for p in peers}
    return run, stop, {(int(e["P2P_RANK"]), int(e["P2P_REPLICA"])):
                       label[e["P2P_PEERD"]] for e in procs.values()}


def get(sn, path, headers=None, timeout=10):
    """(status, headers dict (lower-case names), body bytes)."""
    conn = http.client.HTTPConnection(*sn.http, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def api(sn, what, headers=None):
    status, _, body = get(sn, "/api/" + what, headers)
    if status != 200:
        raise AssertionError("/api/%s: %d %r" % (what, status, body[:200]))
    return json.loads(body)


class TestDashboardPeers(harness.ClusterTestCase):

    def test_peers_appear_then_killed_goes_silent_and_gone(self):
        sn = start_dashboard(self.c, expire=3)
        peers = [self.c.start_peer(2 + i, [sn]) for i in range(3)]
        self.c.wait_listed([sn], peers)

        def states():
            return {p["host"]: p["state"] for p in api(sn, "peers")["peers"]}
        wait_until(lambda: states() == {"host2": "available",
                                        "host3": "available",
                                        "host4": "available"},
                   20, lambda: "three available peers (now %s)" % states())
        doc = api(sn, "peers")
        for p in doc["peers"]:
            self.assertEqual(PEER_FIELDS - set(p), set(),
                             "fields missing from %s" % p)
            self.assertEqual(p["slots_total"], 2)
            self.assertGreater(p["mem_total"], 0)
            self.assertGreater(p["cores"], 0)
            self.assertTrue(p["kernel"].startswith("Linux"), p["kernel"])
            self.assertIsNotNone(p["uptime_s"])
        self.assertEqual(sorted(p["addr"] for p in doc["peers"]),
                         sorted(p.addr for p in peers))
        # The page and its assets are in the binary.
        status, hdr, body = get(sn, "/")
        self.assertEqual(status, 200)
        self.assertIn("text/html", hdr["content-type"])
        self.assertIn(b"/app.js", body)
        for asset in ("/app.js", "/style.css"):
            self.assertEqual(get(sn, asset)[0], 200, asset)
        self.assertEqual(get(sn, "/no/such/page")[0], 404)
        sns = api(sn, "supernodes")
        self.assertEqual(sns["self"]["addr"], sn.addr)
        self.assertEqual(sns["self"]["peers"], 3)
        wait_until(lambda: len(api(sn, "history")["samples"]) > 0, 10,
                   "a history sample")

        # mpihost --watch prints the table again and again until Ctrl-C.
        out = self.c.path("watch.out")
        with open(out, "w") as f:
            w = subprocess.Popen([harness.binary("mpihost"), "--conf",
                                  self.c.conf, "--supernode", sn.addr,
                                  "--watch"], stdout=f,
                                 stderr=subprocess.STDOUT, env=self.c.env)

        def tables():
            with open(out) as f:
                return f.read().count("HOST ")
        try:
            wait_until(lambda: tables() >= 2, 20,
                       lambda: "two tables from mpihost --watch (%d)"
                       % tables())
        finally:
            w.send_signal(signal.SIGINT)
            self.assertEqual(w.wait(10), 0)
        with open(out) as f:
            self.assertIn("host3", f.read())

        victim = peers[1]
        t0 = time.monotonic()
        victim.kill()
        wait_until(lambda: states().get("host3") in ("silent", "gone"), 10,
                   lambda: "host3 to turn silent (now %s)" % states())
        t_silent = time.monotonic() - t0
        wait_until(lambda: states().get("host3") == "gone", 3 + 10,
                   lambda: "host3 to be gone (now %s)" % states())
        figure("dashboard: killed peer silent after %.2f s, gone after "
               "%.2f s (expiry 3 s)" % (t_silent, time.monotonic() - t0))
        s = states()
        self.assertEqual(s["host2"], "available")
        self.assertEqual(s["host4"], "available")

        # A frozen peer (its connection still open) turns silent before
        # the registry expires it, then gone; thawed, it is back.
        frozen = peers[2]
        frozen.signal(signal.SIGSTOP)
        try:
            wait_until(lambda: states().get("host4") == "silent", 10,
                       lambda: "host4 to turn silent (now %s)" % states())
            wait_until(lambda: states().get("host4") == "gone", 15,
                       lambda: "host4 to be gone (now %s)" % states())
        finally:
            frozen.signal(signal.SIGCONT)
        wait_until(lambda: states().get("host4") == "available", 15,
                   lambda: "host4 back (now %s)" % states())
        self.assertEqual(states()["host2"], "available")


class TestDashboardJobs(harness.JobTestCase):

    def test_rank_map_of_a_replicated_job(self):
        # Not start_jobnet: the dashboard needs its port.
        sn, peers = dashboard_jobnet(self, 3)
        run, stop, truth = start_held(self, peers, [])

        def rank_map(states=("running",)):
            jobs = api(sn, "jobs")["jobs"]
            if len(jobs) != 1:
                return None
            return {(rk["rank"], rp["replica"]): (rp["host"], rp["state"])
                    for rk in jobs[0].get("ranks", [])
                    for rp in rk["replicas"]}
        want = {k: (h, "running") for k, h in truth.items()}
        wait_until(lambda: rank_map() == want, 15,
                   lambda: "the rank map %s (now %s)" % (want, rank_map()))
        job = api(sn, "jobs")["jobs"][0]
        self.assertEqual(JOB_FIELDS - set(job), set())
        self.assertEqual((job["kind"], job["size"], job["replicas"],
                          job["state"], job["command"], job["hosts"]),
                         ("mpi", 2, 2, "running", "hold.sh", 3))
        # mpihost --jobs --json says the same.
        r = self.c.mpihost([sn], extra=("--jobs",))
        self.assertEqual(r.returncode, 0, r.stderr)
        (mj,) = json.loads(r.stdout)
        self.assertEqual(mj["id"], job["id"])
        self.assertEqual(mj["ranks"], job["ranks"])
        r = self.c.mpihost([sn], json_out=False, extra=("--jobs",))
        self.assertIn("hold.sh", r.stdout)
        self.assertIn("rank 1:", r.stdout)

        # A killed backup is marked so; the job goes on.
        ((pid, env),) = self.replica_procs("hold.sh", rank=1,
                                           replica=1).items()
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: (rank_map() or {}).get((1, 1), (0, 0))[1]
                   == "killed", 15,
                   lambda: "rank 1 replica 1 marked killed (now %s)"
                   % rank_map())
        self.assertEqual(rank_map()[(0, 0)], (truth[(0, 0)], "running"))

        # Let it finish: listed as finished, exit 0.
        open(stop, "w").close()
        self.assertIsNotNone(run.wait(30), run.describe())
        self.assert_rc(run, 0)

        def finished():
            jobs = api(sn, "jobs")["jobs"]
            return jobs and jobs[0]["state"] == "finished" and jobs[0]
        wait_until(finished, 30, "the job to show finished")
        self.assertEqual(finished()["exit"], 0)
        self.assertEqual(finished()["ranks"][0]["replicas"][0]["state"],
                         "exited")


class TestDashboardFarm(harness.JobTestCase):

    def test_farm_counts(self):
        sn, peers = dashboard_jobnet(self, 2)
        inp = self.c.path("inputs")
        with open(inp, "w") as f:
            f.write("".join("%d\n" % i for i in range(1, 41)))
        stop = self.c.path("stop")
        prog = self.script("task.sh", HOLD.replace("$1", "$2") +
                           'echo "done $1"\n')
        run = self.start_p2prun(["--each", inp, "--", prog, "{}", stop])

        def farm():
            jobs = [j for j in api(sn, "jobs")["jobs"] if j["kind"] == "farm"]
            return jobs[0] if len(jobs) == 1 else None
        # Four slots: four tasks run, the rest wait (with p2prun or queued
        # on the peers); never one entry per task.
        wait_until(lambda: farm() is not None and
                   farm()["tasks"]["running"] == 4, 60,
                   lambda: "four running tasks listed (now %s)" % farm())
        f = farm()
        self.assertEqual((f["command"], f["state"], f["hosts"]),
                         ("task.sh", "running", 2))
        self.assertNotIn("ranks", f)
        # p2prun adds what only it knows: inputs read, results reported.
        wait_until(lambda: farm()["tasks"]["inputs"] is not None, 60,
                   lambda: "p2prun's note on the farm (now %s)" % farm())
        self.assertGreaterEqual(farm()["tasks"]["inputs"], 4)
        self.assertEqual(farm()["tasks"]["reported"], 0)
        open(stop, "w").close()
        self.assertEqual(run.wait(60), 0, run.describe())
        wait_until(lambda: farm() is not None and
                   farm()["state"] == "finished" and
                   farm()["tasks"]["reported"] == 40, 60,
                   lambda: "the farm finished, 40 reported (now %s)" % farm())
        self.assertEqual(farm()["tasks"]["inputs"], 40)
        self.assertEqual(farm()["tasks"]["failed"], 0)
        self.assertGreater(farm()["tasks"]["done"], 0)


class TestDashboardAccess(harness.ClusterTestCase):

    TOKEN = "dashboard-token-0123456789"

    def conf_with(self, name, lines):
        path = self.c.path(name)
        with open(self.c.conf) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text + "\n[supernode]\n" + "\n".join(lines) + "\n")
        return path

    def test_token_enforced(self):
        conf = self.conf_with("token.conf", ["http_token = " + self.TOKEN])
        sn = start_dashboard(self.c, conf=conf)
        peer = self.c.start_peer(2, [sn])
        self.c.wait_listed([sn], [peer])
        for path in ("/", "/app.js", "/api/peers", "/api/jobs",
                     "/api/supernodes", "/api/history"):
            status, hdr, _ = get(sn, path)
            self.assertEqual(status, 401, path)
            self.assertIn("bearer", hdr.get("www-authenticate", "").lower())
            self.assertEqual(get(sn, path, {"Authorization":
                                            "Bearer wrong"})[0], 401)
            self.assertEqual(get(sn, path + "?token=wrong")[0], 401)
            self.assertEqual(get(sn, path, {"Cookie":
                                            "p2p_dashboard=wrong"})[0], 401)
        self.assertGreater(sn.count_log(r"dashboard: request from .* "
                                        r"refused \(401\)"), 0)
        status, _, body = get(sn, "/api/peers",
                              {"Authorization": "Bearer " + self.TOKEN})
        self.assertEqual(status, 200)
        self.assertEqual(len(json.loads(body)["peers"]), 1)
        # ?token= sets the cookie and sends the browser on without it.
        status, hdr, _ = get(sn, "/?token=" + self.TOKEN)
        self.assertEqual(status, 303)
        self.assertEqual(hdr["location"], "/")
        # Never sent away from the dashboard.
        status, hdr2, _ = get(sn, "//elsewhere.example/?token=" + self.TOKEN)
        self.assertEqual((status, hdr2["location"]), (303, "/"))
        cookie = hdr["set-cookie"]
        self.assertIn("HttpOnly", cookie)
        value = cookie.split(";")[0]
        status, _, page = get(sn, "/", {"Cookie": "other=1; " + value})
        self.assertEqual(status, 200)
        # No secret in what is served.
        bodies = [page]
        for path in ("/app.js", "/style.css", "/api/peers", "/api/jobs",
                     "/api/supernodes", "/api/history"):
            status, _, b = get(sn, path, {"Cookie": value})
            self.assertEqual(status, 200, path)
            bodies.append(b)
        with open(self.c.key) as f:
            group_key = f.read().strip()
        for b in bodies:
            self.assertNotIn(self.TOKEN.encode(), b)
            self.assertNotIn(group_key.encode(), b)

    def test_non_loopback_without_token_refuses(self):
        sn = self.c.start_supernode(extra=("--http", "0.0.0.0:0"),
                                    wait=False)
        self.assertIsNotNone(sn.wait_exit(20), "runSuperNode kept running")
        self.assertNotEqual(sn.returncode, 0)
        self.assertIn("refusing to serve the dashboard", sn.log())
        self.assertIn("token", sn.log())
        # With a token (from a file) it starts.
        tf = self.c.path("dash.token")
        with open(tf, "w") as f:
            f.write(self.TOKEN + "\n")
        os.chmod(tf, 0o600)
        conf = self.conf_with("tf.conf", ["http_token_file = " + tf])
        sn2 = self.c.start_supernode(conf=conf, name="supernode2",
                                     extra=("--http", "0.0.0.0:0"))
        m = sn2.wait_log(r"dashboard on http://0\.0\.0\.0:(\d+)/ "
                         r"\(token required\)")
        sn2.http = ("127.0.0.1", int(m.group(1)))
        self.assertEqual(get(sn2, "/api/peers")[0], 401)
        self.assertEqual(get(sn2, "/api/peers", {
            "Authorization": "Bearer " + self.TOKEN})[0], 200)
        # --http none: no dashboard at all.
        sn3 = self.c.start_supernode(name="supernode3",
                                     extra=("--http", "none"))
        self.assertNotIn("dashboard on", sn3.log())


def raw(sn, data, timeout=10):
    """Send raw bytes; the first line of the answer (b"" if the
    connection was closed without one)."""
    s = socket.create_connection(sn.http, timeout=timeout)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while b"\n" not in out:
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
        return out.split(b"\r\n")[0]
    except OSError:  # reset, or closed before we were done
        return b""
    finally:
        s.close()


class TestDashboardAbuse(harness.ClusterTestCase):

    def test_garbage_requests_do_not_hurt_heartbeats(self):
        # Peers beat every 200 ms: one silent for 4 s has been starved.
        expire = 4
        sn = start_dashboard(self.c, expire=expire)
        peers = [self.c.start_peer(2 + i, [sn]) for i in range(3)]
        self.c.wait_listed([sn], peers)
        # Too many connections with requests in them: 503, logged.
        conns = []
        codes = []
        for _ in range(80):
            cn = http.client.HTTPConnection(*sn.http, timeout=10)
            cn.request("GET", "/api/history")
            r = cn.getresponse()
            r.read()
            codes.append(r.status)
            conns.append(cn)
        for cn in conns:
            cn.close()
        self.assertIn(503, codes)
        self.assertEqual(codes[0], 200)
        self.assertGreater(sn.count_log(r"refused \(503\)"), 0)
        wait_until(lambda: get(sn, "/api/peers")[0] == 200, 10,
                   "the dashboard to serve again once they closed")
        # Pile up idle connections that never send a request.
        idle = []
        for _ in range(200):
            idle.append(socket.create_connection(sn.http, timeout=10))
        t_end = time.monotonic() + expire + 1
        answers = {}
        while time.monotonic() < t_end:
            answers["long url"] = raw(
                sn, b"GET /" + b"a" * 10000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            answers["big headers"] = raw(
                sn, b"GET /api/peers HTTP/1.1\r\nHost: x\r\n" +
                b"".join(b"X-Pad-%d: %s\r\n" % (i, b"b" * 1000)
                         for i in range(12)) + b"\r\n")
            answers["huge headers"] = raw(
                sn, b"GET / HTTP/1.1\r\nX-Huge: " + b"c" * 200000 +
                b"\r\n\r\n")
            answers["garbage"] = raw(sn, bytes(range(256)) * 4 + b"\r\n\r\n")
            answers["post"] = raw(
                sn, b"POST /api/peers HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: 3\r\n\r\nabc")
            # Meanwhile every peer stays listed and fresh.
            listed = self.c.listed([sn], peers)
            self.assertIsNotNone(listed, "a peer was dropped under the flood")
            for e in listed:
                self.assertLess(e["age_ms"], expire * 1000)
        for s in idle:
            s.close()
        self.assertIn(b" 414 ", answers["long url"] + b" ")
        self.assertIn(b" 431 ", answers["big headers"] + b" ")
        # libevent's own cut: an error status, or the connection closed.
        self.assertTrue(answers["huge headers"] == b"" or
                        b" 413 " in answers["huge headers"] + b" " or
                        b" 400 " in answers["huge headers"] + b" ",
                        answers["huge headers"])
        self.assertNotIn(b" 200 ", answers["garbage"] + b" ")
        self.assertNotIn(b" 200 ", answers["post"] + b" ")
        self.assertGreater(sn.count_log(r"refused \(414\): URL too long"), 0)
        self.assertGreater(sn.count_log(r"refused \(431\)"), 0)
        # Still serving, and the peers are all there.
        self.assertEqual(len(api(sn, "peers")["peers"]), 3)
        self.assertTrue(sn.alive())


if __name__ == "__main__":
    harness.main()
