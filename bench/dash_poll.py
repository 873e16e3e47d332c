#!/usr/bin/env python3
"""Act as one open dashboard page against a supernode: load the page and
its assets once (printing load time and size), then poll the API as the
page's script does (peers and jobs every 1.5 s, supernodes and history
every fourth time) until killed or SECONDS have passed.

usage: bench/dash_poll.py HOST:PORT [SECONDS]"""
import http.client
import sys
import time

POLL_S = 1.5


def fetch(conn, path):
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    if r.status != 200:
        sys.exit("%s: %d" % (path, r.status))
    return len(body)


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1e9
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    t0 = time.monotonic()
    page = sum(fetch(conn, p) for p in ("/", "/style.css", "/app.js"))
    t_page = time.monotonic() - t0
    data = sum(fetch(conn, "/api/" + p)
               for p in ("peers", "jobs", "supernodes", "history"))
    t_all = time.monotonic() - t0
    print("page load: %.1f ms for the page (%d bytes), %.1f ms with its first "
          "data (%d bytes of JSON)" % (t_page * 1e3, page, t_all * 1e3, data),
          flush=True)
    polls = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(POLL_S)
        fetch(conn, "/api/peers")
        fetch(conn, "/api/jobs")
        if polls % 4 == 0:
            fetch(conn, "/api/supernodes")
            fetch(conn, "/api/history")
        polls += 1


main()
