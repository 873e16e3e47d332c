#!/usr/bin/env python3
"""Act as one open dashboard page against a supernode: poll the API as
the page's script does (peers and jobs every 1.5 s, supernodes and history
every fourth time) until killed or SECONDS have passed; once at least
MIN_PEERS peers are listed, load the page afresh, as a new tab would, and
print its load time and size.

usage: bench/dash_poll.py HOST:PORT [SECONDS [MIN_PEERS]]"""
import http.client
import json
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


def load(host, port):
    """Print what loading the page and its first data costs."""
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
    conn.close()


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1e9
    min_peers = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    polls = 0
    measured = False
    end = time.monotonic() + seconds
    while True:
        conn.request("GET", "/api/peers")
        r = conn.getresponse()
        peers = json.loads(r.read())["peers"]
        fetch(conn, "/api/jobs")
        if polls % 4 == 0:
            fetch(conn, "/api/supernodes")
            fetch(conn, "/api/history")
        polls += 1
        if not measured and len(peers) >= min_peers:
            load(host, port)
            measured = True
        if time.monotonic() >= end:
            break
        time.sleep(POLL_S)


main()
