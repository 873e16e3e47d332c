#!/bin/sh
# How much a supernode costs: memory per registered peer, time to register,
# and whether one core keeps up with N peers heartbeating every second;
# then the dashboard's cost: the same with every heartbeat followed by a
# job report, without and with a dashboard page open (bench/dash_poll.py
# polls as the page does), and the page's load time and size.
# Usage: bench/supernode.sh [BUILD_DIR] [PEERS...]   (default: build 1000 10000)
#        DASHBOARD_ONLY=1 bench/supernode.sh build 1000   (the last part only)
#
# Federation mode (docs/scale.md, "The directory"): 4 supernodes that
# summarise their peers to each other, PEERS simulated peers (real
# authenticated connections from their own loopback addresses, each
# registered with one supernode chosen as peerd chooses), queries through
# every supernode, and one supernode killed mid-run.  Reports memory and
# CPU per supernode, query latency and where the candidates came from,
# and the time until every peer is registered again.
# Usage: [SUPERNODES=N] [FED_KEEP=DIR] bench/supernode.sh --federation
#        [BUILD_DIR] [PEERS] [SECONDS] [HEARTBEAT_MS]
#        (default: 4 supernodes, build 100000 120 1000; the open-file limit
#        is raised where the privilege allows, else more supernodes run so
#        that the survivors of the kill hold every peer, and it says so)
set -eu
if [ "${1:-}" = "--federation" ]; then
    shift
    exec sh "$(dirname "$0")/supernode_federation.sh" "$@"
fi
build=$(cd "${1:-build}" && pwd); shift || true
counts=${*:-1000 10000}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/p2p-bench.XXXXXX)
sn=""; poll=""
# (|| true: under set -e a trap's failing kill of a process already gone
# would make the script exit 1 after printing every figure.)
trap 'kill $sn $poll 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
"$build/bin/p2p-keygen" --group "$dir/group.key" >/dev/null
# The simulated peers announce addresses where nothing listens, so the
# supernode must not check them back; and they all register at once.
printf '[network]\ngroup = bench\nkey_file = group.key\npreauth_max = 65536\n[supernode]\ncheck_peers = no\n' > "$dir/p2p.conf"

# start_sn: a supernode with its dashboard on a free port; sets sn, port, http
start_sn() {
    "$build/bin/runSuperNode" --conf "$dir/p2p.conf" --listen 127.0.0.1:0 \
        --http 127.0.0.1:0 --foreground --expire 10 2>"$dir/sn.log" &
    sn=$!
    port=""; http=""
    while [ -z "$port" ]; do
        sleep 0.05
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$dir/sn.log")
    done
    http=$(sed -n 's|.*dashboard on http://\(127\.0\.0\.1:[0-9]*\)/.*|\1|p' "$dir/sn.log")
}

for n in $counts; do
    if [ -z "${DASHBOARD_ONLY:-}" ]; then
        start_sn
        echo "== $n peers"
        "$build/bin/sn_load" --conf "$dir/p2p.conf" --supernode "127.0.0.1:$port" \
            --pid "$sn" --peers "$n" --seconds 10 2>"$dir/load.log" || cat "$dir/load.log"
        kill "$sn"; wait "$sn" || true
    fi
    for page in closed open; do
        start_sn
        echo "== $n peers, a job report with every heartbeat, dashboard page $page"
        poll=""
        if [ "$page" = open ]; then
            python3 "$here/dash_poll.py" "$http" 1e9 "$n" &
            poll=$!
        fi
        "$build/bin/sn_load" --conf "$dir/p2p.conf" --supernode "127.0.0.1:$port" \
            --pid "$sn" --peers "$n" --seconds 10 --job-reports \
            2>"$dir/load.log" || cat "$dir/load.log"
        if [ -n "$poll" ]; then
            kill "$poll"; wait "$poll" 2>/dev/null || true
            poll=""
        fi
        kill "$sn"; wait "$sn" || true
    done
done
