#!/bin/sh
# How much a supernode costs: memory per registered peer, time to register,
# and whether one core keeps up with N peers heartbeating every second.
# Usage: bench/supernode.sh [BUILD_DIR] [PEERS...]   (default: build 1000 10000)
#
# Federation mode (docs/scale.md, "The directory"): 4 supernodes that
# summarise their peers to each other, PEERS simulated peers (real
# authenticated connections from their own loopback addresses, each
# registered with one supernode chosen as peerd chooses), queries through
# every supernode, and one supernode killed mid-run.  Reports memory and
# CPU per supernode, query latency and where the candidates came from,
# and the time until every peer is registered again.
# Usage: bench/supernode.sh --federation [BUILD_DIR] [PEERS] [SECONDS] [HEARTBEAT_MS]
#        (default: build 100000 120 1000; PEERS is lowered to what the open-file
#        limit lets three supernodes hold, and says so)
set -eu
if [ "${1:-}" = "--federation" ]; then
    shift
    exec sh "$(dirname "$0")/supernode_federation.sh" "$@"
fi
build=$(cd "${1:-build}" && pwd); shift || true
counts=${*:-1000 10000}
dir=$(mktemp -d /tmp/p2p-bench.XXXXXX)
trap 'kill $sn 2>/dev/null; wait $sn 2>/dev/null; rm -rf "$dir"' EXIT
"$build/bin/p2p-keygen" --group "$dir/group.key" >/dev/null
# The simulated peers announce addresses where nothing listens, so the
# supernode must not check them back; and they all register at once.
printf '[network]\ngroup = bench\nkey_file = group.key\npreauth_max = 65536\n[supernode]\ncheck_peers = no\n' > "$dir/p2p.conf"
for n in $counts; do
    "$build/bin/runSuperNode" --conf "$dir/p2p.conf" --listen 127.0.0.1:0 \
        --foreground --expire 10 2>"$dir/sn.log" &
    sn=$!
    port=""
    while [ -z "$port" ]; do
        sleep 0.05
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$dir/sn.log")
    done
    echo "== $n peers"
    "$build/bin/sn_load" --conf "$dir/p2p.conf" --supernode "127.0.0.1:$port" \
        --pid "$sn" --peers "$n" --seconds 10 2>"$dir/load.log" || cat "$dir/load.log"
    kill "$sn"; wait "$sn" || true
done
